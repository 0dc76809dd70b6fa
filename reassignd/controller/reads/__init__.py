"""The controller's reads of ZooKeeper into typed values (the cluster's znodes, the topics'
configs), and the pipeline every batch of ZooKeeper requests of an event runs on, reads and
writes alike (the lowest layer that needs it holds it)."""

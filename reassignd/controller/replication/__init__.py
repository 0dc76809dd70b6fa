"""The cluster as the active controller holds it and writes it: the context, replica
assignments, Kafka's partition state machine and its pure decisions, the fenced writer, the
reads of ZooKeeper, and the control requests an event collects for the brokers
(``BrokerRequestBatch``)."""

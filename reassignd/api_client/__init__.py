"""The client of the controller's HTTP API (``client.ApiClient``) and the answers' shapes as it
reads them (``shapes``). Used by the admin CLI, the feeder, the demo and the tests."""

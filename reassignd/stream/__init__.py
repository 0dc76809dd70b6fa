"""The controller's event stream: one record per state change the controller decided, kept in a
bounded in-memory history (``GET /v1/events``, server-sent events) and sent to a Kafka topic."""

"""Brokers registering, bouncing and failing (Kafka's onBrokerStartup and onBrokerFailure)."""

"""The Kafka-protocol admin listener (``reassignd controller --kafka-listener``): Kafka's own
admin tools and clients (kafka-python, aiokafka, confluent-kafka, the Java tools) talk to the
controller unchanged, through the same ControllerApi, validation, quotas and auth as the HTTP API.
"""

"""Kafka's partition state machine: new partitions online, clean and unclean elections, with its
decisions pure in ``partition_logic``."""

"""Topics: their creation, partitions added, deletion (Kafka's TopicDeletionManager), the
validation and replica placement of new topics, and the watch handlers of topics, partitions and
the brokers' ISR changes."""

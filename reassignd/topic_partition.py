"""``TopicPartition``: a partition named by its topic and number, Kafka's TopicPartition. Every
package takes it from here."""

from __future__ import annotations

TopicPartition = tuple[str, int]

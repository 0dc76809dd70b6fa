"""The seam between self-healing and the planner's placement code (``reassignd.feeder``, a layer
above the controller): the composition root hands the controller a function of this shape
(``reassignd.feeder.evacuation.evacuate``). Pure values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from reassignd.topic_partition import Replicas, TopicPartition

# (topic, partition, size in bytes, replicas in order)
HostedPartition = tuple[str, int, int, Replicas]


class PlaceLostReplicas(Protocol):
    def __call__(
        self, racks: Mapping[int, str | None], partitions: Sequence[HostedPartition], lost: frozenset[int]
    ) -> Mapping[TopicPartition, Replicas]:
        """New replica lists for the partitions with a replica on a broker of ``lost``, brokers
        absent from ``racks`` (the live brokers and their racks): each replica on them replaced by
        one on a live broker, on a rack the partition does not use yet when there is one, the bytes
        spread so the receiving brokers end as even as they can; nothing else moves. A partition
        that cannot be placed is left out."""
        ...

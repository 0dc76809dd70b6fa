"""Which event records a write's before and after make. Pure.

The writer calls these once ZooKeeper accepted a write, with what memory held before and what was
written: only changes that happened become records.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from reassignd.controller.replication.assignment import ReplicaAssignment
from reassignd.topic_partition import TopicPartition
from reassignd.zk.codec import PartitionState

Change = tuple[str, dict[str, Any]]


def assignment_changes(
    tp: TopicPartition,
    before: ReplicaAssignment | None,
    after: ReplicaAssignment,
    origin: tuple[int, ...] | None = None,
) -> Iterator[Change]:
    """A reassignment started, re-targeted, completed or cancelled (with ORS and TRS). ``origin``
    is the move's exact original replicas, in their order, when recorded (Kafka's RS − AR may
    reorder them)."""
    where: dict[str, Any] = {"topic": tp[0], "partition": tp[1]}
    if before is None:
        return
    if origin is not None:
        ors = list(origin)
    else:
        ors = list(after.original_replicas if after.is_being_reassigned else before.original_replicas)
    was, now = before.is_being_reassigned, after.is_being_reassigned
    if now and not was:
        yield (
            "reassignment_started",
            {
                **where,
                "original_replicas": ors,
                "target_replicas": list(after.target_replicas),
            },
        )
    elif now and was and after.target_replicas != before.target_replicas:
        yield (
            "reassignment_retargeted",
            {
                **where,
                "original_replicas": ors,
                "previous_target_replicas": list(before.target_replicas),
                "target_replicas": list(after.target_replicas),
            },
        )
    elif was and not now:
        if set(after.replicas) == set(before.target_replicas):
            kind = "reassignment_completed"
        elif set(after.replicas) == set(before.original_replicas):
            kind = "reassignment_cancelled"
        else:  # stopped: the adding replicas already in sync were kept
            kind = "reassignment_stopped"
        yield (
            kind,
            {
                **where,
                "original_replicas": ors,
                "target_replicas": list(before.target_replicas),
                "replicas": list(after.replicas),
            },
        )


def state_changes(
    tp: TopicPartition, before: PartitionState | None, after: PartitionState
) -> Iterator[Change]:
    """A leader change (with its epoch) and an ISR change."""
    where: dict[str, Any] = {"topic": tp[0], "partition": tp[1]}
    if before is None or before.leader != after.leader:
        yield (
            "leader_changed",
            {
                **where,
                "leader": after.leader,
                "previous_leader": None if before is None else before.leader,
                "leader_epoch": after.leader_epoch,
            },
        )
    if before is None or before.isr != after.isr:
        yield (
            "isr_changed",
            {
                **where,
                "isr": list(after.isr),
                "previous_isr": None if before is None else list(before.isr),
            },
        )

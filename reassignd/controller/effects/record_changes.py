"""Which stream records a write's before and after make. Pure.

The writer calls these once ZooKeeper accepted a write, with what memory held before and what was
written: only changes that happened become records.
"""

from __future__ import annotations

from collections.abc import Iterator

from reassignd.contracts.records import (
    IsrChanged,
    LeaderChanged,
    ReassignmentCancelled,
    ReassignmentCompleted,
    ReassignmentRetargeted,
    ReassignmentStarted,
    ReassignmentStopped,
    Record,
)
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.topic_partition import TopicPartition
from reassignd.zk.codec import PartitionState


def assignment_changes(
    tp: TopicPartition,
    before: ReplicaAssignment | None,
    after: ReplicaAssignment,
    origins: tuple[int, ...] | None = None,
) -> Iterator[Record]:
    """A reassignment started, re-targeted, completed or cancelled (with ORS and TRS).
    ``origins`` are the move's, in their order, when known (Kafka's RS − AR may
    reorder them)."""
    topic, partition = tp
    if before is None:
        return
    if origins is not None:
        ors = tuple(origins)
    else:
        ors = tuple(after.origins if after.is_being_reassigned else before.origins)
    was, now = before.is_being_reassigned, after.is_being_reassigned
    if now and not was:
        yield ReassignmentStarted(topic, partition, ors, tuple(after.target_replicas))
    elif now and was and after.target_replicas != before.target_replicas:
        yield ReassignmentRetargeted(
            topic, partition, ors, tuple(before.target_replicas), tuple(after.target_replicas)
        )
    elif was and not now:
        if set(after.replicas) == set(before.target_replicas):
            ended: type[ReassignmentCompleted | ReassignmentCancelled | ReassignmentStopped] = (
                ReassignmentCompleted
            )
        elif set(after.replicas) == set(before.origins):
            ended = ReassignmentCancelled
        else:  # stopped: the adding replicas already in sync were kept
            ended = ReassignmentStopped
        yield ended(topic, partition, ors, tuple(before.target_replicas), tuple(after.replicas))


def state_changes(
    tp: TopicPartition, before: PartitionState | None, after: PartitionState, *, by: str | None = None
) -> Iterator[Record]:
    """A leader change (with its epoch) and an ISR change; ``by="broker"`` for a broker's own
    change the controller read."""
    topic, partition = tp
    if before is None or before.leader != after.leader:
        yield LeaderChanged(
            topic,
            partition,
            after.leader,
            None if before is None else before.leader,
            after.leader_epoch,
            by,
        )
    if before is None or before.isr != after.isr:
        yield IsrChanged(
            topic, partition, tuple(after.isr), None if before is None else tuple(before.isr), by
        )

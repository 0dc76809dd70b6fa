"""Per-partition validation of API reassignment requests. Pure.

First failure wins. Messages are Kafka's (KafkaController.validateReplicas and friends), with
replica lists printed as ``[1, 2, 3]``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from reassignd.controller.model.requests import CancelMode
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.errors import (
    InvalidReplicaAssignment,
    NoReassignmentInProgress,
    ReassigndError,
    UnknownTopicOrPartition,
)


def _fmt(replicas: Sequence[int] | Collection[int]) -> str:
    return "[" + ", ".join(str(r) for r in replicas) + "]"


def replica_list_error(target: Sequence[int]) -> ReassigndError | None:
    """The first three rows: empty, duplicate ids, negative ids."""
    if not target:
        return InvalidReplicaAssignment("Empty replica list specified in partition reassignment.")
    if len(set(target)) != len(target):
        return InvalidReplicaAssignment(
            f"Duplicate replica ids in partition reassignment replica list: {_fmt(target)}"
        )
    if any(r < 0 for r in target):
        return InvalidReplicaAssignment(f"Invalid broker id in replica list: {_fmt(target)}")
    return None


def validate_target(
    target: Sequence[int],
    current: ReplicaAssignment | None,
    live: Collection[int],
    *,
    topic_deleting: bool,
    moved: ReplicaAssignment | None = None,
) -> ReassigndError | None:
    """A new target for one partition; None when it may start. ``moved`` is
    ``current.reassign_to(target)`` when the caller has it already (it starts the move with it:
    built once, not twice per partition)."""
    if (error := replica_list_error(target)) is not None:
        return error
    if moved is None:
        moved = (current or ReplicaAssignment(())).reassign_to(target)
    adding = moved.adding
    if not set(adding) <= set(live):
        return InvalidReplicaAssignment(
            f"Replica assignment has brokers that are not alive. Replica list: {_fmt(adding)}, "
            f"live broker list: {_fmt(sorted(live))}"
        )
    if topic_deleting or current is None:
        return UnknownTopicOrPartition("The partition does not exist.")
    return None


def revert_needs_unclean_election(original: Collection[int], isr: Collection[int]) -> bool:
    """The unclean-election safety rule of cancellation (Kafka's KRaft controller): reverting to
    ``original`` needs an unclean leader election when none of those replicas is in the ISR."""
    return not set(original) & set(isr)


def unclean_revert_error(topic: str, partition: int) -> InvalidReplicaAssignment:
    return InvalidReplicaAssignment(
        f"Unable to revert partition assignment for {topic}-{partition} because it would require "
        "an unclean leader election."
    )


def unclean_retarget_error(topic: str, partition: int, target: Sequence[int]) -> InvalidReplicaAssignment:
    """The same safety rule for a re-target: the new replica set would keep none of the ISR (every
    in-sync replica is an adding one the new target drops)."""
    return InvalidReplicaAssignment(
        f"Unable to reassign partition {topic}-{partition} to {_fmt(target)} because it would "
        "require an unclean leader election."
    )


def cancelled_assignment(
    topic: str,
    partition: int,
    current: ReplicaAssignment | None,
    isr: Sequence[int],
    mode: CancelMode,
    *,
    unclean_allowed: bool,
) -> ReplicaAssignment | ReassigndError:
    """The assignment a cancel (or stop) leads to, or why it is refused. ``unclean_allowed``: the
    topic's ``unclean.leader.election.enable`` (or the broker default). A stop keeps every adding
    replica already in the ISR, so it never needs an unclean election."""
    if current is None or not current.is_being_reassigned:
        return NoReassignmentInProgress()
    if mode is CancelMode.STOP:
        return current.stop(isr)
    if not unclean_allowed and revert_needs_unclean_election(current.origins, isr):
        return unclean_revert_error(topic, partition)
    return current.revert()


def in_original_order(
    outcome: ReplicaAssignment, current: ReplicaAssignment, origins: Sequence[int] | None
) -> ReplicaAssignment:
    """A cancel or stop with the original replicas in the order they had before the move (so the
    preferred leader does not change), when that order is known and matches ORS as a set;
    Kafka's RS − AR order otherwise."""
    ors = origins
    if ors is None or set(ors) != set(current.origins):
        return outcome
    return ReplicaAssignment(tuple(ors) + tuple(r for r in outcome.replicas if r not in ors))

"""Submitting a batch: per-partition refusals, idempotency by ``batch_id``. Pure.

Each partition is checked in turn, the first failure wins: the validation of
AlterPartitionReassignments (an injected validator: replica list, live brokers, unknown
partition), then 10002 STALE_PLAN (its replicas now differ from ``expected_replicas``: same
brokers in the same order), then 10003 BATCH_CONFLICT (it has a pending or running move in
another unfinished batch; a paused batch counts, since resuming it would start the move). The
others are accepted; a batch with nothing accepted is still created, already ``completed``.

A partition whose ``log_dirs`` pin replicas to log dirs (JBOD) is a move even when its replicas
stay: its replicas then move between the dirs of their brokers (``dir_moves.py``).

The same ``batch_id`` with the same body (:func:`~reassignd.executor.model.canonical_body`)
answers the batch already there; with another body, 10004 BATCH_ID_IN_USE. A batch whose journal
could not be written for its whole life (journal.size_error) is refused whole (42).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from reassignd.errors import InvalidRequest, ReassigndError, UnknownTopicOrPartition
from reassignd.executor.errors import BatchConflict, BatchIdInUse, StalePlan
from reassignd.executor.journal import partitions_per_chunk, size_error
from reassignd.executor.model import (
    Batch,
    BatchMove,
    BatchMoveEnd,
    BatchMoveState,
    BatchSpec,
    BatchState,
    PartitionSpec,
    SubmitRefusal,
    canonical_body,
    capped,
    pinned_dirs,
    spec_error,
)
from reassignd.topic_partition import Replicas, TopicPartition

# The partition's replicas now, in order (None: no such partition).
CurrentReplicas = Callable[[TopicPartition], Replicas | None]
# AlterPartitionReassignments' checks for one partition (None: it may move).
Validator = Callable[[PartitionSpec], ReassigndError | None]


@dataclass(frozen=True, slots=True)
class SubmitResult:
    batch: Batch
    created: bool  # False: the same batch_id and body were submitted before


@dataclass(frozen=True, slots=True)
class PartitionOutcome:
    """One entry of the answer's ``partitions``, in the spec's order."""

    topic: str
    partition: int
    error_code: int = 0
    error_message: str | None = None


def partition_outcomes(batch: Batch) -> tuple[PartitionOutcome, ...]:
    outcomes: list[PartitionOutcome] = []
    for p in batch.spec.partitions:
        refusal = batch.refusals.get(p.tp)
        if refusal is None:
            outcomes.append(PartitionOutcome(p.topic, p.partition))
        else:
            outcomes.append(PartitionOutcome(p.topic, p.partition, refusal.error_code, refusal.error_message))
    return tuple(outcomes)


def moving_in_batches(batches: Iterable[Batch], but: str | None = None) -> set[TopicPartition]:
    """Partitions with a pending or running move in an unfinished batch (other than ``but``)."""
    busy: set[TopicPartition] = set()
    for batch in batches:
        if batch.state.unfinished and batch.batch_id != but:
            busy.update(
                tp
                for tp, m in batch.moves.items()
                if m.state in (BatchMoveState.PENDING, BatchMoveState.RUNNING)
            )
    return busy


def _fmt(replicas: Replicas) -> str:
    return "[" + ", ".join(map(str, replicas)) + "]"


def refusal_of(
    p: PartitionSpec, current: Replicas | None, validate: Validator, busy: set[TopicPartition]
) -> ReassigndError | None:
    """Why ``p`` cannot join a batch, or None."""
    if (error := validate(p)) is not None:
        return error
    if current is None:
        return UnknownTopicOrPartition("The partition does not exist.")
    if p.expected_replicas is not None and p.expected_replicas != current:
        return StalePlan(
            f"{p.topic}-{p.partition} has replicas {_fmt(current)}, the plan expected {_fmt(p.expected_replicas)}"
        )
    if p.tp in busy:
        return BatchConflict(f"{p.topic}-{p.partition} is already being moved by another batch")
    return None


def submit(
    spec: BatchSpec,
    batches: Mapping[str, Batch],
    current: CurrentReplicas,
    validate: Validator,
    now_ms: int,
    sizes: Mapping[TopicPartition, int] | None = None,
) -> SubmitResult:
    """The batch ``spec`` makes (or the one it already made). Raises InvalidRequest (42, HTTP 400)
    for a spec that cannot be a batch, BatchIdInUse (10004, HTTP 409) for a reused id. ``sizes``
    (bytes, as the partitions' leaders reported them) are kept on the moves for the scheduler's
    size strategies; they are not part of the batch's body (a resubmission with other sizes is the
    same batch)."""
    if (reason := spec_error(spec)) is not None:
        raise InvalidRequest(reason)
    existing = batches.get(spec.batch_id)
    if existing is not None:
        if canonical_body(existing.spec) != canonical_body(spec):
            raise BatchIdInUse(f"batch id {spec.batch_id!r} is in use by a batch with another body")
        return SubmitResult(existing, created=False)
    busy = moving_in_batches(batches.values())
    moves: dict[TopicPartition, BatchMove] = {}
    refusals: dict[TopicPartition, SubmitRefusal] = {}
    for p in spec.partitions:
        replicas = current(p.tp)
        if (error := refusal_of(p, replicas, validate, busy)) is not None:
            refusals[p.tp] = SubmitRefusal(error.error_code, capped(error.message))
            continue
        assert replicas is not None
        if replicas == p.replicas and not pinned_dirs(
            p.replicas, p.log_dirs
        ):  # nothing to move: done at once
            moves[p.tp] = BatchMove(p, replicas, BatchMoveEnd.COMPLETED, now_ms, now_ms)
        else:  # a move between brokers, then (if pinned) between the dirs of a broker
            moves[p.tp] = BatchMove(p, replicas, size_bytes=(sizes or {}).get(p.tp))
    pending = any(m.state is BatchMoveState.PENDING for m in moves.values())
    batch = Batch(
        spec=spec,
        state=BatchState.PENDING if pending else BatchState.COMPLETED,
        created_ms=now_ms,
        updated_ms=now_ms,
        moves=moves,
        refusals=refusals,
        chunk_size=partitions_per_chunk(spec),
    )
    if (reason := size_error(batch)) is not None:
        raise InvalidRequest(f"the batch's journal would not fit in ZooKeeper: {reason}")
    return SubmitResult(batch, created=True)

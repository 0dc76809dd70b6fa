"""What happens to a batch after submission: its moves start, complete, fail or are cancelled;
clients pause, resume, stop and roll it back. Pure: each function returns the new batch (and
what the controller must do for it), never mutates.

Batch states: ``pending`` until a move starts, then ``running``; ``paused`` starts nothing new
(moves in flight go on); once no move is pending or running the batch is ``completed``, or
``failed`` if a move failed. ``stop`` drops pending moves and cancels running ones: the caller
reverts each to its recorded replicas, in their order (the returned :class:`Revert` list).
``rollback`` stops, then submits a reverse batch moving every completed partition back to its
origins (and each replica a dir move moved back to its previous log dir), with the
same priority, caps, throttle and strategy; the original batch is then
``rolled_back`` and names the reverse one.

Repeating a request whose result is the batch's state (pause a paused batch, stop a stopped one)
changes nothing; one the state does not allow raises :class:`BatchStateError` (42).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TypeVar

from reassignd.executor.dir_moves import reverse_dirs
from reassignd.executor.errors import BatchStateError
from reassignd.executor.model import (
    Batch,
    BatchMove,
    BatchMoveEnd,
    BatchMoveState,
    BatchSpec,
    BatchState,
    LogDirs,
    PartitionSpec,
    ThrottleValues,
    capped,
)
from reassignd.executor.submit import CurrentReplicas, SubmitResult, Validator, submit
from reassignd.topic_partition import Replicas, TopicPartition

_LIVE_MOVE = (BatchMoveState.PENDING, BatchMoveState.RUNNING)
_K = TypeVar("_K")


@dataclass(frozen=True, slots=True)
class Revert:
    """Move ``topic``-``partition`` back to ``replicas`` (in this order): a cancelled move."""

    topic: str
    partition: int
    replicas: Replicas
    target: Replicas  # where the cancelled move was going


def _with_moves(batch: Batch, changed: Mapping[TopicPartition, BatchMove], now_ms: int) -> Batch:
    if not changed:
        return batch
    moves = dict(batch.moves)
    moves.update(changed)
    return _settled(dataclasses.replace(batch, moves=moves, updated_ms=max(batch.updated_ms, now_ms)))


def _settled(batch: Batch) -> Batch:
    """An unfinished batch with nothing pending or running is completed (failed if a move failed)."""
    if not batch.state.unfinished:
        return batch
    counts = batch.counts()
    if counts[BatchMoveState.PENDING] or counts[BatchMoveState.RUNNING]:
        return batch
    state = BatchState.FAILED if counts[BatchMoveState.FAILED] else BatchState.COMPLETED
    return dataclasses.replace(batch, state=state)


# --- moves ---------------------------------------------------------------------------------------


def moves_started(batch: Batch, started: Mapping[TopicPartition, Replicas], now_ms: int) -> Batch:
    """Pending moves started, each with the partition's replicas (in order) just before it.
    Starting a move that is not pending, or in a batch that may not start moves, is a bug:
    ValueError (a move is never started twice)."""
    if batch.state not in (BatchState.PENDING, BatchState.RUNNING) and started:
        raise ValueError(f"batch {batch.batch_id} is {batch.state}: it starts no move")
    changed: dict[TopicPartition, BatchMove] = {}
    for tp, origins in started.items():
        move = batch.moves.get(tp)
        if move is None or move.state is not BatchMoveState.PENDING:
            raise ValueError(f"{tp[0]}-{tp[1]} has no pending move in batch {batch.batch_id}")
        changed[tp] = dataclasses.replace(move, origins=origins, started_at_ms=now_ms)
    if changed and batch.state is BatchState.PENDING:
        batch = dataclasses.replace(batch, state=BatchState.RUNNING)
    return _with_moves(batch, changed, now_ms)


def dirs_asked(batch: Batch, previous: Mapping[TopicPartition, LogDirs], now_ms: int) -> Batch:
    """Running moves whose dir phase begins (``dir_moves.py``): when, and the dirs their replicas
    are in, journaled before any agent is asked. A move asked before keeps its first record."""
    changed = {
        tp: dataclasses.replace(move, original_log_dirs=dirs, dirs_asked_ms=now_ms)
        for tp, dirs in previous.items()
        if (move := batch.moves.get(tp)) is not None
        and move.state is BatchMoveState.RUNNING
        and move.dirs_asked_ms is None
    }
    return _with_moves(batch, changed, now_ms)


def moves_completed(batch: Batch, tps: Collection[TopicPartition], now_ms: int) -> Batch:
    """Running moves that reached their target; other partitions are ignored."""
    return _ended(batch, dict.fromkeys(tps), BatchMoveEnd.COMPLETED, (BatchMoveState.RUNNING,), now_ms)


def moves_cancelled(batch: Batch, reasons: Mapping[TopicPartition, str | None], now_ms: int) -> Batch:
    """Pending or running moves cancelled from outside the batch (an API cancel or re-target of
    the partition, its topic deleted), each with why."""
    return _ended(batch, reasons, BatchMoveEnd.CANCELLED, _LIVE_MOVE, now_ms)


def moves_failed(batch: Batch, reasons: Mapping[TopicPartition, str], now_ms: int) -> Batch:
    return _ended(batch, reasons, BatchMoveEnd.FAILED, _LIVE_MOVE, now_ms)


def _ended(
    batch: Batch,
    reasons: Mapping[TopicPartition, str | None],
    end: BatchMoveEnd,
    from_states: tuple[BatchMoveState, ...],
    now_ms: int,
) -> Batch:
    changed = {
        tp: dataclasses.replace(move, ended=end, finished_ms=now_ms, error_message=capped(reason))
        for tp, reason in reasons.items()
        if (move := batch.moves.get(tp)) is not None and move.state in from_states
    }
    return _with_moves(batch, changed, now_ms)


# --- control requests ----------------------------------------------------------------------------


def _refuse(batch: Batch, what: str) -> BatchStateError:
    return BatchStateError(f"batch {batch.batch_id} is {batch.state}: cannot {what} it")


def pause(batch: Batch, now_ms: int) -> Batch:
    if batch.state is BatchState.PAUSED:
        return batch
    if batch.state not in (BatchState.PENDING, BatchState.RUNNING):
        raise _refuse(batch, "pause")
    return dataclasses.replace(batch, state=BatchState.PAUSED, updated_ms=max(batch.updated_ms, now_ms))


def resume(batch: Batch, now_ms: int) -> Batch:
    if batch.state in (BatchState.PENDING, BatchState.RUNNING):
        return batch
    if batch.state is not BatchState.PAUSED:
        raise _refuse(batch, "resume")
    started = any(m.started_at_ms is not None for m in batch.moves.values())
    state = BatchState.RUNNING if started else BatchState.PENDING
    return _settled(dataclasses.replace(batch, state=state, updated_ms=max(batch.updated_ms, now_ms)))


def stop(batch: Batch, now_ms: int) -> tuple[Batch, tuple[Revert, ...]]:
    """Pending moves dropped, running ones cancelled: the reverts the caller must make."""
    if batch.state is BatchState.STOPPED:
        return batch, ()
    if not batch.state.unfinished:
        raise _refuse(batch, "stop")
    reverts = tuple(
        Revert(tp[0], tp[1], move.origins, move.target) for tp, move in batch.in_state(BatchMoveState.RUNNING)
    )
    changed = {
        tp: dataclasses.replace(move, ended=BatchMoveEnd.CANCELLED, finished_ms=now_ms)
        for tp, move in batch.moves.items()
        if move.state in _LIVE_MOVE
    }
    moves = {**batch.moves, **changed}
    updated = max(batch.updated_ms, now_ms)
    return dataclasses.replace(batch, state=BatchState.STOPPED, moves=moves, updated_ms=updated), reverts


@dataclass(frozen=True, slots=True)
class RollbackOutcome:
    batch: Batch  # the original batch, rolled_back, naming the reverse batch
    reverse: SubmitResult  # the reverse batch (created=False when this rollback was done before)
    reverts: tuple[Revert, ...]  # the original's running moves, cancelled


def rollback(
    batch: Batch,
    batches: Mapping[str, Batch],
    current: CurrentReplicas,
    validate: Validator,
    now_ms: int,
) -> RollbackOutcome:
    """Stop ``batch``, then submit the batch that moves each of its completed partitions (in the
    spec's order) back to the replicas it had before, in their order. A partition changed since
    it completed is refused as STALE_PLAN (its ``expected_replicas`` is the target it reached)."""
    if batch.rollback_batch_id is not None:
        if (done := batches.get(batch.rollback_batch_id)) is None:
            raise _refuse(batch, "roll back")
        return RollbackOutcome(batch, SubmitResult(done, created=False), ())
    stopped, reverts = stop(batch, now_ms) if batch.state.unfinished else (batch, ())
    partitions = tuple(
        PartitionSpec(p.topic, p.partition, move.origins, move.target, reverse_dirs(move))
        for p in batch.spec.partitions
        if (move := batch.moves.get(p.tp)) is not None
        and move.state is BatchMoveState.COMPLETED
        and (move.origins != move.target or reverse_dirs(move) is not None)
    )
    reverse_id = rollback_batch_id(batch.batch_id, batches.keys())
    spec = BatchSpec(
        batch_id=reverse_id,
        partitions=partitions,
        limits=batch.spec.limits,
        plan_id=batch.spec.plan_id,
        priority=batch.spec.priority,
        throttle_bytes_per_s=batch.spec.throttle_bytes_per_s,
        strategy=batch.spec.strategy,
    )
    others = {**batches, batch.batch_id: stopped}
    sizes = {tp: m.size_bytes for tp, m in batch.moves.items() if m.size_bytes is not None}
    reverse = submit(spec, others, current, validate, now_ms, sizes)
    reverse = SubmitResult(dataclasses.replace(reverse.batch, rollback_of=batch.batch_id), reverse.created)
    original = dataclasses.replace(
        stopped,
        state=BatchState.ROLLED_BACK,
        rollback_batch_id=reverse_id,
        updated_ms=max(stopped.updated_ms, now_ms),
    )
    return RollbackOutcome(original, reverse, reverts)


def rollback_batch_id(batch_id: str, taken: Collection[str]) -> str:
    """``<id>.rollback``, or ``<id>.rollback-2``, ... if that is taken (ids stay 249 characters)."""
    base = f"{batch_id[:230]}.rollback"
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{base}-{n}"
    return candidate


# --- adaptive concurrency ------------------------------------------------------------------------


def caps_changed(batch: Batch, caps: Mapping[int, int], now_ms: int) -> Batch:
    """The brokers' caps an adjustment decided (``adaptive.adjust``), merged into the batch's; a
    cap back at the initial one is forgotten."""
    initial = batch.spec.limits.initial_cap
    merged = {**batch.broker_caps, **caps}
    kept = {b: c for b, c in sorted(merged.items()) if c != initial}
    if kept == dict(batch.broker_caps):
        return batch
    return dataclasses.replace(batch, broker_caps=kept, updated_ms=max(batch.updated_ms, now_ms))


# --- owned throttles -----------------------------------------------------------------------------


def throttles_recorded(
    batch: Batch,
    brokers: Mapping[int, ThrottleValues],
    topics: Mapping[str, ThrottleValues],
    now_ms: int,
) -> Batch:
    """The values the batch's throttles replace, recorded before it sets them. A key already
    recorded keeps its first value: that is the one to restore."""
    new_brokers = _merged(batch.broker_throttles, brokers)
    new_topics = _merged(batch.topic_throttles, topics)
    if new_brokers == batch.broker_throttles and new_topics == batch.topic_throttles:
        return batch
    updated = max(batch.updated_ms, now_ms)
    return dataclasses.replace(
        batch, broker_throttles=new_brokers, topic_throttles=new_topics, updated_ms=updated
    )


def throttles_restored(batch: Batch, brokers: Collection[int], topics: Collection[str], now_ms: int) -> Batch:
    """Forget the recorded values of ``brokers`` and ``topics``, once restored."""
    new_brokers = {b: v for b, v in batch.broker_throttles.items() if b not in brokers}
    new_topics = {t: v for t, v in batch.topic_throttles.items() if t not in topics}
    if len(new_brokers) == len(batch.broker_throttles) and len(new_topics) == len(batch.topic_throttles):
        return batch
    updated = max(batch.updated_ms, now_ms)
    return dataclasses.replace(
        batch, broker_throttles=new_brokers, topic_throttles=new_topics, updated_ms=updated
    )


def _merged(old: Mapping[_K, ThrottleValues], new: Mapping[_K, ThrottleValues]) -> dict[_K, ThrottleValues]:
    merged: dict[_K, ThrottleValues] = dict(old)
    for key, values in new.items():
        merged[key] = {**values, **merged.get(key, {})}
    return merged

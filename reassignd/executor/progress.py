"""A batch's status (``GET /v1/batches/{id}``) and the makespan lower bound. Pure.

Bytes count what the adding replicas copy: a move's total is its partition's size once per
replica it adds (as ``GET /v1/reassignments`` sums them), replaced by the agents' report while the
move runs and they have reported. Completed moves count as done; cancelled and failed ones count
nowhere. The rate is the sum of the running moves' reported rates; the ETA the bytes left at it.

A running move is **stuck** by Cruise Control's rule: it has run longer than
``StuckRule.after_ms`` and its average rate since it started is below
``StuckRule.below_bytes_per_s`` (a move no agent reported on yet counts as 0 bytes done).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from reassignd.executor.model import Batch, BatchMove, BatchMoveState, BatchState, Limits
from reassignd.executor.scheduler import MoveShape
from reassignd.topic_partition import Replicas, TopicPartition


@dataclass(frozen=True, slots=True)
class MoveProgress:
    """What the agents report for a move in flight, summed over its adding replicas."""

    bytes_done: int
    bytes_total: int
    bytes_per_s: float


@dataclass(frozen=True, slots=True)
class StuckRule:
    """A running move is stuck once it has run ``after_ms`` and copies below
    ``below_bytes_per_s`` (``--batch-stuck-after-s``, ``--batch-stuck-below-bytes-per-s``)."""

    after_ms: int
    below_bytes_per_s: float

    @classmethod
    def of(cls, after_s: float, below_bytes_per_s: float) -> StuckRule:
        return cls(after_ms=round(after_s * 1000), below_bytes_per_s=below_bytes_per_s)


@dataclass(frozen=True, slots=True)
class RunningProgress:
    topic: str
    partition: int
    original_replicas: Replicas  # the contract's name (contracts/batches.py)
    target_replicas: Replicas
    started_at_ms: int
    bytes_done: int
    bytes_total: int
    bytes_per_s: float
    stuck: bool


@dataclass(frozen=True, slots=True)
class BatchProgress:
    batch_id: str
    plan_id: str | None
    state: BatchState
    priority: int
    created_ms: int
    updated_ms: int
    counts: Mapping[BatchMoveState, int]
    bytes_total: int
    bytes_done: int
    bytes_per_s: float
    eta_s: int | None  # None: nothing moves, so no estimate
    limits: Limits
    throttle_bytes_per_s: int | None
    running: tuple[RunningProgress, ...]
    stuck: tuple[TopicPartition, ...]
    throttled_brokers: tuple[int, ...]
    throttled_topics: tuple[str, ...]
    rollback_of: str | None
    rollback_batch_id: str | None
    broker_caps: Mapping[int, int] = field(default_factory=dict)  # adaptive concurrency's, when moved
    owner: str | None = None


def is_stuck(started_at_ms: int, bytes_done: int, now_ms: int, rule: StuckRule) -> bool:
    elapsed_ms = now_ms - started_at_ms
    return elapsed_ms > max(rule.after_ms, 0) and bytes_done * 1000 / elapsed_ms < rule.below_bytes_per_s


def move_bytes(move: BatchMove, size: int) -> int:
    """What a move copies: its partition's size once per replica it adds, and once per replica
    it moves between the log dirs of its broker (JBOD)."""
    return size * (len(set(move.target) - set(move.origins)) + len(move.pinned))


def batch_status(
    batch: Batch,
    progress: Mapping[TopicPartition, MoveProgress],
    sizes: Mapping[TopicPartition, int],
    now_ms: int,
    rule: StuckRule,
) -> BatchProgress:
    total = done = 0
    rate = 0.0
    running: list[RunningProgress] = []
    for tp, move in batch.moves.items():
        if move.state in (BatchMoveState.CANCELLED, BatchMoveState.FAILED):
            continue
        estimate = move_bytes(move, sizes.get(tp, 0))
        if move.state is BatchMoveState.COMPLETED:
            total, done = total + estimate, done + estimate
        elif move.state is BatchMoveState.PENDING:
            total += estimate
        else:
            report = progress.get(tp, MoveProgress(0, estimate, 0.0))
            started = now_ms if move.started_at_ms is None else move.started_at_ms
            stuck = is_stuck(started, report.bytes_done, now_ms, rule)
            running.append(
                RunningProgress(
                    *tp,
                    move.origins,
                    move.target,
                    started,
                    report.bytes_done,
                    report.bytes_total,
                    report.bytes_per_s,
                    stuck,
                )
            )
            total, done, rate = (
                total + report.bytes_total,
                done + report.bytes_done,
                rate + report.bytes_per_s,
            )
    left = max(0, total - done)
    eta_s = 0 if left == 0 else (math.ceil(left / rate) if rate > 0 else None)
    spec = batch.spec
    return BatchProgress(
        batch_id=spec.batch_id,
        plan_id=spec.plan_id,
        state=batch.state,
        priority=spec.priority,
        created_ms=batch.created_ms,
        updated_ms=batch.updated_ms,
        counts=batch.counts(),
        bytes_total=total,
        bytes_done=done,
        bytes_per_s=rate,
        eta_s=eta_s,
        limits=spec.limits,
        throttle_bytes_per_s=spec.throttle_bytes_per_s,
        running=tuple(running),
        stuck=tuple((m.topic, m.partition) for m in running if m.stuck),
        throttled_brokers=tuple(sorted(batch.broker_throttles)),
        throttled_topics=tuple(sorted(batch.topic_throttles)),
        rollback_of=batch.rollback_of,
        rollback_batch_id=batch.rollback_batch_id,
        broker_caps=dict(batch.broker_caps),
        owner=spec.owner,
    )


def broker_bytes(
    moves: Iterable[MoveShape], sizes: Mapping[TopicPartition, int]
) -> tuple[dict[int, int], dict[int, int]]:
    """(bytes in, bytes out) per broker: each adding replica's broker takes in the partition's
    size, and its leader sends it once per adding replica (a move with no known leader sends
    from no one)."""
    bytes_in: dict[int, int] = {}
    bytes_out: dict[int, int] = {}
    for move in moves:
        size = sizes.get(move.tp, 0)
        for broker in move.destinations:
            bytes_in[broker] = bytes_in.get(broker, 0) + size
        if move.leader is not None and move.destinations:
            bytes_out[move.leader] = bytes_out.get(move.leader, 0) + size * len(move.destinations)
    return bytes_in, bytes_out


def lower_bound_makespan_s(
    moves: Iterable[MoveShape], sizes: Mapping[TopicPartition, int], broker_rate: Mapping[int, float] | float
) -> float:
    """No schedule finishes sooner: max over brokers of (bytes in or out) ÷ that broker's
    replication rate in bytes per second (one rate for all, or one per broker)."""
    bytes_in, bytes_out = broker_bytes(moves, sizes)
    worst = 0.0
    for broker in bytes_in.keys() | bytes_out.keys():
        rate = broker_rate if isinstance(broker_rate, float | int) else broker_rate[broker]
        worst = max(worst, max(bytes_in.get(broker, 0), bytes_out.get(broker, 0)) / rate)
    return worst

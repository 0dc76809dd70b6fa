"""A batch's status as GET /v1/batches/{id} shows it (counts, bytes, rate, ETA, stuck moves by
Cruise Control's rule) and the makespan's lower bound."""

from __future__ import annotations

import pytest

from reassignd.executor.lifecycle import moves_completed, moves_failed, moves_started, throttles_recorded
from reassignd.executor.model import BatchMoveState
from reassignd.executor.progress import (
    MoveProgress,
    StuckRule,
    batch_status,
    broker_bytes,
    is_stuck,
    lower_bound_makespan_s,
)
from reassignd.executor.scheduler import MoveShape, move_shape
from tests.unit.executor.batch_helpers import move, spec, submitted

MIB = 1024 * 1024
RULE = StuckRule(after_ms=60_000, below_bytes_per_s=1024)


def test_status_counts_bytes_rate_and_eta() -> None:
    batch = submitted(spec(move(0), move(1), move(2, (1, 2, 4)), move(3)))
    started = {("orders", p): (1, 2, 3) for p in (0, 1, 2)}
    batch = moves_started(batch, started, 10_000)
    batch = moves_completed(batch, [("orders", 2)], 20_000)
    batch = moves_failed(batch, {("orders", 1): "broker 5 left"}, 20_000)
    batch = throttles_recorded(batch, {5: {}, 4: {}}, {"orders": {}}, 20_000)
    sizes = dict.fromkeys((("orders", p) for p in range(4)), 100 * MIB)
    progress = {("orders", 0): MoveProgress(bytes_done=60 * MIB, bytes_total=300 * MIB, bytes_per_s=10 * MIB)}
    status = batch_status(batch, progress, sizes, 30_000, RULE)
    assert status.counts == {
        BatchMoveState.PENDING: 1,
        BatchMoveState.RUNNING: 1,
        BatchMoveState.COMPLETED: 1,
        BatchMoveState.CANCELLED: 0,
        BatchMoveState.FAILED: 1,
    }
    # pending 3 × 100 MiB, running as reported, completed 1 × 100 MiB (one replica added); failed: nowhere
    assert (status.bytes_total, status.bytes_done) == (700 * MIB, 160 * MIB)
    assert (status.bytes_per_s, status.eta_s) == (10 * MIB, 54)
    (running,) = status.running
    assert (running.topic, running.partition, running.original_replicas, running.target_replicas) == (
        "orders",
        0,
        (1, 2, 3),
        (4, 5, 6),
    )
    assert (running.started_at_ms, running.stuck, status.stuck) == (10_000, False, ())
    assert (status.throttled_brokers, status.throttled_topics) == ((4, 5), ("orders",))


def test_eta_is_unknown_while_nothing_moves_and_zero_when_done() -> None:
    batch = submitted(spec(move(0)))
    assert batch_status(batch, {}, {("orders", 0): 5}, 2000, RULE).eta_s is None
    done = moves_completed(moves_started(batch, {("orders", 0): (1, 2, 3)}, 2000), [("orders", 0)], 3000)
    assert batch_status(done, {}, {("orders", 0): 5}, 4000, RULE).eta_s == 0


@pytest.mark.parametrize(
    ("elapsed_ms", "bytes_done", "stuck"),
    [
        (30_000, 0, False),  # slow, but not for long
        (120_000, 10 * MIB, False),  # long, but fast enough on average
        (120_000, 60_000, True),  # long and slow: 500 B/s
        (60_000, 0, False),  # the limit itself is not longer than the limit
        (60_001, 0, True),
    ],
)
def test_stuck_means_longer_than_the_limit_and_slower_than_the_floor(
    elapsed_ms: int, bytes_done: int, stuck: bool
) -> None:
    assert is_stuck(1000, bytes_done, 1000 + elapsed_ms, RULE) is stuck


def test_a_move_no_agent_reported_on_is_stuck_after_the_limit() -> None:
    batch = moves_started(submitted(spec(move(0))), {("orders", 0): (1, 2, 3)}, 0)
    status = batch_status(batch, {}, {("orders", 0): MIB}, 61_000, RULE)
    assert status.stuck == (("orders", 0),)
    assert status.running[0].bytes_total == 3 * MIB  # the estimate until an agent reports


def test_lower_bound_is_the_busiest_broker_in_or_out() -> None:
    moves = [
        move_shape(("t", 0), (1, 2, 3), (4, 2, 3), leader=1),  # 1 sends 100 to 4
        move_shape(("t", 1), (1, 2, 3), (4, 5, 3), leader=2),  # 2 sends 2 × 50, to 4 and 5
        move_shape(("t", 2), (1, 2, 3), (3, 2, 1), leader=1),  # a reorder copies nothing
        MoveShape(("t", 3), frozenset(), frozenset({6}), leader=None),  # 6 takes 30 in from no known leader
    ]
    sizes = {("t", 0): 100, ("t", 1): 50, ("t", 2): 999, ("t", 3): 30}
    assert broker_bytes(moves, sizes) == ({4: 150, 5: 50, 6: 30}, {1: 100, 2: 100})
    assert lower_bound_makespan_s(moves, sizes, 10.0) == 15.0  # broker 4 takes 150 in at 10/s
    assert lower_bound_makespan_s(moves, sizes, {1: 1.0, 2: 50.0, 4: 100.0, 5: 10.0, 6: 10.0}) == 100.0
    assert lower_bound_makespan_s([], sizes, 10.0) == 0.0

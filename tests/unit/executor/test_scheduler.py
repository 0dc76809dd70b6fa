"""The scheduler: which pending moves start, under every cap, in priority and strategy order; and,
for random clusters and batches, that no cap is ever exceeded, no move starts twice and every
move starts in the end once moves in flight complete."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reassignd.executor.lifecycle import moves_started, pause
from reassignd.executor.model import Limits, Strategy
from reassignd.executor.scheduler import BatchQueue, MoveShape, Start, choose_moves, move_shape, queue_of
from reassignd.topic_partition import TopicPartition
from tests.examples import examples
from tests.unit.executor.batch_helpers import move, spec, submitted

WIDE = Limits(moves_per_broker=100, moves_in_cluster=1000, leader_moves_per_broker=100)


def shape(p: int, sources: Iterable[int], destinations: Iterable[int], topic: str = "t") -> MoveShape:
    return MoveShape((topic, p), frozenset(sources), frozenset(destinations))


def queue(
    *pending: MoveShape,
    batch_id: str = "b",
    limits: Limits = WIDE,
    priority: int = 0,
    created_ms: int = 0,
    strategy: Sequence[Strategy] = (),
) -> BatchQueue:
    return BatchQueue(batch_id, priority, created_ms, limits, tuple(strategy), pending)


def chosen(
    *queues: BatchQueue,
    running: Sequence[MoveShape] = (),
    cap: int = 1000,
    sizes: dict[TopicPartition, int] | None = None,
    under: Iterable[TopicPartition] = (),
) -> list[TopicPartition]:
    return [s.tp for s in choose_moves(running, queues, cap, sizes or {}, set(under))]


# --- caps ----------------------------------------------------------------------------------------


def test_incoming_moves_per_broker() -> None:
    moves = [shape(p, [1], [4]) for p in range(5)]
    assert chosen(queue(*moves, limits=Limits(2, 100, 100))) == [("t", 0), ("t", 1)]


def test_outgoing_moves_per_broker_counted_apart_from_incoming() -> None:
    # broker 1 sends two moves and receives two: a cap of 2 allows all four
    moves = [
        shape(0, [1], [4]),
        shape(1, [1], [5]),
        shape(2, [6], [1]),
        shape(3, [6], [1]),
        shape(4, [1], [3]),
    ]
    assert chosen(queue(*moves, limits=Limits(2, 100, 100))) == [("t", 0), ("t", 1), ("t", 2), ("t", 3)]


def test_cluster_caps_the_batchs_and_the_controllers() -> None:
    moves = [shape(p, [p], [p + 10]) for p in range(10)]
    assert len(chosen(queue(*moves, limits=Limits(5, 4, 5)))) == 4
    assert len(chosen(queue(*moves), cap=3)) == 3


def test_leader_moves_per_broker() -> None:
    moves = [move_shape(("t", p), (1, 2, 3), (4, 2, 3), leader=1) for p in range(3)]
    assert moves[0].leader_brokers == {1, 4}
    keep = move_shape(("t", 9), (1, 2, 3), (1, 2, 5), leader=1)
    assert keep.leader_brokers == frozenset()
    assert chosen(queue(*moves, keep, limits=Limits(100, 100, 1))) == [("t", 0), ("t", 9)]


def test_moves_outside_batches_count_against_the_caps() -> None:
    api = [shape(100, [1], [4]), shape(101, [2], [4])]
    moves = [shape(p, [3], [4]) for p in range(3)] + [shape(3, [3], [5])]
    assert chosen(queue(*moves, limits=Limits(2, 100, 100)), running=api) == [("t", 3)]


def test_a_partition_already_moving_is_not_started_again() -> None:
    q1 = queue(shape(0, [1], [4]), shape(1, [1], [5]), batch_id="a")
    q2 = queue(shape(1, [2], [6]), batch_id="b")
    assert chosen(q1, q2, running=[shape(0, [2], [3])]) == [("t", 1)]


# --- order ---------------------------------------------------------------------------------------


def test_priority_first_then_age() -> None:
    low = queue(shape(0, [1], [4]), batch_id="low", priority=0, created_ms=1)
    high = queue(shape(1, [2], [4]), batch_id="high", priority=5, created_ms=9)
    old = queue(shape(2, [3], [4]), batch_id="old", priority=5, created_ms=2)
    starts = choose_moves((), (low, high, old), 1000, {}, set())
    assert starts == (Start("old", ("t", 2)), Start("high", ("t", 1)), Start("low", ("t", 0)))
    assert [s.batch_id for s in choose_moves((), (low, high, old), 2, {}, set())] == ["old", "high"]


SIZES = {("t", 0): 30, ("t", 1): 10, ("t", 2): 20, ("t", 3): 10}


@pytest.mark.parametrize(
    ("strategy", "order"),
    [
        ((), [0, 1, 2, 3]),
        ((Strategy.SMALL_FIRST,), [1, 3, 2, 0]),
        ((Strategy.LARGE_FIRST,), [0, 2, 1, 3]),
        ((Strategy.POSTPONE_UNDER_REPLICATED,), [0, 2, 3, 1]),
        ((Strategy.POSTPONE_UNDER_REPLICATED, Strategy.SMALL_FIRST), [3, 2, 0, 1]),
        ((Strategy.SMALL_FIRST, Strategy.POSTPONE_UNDER_REPLICATED), [3, 1, 2, 0]),
    ],
)
def test_strategies_chain_in_the_order_listed(strategy: tuple[Strategy, ...], order: list[int]) -> None:
    moves = [shape(p, [p], [p + 10]) for p in range(4)]
    picked = chosen(queue(*moves, strategy=strategy), sizes=SIZES, under=[("t", 1)])
    assert picked == [("t", p) for p in order]


def test_spread_brokers_goes_round_robin_across_destinations() -> None:
    # the batch lists every move to broker 4 first: in order, the cluster cap of 3 gives broker 4
    # all three slots; round-robin gives one each to brokers 4, 5 and 6
    moves = [shape(p, [1], [4]) for p in range(3)] + [
        shape(3, [2], [5]),
        shape(4, [3], [6]),
        shape(5, [3], [6]),
    ]
    assert chosen(queue(*moves), cap=3) == [("t", 0), ("t", 1), ("t", 2)]
    assert chosen(queue(*moves, strategy=[Strategy.SPREAD_BROKERS]), cap=3) == [("t", 0), ("t", 3), ("t", 4)]
    everything = chosen(queue(*moves, strategy=[Strategy.SPREAD_BROKERS]))
    assert everything == [("t", 0), ("t", 3), ("t", 4), ("t", 1), ("t", 5), ("t", 2)]


def test_spread_brokers_queues_follow_the_other_strategies() -> None:
    moves = [shape(0, [1], [4]), shape(1, [1], [4]), shape(2, [2], [5]), shape(3, [2], [5])]
    sizes = {("t", 0): 9, ("t", 1): 1, ("t", 2): 9, ("t", 3): 1}
    strategy = [Strategy.SPREAD_BROKERS, Strategy.SMALL_FIRST]
    assert chosen(queue(*moves, strategy=strategy), sizes=sizes) == [("t", 1), ("t", 3), ("t", 0), ("t", 2)]


def test_queue_of_takes_only_pending_moves_of_runnable_batches() -> None:
    batch = submitted(spec(move(0), move(1)))
    q = queue_of(batch, lambda tp, m: move_shape(tp, m.origins, m.target, m.origins[0]))
    assert q is not None and [s.tp for s in q.pending] == [("orders", 0), ("orders", 1)]
    assert q.pending[0].destinations == {4, 5, 6} and q.pending[0].sources == {1, 2, 3}
    started = moves_started(batch, {("orders", 0): (1, 2, 3)}, 2000)
    q = queue_of(started, lambda tp, m: move_shape(tp, m.origins, m.target, None))
    assert q is not None and [s.tp for s in q.pending] == [("orders", 1)]
    assert queue_of(pause(batch, 2000), lambda tp, m: None) is None


# --- properties ----------------------------------------------------------------------------------

BROKERS = range(1, 8)
replica_sets = st.lists(st.sampled_from(BROKERS), min_size=1, max_size=4, unique=True).map(tuple)
limits = st.builds(Limits, st.integers(1, 4), st.integers(1, 12), st.integers(1, 3))
strategies = st.lists(st.sampled_from(list(Strategy)), unique=True, max_size=3).filter(
    lambda s: not {Strategy.SMALL_FIRST, Strategy.LARGE_FIRST} <= set(s)
)


@st.composite
def scenarios(
    draw: st.DrawFn,
) -> tuple[list[MoveShape], list[BatchQueue], int, dict[TopicPartition, int], set[TopicPartition]]:
    tps = draw(
        st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 20)), unique=True, min_size=1, max_size=40)
    )
    shapes = [
        move_shape(tp, cur, tgt, cur[0])
        for tp, cur, tgt in ((tp, draw(replica_sets), draw(replica_sets)) for tp in tps)
    ]
    n_api = draw(st.integers(0, len(shapes) // 3))
    running, rest = shapes[:n_api], shapes[n_api:]
    queues: list[BatchQueue] = []
    for i in range(draw(st.integers(1, 3))):
        part = rest[i::3]
        queues.append(
            BatchQueue(
                f"b{i}",
                draw(st.integers(0, 2)),
                draw(st.integers(0, 5)),
                draw(limits),
                tuple(draw(strategies)),
                tuple(part),
            )
        )
    sizes = {tp: draw(st.integers(0, 1000)) for tp in tps}
    under = {tp for tp in tps if draw(st.booleans())}
    return running, queues, draw(st.integers(1, 15)), sizes, under


def assert_within_caps(
    running: Sequence[MoveShape], queues: Sequence[BatchQueue], cap: int, starts: Sequence[Start]
) -> None:
    """Replay the starts, counting from scratch: each fits its batch's caps and the cluster cap."""
    by_id = {q.batch_id: q for q in queues}
    shapes = {(q.batch_id, m.tp): m for q in queues for m in q.pending}
    flight = list(running)
    for start in starts:
        m, lim = shapes[(start.batch_id, start.tp)], by_id[start.batch_id].limits
        flight.append(m)
        incoming = Counter(b for f in flight for b in f.destinations)
        outgoing = Counter(b for f in flight for b in f.sources)
        leaders = Counter(b for f in flight for b in f.leader_brokers)
        assert len(flight) <= min(cap, lim.moves_in_cluster)
        assert all(incoming[b] <= lim.moves_per_broker for b in m.destinations)
        assert all(outgoing[b] <= lim.moves_per_broker for b in m.sources)
        assert all(leaders[b] <= lim.leader_moves_per_broker for b in m.leader_brokers)


@pytest.mark.timeout(60)
@settings(max_examples=examples(150), deadline=None)
@given(scenarios())
def test_no_cap_is_ever_exceeded_and_no_move_starts_twice(
    scenario: tuple[list[MoveShape], list[BatchQueue], int, dict[TopicPartition, int], set[TopicPartition]],
) -> None:
    running, queues, cap, sizes, under = scenario
    starts = choose_moves(running, queues, cap, sizes, under)
    tps = [s.tp for s in starts]
    assert len(tps) == len(set(tps)) and not set(tps) & {m.tp for m in running}
    assert_within_caps(running, queues, cap, starts)
    assert choose_moves(running, queues, cap, sizes, under) == starts  # deterministic


@pytest.mark.timeout(60)
@settings(max_examples=examples(100), deadline=None)
@given(scenarios(), st.randoms(use_true_random=False))
def test_every_move_starts_in_the_end_as_moves_complete(
    scenario: tuple[list[MoveShape], list[BatchQueue], int, dict[TopicPartition, int], set[TopicPartition]],
    rnd: object,
) -> None:
    running, queues, cap, sizes, under = scenario
    pending = {q.batch_id: list(q.pending) for q in queues}
    started: list[TopicPartition] = []
    flight = list(running)
    for _ in range(1000):
        live = [
            BatchQueue(q.batch_id, q.priority, q.created_ms, q.limits, q.strategy, tuple(pending[q.batch_id]))
            for q in queues
        ]
        starts = choose_moves(flight, live, cap, sizes, under)
        assert_within_caps(flight, live, cap, starts)
        for s in starts:
            m = next(m for m in pending[s.batch_id] if m.tp == s.tp)
            pending[s.batch_id].remove(m)
            flight.append(m)
            started.append(s.tp)
        if not any(pending.values()):
            break
        assert flight, "nothing in flight and nothing started: a move would wait for ever"
        done = rnd.sample(flight, rnd.randint(1, len(flight)))  # type: ignore[attr-defined]
        flight = [m for m in flight if m not in done]
    assert not any(pending.values())
    assert sorted(started) == sorted(m.tp for q in queues for m in q.pending)

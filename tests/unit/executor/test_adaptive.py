"""Adaptive concurrency's pure decisions (``executor/adaptive.py``): where the batch presses on its
caps, when caps rise (healthy, binding, the receiver fetching near its bandwidth) and when they
halve (a stuck move, a partition outside the moves under-replicated), always within the bounds;
the scheduler honouring per-broker caps; the merge into the batch (a cap back at the initial one
forgotten). The controller side runs in tests/integration/test_adaptive.py."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from reassignd.executor.adaptive import (
    HEALTHY,
    STUCK,
    UNDER_REPLICATED,
    BrokerRate,
    Pressure,
    SampleHealth,
    adjust,
    fetch_rates,
    pressure,
    under_replicated_outside,
)
from reassignd.executor.lifecycle import caps_changed
from reassignd.executor.model import Adaptive, Limits
from reassignd.executor.scheduler import BatchQueue, MoveShape, choose_moves
from tests.examples import examples
from tests.unit.executor.batch_helpers import move, spec, submitted

BOUNDS = Adaptive(1, 8)
OK = SampleHealth(0, 0)
FAST = BrokerRate(90.0, 100.0)
SLOW = BrokerRate(10.0, 100.0)


def shape(p: int, sources: set[int], destinations: set[int]) -> MoveShape:
    return MoveShape(("t", p), frozenset(sources), frozenset(destinations))


def test_pressure_finds_the_brokers_whose_cap_holds_a_pending_move_back() -> None:
    running = [shape(0, {1}, {3}), shape(1, {2}, {4})]
    pending = [shape(2, {1}, {3}), shape(3, {2}, {5})]
    where = pressure(running, running, pending, {4: 2}, 1)
    # 1 sends one (its cap 1), 3 receives one (cap 1); 2 sends one but 5 is free; 4 is not in the way
    assert where == Pressure(frozenset({1, 2, 3, 4, 5}), frozenset({1, 2, 3}), frozenset({3, 4}))


def test_healthy_raises_binding_brokers_by_one_when_receivers_use_their_share() -> None:
    where = Pressure(frozenset({1, 3, 4}), frozenset({1, 3, 4}), frozenset({3, 4}))
    change = adjust({}, 1, BOUNDS, OK, where, {3: FAST, 4: SLOW})
    assert change is not None and change.reason == HEALTHY and change.raised
    # 4 receives copies far below its bandwidth: more moves would not help it; 1 only sends
    assert (dict(change.caps), dict(change.previous)) == ({1: 2, 3: 2}, {1: 1, 3: 1})


def test_a_receiver_whose_agent_reports_no_bandwidth_is_left_alone() -> None:
    where = Pressure(frozenset({3}), frozenset({3}), frozenset({3}))
    assert adjust({}, 1, BOUNDS, OK, where, {3: BrokerRate(50.0, None)}) is None
    assert adjust({}, 1, BOUNDS, OK, where, {}) is None


def test_unhealthy_halves_every_broker_of_the_batch_never_below_min() -> None:
    where = Pressure(frozenset({1, 3}), frozenset(), frozenset({3}))
    change = adjust({1: 7, 3: 2, 9: 5}, 4, Adaptive(2, 8), SampleHealth(0, 1), where, {})
    assert change is not None and change.reason == STUCK and not change.raised
    assert dict(change.caps) == {1: 3, 9: 2}  # 3 at 2 stays at the minimum
    change = adjust({}, 4, Adaptive(2, 8), SampleHealth(3, 0), where, {})
    assert change is not None and change.reason == UNDER_REPLICATED
    assert dict(change.caps) == {1: 2, 3: 2}


def test_at_max_nothing_rises() -> None:
    where = Pressure(frozenset({1}), frozenset({1}), frozenset())
    assert adjust({1: 8}, 1, BOUNDS, OK, where, {}) is None


@settings(max_examples=examples(300), deadline=None)
@given(
    caps=st.dictionaries(st.integers(0, 5), st.integers(1, 40), max_size=5),
    initial=st.integers(1, 40),
    low=st.integers(1, 10),
    span=st.integers(0, 10),
    health=st.builds(SampleHealth, st.integers(0, 2), st.integers(0, 2)),
    binding=st.frozensets(st.integers(0, 5)),
    rates=st.dictionaries(
        st.integers(0, 5), st.builds(BrokerRate, st.floats(0, 200), st.none() | st.floats(0, 200))
    ),
)
def test_every_new_cap_is_within_the_bounds(
    caps: dict[int, int],
    initial: int,
    low: int,
    span: int,
    health: SampleHealth,
    binding: frozenset[int],
    rates: dict[int, BrokerRate],
) -> None:
    bounds = Adaptive(low, low + span)
    where = Pressure(binding | frozenset(caps), binding, frozenset(b for b in binding if b % 2))
    change = adjust(caps, initial, bounds, health, where, rates)
    if change is not None:
        assert all(bounds.min <= c <= bounds.max for c in change.caps.values())
        assert all(change.caps[b] != caps.get(b, initial) for b in change.caps)


def test_fetch_rates_count_every_follower() -> None:
    rates = fetch_rates(
        [(3, 40.0, False), (3, 30.0, False), (3, 99.0, True), (4, 5.0, False)], {3: 100.0, 5: None}
    )
    assert rates == {3: BrokerRate(169.0, 100.0), 4: BrokerRate(5.0, None), 5: BrokerRate(0.0, None)}


def test_under_replicated_outside_counts_live_replicas_out_of_the_isr() -> None:
    partitions = [((1, 2), (1, 2)), ((1, 2), (1,)), ((1, 3), (1,))]  # 3 is not live: not counted
    assert under_replicated_outside(partitions, {1, 2}) == 1


def test_the_scheduler_honours_each_brokers_cap() -> None:
    moves = tuple(shape(p, {1}, {3 if p < 4 else 4}) for p in range(8))
    limits = Limits(1, 100, 100, Adaptive(1, 8))
    q = BatchQueue("b", 0, 0, limits, (), moves, {1: 8, 3: 3})
    started = [s.tp for s in choose_moves((), (q,), 1000, {}, set())]
    assert started == [("t", 0), ("t", 1), ("t", 2), ("t", 4)]  # 3 takes three, 4 one


def test_caps_merge_into_the_batch_and_the_initial_cap_is_forgotten() -> None:
    batch = submitted(dataclasses.replace(spec(move(0)), limits=Limits(2, 100, 100, Adaptive(1, 8))))
    assert batch.cap(7) == 2
    raised = caps_changed(batch, {3: 4, 4: 3}, 5000)
    assert dict(raised.broker_caps) == {3: 4, 4: 3} and raised.cap(3) == 4 and raised.updated_ms == 5000
    back = caps_changed(raised, {3: 2}, 6000)
    assert dict(back.broker_caps) == {4: 3}
    assert caps_changed(back, {4: 3}, 7000) is back  # nothing changed: the same batch, nothing to write


def test_the_initial_cap_is_moves_per_broker_within_the_bounds() -> None:
    assert Limits(10, 1, 1, Adaptive(2, 4)).initial_cap == 4
    assert Limits(1, 1, 1, Adaptive(2, 4)).initial_cap == 2
    assert Limits(3, 1, 1).initial_cap == 3


def test_a_healthy_cap_grows_by_half_of_itself_at_least_one_never_past_max() -> None:
    where = Pressure(frozenset({1, 2, 3}), frozenset({1, 2, 3}), frozenset())
    change = adjust({1: 1, 2: 6, 3: 7}, 1, Adaptive(1, 10), OK, where, {})
    assert change is not None and change.raised
    assert dict(change.caps) == {1: 2, 2: 9, 3: 10}  # +1 (the least), +3, +3 held at max
    one = Pressure(frozenset({1}), frozenset({1}), frozenset())
    caps, seen = {1: 2}, [2]
    while change := adjust(caps, 2, Adaptive(1, 40), OK, one, {}):
        caps = dict(change.caps)
        seen.append(caps[1])
    assert seen == [2, 3, 4, 6, 9, 13, 19, 28, 40]

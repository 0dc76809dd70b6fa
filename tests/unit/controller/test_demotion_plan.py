"""Demotion and promotion, decided (``controller/leadership/demotion_plan.py``): the broker last,
a live in-sync replica first, the replica set never changed; refusals per partition with the
reason; promotion restores recorded orders where the replicas still match."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reassignd.controller.leadership.demotion_plan import (
    ELIGIBLE_LEADERS_NOT_AVAILABLE,
    REASSIGNMENT_IN_PROGRESS,
    STALE_PLAN,
    PartitionNow,
    demoted_order,
    plan_demotion,
    plan_promotion,
)
from tests.examples import examples

LIVE = {1, 2, 3, 4}


def now(
    replicas: tuple[int, ...], leader: int, isr: tuple[int, ...] | None = None, **kw: bool
) -> PartitionNow:
    return PartitionNow(replicas, leader, replicas if isr is None else isr, **kw)


def test_demote_reorders_elects_where_it_leads_and_records_the_orders_before() -> None:
    partitions = {
        ("t", 0): now((1, 2, 3), 1),
        ("t", 1): now((2, 1, 3), 2),  # a follower: reordered, no election
        ("t", 2): now((1, 2, 3), 1, (1, 3)),  # 2 out of sync: 3 goes first
        ("t", 3): now((1,), 1),  # alone: refused
        ("t", 4): now((1, 2), 1, moving=True),  # being moved: refused
        ("t", 5): now((2, 3), 2),  # does not host 1: ignored
        ("t", 6): now((2, 3, 1), 2),  # already last: nothing to do
        ("t", 7): now((1, 2), 1, deleting=True),  # being deleted: left alone
    }
    plan = plan_demotion(1, partitions, LIVE, {})
    assert dict(plan.reorders) == {("t", 0): (2, 3, 1), ("t", 1): (2, 3, 1), ("t", 2): (3, 2, 1)}
    assert plan.elections == (("t", 0), ("t", 2))
    assert {tp: r.error_code for tp, r in plan.refused.items()} == {
        ("t", 3): ELIGIBLE_LEADERS_NOT_AVAILABLE,
        ("t", 4): REASSIGNMENT_IN_PROGRESS,
    }
    assert "only live in-sync replica of t-3" in plan.refused[("t", 3)].message
    assert dict(plan.record) == {("t", 0): (1, 2, 3), ("t", 1): (2, 1, 3), ("t", 2): (1, 2, 3)}


def test_a_second_demotion_keeps_the_first_recorded_order() -> None:
    plan = plan_demotion(1, {("t", 0): now((2, 1, 3), 2)}, LIVE, {("t", 0): (1, 2, 3)})
    assert dict(plan.record) == {("t", 0): (1, 2, 3)}


def test_a_dead_replica_cannot_take_the_leadership() -> None:
    plan = plan_demotion(1, {("t", 0): now((1, 2), 1)}, {1}, {})
    assert plan.refused[("t", 0)].error_code == ELIGIBLE_LEADERS_NOT_AVAILABLE


@settings(max_examples=examples(200), deadline=None)
@given(
    replicas=st.lists(st.integers(1, 6), min_size=1, max_size=5, unique=True).map(tuple),
    broker=st.integers(1, 6),
    in_sync=st.sets(st.integers(1, 6)),
)
def test_a_demoted_order_is_the_same_set_with_the_broker_last(
    replicas: tuple[int, ...], broker: int, in_sync: set[int]
) -> None:
    order = demoted_order(replicas, broker, in_sync)
    assert sorted(order) == sorted(replicas)
    if broker in replicas:
        assert order[-1] == broker
    others = [r for r in replicas if r != broker]
    if any(r in in_sync for r in others):  # the election that follows can elect the first
        assert order[0] in in_sync


def test_promote_restores_matching_orders_and_refuses_the_rest() -> None:
    recorded = {
        ("t", 0): (1, 2, 3),
        ("t", 1): (1, 2),
        ("t", 2): (1, 4),
        ("t", 3): (1, 2),
        ("gone", 0): (1, 2),
    }
    partitions = {
        ("t", 0): now((2, 3, 1), 2),
        ("t", 1): now((2, 5), 2),  # replicas changed since: refused, forgotten
        ("t", 2): now((4, 1), 4, moving=True),  # being moved: refused, kept for later
        ("t", 3): now((1, 2), 1),  # already in the recorded order and led by it
    }
    plan = plan_promotion(1, recorded, partitions, LIVE)
    assert dict(plan.reorders) == {("t", 0): (1, 2, 3)}
    assert plan.elections == (("t", 0),)
    assert {tp: r.error_code for tp, r in plan.refused.items()} == {
        ("t", 1): STALE_PLAN,
        ("t", 2): REASSIGNMENT_IN_PROGRESS,
    }
    assert plan.forget == frozenset({("t", 0), ("t", 1), ("t", 3), ("gone", 0)})

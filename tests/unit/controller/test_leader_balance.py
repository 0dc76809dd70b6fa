"""Auto leader rebalance decisions (Kafka's checkAndTriggerAutoLeaderRebalance): the per-broker
imbalance ratio, the threshold, and which partitions get a preferred-replica election."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from reassignd.controller.leadership.leader_balance import (
    NOT_IN_ISR,
    NOT_LIVE,
    REASSIGNING,
    BrokerImbalance,
    Leadership,
    plan_rebalance,
)
from reassignd.topic_partition import TopicPartition


def led(replicas: tuple[int, ...], leader: int | None, isr: tuple[int, ...] | None = None) -> Leadership:
    return Leadership(replicas, leader, replicas if isr is None else isr)


def test_a_broker_over_the_threshold_gets_its_leadership_back() -> None:
    # broker 1 prefers 4 partitions and leads 3 of them: 25 % > 10 %
    partitions = {
        ("t", 0): led((1, 2), 1),
        ("t", 1): led((1, 2), 1),
        ("t", 2): led((1, 2), 1),
        ("t", 3): led((1, 2), 2),
        ("t", 4): led((2, 1), 2),
    }
    plan = plan_rebalance(partitions, live={1, 2}, percentage=10)
    assert plan.imbalance(1) == BrokerImbalance(1, 4, 1)
    assert plan.imbalance(1) is not None and plan.imbalance(1).ratio == 0.25  # type: ignore[union-attr]
    assert plan.imbalance(2) == BrokerImbalance(2, 1, 0)
    assert plan.over_threshold == (1,)
    assert plan.elections == (("t", 3),)
    assert plan.skipped == {}


def test_a_ratio_equal_to_the_threshold_is_not_over_it() -> None:
    partitions = {("t", p): led((1, 2), 2 if p == 0 else 1) for p in range(10)}  # 1 of 10: exactly 10 %
    assert plan_rebalance(partitions, {1, 2}, 10).elections == ()
    assert plan_rebalance(partitions, {1, 2}, 9).elections == (("t", 0),)
    assert plan_rebalance(partitions, {1, 2}, 0).elections == (("t", 0),)


def test_only_partitions_whose_preferred_replica_can_lead_are_elected() -> None:
    partitions = {
        ("t", 0): led((1, 2, 3), 2),  # electable
        ("t", 1): led((1, 2, 3), 2, (2, 3)),  # 1 out of the ISR
        ("t", 2): led((3, 1, 2), 1),  # 3 is not live
        ("t", 3): led((3, 2), 2),
        ("m", 0): led((1, 2), 2),  # being reassigned
    }
    plan = plan_rebalance(partitions, {1, 2}, 10, reassigning={("m", 0)})
    assert plan.over_threshold == (1, 3)
    assert plan.elections == (("t", 0),)
    assert plan.skipped == {
        ("t", 1): NOT_IN_ISR,
        ("t", 2): NOT_LIVE,
        ("t", 3): NOT_LIVE,
        ("m", 0): REASSIGNING,
    }


def test_topics_being_deleted_count_for_nothing() -> None:
    partitions = {("gone", 0): led((1, 2), 2), ("t", 0): led((1, 2), 1)}
    plan = plan_rebalance(partitions, {1, 2}, 10, deleting={"gone"})
    assert plan.imbalance(1) == BrokerImbalance(1, 1, 0)
    assert plan.elections == ()


def test_a_partition_without_a_known_state_counts_as_led_by_nobody_else() -> None:
    # Kafka counts it among the broker's partitions but not among those led elsewhere
    partitions = {("t", 0): led((1, 2), None), ("t", 1): led((1, 2), 2)}
    plan = plan_rebalance(partitions, {1, 2}, 10)
    assert plan.imbalance(1) == BrokerImbalance(1, 2, 1)
    assert plan.elections == (("t", 1),)


def test_a_partition_without_a_leader_is_led_elsewhere() -> None:
    plan = plan_rebalance({("t", 0): led((1, 2), -1, (1,))}, {1, 2}, 10)
    assert plan.elections == (("t", 0),)


def test_a_completed_move_whose_leader_is_not_the_first_target_is_rebalanced() -> None:
    # [1, 2] moved to [3, 1]: phase B kept leader 1 (it is in the targets); 3 is preferred now
    plan = plan_rebalance({("t", 0): led((3, 1), 1, (1, 3))}, {1, 2, 3}, 10)
    assert plan.elections == (("t", 0),)
    # while it was moving (RS = [3, 1, 2]) it was left alone
    moving = plan_rebalance({("t", 0): led((3, 1, 2), 1, (1, 2))}, {1, 2, 3}, 10, reassigning={("t", 0)})
    assert moving.elections == () and moving.skipped == {("t", 0): REASSIGNING}


def test_nothing_to_decide_on_an_empty_cluster() -> None:
    plan = plan_rebalance({}, set(), 10)
    assert plan.imbalances == () and plan.elections == () and plan.skipped == {}


# --- properties ----------------------------------------------------------------------------------

BROKERS = st.integers(1, 5)


@st.composite
def clusters(
    draw: st.DrawFn,
) -> tuple[dict[TopicPartition, Leadership], set[int], set[TopicPartition], set[str], int]:
    partitions: dict[TopicPartition, Leadership] = {}
    for topic in draw(st.lists(st.sampled_from("abc"), unique=True, max_size=3)):
        for p in range(draw(st.integers(0, 8))):
            replicas = tuple(draw(st.lists(BROKERS, min_size=0, max_size=3, unique=True)))
            leader = draw(st.none() | st.just(-1) | st.sampled_from(replicas or (1,)))
            isr = tuple(draw(st.lists(st.sampled_from(replicas), unique=True)) if replicas else ())
            partitions[(topic, p)] = Leadership(replicas, leader, isr)
    live = set(draw(st.lists(BROKERS, unique=True)))
    reassigning = {tp for tp in partitions if draw(st.booleans()) and draw(st.booleans())}
    deleting = {t for t, _ in partitions if draw(st.integers(0, 5)) == 0}
    return partitions, live, reassigning, deleting, draw(st.integers(0, 100))


def _elected(
    partitions: dict[TopicPartition, Leadership], tps: tuple[TopicPartition, ...]
) -> dict[TopicPartition, Leadership]:
    """The cluster after each election of ``tps`` made its preferred replica the leader."""
    after = dict(partitions)
    for tp in tps:
        p = after[tp]
        after[tp] = Leadership(p.replicas, p.replicas[0], p.isr)
    return after


@given(cluster=clusters())
def test_every_election_can_succeed_and_every_possible_one_is_made(
    cluster: tuple[dict[TopicPartition, Leadership], set[int], set[TopicPartition], set[str], int],
) -> None:
    partitions, live, reassigning, deleting, percentage = cluster
    plan = plan_rebalance(partitions, live, percentage, reassigning=reassigning, deleting=deleting)
    over = set(plan.over_threshold)
    for tp in plan.elections:
        p = partitions[tp]
        preferred = p.replicas[0]
        assert preferred in over and preferred in live and preferred in p.isr
        assert p.leader is not None and p.leader != preferred
        assert tp not in reassigning and tp[0] not in deleting
    # every partition of a broker over the threshold that another broker leads is either
    # elected or skipped with its reason, never both, never forgotten
    wanting = {
        tp
        for tp, p in partitions.items()
        if p.replicas
        and tp[0] not in deleting
        and p.replicas[0] in over
        and p.leader is not None
        and p.leader != p.replicas[0]
    }
    assert set(plan.elections) | set(plan.skipped) == wanting
    assert not set(plan.elections) & set(plan.skipped)
    # the ratios are shares of the partitions each broker prefers
    counted = [p for tp, p in partitions.items() if p.replicas and tp[0] not in deleting]
    assert sum(b.preferred for b in plan.imbalances) == len(counted)
    for b in plan.imbalances:
        assert 0 <= b.led_elsewhere <= b.preferred and 0.0 <= b.ratio <= 1.0
        assert (b.broker_id in over) == (b.ratio > percentage / 100)  # Kafka's formula


@given(cluster=clusters())
def test_a_second_check_right_after_the_elections_has_nothing_to_do(
    cluster: tuple[dict[TopicPartition, Leadership], set[int], set[TopicPartition], set[str], int],
) -> None:
    partitions, live, reassigning, deleting, percentage = cluster
    first = plan_rebalance(partitions, live, percentage, reassigning=reassigning, deleting=deleting)
    after = _elected(partitions, first.elections)
    second = plan_rebalance(after, live, percentage, reassigning=reassigning, deleting=deleting)
    assert second.elections == ()
    # and no broker's imbalance grew
    for b in second.imbalances:
        before = first.imbalance(b.broker_id)
        assert before is not None and b.led_elsewhere <= before.led_elsewhere

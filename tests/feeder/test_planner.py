"""The placement math on examples a reader can check (no JVM): each goal on a cluster built with
Kafka's own placement."""

from __future__ import annotations

import pytest

from reassignd.feeder.budget import apportion, water_level
from reassignd.feeder.goals import (
    AddBrokers,
    Decommission,
    GoalError,
    PlanOptions,
    Rebalance,
    ReplicationFactor,
    parse_goal,
)
from reassignd.feeder.loads import BYTES, LEADERS, REPLICAS, balance
from reassignd.feeder.model import CURRENT, ORIGINAL, SIZE, build_cluster, make_row
from reassignd.feeder.planner import plan_locally
from tests.feeder.conftest import kafka_cluster


def racks_distinct(replicas: tuple[int, ...], racks: dict[int, str | None]) -> bool:
    return len({racks[b] for b in replicas}) == len(replicas)


def test_parse_goals() -> None:
    assert parse_goal("decommission:3,1") == Decommission(frozenset({1, 3}))
    assert parse_goal("add:7") == AddBrokers(frozenset({7}))
    assert parse_goal("rebalance:leaders") == Rebalance("leaders")
    assert parse_goal("rf:orders.v2=4") == ReplicationFactor("orders.v2", 4)
    assert str(parse_goal("decommission:3,1")) == "decommission:1,3"
    for bad in ("decommission", "decommission:a", "rebalance:cpu", "rf:orders", "rf:orders=0", "move:1"):
        with pytest.raises(GoalError, match="goal"):
            parse_goal(bad)


def test_apportion_and_water_level() -> None:
    assert apportion(10, [1, 1, 1]) == [4, 3, 3]
    assert apportion(7, [0, 2, 5]) == [0, 2, 5]
    assert sum(apportion(1001, [3, 7, 11])) == 1001
    assert water_level([0, 10, 30], 20) == 15  # 15 + 5 = 20 bytes fill the two emptiest
    assert water_level([5, 5], 0) == 5


def test_decommission_moves_only_the_leaving_brokers_replicas() -> None:
    cluster = kafka_cluster(brokers=12, racks=3, topics=8, partitions=24)
    result = plan_locally(cluster, [Decommission(frozenset({2, 7}))], PlanOptions(), tasks=3)
    on_leaving = [r for r in cluster.rows if {2, 7} & set(r[CURRENT])]
    assert {(r[0], r[1]) for r in result.moves} == {(r[0], r[1]) for r in on_leaving}
    for row in result.moves:
        assert set(row[ORIGINAL]) - set(row[CURRENT]) <= {2, 7}
        assert not {2, 7} & set(row[CURRENT])
        assert racks_distinct(row[CURRENT], dict(cluster.racks))
        # the preferred leader stays unless it is the replica leaving
        if row[ORIGINAL][0] not in (2, 7):
            assert row[CURRENT][0] == row[ORIGINAL][0]
    assert result.after[2][REPLICAS] == result.after[7][REPLICAS] == 0
    assert (
        result.copied_bytes
        == result.steps[0].lower_bound
        == sum(r[SIZE] for r in on_leaving if 2 in r[3]) + sum(r[SIZE] for r in on_leaving if 7 in r[3])
    )


def test_rebalance_bytes_reaches_the_band_with_little_movement() -> None:
    cluster = kafka_cluster(brokers=20, racks=4, topics=20, partitions=40, sigma=1.2)
    result = plan_locally(cluster, [Rebalance("bytes")], PlanOptions(), tasks=2)
    before = balance(v[BYTES] for v in result.before.values())
    after = balance(v[BYTES] for v in result.after.values())
    assert before > 1.08
    assert after <= 1.05
    assert result.copied_bytes <= 1.05 * result.steps[0].lower_bound
    for row in result.moves:
        assert racks_distinct(row[CURRENT], dict(cluster.racks))


def test_add_brokers_fills_only_the_new_ones() -> None:
    base = kafka_cluster(brokers=9, racks=3, topics=10, partitions=30)
    racks = {**base.racks, 10: "r1", 11: "r2", 12: "r0"}
    cluster = build_cluster(racks, base.rows)
    result = plan_locally(cluster, [AddBrokers(frozenset({10, 11, 12}))], PlanOptions())
    mean = sum(v[BYTES] for v in result.after.values()) / 12
    for row in result.moves:
        assert set(row[CURRENT]) - set(row[ORIGINAL]) <= {10, 11, 12}
    for b in (10, 11, 12):
        assert 0.8 * mean <= result.after[b][BYTES] <= mean


def test_leaders_goal_reorders_without_moving_data() -> None:
    rows = [make_row("t", p, (1, 2, 3) if p % 4 else (2, 3, 1), 100) for p in range(12)]
    cluster = build_cluster({1: "a", 2: "b", 3: "c"}, rows)
    result = plan_locally(cluster, [Rebalance("leaders")], PlanOptions())
    assert result.copied_bytes == 0
    assert all(set(r[CURRENT]) == set(r[ORIGINAL]) for r in result.moves)
    assert sorted(v[LEADERS] for v in result.after.values()) == [4, 4, 4]


def test_replication_factor_up_and_down() -> None:
    cluster = kafka_cluster(brokers=6, racks=3, topics=2, partitions=10, rf=2)
    up = plan_locally(cluster, [ReplicationFactor("topic-0", 3)], PlanOptions())
    assert {r[0] for r in up.moves} == {"topic-0"}
    for row in up.moves:
        assert len(row[CURRENT]) == 3 and row[CURRENT][:2] == row[ORIGINAL]
        assert racks_distinct(row[CURRENT], dict(cluster.racks))
    down = plan_locally(cluster, [ReplicationFactor("topic-1", 1)], PlanOptions())
    assert all(r[CURRENT] == r[ORIGINAL][:1] for r in down.moves)
    assert down.copied_bytes == 0


def test_topics_regex_and_byte_cap() -> None:
    cluster = kafka_cluster(brokers=9, racks=3, topics=4, partitions=20)
    only = plan_locally(cluster, [Decommission(frozenset({1}))], PlanOptions(topics="topic-[01]"))
    assert {r[0] for r in only.moves} == {"topic-0", "topic-1"}
    assert only.left_behind[1] > 0  # topic-2 and topic-3 stay on broker 1
    full = plan_locally(cluster, [Decommission(frozenset({1}))], PlanOptions())
    cap = full.copied_bytes // 3
    capped = plan_locally(cluster, [Decommission(frozenset({1}))], PlanOptions(max_move_bytes=cap))
    assert 0 < capped.copied_bytes <= cap
    assert capped.left_behind[1] > 0


def test_excluded_brokers_receive_nothing() -> None:
    cluster = kafka_cluster(brokers=12, racks=3, topics=6, partitions=20)
    result = plan_locally(
        cluster,
        [Decommission(frozenset({1})), Rebalance("bytes")],
        PlanOptions(exclude_brokers=frozenset({4, 5})),
    )
    for row in result.moves:
        assert not (set(row[CURRENT]) - set(row[ORIGINAL])) & {4, 5}


def test_unknown_brokers_and_impossible_rf_are_goal_errors() -> None:
    cluster = kafka_cluster(brokers=4, racks=2, topics=1, partitions=4, rf=2)
    with pytest.raises(GoalError, match=r"unknown brokers \[9\]"):
        plan_locally(cluster, [Decommission(frozenset({9}))], PlanOptions())
    with pytest.raises(GoalError, match="5 replicas need 5 brokers"):
        plan_locally(cluster, [ReplicationFactor("topic-0", 5)], PlanOptions())


def test_later_goals_never_fill_a_decommissioned_broker() -> None:
    cluster = kafka_cluster(brokers=12, racks=3, topics=10, partitions=30)
    result = plan_locally(
        cluster, [Decommission(frozenset({3})), Rebalance("bytes"), Rebalance("replicas")], PlanOptions()
    )
    assert result.after[3][REPLICAS] == 0


def test_an_offline_broker_is_emptied_and_receives_nothing() -> None:
    base = kafka_cluster(brokers=9, racks=3, topics=6, partitions=20)
    racks = {b: r for b, r in base.racks.items() if b != 4}
    cluster = build_cluster(racks, base.rows, allow_offline=True)
    assert cluster.offline == {4}
    drained = plan_locally(cluster, [Decommission(frozenset({4}))], PlanOptions())
    assert drained.after[4][REPLICAS] == 0
    kept = plan_locally(cluster, [Rebalance("bytes")], PlanOptions())
    assert kept.after[4][BYTES] <= kept.before[4][BYTES]


def test_rebalance_after_adding_empty_brokers_fills_them_to_the_band() -> None:
    base = kafka_cluster(brokers=9, racks=3, topics=30, partitions=10, sigma=0.5)
    racks = {**base.racks, 10: "r1", 11: "r2", 12: "r0"}
    cluster = build_cluster(racks, base.rows)
    result = plan_locally(cluster, [Rebalance("bytes")], PlanOptions())
    mean = sum(v[BYTES] for v in result.after.values()) / 12
    assert all(abs(v[BYTES] - mean) <= 0.05 * mean for v in result.after.values())
    # no more than the band needs: what the new brokers lacked, give or take a partition each
    assert result.copied_bytes <= result.steps[0].lower_bound * 1.05

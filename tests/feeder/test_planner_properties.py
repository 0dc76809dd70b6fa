"""Hypothesis properties of the placement math, over random clusters and any number of tasks:

* decommission moves only replicas of the named brokers, and keeps a partition's racks distinct
  whenever enough racks have a free broker;
* no goal makes a partition's racks less distinct than the goal forces;
* the same input and seed give the same plan;
* rebalance:bytes fills no broker past the band (mean × (1 + tolerance)) and never makes the
  fullest broker fuller;
* rf:TOPIC=N gives every partition of TOPIC N distinct replicas and keeps its preferred leader;
* add:B moves replicas onto B only, and no more than B lacks of its fair share;
* every plan keeps each partition's replicas distinct and its replication factor (but rf).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reassignd.feeder.goals import AddBrokers, Decommission, PlanOptions, Rebalance, ReplicationFactor
from reassignd.feeder.loads import BYTES
from reassignd.feeder.model import CURRENT, ORIGINAL, Cluster, Row, build_cluster
from reassignd.feeder.planner import plan_locally

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    n_brokers = draw(st.integers(3, 12))
    n_racks = draw(st.integers(1, 4))
    racks: dict[int, str | None] = {
        b: f"r{draw(st.integers(0, n_racks - 1))}" for b in range(1, n_brokers + 1)
    }
    rows: list[Row] = []
    for t in range(draw(st.integers(1, 3))):
        rf = draw(st.integers(1, min(3, n_brokers)))
        for p in range(draw(st.integers(1, 25))):
            replicas = tuple(draw(st.permutations(sorted(racks)))[:rf])
            size = draw(st.integers(0, 10**6))
            rows.append((f"t{t}", p, size, replicas, replicas))
    return build_cluster(racks, rows)


def distinct_racks(replicas: tuple[int, ...], racks: Cluster) -> int:
    return len({racks.racks[b] for b in replicas})


def check_common(cluster: Cluster, moves: tuple[Row, ...], rf_changes: bool = False) -> None:
    for row in moves:
        assert len(set(row[CURRENT])) == len(row[CURRENT])
        if not rf_changes:
            assert len(row[CURRENT]) == len(row[ORIGINAL])


@SETTINGS
@given(clusters(), st.data(), st.integers(1, 4), st.integers(0, 3))
def test_decommission(cluster: Cluster, data: st.DataObject, tasks: int, seed: int) -> None:
    brokers = cluster.broker_ids
    leaving = frozenset(data.draw(st.lists(st.sampled_from(brokers), min_size=1, max_size=len(brokers) - 1)))
    result = plan_locally(cluster, [Decommission(leaving)], PlanOptions(seed=seed), tasks)
    check_common(cluster, result.moves)
    dests = set(brokers) - leaving
    moved = {(r[0], r[1]): r for r in result.moves}
    for row in cluster.rows:
        after = moved.get((row[0], row[1]), row)[CURRENT]
        assert set(row[CURRENT]) - set(after) <= leaving  # only the named brokers' replicas leave
        going = [b for b in row[CURRENT] if b in leaving]
        staying = [b for b in row[CURRENT] if b not in leaving]
        if len(dests) >= len(row[CURRENT]):
            assert not set(after) & leaving
        free_racks = {cluster.racks[d] for d in dests} - {cluster.racks[b] for b in staying}
        if distinct_racks(row[CURRENT], cluster) == len(row[CURRENT]) and len(free_racks) >= len(going):
            assert distinct_racks(after, cluster) == len(after)
        if row[CURRENT][0] not in leaving:
            assert after[0] == row[CURRENT][0]  # the preferred leader stays
    again = plan_locally(cluster, [Decommission(leaving)], PlanOptions(seed=seed), tasks)
    assert again.moves == result.moves


@SETTINGS
@given(clusters(), st.integers(1, 4), st.sampled_from(["bytes", "replicas", "leaders"]))
def test_rebalance(cluster: Cluster, tasks: int, metric: str) -> None:
    options = PlanOptions()
    result = plan_locally(cluster, [Rebalance(metric)], options, tasks)  # type: ignore[arg-type]
    check_common(cluster, result.moves)
    for row in result.moves:
        assert distinct_racks(row[CURRENT], cluster) >= distinct_racks(row[ORIGINAL], cluster)
        if metric == "leaders":
            assert set(row[CURRENT]) == set(row[ORIGINAL])
    if metric == "bytes":
        before = {b: v[BYTES] for b, v in result.before.items()}
        after = {b: v[BYTES] for b, v in result.after.items()}
        upper = int(sum(before.values()) / len(before) * (1 + options.tolerance))
        for b, held in after.items():
            assert held <= before[b] or held <= upper
        assert max(after.values()) <= max(before.values())
    assert plan_locally(cluster, [Rebalance(metric)], options, tasks).moves == result.moves  # type: ignore[arg-type]


@SETTINGS
@given(clusters(), st.integers(1, 4), st.data())
def test_replication_factor(cluster: Cluster, tasks: int, data: st.DataObject) -> None:
    n = data.draw(st.integers(1, len(cluster.racks)))
    result = plan_locally(cluster, [ReplicationFactor("t0", n)], PlanOptions(), tasks)
    check_common(cluster, result.moves, rf_changes=True)
    moved = {(r[0], r[1]): r for r in result.moves}
    for row in cluster.rows:
        after = moved.get((row[0], row[1]), row)[CURRENT]
        if row[0] == "t0":
            assert len(after) == n
            assert after[0] == row[CURRENT][0]
        else:
            assert after == row[CURRENT]


@SETTINGS
@given(clusters(), st.data(), st.integers(1, 4))
def test_add_brokers(cluster: Cluster, data: st.DataObject, tasks: int) -> None:
    brokers = cluster.broker_ids
    new = frozenset(data.draw(st.lists(st.sampled_from(brokers), min_size=1, max_size=len(brokers) - 1)))
    result = plan_locally(cluster, [AddBrokers(new)], PlanOptions(), tasks)
    check_common(cluster, result.moves)
    for row in result.moves:
        assert set(row[CURRENT]) - set(row[ORIGINAL]) <= new
        assert distinct_racks(row[CURRENT], cluster) >= distinct_racks(row[ORIGINAL], cluster)
    metric = result.steps[0].metric
    index = BYTES if metric == "bytes" else 1
    mean = sum(v[index] for v in result.before.values()) / len(brokers)
    for b in new:  # filled up to their fair share at most
        assert result.after[b][index] <= max(result.before[b][index], int(mean))

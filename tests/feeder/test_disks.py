"""The ``disk`` goal's pure parts: one broker's directories balanced by usage of capacity, the
byte budget, the plan's files (``log_dirs``), and the per-directory bars of ``plan.svg``."""

from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET

import pytest

from reassignd.feeder.disks import (
    ANY_DIR,
    DirReplica,
    balance_broker,
    budget_slices,
    usage_spread,
)
from reassignd.feeder.goals import DiskBalance, GoalError, PlanOptions, Rebalance, parse_goal
from reassignd.feeder.inputs import parse_dir_places, parse_snapshot
from reassignd.feeder.model import build_cluster, make_row, with_dirs
from reassignd.feeder.outputs import batches_document, picture_file, plan_file, rollback_file, summary_text
from reassignd.feeder.planner import PlanResult, plan_locally


def _usage(
    replicas: list[DirReplica], caps: dict[str, int], moves: dict[tuple[str, int], str]
) -> dict[str, float]:
    used = dict.fromkeys(caps, 0)
    for t, p, size, d, _ in replicas:
        used[moves.get((t, p), d)] += size
    return {d: used[d] / caps[d] for d in caps}


def test_goal_parses() -> None:
    assert parse_goal("disk") == DiskBalance()
    assert str(parse_goal("disk")) == "disk"
    with pytest.raises(GoalError):
        parse_goal("disks")


def test_one_broker_balanced_by_usage_of_capacity() -> None:
    rng = random.Random(3)
    caps = {"/d1": 1_000_000, "/d2": 2_000_000, "/d3": 1_000_000}
    replicas = [(f"t{i % 3}", i, rng.randint(5_000, 40_000), "/d1", i % 2 == 0) for i in range(60)]
    before = _usage(replicas, caps, {})
    assert before["/d1"] > 0.5 and before["/d2"] == 0
    moves = balance_broker(7, replicas, caps, None, tolerance=0.02)
    assert moves and all(m.broker == 7 and m.from_dir != m.to_dir for m in moves)
    assert len({(m.topic, m.partition) for m in moves}) == len(moves)  # each replica moves once
    after = _usage(replicas, caps, {(m.topic, m.partition): m.to_dir for m in moves})
    target = sum(r[2] for r in replicas) / sum(caps.values())
    # every directory within a replica's size of the broker's fraction (the largest is 40 kB)
    for d, u in after.items():
        assert abs(u - target) * caps[d] <= 40_000, (d, u, target)
    assert max(after.values()) < max(before.values())


def test_dirs_without_capacity_even_out_bytes_and_a_budget_caps_the_moves() -> None:
    replicas = [("t", i, 100, "/a", False) for i in range(10)] + [
        ("t", 10 + i, 100, "/b", False) for i in range(2)
    ]
    moves = balance_broker(1, replicas, {"/a": 0, "/b": 0}, None)
    assert len(moves) == 4  # 1000/200 -> 600/600
    capped = balance_broker(1, replicas, {"/a": 0, "/b": 0}, 250)
    assert sum(m.size_bytes for m in capped) <= 250 and len(capped) == 2
    assert balance_broker(1, replicas[:10], {"/a": 0}, None) == []  # one dir: nothing to balance
    # replicas of other topics count but do not move
    assert balance_broker(1, replicas, {"/a": 0, "/b": 0}, None, topics="other") == []


def test_budget_slices_follow_the_excess() -> None:
    assert budget_slices({1: 300, 2: 100}, None) == {1: None, 2: None}
    assert budget_slices({1: 300, 2: 100}, 1000) == {1: 1000, 2: 1000}
    assert budget_slices({1: 300, 2: 100}, 200) == {1: 150, 2: 50}


SNAPSHOT = {
    "brokers": [
        {"id": 1, "log_dirs": [{"path": "/d1", "total_bytes": 1000}, {"path": "/d2", "total_bytes": 1000}]},
        {"id": 2, "log_dirs": [{"path": "/d1", "total_bytes": 1000}, {"path": "/d2", "total_bytes": 1000}]},
        {"id": 3},
    ],
    "topics": [
        {
            "name": "t",
            "partitions": [
                {"partition": p, "replicas": [1, 2], "size_bytes": 100, "log_dirs": ["/d1", "/d1"]}
                for p in range(6)
            ],
        }
    ],
}


def _plan(goals: list[str]) -> PlanResult:
    cluster = parse_snapshot(SNAPSHOT, "snap.json")
    return plan_locally(cluster, [parse_goal(g) for g in goals], PlanOptions())


def test_snapshot_dirs_and_a_disk_plan_with_its_files() -> None:
    result = _plan(["disk"])
    assert result.moves == ()  # no replica changes broker
    assert {(m.broker, m.to_dir) for m in result.dir_moves} == {(1, "/d2"), (2, "/d2")}
    assert len(result.dir_moves) == 6  # 600/0 -> 300/300 on each broker
    assert result.copied_bytes == 600
    for b in (1, 2):
        assert result.dirs_before[(b, "/d1")].size_bytes == 600
        assert result.dirs_after[(b, "/d1")].size_bytes == 300
        assert result.dirs_after[(b, "/d2")].size_bytes == 300
    assert usage_spread(result.dirs_before) == {1: 2.0, 2: 2.0}
    assert usage_spread(result.dirs_after) == {1: 1.0, 2: 1.0}
    plan = json.loads(plan_file(result))
    moved = {(m.topic, m.partition, m.broker) for m in result.dir_moves}
    for p in plan["partitions"]:
        assert p["replicas"] == [1, 2]
        want = ["/d2" if ("t", p["partition"], b) in moved else ANY_DIR for b in (1, 2)]
        assert p["log_dirs"] == want
    back = json.loads(rollback_file(result))
    assert all(d in ("/d1", ANY_DIR) for p in back["partitions"] for d in p["log_dirs"])
    doc = batches_document(result, "2026-01-01T00:00:00Z", 100)
    entries = [p for b in doc["batches"] for p in b["partitions"]]
    assert len(entries) == len(plan["partitions"]) and all("log_dirs" in p for p in entries)
    assert doc["predicted"]["log_dirs_after"]["1"]["/d2"] == {
        "bytes": 300,
        "replicas": 3,
        "capacity_bytes": 1000,
        "usage": 0.3,
    }
    assert "log dirs: 6 replicas move between dirs" in summary_text(result, doc)


def test_the_picture_draws_each_dir_of_brokers_with_several() -> None:
    result = _plan(["disk"])
    doc = batches_document(result, "2026-01-01T00:00:00Z", 100)
    svg = ET.fromstring(picture_file(result, doc).split("\n", 1)[1])
    bars = {
        (
            int(r.get("data-broker", "")),
            r.get("data-log-dir"),
            r.get("data-metric"),
            r.get("data-phase"),
        ): int(r.get("data-value", ""))
        for r in svg.iter("{http://www.w3.org/2000/svg}rect")
        if r.get("data-metric")
    }
    for (b, d), v in result.dirs_before.items():
        assert bars[(b, d, "bytes", "before")] == v.size_bytes
        assert bars[(b, d, "replicas", "before")] == v.replicas
    for (b, d), v in result.dirs_after.items():
        assert bars[(b, d, "bytes", "after")] == v.size_bytes
        assert bars[(b, d, "leaders", "after")] == v.leaders
    assert bars[(3, None, "bytes", "before")] == 0  # one dir (none given): drawn per broker
    assert not any(b in (1, 2) and d is None for b, d, _, _ in bars)


def test_disk_after_a_broker_goal_leaves_new_replicas_in_any() -> None:
    result = _plan(["rebalance:replicas", "disk"])
    assert result.moves  # broker 3 receives replicas
    assert all(m.broker in (1, 2) for m in result.dir_moves)
    anys = {k: v for k, v in result.dirs_after.items() if k[1] == ANY_DIR}
    assert anys and all(b == 3 for b, _ in anys)
    total = sum(v.size_bytes for v in result.dirs_after.values())
    assert total == sum(v.size_bytes for v in result.dirs_before.values())
    moved = {(r[0], r[1]) for r in result.moves}
    for m in result.dir_moves:  # a dir move is on a broker the partition keeps
        row = next(r for r in (*result.moves, *result.dir_only) if (r[0], r[1]) == (m.topic, m.partition))
        assert m.broker in row[3] and m.broker in row[4]
    assert isinstance(parse_goal("rebalance:replicas"), Rebalance) and moved


def test_disk_without_dirs_is_a_goal_error_and_dir_places_parse() -> None:
    cluster = build_cluster({1: None, 2: None}, [make_row("t", 0, [1, 2], 10)])
    with pytest.raises(GoalError, match="log directory"):
        plan_locally(cluster, [DiskBalance()], PlanOptions())
    doc = {
        "brokers": [
            {
                "broker": 1,
                "logDirs": [
                    {
                        "logDir": "/a",
                        "error": None,
                        "totalBytes": 500,
                        "partitions": [{"partition": "t-0", "size": 10, "offsetLag": 0, "isFuture": False}],
                    },
                    {
                        "logDir": "/b",
                        "error": None,
                        "totalBytes": -1,
                        "partitions": [{"partition": "t-0", "size": 4, "offsetLag": 6, "isFuture": True}],
                    },
                ],
            }
        ]
    }
    dirs, caps = parse_dir_places(doc, "x")
    assert dirs == {("t", 0, 1): "/a"} and caps == {1: {"/a": 500, "/b": 0}}
    placed = with_dirs(cluster, dirs, caps)
    assert placed.log_dirs == {("t", 0, 1): "/a"}

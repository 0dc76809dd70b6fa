"""The plan's input from a real controller (real ZooKeeper, controller and agent processes; no
Spark): brokers with racks and every assignment as ``GET /v1/topics`` shows them, sizes from
``GET /v1/log-dirs`` (or 0 with a warning where the controller has no such route); and the
batches a plan writes are accepted, every partition, by the controller's ``POST /v1/batches``."""

from __future__ import annotations

import pytest

from reassignd.feeder.controller_input import read_cluster
from reassignd.feeder.goals import Decommission, PlanOptions
from reassignd.feeder.model import CURRENT
from reassignd.feeder.outputs import batches_document
from reassignd.feeder.planner import plan_locally
from tests.integration.harness import Procs, active_one, wait_brokers

pytestmark = pytest.mark.timeout(180)


async def test_read_cluster_then_submit_the_planned_batches(procs: Procs) -> None:
    controller = procs.controller(9000, 2.0)
    active, _ = await active_one(controller)
    procs.cluster(6, 1, 3)
    await wait_brokers(active, set(range(1, 7)))
    code, body = await active.post(
        "/v1/topics",
        {
            "topics": [
                {"name": "orders", "num_partitions": 12, "replication_factor": 3},
                {"name": "audit", "num_partitions": 4, "replication_factor": 2},
            ]
        },
    )
    assert code == 200 and all(t["error_code"] == 0 for t in body["topics"]), body

    warnings: list[str] = []
    cluster = await read_cluster(active.url, None, 30.0, want_sizes=True, warn=warnings.append)

    assert dict(cluster.racks) == {b: f"r{(b - 1) % 3}" for b in range(1, 7)}
    assert cluster.offline == frozenset()
    for topic in ("orders", "audit"):
        code, doc = await active.get(f"/v1/topics/{topic}")
        assert code == 200
        shown = {(topic, p["partition"]): tuple(p["replicas"]) for p in doc["partitions"]}
        assert {(r[0], r[1]): r[CURRENT] for r in cluster.rows if r[0] == topic} == shown
    assert warnings == []  # sizes from GET /v1/log-dirs (these topics are empty: 0 bytes each)
    assert all(r[2] == 0 for r in cluster.rows)

    result = plan_locally(cluster, [Decommission(frozenset({2}))], PlanOptions())
    assert result.moves
    document = batches_document(result, "2026-11-24T00:00:00Z", batch_size=5)
    for body in document["batches"]:
        code, answer = await active.post("/v1/batches", body)
        assert code == 200, answer
        assert [p["error_code"] for p in answer["partitions"]] == [0] * len(body["partitions"]), answer
        assert answer["batch"]["batch_id"] == body["batch_id"]

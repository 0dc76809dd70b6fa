"""``reassignd feed run`` against a real cluster (ZooKeeper, controller, agents; the plan made by
the planner from the controller's own view, without Spark): the batches run to the end under
back-pressure, a feeder killed mid-run resumes without submitting a batch twice, and a partition
moved by someone else since the plan is refused as STALE_PLAN, reported, and left where it is."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from reassignd.feeder.controller_input import read_cluster
from reassignd.feeder.goals import Decommission, PlanOptions
from reassignd.feeder.outputs import batches_document
from reassignd.feeder.planner import plan_locally
from reassignd.zk.client import ZkClient
from tests.integration.harness import ControllerProc, Procs, active_one, eventually, wait_brokers
from tests.integration.reassignment_helpers import alter, completed, make_topic, set_broker_rate, topic_znode

pytestmark = pytest.mark.timeout(240)


async def cluster(procs: Procs, zk: ZkClient) -> ControllerProc:
    c = procs.controller(9000, 2.0)
    await active_one(c)
    await set_broker_rate(zk, None, "600000")
    procs.cluster(6, 1, 3)
    await wait_brokers(c, set(range(1, 7)))
    # racks r0 r1 r2 r0 r1 r2: each partition on two racks
    await make_topic(zk, "f", {p: (1 + p % 3, 4 + (p + 1) % 3) for p in range(12)}, initial_bytes=300_000)
    return c


async def plan_into(c: ControllerProc, out: Path, leaving: int) -> dict[str, Any]:
    view = await read_cluster(c.url, None, 30.0, want_sizes=True, warn=lambda _: None)
    result = plan_locally(view, [Decommission(frozenset({leaving}))], PlanOptions())
    document = batches_document(result, "2026-11-24T00:00:00Z", batch_size=1)
    write_plan(out, document)
    return document


def write_plan(out: Path, document: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "batches.json").write_text(json.dumps(document))


async def start_feeder(c: ControllerProc, plan: Path, log: Path) -> asyncio.subprocess.Process:
    with log.open("ab") as out:  # the child keeps its own copy of the descriptor
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "reassignd", "feed", "run", str(plan), "--bootstrap-controller", c.url,
            "--max-pending", "1", "--poll-s", "0.2",
            stdout=out, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip


async def batch_list(c: ControllerProc) -> list[dict[str, Any]]:
    code, body = await c.get("/v1/batches")
    assert code == 200, body
    return list(body["batches"])


async def test_a_killed_feeder_resumes_and_no_batch_is_submitted_twice(
    procs: Procs, zk: ZkClient, tmp_path: Path
) -> None:
    c = await cluster(procs, zk)
    document = await plan_into(c, tmp_path / "plan", leaving=2)
    ids = [b["batch_id"] for b in document["batches"]]
    assert len(ids) >= 3
    log = tmp_path / "feeder.log"
    first = await start_feeder(c, tmp_path / "plan", log)
    try:
        await eventually(lambda: _has_batches(c, 2), timeout_s=60, what="the feeder submitted two batches")
    finally:
        first.send_signal(signal.SIGKILL)
        await first.wait()
    second = await start_feeder(c, tmp_path / "plan", log)
    assert await asyncio.wait_for(second.wait(), 180) == 0, log.read_text()[-3000:]
    text = log.read_text()
    assert "found on the controller" in text and "all" in text
    listed = await batch_list(c)
    assert sorted(b["batch_id"] for b in listed) == sorted(ids)  # each once
    assert all(b["state"] == "completed" for b in listed)
    z = await topic_znode(zk, "f")
    assert all(2 not in replicas for replicas in z.partitions.values()), z.partitions
    racks = {b: (b - 1) % 3 for b in range(1, 7)}
    assert all(len({racks[r] for r in rs}) == len(rs) for rs in z.partitions.values())


async def _has_batches(c: ControllerProc, n: int) -> bool:
    return len(await batch_list(c)) >= n


async def test_a_partition_moved_since_the_plan_is_refused_as_stale(
    procs: Procs, zk: ZkClient, tmp_path: Path
) -> None:
    c = await cluster(procs, zk)
    document = await plan_into(c, tmp_path / "plan", leaving=3)
    planned = document["batches"][0]["partitions"][0]
    tp = (planned["topic"], planned["partition"])
    code, topic = await c.get(f"/v1/topics/{tp[0]}")
    before = next(p["replicas"] for p in topic["partitions"] if p["partition"] == tp[1])
    elsewhere = [b for b in (1, 2, 4, 5, 6) if b not in before][:1] + [r for r in before if r != 3][:1]
    await alter(c, {tp: elsewhere})  # someone else moves it meanwhile
    await eventually(
        lambda: completed(zk, tp[0], tp[1], tuple(elsewhere)), timeout_s=60, what="the other move"
    )
    log = tmp_path / "feeder.log"
    feeder = await start_feeder(c, tmp_path / "plan", log)
    code = await asyncio.wait_for(feeder.wait(), 180)
    text = log.read_text()
    assert code == 0, text[-3000:]
    assert f"refused {tp[0]}-{tp[1]} STALE_PLAN" in text
    z = await topic_znode(zk, tp[0])
    assert list(z.partitions[tp[1]]) == elsewhere  # not moved by the stale plan


async def test_an_interrupted_feeder_stops_its_batches_when_told(
    procs: Procs, zk: ZkClient, tmp_path: Path
) -> None:
    c = await cluster(procs, zk)
    await set_broker_rate(zk, None, "100000")  # slow: the first batch is still running when interrupted
    await plan_into(c, tmp_path / "plan", leaving=1)
    log = tmp_path / "feeder.log"
    with log.open("ab") as out:
        feeder = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "reassignd", "feed", "run", str(tmp_path / "plan"), "--bootstrap-controller", c.url,
            "--max-pending", "1", "--poll-s", "0.2", "--on-interrupt", "stop",
            stdout=out, stderr=asyncio.subprocess.STDOUT, stdin=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
    await eventually(lambda: _has_batches(c, 1), timeout_s=60, what="the first batch submitted")
    feeder.send_signal(signal.SIGINT)
    assert await asyncio.wait_for(feeder.wait(), 60) == 130, log.read_text()[-3000:]
    [batch] = await batch_list(c)
    assert batch["state"] == "stopped", batch
    assert "stopped" in log.read_text()

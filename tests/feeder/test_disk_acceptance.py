"""The ``disk`` goal end to end (JBOD): two agents, each with a small and a large log dir
(``--log-dirs /d1:2000000,/d2:8000000``) that Kafka's placement filled with as many replicas each,
so the small one is four times as full (the controller and the agents in this process:
:mod:`reassignd.testing.kit`). ``reassignd feed plan --goal disk`` (a local Spark context, the
test process's) reads the dirs and their capacities from the controller's ``GET /v1/log-dirs``
and plans moves within each broker that bring both dirs to the broker's usage; ``plan.svg`` draws
each dir's bars; ``reassignd feed run`` (a process of its own) executes the batch (the executor
asks the agents, under the intra-broker throttle, with progress in the batch's status); every
replica ends in its planned dir, as ``GET /v1/log-dirs`` shows."""

from __future__ import annotations

import asyncio
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from reassignd.zk import admin_codec, paths
from reassignd.zk.client import ZkClient
from tests.feeder.feed_cli import read_json, reassignd, reassignd_here
from tests.integration.harness import ControllerProc, Kit, active_one, eventually, wait_brokers
from tests.integration.reassignment_helpers import make_topic

pytestmark = [pytest.mark.spark, pytest.mark.timeout(420)]

SIZE = 100_000
PARTITIONS = 10
CAPACITY = {"/d1": 2_000_000, "/d2": 8_000_000}
DIR_RATE = 150_000  # bytes/s per broker between its dirs: each broker's 300 kB take about 2 s


async def log_dirs(c: ControllerProc) -> dict[int, dict[str, dict[str, Any]]]:
    """Per broker and dir: its capacity and, per partition of topic ``j``, (size, is_future)."""
    code, body = await c.get("/v1/log-dirs")
    assert code == 200, body
    out: dict[int, dict[str, dict[str, Any]]] = {}
    for b in body["brokers"]:
        for d in b["logDirs"]:
            replicas = {
                (int(p["partition"].rpartition("-")[2]), p["isFuture"]): p["size"]
                for p in d["partitions"]
                if p["partition"].startswith("j-")
            }
            out.setdefault(b["broker"], {})[d["logDir"]] = {
                "total": d.get("totalBytes"),
                "replicas": replicas,
            }
    return out


def bytes_in(dirs: dict[str, dict[str, Any]], d: str) -> int:
    return sum(size for (_, future), size in dirs[d]["replicas"].items() if not future)


async def test_disk_goal_balances_the_dirs_of_each_broker_and_the_executor_runs_it(
    kit: Kit, zk: ZkClient, spark: Any, tmp_path: Path
) -> None:
    c = kit.controller(9000, 2.0, "--dir-move-interval-s", "0.3")
    await active_one(c)
    await zk.create(
        paths.config_broker(None),
        admin_codec.encode_entity_config({"replica.alter.log.dirs.io.max.bytes.per.second": str(DIR_RATE)}),
        make_parents=True,
    )
    kit.cluster(2, 1, None, "--log-dirs", ",".join(f"{d}:{cap}" for d, cap in CAPACITY.items()))
    await wait_brokers(c, {1, 2})
    await make_topic(zk, "j", {p: (1 + p % 2, 2 - p % 2) for p in range(PARTITIONS)}, initial_bytes=SIZE)

    async def sized() -> bool:
        dirs = await log_dirs(c)
        return all(bytes_in(dirs[b], "/d1") + bytes_in(dirs[b], "/d2") == PARTITIONS * SIZE for b in (1, 2))

    await eventually(sized, timeout_s=60, what="every replica's size in /v1/log-dirs")
    before = await log_dirs(c)
    for b in (1, 2):  # Kafka's placement: as many replicas in each dir, the small one 4x as full
        assert bytes_in(before[b], "/d1") == bytes_in(before[b], "/d2") == PARTITIONS * SIZE // 2
        assert before[b]["/d1"]["total"] == CAPACITY["/d1"]

    out, log = tmp_path / "plan", tmp_path / "feed.log"
    planned = await reassignd_here(
        "feed", "plan", "--bootstrap-controller", c.url, "--goal", "disk", "--out", str(out),
        "--master", "local[1]", log=log,
    )  # fmt: skip
    assert planned == 0, log.read_text()[-3000:]
    # planned on the worker's context from a thread of its own: used, not stopped
    assert spark.parallelize([1, 2]).sum() == 3
    doc = read_json(out / "batches.json")
    figures = doc["predicted"]
    assert figures["dir_moves"] == 6 and figures["dir_move_bytes"] == 6 * SIZE  # 3 per broker
    for broker in ("1", "2"):
        usage_before = {d: v["usage"] for d, v in figures["log_dirs_before"][broker].items()}
        assert usage_before == {"/d1": 0.25, "/d2": 0.0625}
        after = figures["log_dirs_after"][broker]
        # the broker's usage is 1 MB / 10 MB: both dirs end at 10 %
        assert {d: v["usage"] for d, v in after.items()} == {"/d1": 0.1, "/d2": 0.1}
        assert after["/d1"]["bytes"] == 2 * SIZE and after["/d2"]["bytes"] == 8 * SIZE
    plan = read_json(out / "plan.json")
    planned_dirs: dict[tuple[int, int], str] = {}
    for p in plan["partitions"]:
        for broker, d in zip(p["replicas"], p["log_dirs"], strict=True):
            if d != "any":
                planned_dirs[(broker, p["partition"])] = d
    assert len(planned_dirs) == 6 and set(planned_dirs.values()) == {"/d2"}
    # the picture: one group of bars per dir of each broker, with the plan's figures
    svg = ET.fromstring((out / "plan.svg").read_text().split("\n", 1)[1])
    drawn = {
        (r.get("data-broker"), r.get("data-log-dir"), r.get("data-phase")): int(r.get("data-value", "-1"))
        for r in svg.iter("{http://www.w3.org/2000/svg}rect")
        if r.get("data-metric") == "bytes"
    }
    for phase in ("before", "after"):
        for b, dirs in figures[f"log_dirs_{phase}"].items():
            for d, v in dirs.items():
                assert drawn[(b, d, phase)] == v["bytes"]

    # the executor runs it, progress visible in the batch's status while the dirs copy
    batch_id = doc["batches"][0]["batch_id"]
    seen: list[tuple[int, int]] = []

    async def watch() -> None:
        while True:
            code, status = await c.get(f"/v1/batches/{batch_id}")
            if code == 200:
                seen.extend((m["bytes_done"], m["bytes_total"]) for m in status["running"])
            await asyncio.sleep(0.2)

    watcher = asyncio.create_task(watch())
    try:
        ran = await reassignd(
            "feed", "run", str(out), "--bootstrap-controller", c.url, "--poll-s", "0.3", log=log
        )
    finally:
        watcher.cancel()
    assert ran == 0, log.read_text()[-3000:]
    code, status = await c.get(f"/v1/batches/{batch_id}")
    assert code == 200 and status["state"] == "completed", status
    # three partitions, each with a replica moving on either broker
    assert status["counts"]["completed"] == 3 and status["bytes_done"] == status["bytes_total"] == 6 * SIZE
    assert any(0 < done < total for done, total in seen), seen  # a move part way through
    final = await log_dirs(c)
    for b in (1, 2):
        assert bytes_in(final[b], "/d1") == 2 * SIZE and bytes_in(final[b], "/d2") == 8 * SIZE
        assert not any(future for d in final[b].values() for (_, future) in d["replicas"])
        for (owner, p), d in planned_dirs.items():
            if owner == b:
                assert (p, False) in final[b][d]["replicas"]

"""The feeder end to end, as an operator runs it: a real ZooKeeper, controller and nine agents on
three racks (in this process: :mod:`reassignd.testing.kit`), ``reassignd feed plan`` (a real local
Spark context, the test process's) reading the cluster and its sizes from the controller over
HTTP, ``reassignd feed run`` (a process of its own) executing the batches, and ``reassignd admin
reassign --execute`` taking the plan's rollback file.

- decommission two agents: only their replicas move, racks stay distinct, the two end empty; the
  rollback file brings every partition back to where it was;
- three agents added, ``rebalance:bytes``: every broker within 5 % of the mean afterwards.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reassignd.zk.client import ZkClient
from tests.feeder.feed_cli import read_json, reassignd, reassignd_here
from tests.integration.harness import ControllerProc, Kit, active_one, eventually, wait_brokers
from tests.integration.reassignment_helpers import make_topic, set_broker_rate, topic_znode

pytestmark = [pytest.mark.spark, pytest.mark.timeout(420)]

SIZE = 100_000
RACK = {b: (b - 1) % 3 for b in range(1, 10)}  # `reassignd cluster --racks 3`: r0 r1 r2 r0 ...


async def start(kit: Kit, zk: ZkClient, agents: int) -> ControllerProc:
    c = kit.controller(9000, 2.0)
    await active_one(c)
    await set_broker_rate(zk, None, "20000000")
    kit.cluster(agents, 1, 3)
    await wait_brokers(c, set(range(1, agents + 1)))
    return c


async def assignment(zk: ZkClient, topics: list[str]) -> dict[tuple[str, int], tuple[int, ...]]:
    out: dict[tuple[str, int], tuple[int, ...]] = {}
    for t in topics:
        z = await topic_znode(zk, t)
        assert not z.adding and not z.removing
        out.update({(t, p): rs for p, rs in z.partitions.items()})
    return out


async def settled(zk: ZkClient, topics: list[str], want: dict[tuple[str, int], tuple[int, ...]]) -> bool:
    try:
        return await assignment(zk, topics) == want
    except AssertionError:
        return False


async def sized_everywhere(c: ControllerProc, count: int) -> bool:
    code, body = await c.get("/v1/log-dirs")
    assert code == 200
    sizes = [p["size"] for b in body["brokers"] for d in b["logDirs"] for p in d["partitions"]]
    return len(sizes) == count and all(s == SIZE for s in sizes)


async def test_decommission_two_of_nine_then_roll_back(
    kit: Kit, zk: ZkClient, spark: Any, tmp_path: Path
) -> None:
    c = await start(kit, zk, 9)
    topics = [f"d{i}" for i in range(10)]
    for i, t in enumerate(topics):  # 200 partitions, RF 3, one replica per rack
        await make_topic(
            zk, t, {p: (1 + (i + p) % 3 * 3 % 9, 2 + (i + 2 * p) % 3 * 3 % 9, 3 + (i + p) % 3 * 3 % 9) for p in range(20)},
            initial_bytes=SIZE,
        )  # fmt: skip
    before = await assignment(zk, topics)
    assert all(len({RACK[r] for r in rs}) == 3 for rs in before.values())
    await eventually(
        lambda: sized_everywhere(c, 600), timeout_s=60, what="every replica's size in /v1/log-dirs"
    )
    out, log = tmp_path / "plan", tmp_path / "feed.log"
    planned = await reassignd_here(
        "feed", "plan", "--bootstrap-controller", c.url, "--goal", "decommission:8,9", "--out", str(out),
        "--master", "local[2]", log=log,
    )  # fmt: skip
    assert planned == 0, log.read_text()[-3000:]
    # planned on the worker's context from a thread of its own: used, not stopped
    assert spark.parallelize([1, 2]).sum() == 3
    plan = read_json(out / "plan.json")
    moved = {(p["topic"], p["partition"]) for p in plan["partitions"]}
    assert moved == {tp for tp, rs in before.items() if {8, 9} & set(rs)}  # only what the goal needs
    assert (
        await reassignd("feed", "run", str(out), "--bootstrap-controller", c.url, "--poll-s", "0.3", log=log)
        == 0
    ), log.read_text()[-3000:]
    after = await assignment(zk, topics)
    assert all(not {8, 9} & set(rs) for rs in after.values())
    assert all(len({RACK[r] for r in rs}) == len(rs) for rs in after.values())
    assert {tp for tp in before if before[tp] != after[tp]} == moved
    # the rollback file, through admin reassign, brings everything back
    rolled = await reassignd_here(
        "admin", "reassign", "--bootstrap-controller", c.url, "--execute",
        "--reassignment-json-file", str(out / "rollback.json"), log=log,
    )  # fmt: skip
    assert rolled == 0, log.read_text()[-3000:]
    await eventually(lambda: settled(zk, topics, before), timeout_s=120, what="the rollback completed")


async def test_add_three_agents_and_rebalance_bytes(
    kit: Kit, zk: ZkClient, spark: Any, tmp_path: Path
) -> None:
    c = await start(kit, zk, 6)
    topics = [f"r{i}" for i in range(9)]
    for i, t in enumerate(topics):  # 180 partitions, RF 2, on brokers 1-6
        await make_topic(
            zk, t, {p: (1 + (i + p) % 6, 1 + (i + p + 1) % 6) for p in range(20)}, initial_bytes=SIZE
        )
    kit.cluster(3, 7, 3)  # brokers 7, 8, 9 join, empty
    await wait_brokers(c, set(range(1, 10)))
    await eventually(
        lambda: sized_everywhere(c, 360), timeout_s=60, what="every replica's size in /v1/log-dirs"
    )
    out, log = tmp_path / "plan", tmp_path / "feed.log"
    planned = await reassignd_here(
        "feed", "plan", "--bootstrap-controller", c.url, "--goal", "rebalance:bytes", "--out", str(out),
        "--master", "local[2]", log=log,
    )  # fmt: skip
    assert planned == 0, log.read_text()[-3000:]
    # planned on the worker's context from a thread of its own: used, not stopped
    assert spark.parallelize([1, 2]).sum() == 3
    assert (
        await reassignd("feed", "run", str(out), "--bootstrap-controller", c.url, "--poll-s", "0.3", log=log)
        == 0
    ), log.read_text()[-3000:]
    after = await assignment(zk, topics)
    per_broker = dict.fromkeys(range(1, 10), 0)
    for rs in after.values():
        for r in rs:
            per_broker[r] += SIZE
    mean = sum(per_broker.values()) / len(per_broker)
    assert all(abs(v - mean) <= 0.05 * mean for v in per_broker.values()), per_broker

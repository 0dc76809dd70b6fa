"""Self-healing end to end: real ZooKeeper, controller and agent processes, real HTTP.

Six agents on three racks; a topic whose partitions sit on distinct racks, some on broker 1.
Broker 1's agent is killed (SIGKILL: its session expires after 2 s) and the controller, with a
grace of a few seconds, moves its replicas elsewhere as a batch owned by ``self-healing``.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping
from typing import Any

import pytest

from reassignd.zk import admin_codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.event_stream import Stream
from tests.integration.harness import (
    ControllerProc,
    Proc,
    Procs,
    active_one,
    eventually,
    read_journal,
    wait_brokers,
)
from tests.integration.reassignment_helpers import FAST, make_topic, set_broker_rate, topic_znode

pytestmark = pytest.mark.timeout(180)

BROKERS = 6
RACKS = {b: f"r{b % 3}" for b in range(1, BROKERS + 1)}  # 1,4: r1; 2,5: r2; 3,6: r0
LOST = 1
GRACE = "3"
HEALING = ("--self-healing", "--self-healing-broker-grace-s", GRACE, "--agent-sample-interval-s", "0.5")

# 12 partitions of RF 3 on distinct racks; 8 have a replica on broker 1
ASSIGNMENT: dict[int, tuple[int, ...]] = {
    0: (1, 2, 3),
    1: (2, 3, 1),
    2: (3, 1, 5),
    3: (1, 5, 6),
    4: (4, 5, 6),
    5: (4, 2, 3),
    6: (1, 2, 6),
    7: (5, 6, 1),
    8: (6, 4, 2),
    9: (1, 3, 2),
    10: (3, 4, 5),
    11: (2, 1, 6),
}


def agents(procs: Procs) -> dict[int, Proc]:
    return {b: procs.broker(b, "--rack", RACKS[b]) for b in range(1, BROKERS + 1)}


async def start(
    procs: Procs, zk: ZkClient, *extra: str, rate: str = FAST, standby: bool = False, initial_bytes: int = 0
) -> tuple[list[ControllerProc], dict[int, Proc]]:
    # the agents start with the controllers (their processes' start-ups overlap), at the rate
    # written before them
    await set_broker_rate(zk, None, rate)
    controllers = [procs.controller(9000, 2.0, *extra)]
    if standby:
        controllers.append(procs.controller(9001, 2.0, *extra))
    started = agents(procs)
    active, _ = await active_one(*controllers)
    await wait_brokers(active, set(RACKS))
    await make_topic(zk, "t", ASSIGNMENT, initial_bytes)
    return [active, *(c for c in controllers if c is not active)], started


async def self_healing(c: ControllerProc) -> dict[str, Any] | None:
    s = await c.status()
    return None if s is None or "self_healing" not in s else dict(s["self_healing"])


async def healing_batches(c: ControllerProc) -> list[dict[str, Any]]:
    code, body = await c.get("/v1/batches")
    assert code == 200, body
    return [b for b in body["batches"] if b["batch_id"].startswith("self-healing-broker-")]


def healed(replicas: Mapping[int, tuple[int, ...]]) -> bool:
    return all(LOST not in r for r in replicas.values())


async def assert_healed(zk: ZkClient) -> None:
    async def done() -> dict[int, tuple[int, ...]] | None:
        z = await topic_znode(zk, "t")
        return dict(z.partitions) if healed(z.partitions) and not z.adding and not z.removing else None

    after = await eventually(done, timeout_s=90, what="broker 1's replicas moved")
    for p, replicas in after.items():
        before = ASSIGNMENT[p]
        assert len(replicas) == len(before), (p, replicas)
        assert len({RACKS[b] for b in replicas}) == len(replicas), f"partition {p} shares a rack: {replicas}"
        if LOST not in before:
            assert replicas == before, f"partition {p} moved though it did not need to"
        else:  # only broker 1's replica changed, in its position
            assert [b for b in replicas if b not in before] == [replicas[before.index(LOST)]], (p, replicas)


async def test_a_lost_broker_is_healed_once_its_grace_is_over(procs: Procs, zk: ZkClient) -> None:
    (c,), started = await start(procs, zk, *HEALING)
    status = await self_healing(c)
    assert status is not None and status["enabled"] is True and status["broker_grace_s"] == 3.0
    types = ("self_healing_broker_lost", "self_healing_planned", "self_healing_ended")
    with Stream(c.url, query="?" + "&".join(f"type={t}" for t in types)) as stream:
        await asyncio.sleep(0.5)  # subscribed
        started[LOST].kill()
        await healed_and_reported(c, zk, stream)


async def healed_and_reported(c: ControllerProc, zk: ZkClient, stream: Stream) -> None:

    async def recorded() -> int | None:
        znode = await zk.get_or_none(paths.lost_broker(LOST))
        return None if znode is None else admin_codec.decode_lost_broker(znode.data)

    lost_at = await eventually(recorded, what="broker 1's loss recorded")
    await assert_healed(zk)
    batches = await healing_batches(c)
    assert [b["batch_id"] for b in batches] == [f"self-healing-broker-{LOST}-{lost_at}"]
    code, batch = await c.get(f"/v1/batches/{batches[0]['batch_id']}")
    assert code == 200 and batch["owner"] == "self-healing", batch
    assert batch["counts"]["completed"] == sum(1 for r in ASSIGNMENT.values() if LOST in r), batch

    async def ended() -> dict[str, Any] | None:
        s = await self_healing(c)
        return s if s is not None and not s["brokers"] and s["recent"] else None

    status = await eventually(ended, what="the healing reported as completed")
    assert [(o["broker_id"], o["outcome"]) for o in status["recent"]] == [(LOST, "completed")]
    assert await zk.get_or_none(paths.lost_broker(LOST)) is None
    code, metrics = await c.get("/metrics")
    assert code == 200
    assert 'reassignd_self_healing_decisions_total{decision="planned"} 1.0' in metrics
    assert 'reassignd_self_healing_decisions_total{decision="completed"} 1.0' in metrics
    await eventually(lambda: len(stream.records) >= 3, what="the three records streamed")
    assert [r["type"] for r in stream.records] == [
        "self_healing_broker_lost",
        "self_healing_planned",
        "self_healing_ended",
    ]
    planned = stream.records[1]
    assert planned["batch_id"] == batches[0]["batch_id"] and planned["moves"] == batch["counts"]["completed"]
    assert stream.records[2]["outcome"] == "completed"


async def test_self_healing_off_moves_nothing(procs: Procs, zk: ZkClient) -> None:
    # no grace: were self-healing on, the heal would be due the moment the loss is seen
    (c,), started = await start(procs, zk, "--self-healing-broker-grace-s", "0")
    started[LOST].kill()

    async def gone() -> bool:
        code, body = await c.get("/v1/brokers")
        return code == 200 and LOST not in {b["id"] for b in body["brokers"]}

    await eventually(gone, what="broker 1 seen gone")
    # past the grace and a healing tick (evaluated on the broker change, then every 1 s): a heal
    # would have started by now
    await asyncio.sleep(1.5)
    assert (await topic_znode(zk, "t")).partitions == ASSIGNMENT
    assert await healing_batches(c) == []
    assert await zk.get_or_none(paths.lost_broker(LOST)) is None
    status = await self_healing(c)
    assert status is not None and status["enabled"] is False and status["brokers"] == []


async def running_heal(c: ControllerProc) -> dict[str, Any] | None:
    batches = await healing_batches(c)
    return batches[0] if batches and batches[0]["state"] == "running" else None


async def test_the_broker_returning_mid_heal_stops_the_batch(procs: Procs, zk: ZkClient) -> None:
    # slow moves (400 kB at 100 kB/s) so the batch is still running when the agent returns
    (c,), started = await start(procs, zk, *HEALING, rate="100000", initial_bytes=400_000)
    started[LOST].kill()
    batch = await eventually(lambda: running_heal(c), timeout_s=60, what="a healing batch running")
    procs.restart(started[LOST])

    async def stopped() -> dict[str, Any] | None:
        code, b = await c.get(f"/v1/batches/{batch['batch_id']}")
        return b if code == 200 and b["state"] == "stopped" else None

    await eventually(stopped, timeout_s=60, what="the healing batch stopped")

    async def returned() -> dict[str, Any] | None:
        s = await self_healing(c)
        return s if s is not None and s["recent"] else None

    status = await eventually(returned, what="the return reported")
    assert [(o["broker_id"], o["outcome"], o["batch_id"]) for o in status["recent"]] == [
        (LOST, "returned", batch["batch_id"])
    ]
    assert status["brokers"] == []
    assert await zk.get_or_none(paths.lost_broker(LOST)) is None
    z = await topic_znode(zk, "t")
    for p, replicas in z.partitions.items():  # moves kept or reverted: nothing half-done
        assert len(replicas) == 3 and len({RACKS[b] for b in replicas}) == 3, (p, replicas)


async def test_a_controller_killed_mid_heal_is_followed_by_one_that_resumes_it(
    procs: Procs, zk: ZkClient
) -> None:
    # all eight new replicas go to broker 4 (broker 1's rack), five at a time (the default cap):
    # about 5 s of copying at 200 kB/s, then 3 s for the three the second controller starts
    controllers, started = await start(
        procs, zk, *HEALING, rate="200000", initial_bytes=200_000, standby=True
    )
    first = controllers[0]
    started[LOST].kill()
    batch = await eventually(lambda: running_heal(first), timeout_s=60, what="a healing batch running")
    first.proc.kill()
    second, _ = await active_one(controllers[1])
    assert second is controllers[1]
    await assert_healed(zk)

    async def completed() -> list[dict[str, Any]] | None:  # the last move done, then the batch
        found = await healing_batches(second)
        return found if all(b["state"] == "completed" for b in found) else None

    batches = await eventually(completed, what="the resumed healing batch completed")
    assert [b["batch_id"] for b in batches] == [batch["batch_id"]], "one batch, resumed"


async def test_a_heal_with_nowhere_to_go_is_reported_incomplete_and_the_controller_stays(
    procs: Procs, zk: ZkClient
) -> None:
    c = procs.controller(9000, 2.0, *HEALING)
    await active_one(c)
    await set_broker_rate(zk, None, FAST)
    started = {b: procs.broker(b, "--rack", RACKS[b]) for b in (1, 2, 3)}
    await wait_brokers(c, {1, 2, 3})
    await make_topic(zk, "t", {0: (1, 2, 3), 1: (2, 3, 1)})  # every live broker holds a replica
    epoch = (await c.status() or {})["controller_epoch"]
    started[LOST].kill()

    async def incomplete() -> dict[str, Any] | None:
        s = await self_healing(c)
        return s if s is not None and s["recent"] else None

    status = await eventually(incomplete, what="the heal reported incomplete")
    assert [(o["broker_id"], o["outcome"]) for o in status["recent"]] == [(LOST, "incomplete")]
    assert "no live broker can take" in status["recent"][0]["reason"]
    assert [(b["broker_id"], b["state"]) for b in status["brokers"]] == [(LOST, "incomplete")]
    assert await healing_batches(c) == []
    assert (await topic_znode(zk, "t")).partitions == {0: (1, 2, 3), 1: (2, 3, 1)}
    after = await c.status()
    assert after is not None and after["active"] and after["controller_epoch"] == epoch


async def test_two_brokers_lost_at_once_get_a_batch_each_and_no_partition_moves_twice_at_once(
    procs: Procs, zk: ZkClient
) -> None:
    (c,), started = await start(procs, zk, *HEALING)
    both = {1, 2}
    for b in both:
        started[b].kill()

    async def done() -> dict[int, tuple[int, ...]] | None:
        z = await topic_znode(zk, "t")
        clean = not z.adding and not z.removing and all(not both & set(r) for r in z.partitions.values())
        return dict(z.partitions) if clean else None

    after = await eventually(done, timeout_s=90, what="brokers 1 and 2's replicas moved")
    for p, replicas in after.items():
        assert len(replicas) == 3 and len({RACKS[b] for b in replicas}) == 3, (p, replicas)
        if not both & set(ASSIGNMENT[p]):
            assert replicas == ASSIGNMENT[p], f"partition {p} moved though it did not need to"

    async def all_ended() -> list[dict[str, Any]] | None:
        batches = await healing_batches(c)
        return batches if batches and all(b["state"] == "completed" for b in batches) else None

    batches = await eventually(all_ended, what="the healing batches completed")
    by_broker = {int(b["batch_id"].split("-")[3]) for b in batches}
    assert by_broker == both, [b["batch_id"] for b in batches]
    journals = [(await read_journal(zk, b["batch_id"])).batch for b in batches]
    assert all(not j.refusals for j in journals), "a partition was offered to two batches"
    spans: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for j in journals:
        for tp, move in j.moves.items():
            assert move.started_at_ms is not None and move.finished_ms is not None
            spans.setdefault(tp, []).append((move.started_at_ms, move.finished_ms))
    for tp, runs in spans.items():  # one after the other, never at once
        runs.sort()
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(runs)), (tp, runs)

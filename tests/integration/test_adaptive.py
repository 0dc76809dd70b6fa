"""Adaptive concurrency end to end: real ZooKeeper, controller and agent processes, real HTTP.

A batch whose ``limits.adaptive`` gives ``{min, max}`` has each broker's cap of moves raised step
by step while the cluster is healthy and the receiving brokers fetch near their bandwidth, and
halved when a move is stuck (or a partition outside the batch is under-replicated). The test
watches the caps the controller journals (``broker_caps`` in the batch's head znode): they rise in
a healthy cluster, fall once an agent's replication is throttled to a crawl, never leave
[min, max], and survive a failover.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from reassignd.executor.adaptive import step
from reassignd.zk import admin_codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import ZkError
from tests.integration.batch_helpers import batch_body, state_is, submit
from tests.integration.event_stream import Stream
from tests.integration.harness import (
    ControllerProc,
    Procs,
    active_one,
    eventually,
    http_get,
    read_journal,
    wait_brokers,
)
from tests.integration.reassignment_helpers import make_topic, set_broker_rate

pytestmark = pytest.mark.timeout(180)

SIZE = 300_000
RATE = "100000"
SAMPLING = (
    "--agent-sample-interval-s",
    "0.3",
    "--batch-stuck-after-s",
    "2",
    "--batch-stuck-below-bytes-per-s",
    "5000",
)
LOW, HIGH = 1, 4


class Caps:
    """Every distinct ``broker_caps`` the batch's journal held, in order, read every 50 ms."""

    def __init__(self, zk: ZkClient, batch_id: str) -> None:
        self.zk = zk
        self.batch_id = batch_id
        self.seen: list[dict[int, int]] = []
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            try:
                caps = dict((await read_journal(self.zk, self.batch_id)).batch.broker_caps)
            except (ZkError, AssertionError):
                caps = None
            if caps is not None and (not self.seen or self.seen[-1] != caps):
                self.seen.append(caps)
            await asyncio.sleep(0.05)

    def cap(self, broker: int, at: int = -1) -> int:
        return self.seen[at].get(broker, LOW) if self.seen else LOW

    @contextmanager
    def watching(self) -> Iterator[Caps]:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="caps-watcher")
        try:
            yield self
        finally:
            self._task.cancel()


async def put_config(zk: ZkClient, path: str, config: dict[str, str]) -> None:
    data = admin_codec.encode_entity_config(config)
    if await zk.exists(path) is None:
        await zk.create(path, data, make_parents=True)
    else:
        await zk.set(path, data, -1)


async def fell_to_the_minimum(caps: Caps, since: int) -> bool:
    """Broker 3's cap at the minimum in a change journaled since ``since`` (AIMD: it may rise
    again in a later sample if no move is stuck then)."""
    return any(seen.get(3, LOW) == LOW for seen in caps.seen[since:])


async def cap_changes(c: ControllerProc, direction: str) -> float:
    code, text = await http_get(c.url + "/metrics")
    assert code == 200
    found = re.search(rf'^reassignd_batch_cap_changes_total{{direction="{direction}"}} (\S+)$', text, re.M)
    return 0.0 if found is None else float(found.group(1))


async def test_caps_rise_while_healthy_and_fall_when_an_agent_crawls(procs: Procs, zk: ZkClient) -> None:
    # the agents start with the controller (their start-ups overlap), at the rate written first
    await set_broker_rate(zk, None, RATE)
    c = procs.controller(9000, 2.0, *SAMPLING)
    procs.cluster(3)
    await active_one(c)
    await wait_brokers(c, {1, 2, 3})
    # every partition led by broker 1; each move adds broker 3 and removes broker 2
    await make_topic(zk, "t", {p: (1, 2) for p in range(40)}, initial_bytes=SIZE)
    limits = {"moves_per_broker": LOW, "moves_in_cluster": 100, "adaptive": {"min": LOW, "max": HIGH}}
    with Caps(zk, "ad").watching() as caps, Stream(c.url) as live:
        reply = await submit(c, batch_body("ad", {("t", p): [1, 3] for p in range(40)}, limits=limits))
        assert reply["batch"]["limits"]["adaptive"] == {"min": LOW, "max": HIGH}
        await eventually(lambda: caps.cap(3) >= 3, what="broker 3's cap raised", timeout_s=60)
        # each journaled change is a record: broker 3's steps, in order, from LOW up to its cap now
        raised = [r for r in live.records if r["type"] == "batch_caps_changed"]
        assert raised and all(r["batch_id"] == "ad" and r["reason"] == "healthy" for r in raised), raised
        steps = [(s["previous"], s["cap"]) for r in raised for s in r["caps"] if s["broker_id"] == 3]
        expected: list[tuple[int, int]] = []
        cap = LOW
        while len(expected) < len(steps):
            expected.append((cap, min(HIGH, cap + step(cap))))
            cap = expected[-1][1]
        assert steps == expected, steps
        assert await cap_changes(c, "up") >= 2
        code, status = await c.get("/v1/batches/ad")
        assert code == 200 and int(status["broker_caps"]["3"]) >= 2, status

        # a failover keeps the current caps (journaled): a controller that samples nothing, so
        # changes nothing, answers with the caps the journal holds
        c.proc.kill()
        journaled = dict((await read_journal(zk, "ad")).batch.broker_caps)
        assert journaled.get(3, LOW) >= 3, journaled
        still = procs.controller(9001, 2.0, "--agent-sample-interval-s", "0")
        await active_one(still)
        code, status = await still.get("/v1/batches/ad")
        assert code == 200
        assert {int(b): cap for b, cap in status["broker_caps"].items()} == journaled
        still.proc.kill()
        c = procs.restart_controller(c)
        await active_one(c)

        # broker 3's replication throttled to a crawl: its moves stick, the caps halve
        throttled = {"reassignd.sim.initial.bytes": str(SIZE), "follower.replication.throttled.replicas": "*"}
        await put_config(zk, paths.config_topic("t"), throttled)
        crawl = {"reassignd.sim.replication.bytes.per.s": RATE, "follower.replication.throttled.rate": "10"}
        await put_config(zk, paths.config_broker(3), crawl)
        throttled_at = len(caps.seen)
        await eventually(
            lambda: fell_to_the_minimum(caps, throttled_at),
            what="broker 3's cap back to the minimum",
            timeout_s=60,
        )
        assert await cap_changes(c, "down") >= 1
        assert max(s.get(3, LOW) for s in caps.seen) >= 3

        await put_config(zk, paths.config_broker(3), {"reassignd.sim.replication.bytes.per.s": "10000000"})
        await set_broker_rate(zk, None, "10000000")
        await eventually(lambda: state_is(c, "ad", "completed"), what="the batch completes", timeout_s=90)
    assert all(LOW <= cap <= HIGH for seen in caps.seen for cap in seen.values()), caps.seen

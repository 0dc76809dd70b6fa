"""A stop and a re-target that a group commit carries past queued ISR notifications decide on the
ISR in ZooKeeper, not on the controller's cache: a stop keeps every adding replica that is in
the ISR, and neither leaves a partition offline.

The controller's link to ZooKeeper is slowed (a proxy delays every reply), so each event takes
a while; the agents, on their own links, add caught-up replicas to the ISR meanwhile. A first
request is queued, then — behind the ISR notifications those writes queue — a stop of one half
of the moving partitions and a re-target of the other half: the first request takes them along
(a group commit may pass ISR notifications), so a decision on the cache would use an old ISR.
"""

from __future__ import annotations

import asyncio
import functools
import random
from typing import Any

import pytest

from reassignd.zk import codec, paths
from tests.faults import invariants, proxy
from tests.faults.scenarios import Controllers, Env, make_topic, set_rate, wait_brokers, wait_online
from tests.integration.harness import eventually

pytestmark = pytest.mark.faults

ROUNDS = 4
PARTITIONS = 12
DELAY_MS = 250.0


def _body(targets: dict[tuple[str, int], list[int] | None], mode: str = "cancel") -> dict[str, Any]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for (t, p), replicas in sorted(targets.items()):
        topics.setdefault(t, []).append({"partition": p, "replicas": replicas})
    return {"topics": [{"name": t, "partitions": ps} for t, ps in topics.items()], "mode": mode}


async def _settled(env: Env, topic: str) -> codec.TopicZnode | None:
    z = codec.decode_topic((await env.zk.get(paths.topic(topic))).data)
    return None if z.adding or z.removing else z


@pytest.mark.timeout(300)
async def test_stop_and_retarget_passing_queued_isr_notifications_read_the_isr(env: Env) -> None:
    rng = random.Random(11)
    async with proxy.ZkProxy(env.zk_port) as px:
        controllers = Controllers(env)
        c = controllers.start(9000, px.connect(env.chroot))
        await set_rate(env.zk, None, "3000000")
        env.procs.cluster(5, 1, 2)
        assert await controllers.wait_active() is c
        assert await wait_brokers(env.zk, {1, 2, 3, 4, 5})
        await make_topic(env.zk, "x", {p: (1, 2) for p in range(20)})
        await make_topic(env.zk, "y", {0: (1, 2)})
        kept: list[str] = []
        for r in range(ROUNDS):
            # three sizes: with fair sharing the small ones catch up first, the big ones seconds later
            topics = [f"s{r}{size}" for size in "abc"]
            tps = [(t, p) for t in topics for p in range(PARTITIONS // 3)]
            for t, size in zip(topics, (30_000, 300_000, 1_000_000), strict=True):
                await make_topic(env.zk, t, {p: (1, 2) for p in range(PARTITIONS // 3)}, initial_bytes=size)
            assert await wait_online(env.zk, tps)
            code, resp = await c.post("/v1/reassignments", _body({tp: [3, 4] for tp in tps}))
            assert code == 200 and resp["error_code"] == 0, resp
            await asyncio.sleep(rng.uniform(0.8, 2.0))
            px.set_delay(DELAY_MS)
            # a slow event (a move of x: several round trips), then the request that leads the group,
            # then — behind the ISR notifications queued meanwhile — the stop or the re-target
            mode = "stop" if r % 2 == 0 else "cancel"
            x_target = [2, 1] if r % 2 == 0 else [1, 2]
            busy = asyncio.create_task(
                c.post("/v1/reassignments", _body({("x", p): x_target for p in range(20)}))
            )
            await asyncio.sleep(0.1)
            first = asyncio.create_task(c.post("/v1/reassignments", _body({("y", 0): None}, mode)))
            await asyncio.sleep(rng.uniform(0.3, 0.7))
            states = await invariants.read_states(env.zk, tps)
            in_isr = {tp: set(s.isr) & {3, 4} for tp, s in states.items() if s is not None}
            if mode == "stop":
                stopped, retargeted = tps, []
                last = asyncio.create_task(c.post("/v1/reassignments", _body(dict.fromkeys(tps), "stop")))
            else:
                stopped, retargeted = [], tps
                last = asyncio.create_task(c.post("/v1/reassignments", _body({tp: [3, 5] for tp in tps})))
            for task in (busy, first, last):
                code, resp = await task
                assert code == 200 and resp["error_code"] == 0, resp
            px.set_delay(0)
            for t in topics:
                z = await eventually(functools.partial(_settled, env, t), timeout_s=90, what=f"{t} settled")
                for tp in stopped:
                    if tp[0] != t:
                        continue
                    replicas = set(z.partitions[tp[1]])
                    assert in_isr[tp] <= replicas, (
                        f"{tp}: the stop dropped adding replicas {sorted(in_isr[tp] - replicas)} that were in "
                        f"the ISR before it was sent (replicas now {sorted(replicas)})"
                    )
                    kept.append(f"{tp}: {sorted(in_isr[tp])}")
                for tp in retargeted:
                    if tp[0] == t:
                        assert set(z.partitions[tp[1]]) == {3, 5}
            live = {1, 2, 3, 4, 5}
            after = await invariants.read_states(env.zk, tps)
            for tp, s in after.items():
                assert s is not None and s.leader in live and s.leader in s.isr, f"{tp} offline: {s}"
        # the test only means something if stops met adding replicas already in the ISR
        assert any(not entry.endswith("[]") for entry in kept), kept

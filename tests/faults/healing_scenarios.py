"""Faults on self-healing's ZooKeeper writes: the active controller's connection cut right after
the server applied the record of a lost broker (``/reassignd/self_healing/<id>``, created), the
first write of its healing batch's journal (``/reassignd/batches/self-healing-broker-<id>-...``),
or the record's deletion once the broker hosts nothing. The outcome of each is unknown to the
controller that wrote it: it resigns, and the next active instance (the standby, straight to
ZooKeeper, or the same one again) rebuilds from ZooKeeper.

Four agents (one process each, racks r0/r1); broker 4 is killed with self-healing on (grace 2 s).
Afterwards, on top of the fault suite's invariants (taken against the assignment the heal left,
nothing offline, memory == ZooKeeper):

- no replica is left on broker 4, every partition keeps its replication factor on distinct racks,
  and a partition without a replica on broker 4 did not move;
- exactly one healing batch exists, completed (no double batch after an unknown submission);
- the lost broker's record is gone.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Awaitable, Callable

from reassignd.executor import paths as batch_paths
from reassignd.executor.model import BatchState
from reassignd.testing.polling import eventually
from reassignd.topic_partition import TopicPartition
from reassignd.zk import codec, paths
from tests.faults import proxy
from tests.faults.invariants import OfflineSampler, Violation
from tests.faults.scenarios import (
    FAST,
    Controllers,
    Env,
    Outcome,
    _fired,
    finish,
    make_topic,
    retry_zk,
    set_rate,
    tps_of,
    wait_brokers,
    wait_online,
)
from tests.integration.harness import read_journal

HEAL_POINTS = ("lost_record", "heal_submit", "record_delete")
LOST = 4
RACKS = {1: "r0", 2: "r1", 3: "r0", 4: "r1"}
TOPIC = "heal"
# RF 2 on distinct racks; partitions 0, 2, 3 and 5 have a replica on broker 4
BEFORE: dict[int, tuple[int, ...]] = {0: (4, 1), 1: (1, 2), 2: (3, 4), 3: (4, 3), 4: (2, 3), 5: (1, 4)}
FLAGS = ("--self-healing", "--self-healing-broker-grace-s", "2")


def _predicate(point: str) -> proxy.Predicate:
    if point == "lost_record":
        return proxy.writes_path(paths.lost_broker(LOST), opcodes=(proxy.CREATE, proxy.CREATE2))
    if point == "heal_submit":
        return proxy.writes_path(batch_paths.batch(f"self-healing-broker-{LOST}-"))
    return proxy.writes_path(paths.lost_broker(LOST), opcodes=(proxy.DELETE,))


async def _healed(env: Env) -> dict[TopicPartition, tuple[int, ...]] | None:
    z = codec.decode_topic((await env.zk.get(paths.topic(TOPIC))).data)
    if z.adding or z.removing or any(LOST in r for r in z.partitions.values()):
        return None
    return {(TOPIC, p): r for p, r in z.partitions.items()}


async def _healing_violations(env: Env, after: dict[TopicPartition, tuple[int, ...]]) -> list[str]:
    violations: list[str] = []
    for (t, p), replicas in sorted(after.items()):
        before = BEFORE[p]
        if len(replicas) != len(before) or len({RACKS[b] for b in replicas}) != len(replicas):
            violations.append(Violation("assignment", f"{t}-{p} is {replicas}", [(t, p)]))
        if LOST not in before and replicas != before:
            violations.append(Violation("assignment", f"{t}-{p} moved though it did not need to", [(t, p)]))
    ids = [b for b in await env.zk.children(batch_paths.BATCHES) if b.startswith("self-healing-broker-")]
    if len(ids) != 1:
        violations.append(Violation("scenario", f"healing batches: {sorted(ids)} (expected one)"))
    for batch_id in ids:
        batch = (await read_journal(env.zk, batch_id)).batch
        if batch.state is not BatchState.COMPLETED or batch.spec.owner != "self-healing":
            violations.append(Violation("scenario", f"{batch_id}: {batch.state}, owner {batch.spec.owner}"))
    if await env.zk.exists(paths.lost_broker(LOST)):
        violations.append(Violation("scenario", "the lost broker's record is left behind"))
    return violations


async def proxy_cut_heal(env: Env, seed: int, point: str) -> Outcome:
    """Self-healing run by a controller that talks to ZooKeeper through the proxy, its connection
    cut right after one of self-healing's writes (``point``); the standby may take over."""
    assert point in HEAL_POINTS, point
    random.Random(seed)  # the scenario is deterministic; the seed names the run
    out = Outcome(f"proxy_cut_heal_{point}", seed)
    async with proxy.ZkProxy(env.zk_port) as px:
        controllers = Controllers(env, *FLAGS)
        await set_rate(env.zk, None, FAST)
        proxied = controllers.start(9000, px.connect(env.chroot))
        if await controllers.wait_active() is not proxied:
            out.violations.append(
                Violation("scenario", "the proxied controller did not win the first election")
            )
            return out
        controllers.start(9001)
        agents = {b: env.procs.broker(b, "--rack", rack) for b, rack in RACKS.items()}
        if not await wait_brokers(env.zk, set(RACKS)):
            out.violations.append(Violation("scenario", "brokers did not register"))
            return out
        await retry_zk(lambda: make_topic(env.zk, TOPIC, BEFORE))
        await wait_online(env.zk, tps_of({(TOPIC, p): r for p, r in BEFORE.items()}))
        sampler = await OfflineSampler(env.zk_connect, [TOPIC]).start()
        cut = px.arm_cut(_predicate(point), 1)
        agents[LOST].kill()
        await _fired(out, cut, 60.0)
        after = await eventually(lambda: _healed(env), 90.0, 0.2, or_none=True)
        if after is None:
            out.violations.append(Violation("scenario", "broker 4's replicas were never moved"))
            after = {(TOPIC, p): r for p, r in BEFORE.items()}
        gone = await eventually(lambda: _record_gone(env), 30.0, 0.2, or_none=True)
        if not gone:
            out.violations.append(Violation("scenario", "the lost broker's record was never deleted"))
        out = await finish(env, out, after, controllers, sampler, expected_live=set(RACKS) - {LOST})
        out.violations.extend(await _healing_violations(env, after))
        out.notes.append(f"proxy: {px.writes_seen} writes seen, {px.cuts_done} cut(s)")
    return out


async def _record_gone(env: Env) -> bool:
    return not await env.zk.exists(paths.lost_broker(LOST))


HEAL_SCENARIOS: dict[str, Callable[[Env, int], Awaitable[Outcome]]] = {
    f"proxy_cut_heal_{point}": functools.partial(proxy_cut_heal, point=point) for point in HEAL_POINTS
}

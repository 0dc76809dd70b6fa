"""Faults on the writes of preferred-replica elections: the active controller's connection cut
right after the server applied the state write of an election that Kafka's legacy
``/admin/preferred_replica_election`` znode asked for, the fenced delete of that znode, or the
state write of an election the auto leader rebalance decided.

The story: topic ``pe`` (6 partitions, replicas on brokers 1-3 in rotation, so each broker prefers
two). A seeded broker dies: its partitions are led by the others. It comes back and rejoins their
ISRs; then the elections give it its leadership back (the znode, or the rebalance), and the proxy
cuts the connection after one of their writes. Afterwards, on top of the fault suite's invariants
(every partition at its assignment, led from its ISR, nothing stray, nothing offline):

- every partition is led by its preferred replica;
- each of the returned broker's partitions was elected exactly once (its leader epoch is one
  more than before the elections), the others not at all;
- the znode is gone.
"""

from __future__ import annotations

import asyncio
import functools
import random
from collections.abc import Awaitable, Callable

from reassignd.testing.polling import eventually
from reassignd.topic_partition import TopicPartition
from reassignd.zk import admin_codec, codec, paths
from tests.faults import invariants, proxy
from tests.faults.invariants import Assignment, OfflineSampler, Violation
from tests.faults.scenarios import (
    Controllers,
    Env,
    Outcome,
    _by_partition,
    _fired,
    finish,
    make_topic,
    retry_zk,
    tps_of,
    wait_brokers,
    wait_online,
)

ELECTION_POINTS = ("preferred_znode_state", "preferred_znode_delete", "auto_rebalance")
TOPIC = "pe"
BROKERS = (1, 2, 3)
NO_REBALANCE = ("--auto-leader-rebalance-enable", "false")
FAST_REBALANCE = ("--leader-imbalance-check-interval-s", "1")


def _assignment() -> dict[TopicPartition, tuple[int, ...]]:
    return {(TOPIC, p): tuple(BROKERS[(p + i) % 3] for i in range(3)) for p in range(6)}


async def _states(env: Env, tps: list[TopicPartition]) -> dict[TopicPartition, codec.PartitionState | None]:
    return await invariants.read_states(env.zk, tps)


async def proxy_cut_election(env: Env, seed: int, point: str) -> Outcome:
    assert point in ELECTION_POINTS, point
    rng = random.Random(seed)
    out = Outcome(f"proxy_cut_{point}", seed)
    expected = _assignment()
    tps = tps_of(expected)
    async with proxy.ZkProxy(env.zk_port) as px:
        controllers = Controllers(env, *(FAST_REBALANCE if point == "auto_rebalance" else NO_REBALANCE))
        proxied = controllers.start(9000, px.connect(env.chroot))
        if await controllers.wait_active() is not proxied:
            out.violations.append(
                Violation("scenario", "the proxied controller did not win the first election")
            )
            return out
        controllers.start(9001)
        brokers = {b: env.procs.broker(b) for b in BROKERS}
        if not await wait_brokers(env.zk, set(BROKERS)):
            out.violations.append(Violation("scenario", "brokers did not register"))
            return out
        await make_topic(env.zk, TOPIC, _by_partition(expected))
        await wait_online(env.zk, tps)
        sampler = await OfflineSampler(env.zk_connect, [TOPIC]).start()
        try:
            victim = rng.choice(BROKERS)
            mine = [tp for tp in tps if expected[tp][0] == victim]
            out.notes.append(f"broker {victim} killed and restarted; it prefers {mine}")
            brokers[victim].kill()

            async def gone() -> bool:
                states = await _states(env, tps)
                return all(
                    s is not None and s.leader != victim and victim not in s.isr for s in states.values()
                )

            if not await eventually(gone, 30.0, 0.2, or_none=True):
                out.violations.append(Violation("scenario", f"broker {victim} stayed in a leader or an ISR"))
            before = await _states(env, tps)
            cut = px.arm_cut(_predicate(point))
            brokers[victim] = env.procs.restart(brokers[victim])

            async def back() -> bool:
                states = await _states(env, mine)
                return all(s is not None and victim in s.isr for s in states.values())

            if not await eventually(back, 60.0, 0.2, or_none=True):
                out.violations.append(Violation("scenario", f"broker {victim} never rejoined the ISRs"))
            if point != "auto_rebalance":
                data = admin_codec.encode_preferred_replica_election(tuple(tps))
                await retry_zk(
                    lambda: env.zk.create(paths.PREFERRED_REPLICA_ELECTION, data, make_parents=True)
                )
            await _fired(out, cut)
            await _elected_once(env, out, expected, before, victim)
        except BaseException:
            await sampler.stop()
            raise
        out = await finish(env, out, expected, controllers, sampler)
        out.notes.append(f"proxy: {px.writes_seen} writes seen, {px.cuts_done} cut(s)")
    return out


def _predicate(point: str) -> proxy.Predicate:
    if point == "preferred_znode_delete":
        return proxy.writes_path(endswith=paths.PREFERRED_REPLICA_ELECTION, opcodes=(proxy.DELETE,))
    return proxy.state_write  # the elections' state writes: the first controller state write since


async def _elected_once(
    env: Env,
    out: Outcome,
    expected: Assignment,
    before: dict[TopicPartition, codec.PartitionState | None],
    victim: int,
) -> None:
    """Every partition ends led by its preferred replica, elected once if it needed it, not at all
    otherwise, and the znode is gone."""
    tps = tps_of(expected)

    async def settled() -> bool:
        if await env.zk.exists(paths.PREFERRED_REPLICA_ELECTION) is not None:
            return False
        states = await _states(env, tps)
        return all(s is not None and s.leader == expected[tp][0] for tp, s in states.items())

    if not await eventually(settled, 60.0, 0.2, or_none=True):
        znode = await env.zk.exists(paths.PREFERRED_REPLICA_ELECTION)
        out.violations.append(
            Violation(
                "scenario",
                f"not every partition led by its preferred replica (znode {'left' if znode else 'gone'}): "
                + ", ".join(f"{t}-{p} {s}" for (t, p), s in (await _states(env, tps)).items()),
            )
        )
        return
    await asyncio.sleep(2.0)  # a second election (a replayed znode, another rebalance) would show now
    after = await _states(env, tps)
    for tp in tps:
        b, a = before[tp], after[tp]
        if b is None or a is None:
            out.violations.append(Violation("scenario", f"{tp[0]}-{tp[1]} has no state"))
            continue
        elections = 1 if expected[tp][0] == victim else 0
        if a.leader_epoch != b.leader_epoch + elections:
            out.violations.append(
                Violation(
                    "scenario",
                    f"{tp[0]}-{tp[1]}: leader epoch {b.leader_epoch} -> {a.leader_epoch}, "
                    f"expected {elections} election(s)",
                )
            )


ELECTION_SCENARIOS: dict[str, Callable[[Env, int], Awaitable[Outcome]]] = {
    f"proxy_cut_{point}": functools.partial(proxy_cut_election, point=point) for point in ELECTION_POINTS
}

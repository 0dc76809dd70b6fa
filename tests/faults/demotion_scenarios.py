"""Faults on demotion's ZooKeeper writes: the active controller's connection cut right after the
server applied the demotion's record (``/reassignd/demotions/<broker>`` and its topic's orders
before, one fenced multi), the reorder that follows it (a reassignment of each partition to its
own replica set: the topic znode), or promotion's delete of the record once the orders are back.

The story: topic ``dm`` (6 partitions, each hosting broker 1, which leads three of them) on four
brokers, a controller through the proxy and a standby straight to ZooKeeper. The client demotes
broker 1 (and, for the promotion point, then promotes it) as a client does: again, to whichever
instance is active, until it is answered 200 with nothing refused. Afterwards, on top of the fault
suite's invariants (every partition at its expected replicas in order, nothing stray, nothing
offline):

- demoted: every replica list has broker 1 last, no partition is led by it, it is still in every
  ISR, and the record holds the orders before the demotion (never the demoted ones: a retried
  demotion must not record its own first attempt);
- promoted: every order and leadership is back as before, and the record is gone.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable

from reassignd.testing.polling import eventually
from reassignd.topic_partition import TopicPartition
from reassignd.zk import admin_codec, paths
from tests.faults import invariants, proxy
from tests.faults.invariants import OfflineSampler, Violation
from tests.faults.scenarios import (
    Controllers,
    Env,
    Outcome,
    _by_partition,
    _fired,
    _proxied_active,
    finish,
    make_topic,
    set_rate,
    tps_of,
    wait_online,
)

DEMOTION_POINTS = ("demotion_record", "demotion_reorder", "promotion_forget")
TOPIC = "dm"
BROKER = 1
BEFORE: dict[TopicPartition, tuple[int, ...]] = {
    (TOPIC, 0): (1, 2, 3),
    (TOPIC, 1): (1, 3, 4),
    (TOPIC, 2): (2, 1, 3),
    (TOPIC, 3): (1, 4),
    (TOPIC, 4): (3, 4, 1),  # already last: left alone, not recorded
    (TOPIC, 5): (4, 1, 2),
}
DEMOTED = {tp: (*(b for b in r if b != BROKER), BROKER) for tp, r in BEFORE.items()}
RECORDED = {tp[1]: r for tp, r in BEFORE.items() if DEMOTED[tp] != r}


def _predicate(point: str) -> proxy.Predicate:
    if point == "demotion_record":
        return proxy.writes_path(endswith=paths.demotion(BROKER), opcodes=proxy._CREATES)
    if point == "demotion_reorder":
        return proxy.topic_write(TOPIC)
    return proxy.writes_path(paths.demotion(BROKER), opcodes=(proxy.DELETE,))


async def _change(controllers: Controllers, verb: str, timeout_s: float = 60.0) -> bool:
    """POST the demotion (or promotion) until an active instance answers it with nothing refused."""

    async def attempt() -> bool:
        c = await controllers.active()
        if c is None:
            return False
        code, body = await c.post(f"/v1/brokers/{BROKER}/{verb}", None)
        return code == 200 and body["refused"] == 0

    return bool(await eventually(attempt, timeout_s, 0.5, or_none=True))


async def _in_sync(env: Env) -> bool:
    states = await invariants.read_states(env.zk, tps_of(BEFORE))
    return all(s is not None and set(s.isr) == set(BEFORE[tp]) for tp, s in states.items())


async def proxy_cut_demotion(env: Env, seed: int, point: str) -> Outcome:
    assert point in DEMOTION_POINTS, point
    out = Outcome(f"proxy_cut_{point}", seed)
    async with proxy.ZkProxy(env.zk_port) as px:
        controllers = Controllers(env)
        await set_rate(env.zk, None, "1000000000")
        if await _proxied_active(env, out, controllers, px.connect(env.chroot), 4) is None:
            return out
        await make_topic(env.zk, TOPIC, _by_partition(BEFORE))
        await wait_online(env.zk, tps_of(BEFORE))
        if not await eventually(lambda: _in_sync(env), 30.0, 0.2, or_none=True):
            out.violations.append(Violation("scenario", "the replicas never all joined the ISRs"))
        sampler = await OfflineSampler(env.zk_connect, [TOPIC]).start()
        promote = point == "promotion_forget"
        try:
            if promote and not await _change(controllers, "demote"):
                out.violations.append(Violation("scenario", "the demotion was never answered"))
            cut = px.arm_cut(_predicate(point))
            if not await _change(controllers, "promote" if promote else "demote"):
                out.violations.append(
                    Violation("scenario", f"the {'promotion' if promote else 'demotion'} was never answered")
                )
            await _fired(out, cut)
        except BaseException:
            await sampler.stop()
            raise
        expected = BEFORE if promote else DEMOTED
        out = await finish(env, out, expected, controllers, sampler)
        out.violations.extend(await _leaders_and_record(env, promote))
        out.notes.append(f"proxy: {px.writes_seen} writes seen, {px.cuts_done} cut(s)")
    return out


async def _leaders_and_record(env: Env, promoted: bool) -> list[str]:
    violations: list[str] = []
    states = await invariants.read_states(env.zk, tps_of(BEFORE))
    for tp, s in sorted(states.items()):
        if s is None:
            violations.append(Violation("scenario", f"{tp[0]}-{tp[1]} has no state", [tp]))
            continue
        want = BEFORE[tp][0] if promoted else DEMOTED[tp][0]
        if s.leader != want:
            violations.append(Violation("scenario", f"{tp[0]}-{tp[1]} led by {s.leader}, not {want}", [tp]))
        if BROKER not in s.isr:
            violations.append(Violation("scenario", f"{tp[0]}-{tp[1]}: broker {BROKER} out of the ISR", [tp]))
    head = await env.zk.exists(paths.demotion(BROKER))
    if promoted:
        if head is not None:
            violations.append(Violation("scenario", "the demotion record is left after the promotion"))
        return violations
    znode = await env.zk.get_or_none(paths.demotion_topic(BROKER, TOPIC))
    recorded = None if znode is None else admin_codec.decode_demoted_orders(znode.data)
    if head is None or recorded != RECORDED:
        violations.append(
            Violation(
                "scenario",
                f"the demotion record holds {recorded} (marker {head is not None}), not {RECORDED}",
            )
        )
    return violations


DEMOTION_SCENARIOS: dict[str, Callable[[Env, int], Awaitable[Outcome]]] = {
    f"proxy_cut_{point}": functools.partial(proxy_cut_demotion, point=point) for point in DEMOTION_POINTS
}

"""Faults on the batch executor's own ZooKeeper writes: the active controller's connection cut
right after the server applied a write of the batch journal (``/reassignd/batches/<id>``), of a
throttle the batch sets or of one it restores (``/config/brokers/<id>``, ``/config/topics/<t>``) or of the
moves' exact origins (``/reassignd/origins/<topic>``); and its session expiring mid-batch.

The client submits the batch as a client does: again, to whichever instance is active, while the
answer is NOT_CONTROLLER or the request fails (the batch id makes that safe). Afterwards, on top of
the fault suite's invariants (every partition at its target, nothing stray, nothing offline):

- the journal says the batch completed and every move completed, each from the replicas the
  partition had before the batch (no move restarted from a later state);
- every throttle is exactly as before the batch: an operator's untouched, the batch's own gone;
- no exact-origins znode is left behind.
"""

from __future__ import annotations

import asyncio
import functools
import random
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from reassignd.executor import paths as batch_paths
from reassignd.executor.model import BatchState, MoveState
from reassignd.topic_partition import TopicPartition
from reassignd.zk import codec, paths
from reassignd.zk.client import ZkClient
from tests.faults import proxy
from tests.faults.invariants import OfflineSampler, Violation
from tests.faults.scenarios import (
    SESSION_TIMEOUT_S,
    Controllers,
    Env,
    Outcome,
    _by_partition,
    _fired,
    _moves,
    _proxied_active,
    _renamed,
    finish,
    make_topic,
    put_config,
    retry_zk,
    set_rate,
    tps_of,
    until,
    wait_online,
)
from tests.integration.harness import read_journal

BATCH_POINTS = ("journal_submit", "journal_update", "throttle_set", "throttle_restore", "origins", "expiry")
BATCH_ID = "fault-batch"
BROKERS = (1, 2, 3, 4)
# an operator's throttle on a broker the batch uses: it must survive the batch untouched
OPERATOR_THROTTLE = {"leader.replication.throttled.rate": "900000000", "operator.note": "kept"}


def _predicate(point: str) -> proxy.Predicate:
    if point.startswith("journal"):
        return proxy.writes_path(batch_paths.batch(BATCH_ID))
    if point == "throttle_set":
        return proxy.writes_path("/config/brokers/")
    if (
        point == "throttle_restore"
    ):  # broker 1 has no config of its own: the batch creates it, then restores it
        return proxy.writes_path(endswith="/config/brokers/1", opcodes=(proxy.SET_DATA, proxy.DELETE))
    return proxy.writes_path(paths.ORIGINS + "/")


async def _configs(zk: ZkClient, topic: str) -> dict[str, dict[str, str] | None]:
    """The entity configs a batch may touch: its brokers' and its topic's."""
    wanted = {f"broker {b}": paths.config_broker(b) for b in BROKERS} | {
        f"topic {topic}": paths.config_topic(topic)
    }
    out: dict[str, dict[str, str] | None] = {}
    for name, path in wanted.items():
        znode = await zk.get_or_none(path)
        out[name] = None if znode is None else dict(codec.decode_entity_config(znode.data))
    return out


def _without_entity(configs: Mapping[str, dict[str, str] | None]) -> dict[str, dict[str, str]]:
    # a config znode the batch created and emptied again counts as absent
    return {name: c for name, c in configs.items() if c}


async def _submit_until_accepted(controllers: Controllers, body: dict[str, Any], timeout_s: float) -> bool:
    async def attempt() -> bool:
        c = await controllers.active()
        if c is None:
            return False
        code, resp = await c.post("/v1/batches", body)
        return code == 200 and all(p["error_code"] == 0 for p in resp["partitions"])

    return bool(await until(attempt, timeout_s, interval_s=0.5))


async def _completed(controllers: Controllers) -> bool:
    c = await controllers.active()
    if c is None:
        return False
    code, resp = await c.get(f"/v1/batches/{BATCH_ID}")
    return code == 200 and resp["state"] == "completed"


async def proxy_cut_batch(env: Env, seed: int, point: str) -> Outcome:
    """A batch with throttles, run by a controller that talks to ZooKeeper through the proxy,
    loses its connection right after one of the executor's writes (``point``) or, for
    ``expiry``, for longer than its session timeout mid-batch. The standby may take over."""
    assert point in BATCH_POINTS, point
    rng = random.Random(seed)
    out = Outcome(f"proxy_cut_batch_{point}", seed)
    async with proxy.ZkProxy(env.zk_port) as px:
        controllers = Controllers(env)
        await set_rate(env.zk, None, "400000")
        await retry_zk(lambda: put_config(env.zk, paths.config_broker(2), OPERATOR_THROTTLE))
        if await _proxied_active(env, out, controllers, px.connect(env.chroot), len(BROKERS)) is None:
            return out
        before, after = _moves(rng, 8, (1, 2), (3, 4), 2)
        before, after = _renamed(before, "pb"), _renamed(after, "pb")
        await make_topic(env.zk, "pb", _by_partition(before), initial_bytes=300_000)
        await wait_online(env.zk, tps_of(before))
        configs_before = _without_entity(await _configs(env.zk, "pb"))
        body = {
            "batch_id": BATCH_ID,
            "partitions": [{"topic": t, "partition": p, "replicas": list(r)} for (t, p), r in after.items()],
            "throttle_bytes_per_s": 1_000_000_000,  # set and restored, never the bottleneck
            "limits": {"moves_per_broker": 2, "moves_in_cluster": 4, "leader_moves_per_broker": 4},
        }
        sampler = await OfflineSampler(env.zk_connect, ["pb"]).start()
        try:
            if point == "expiry":
                await _expire_mid_batch(rng, out, controllers, px, body)
            else:
                nth = rng.randint(2, 4) if point == "journal_update" else 1
                cut = px.arm_cut(_predicate(point), nth)
                if not await _submit_until_accepted(controllers, body, 60.0):
                    out.violations.append(Violation("scenario", "the batch was never accepted"))
                await _fired(out, cut)
            if not await until(lambda: _completed(controllers), 90.0):
                out.violations.append(Violation("scenario", "the batch never completed"))
        except BaseException:
            await sampler.stop()
            raise
        out = await finish(env, out, after, controllers, sampler)
        out.violations.extend(await _batch_violations(env, before, configs_before))
        out.notes.append(f"proxy: {px.writes_seen} writes seen, {px.cuts_done} cut(s)")
    return out


async def _expire_mid_batch(
    rng: random.Random, out: Outcome, controllers: Controllers, px: proxy.ZkProxy, body: dict[str, Any]
) -> None:
    if not await _submit_until_accepted(controllers, body, 60.0):
        out.violations.append(Violation("scenario", "the batch was never accepted"))
    await asyncio.sleep(rng.uniform(0.3, 1.5))
    away_s = SESSION_TIMEOUT_S + rng.uniform(0.5, 2.0)
    out.notes.append(f"the proxied controller's link away for {away_s:.1f}s mid-batch")
    px.refuse_for(away_s)
    px.cut_all()
    await asyncio.sleep(away_s)


async def _batch_violations(
    env: Env, before: Mapping[TopicPartition, tuple[int, ...]], configs_before: Mapping[str, dict[str, str]]
) -> list[str]:
    violations: list[str] = []
    batch = (await read_journal(env.zk, BATCH_ID)).batch
    if batch.state is not BatchState.COMPLETED:
        violations.append(Violation("scenario", f"the journal says the batch is {batch.state}"))
    for tp, move in sorted(batch.moves.items()):
        if move.state is not MoveState.COMPLETED:
            violations.append(Violation("assignment", f"journal: {tp} is {move.state}", [tp]))
        elif move.previous != before[tp]:
            violations.append(
                Violation("assignment", f"journal: {tp} moved from {move.previous}, not {before[tp]}", [tp])
            )
    if batch.broker_throttles or batch.topic_throttles:
        violations.append(Violation("scenario", "the journal still records throttles it owns"))
    configs_after = _without_entity(await _configs(env.zk, "pb"))
    if configs_after != configs_before:
        violations.append(
            Violation("scenario", f"throttles not restored: {configs_before} -> {configs_after}")
        )
    left = await env.zk.children(paths.ORIGINS) if await env.zk.exists(paths.ORIGINS) else []
    if left:
        violations.append(Violation("scenario", f"exact origins left behind: {sorted(left)}"))
    return violations


BATCH_SCENARIOS: dict[str, Callable[[Env, int], Awaitable[Outcome]]] = {
    f"proxy_cut_batch_{point}": functools.partial(proxy_cut_batch, point=point) for point in BATCH_POINTS
}

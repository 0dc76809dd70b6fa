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

import aiohttp

from reassignd.executor import paths as batch_paths
from reassignd.executor.model import BatchMoveState, BatchState
from reassignd.testing.polling import eventually
from reassignd.topic_partition import TopicPartition
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.client import ZkClient
from tests.faults import proxy
from tests.faults.invariants import OfflineSampler, Violation
from tests.faults.scenarios import (
    SESSION_TIMEOUT_S,
    SLOW,
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
        out[name] = None if znode is None else dict(admin_codec.decode_entity_config(znode.data))
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

    return bool(await eventually(attempt, timeout_s, 0.5, or_none=True))


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
            if not await eventually(lambda: _completed(controllers), 90.0, 0.2, or_none=True):
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
        if move.state is not BatchMoveState.COMPLETED:
            violations.append(Violation("assignment", f"journal: {tp} is {move.state}", [tp]))
        elif move.origins != before[tp]:
            violations.append(
                Violation("assignment", f"journal: {tp} moved from {move.origins}, not {before[tp]}", [tp])
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


# --- a journal bigger than one multi, cut after its first --------------------------------------

SPLIT_POINTS = ("stop", "submit")
SPLIT_ID = "split-batch"
SPLIT_TOPIC = "js"
SPLIT_PARTITIONS = 4000
SPLIT_RATE = 1_000_000_000  # the batch's throttle: set and restored, never the bottleneck


async def _epoch(zk: ZkClient) -> int:
    return int((await retry_zk(lambda: zk.get(paths.CONTROLLER_EPOCH))).data or b"0")


async def _batch_status(controllers: Controllers, batch_id: str) -> dict[str, Any] | None:
    c = await controllers.active()
    if c is None:
        return None
    code, resp = await c.get(f"/v1/batches/{batch_id}")
    return dict(resp) if code == 200 else None


async def _post_once(controllers: Controllers, path: str, body: Any) -> str:
    """One request to the active controller, not retried: what it answered."""
    c = await controllers.active()
    if c is None:
        return "no active controller"
    try:
        code, resp = await c.post(path, body)
    except (aiohttp.ClientError, OSError, TimeoutError) as e:
        return f"{type(e).__name__}"
    return f"{code} {resp.get('error_code') if isinstance(resp, dict) else resp}"


async def journal_split(env: Env, seed: int, point: str, partitions: int = SPLIT_PARTITIONS) -> Outcome:
    """A batch of ``partitions`` single-replica moves — a journal of several chunks, more than one
    multi — run by a controller that talks to ZooKeeper through the proxy; the connection is cut
    right after the first multi that writes the journal of the batch's ``stop`` or of its
    ``submit``ssion, and the standby may take over. The client sends its request again (as on
    41) until it is answered.

    Afterwards: the controller epoch moved at most once; for ``stop``, every move was stopped
    (each partition back at its replicas, the journal stopped with every move cancelled, the
    throttles as before the batch); for ``submit``, the retried submission was accepted, another
    body under the same id answered 10004, the running batch's throttles were set on every broker
    and its topic, and the batch completed with its throttles restored."""
    assert point in SPLIT_POINTS, point
    rng = random.Random(seed)
    out = Outcome(f"journal_split_{point}", seed)
    async with proxy.ZkProxy(env.zk_port) as px:
        # every move running at once, so that running moves sit in every chunk of the journal
        controllers = Controllers(env, "--batch-moves-in-cluster", str(partitions))
        await set_rate(env.zk, None, SLOW)  # nothing completes while the test looks
        if await _proxied_active(env, out, controllers, px.connect(env.chroot), len(BROKERS)) is None:
            return out
        before = {(SPLIT_TOPIC, p): (1 + p % 2,) for p in range(partitions)}
        after = {tp: (3 + rng.randrange(2),) for tp in before}
        await make_topic(env.zk, SPLIT_TOPIC, _by_partition(before), initial_bytes=200_000)
        if not await wait_online(env.zk, tps_of(before), timeout_s=120.0):
            out.violations.append(Violation("scenario", "the topic never came online"))
            return out
        configs_before = _without_entity(await _configs(env.zk, SPLIT_TOPIC))
        body = {
            "batch_id": SPLIT_ID,
            "partitions": [{"topic": t, "partition": p, "replicas": list(r)} for (t, p), r in after.items()],
            "throttle_bytes_per_s": SPLIT_RATE,
            "limits": dict.fromkeys(
                ("moves_per_broker", "moves_in_cluster", "leader_moves_per_broker"), partitions
            ),
        }
        journal_path = batch_paths.batch(SPLIT_ID)
        if point == "submit":
            epoch = await _epoch(env.zk)
            cut = px.arm_cut(proxy.writes_path(journal_path))
            out.notes.append(f"first submission: {await _post_once(controllers, '/v1/batches', body)}")
            await _fired(out, cut)
            if not await _submit_until_accepted(controllers, body, 90.0):
                out.violations.append(Violation("scenario", "the retried submission was never accepted"))
            other = await _post_once(controllers, "/v1/batches", {**body, "priority": 7})
            if not other.startswith("409 10004"):
                out.violations.append(Violation("scenario", f"another body under the id answered {other}"))
            out.violations.extend(await _split_running(env, controllers, partitions))
            expected: Mapping[TopicPartition, tuple[int, ...]] = after
        else:
            if not await _submit_until_accepted(controllers, body, 60.0):
                out.violations.append(Violation("scenario", "the batch was never accepted"))
                return out
            out.violations.extend(await _split_running(env, controllers, partitions))
            epoch = await _epoch(env.zk)
            cut = px.arm_cut(proxy.writes_path(journal_path))
            stop_path = f"/v1/batches/{SPLIT_ID}/stop"
            out.notes.append(f"first stop: {await _post_once(controllers, stop_path, {})}")
            await _fired(out, cut)

            async def stopped() -> bool:
                return (await _post_once(controllers, stop_path, {})).startswith("200")

            if not await eventually(stopped, 90.0, 0.5, or_none=True):
                out.violations.append(Violation("scenario", "the retried stop was never answered"))
            expected = before
        out = await finish(env, out, expected, controllers, None, settle_s=120.0)
        steps = await _epoch(env.zk) - epoch
        out.notes.append(f"controller epoch moved {steps} time(s); proxy: {px.cuts_done} cut(s)")
        if steps > 1:
            out.violations.append(Violation("controller", f"the controller epoch moved {steps} times"))
        out.violations.extend(await _split_ended(env, point, before, configs_before))
    return out


async def _split_running(env: Env, controllers: Controllers, partitions: int) -> list[str]:
    """Every move of the split batch running, and its throttles set: the batch's rate on every
    broker, every moving replica listed in the topic's config."""

    async def all_running() -> bool:
        s = await _batch_status(controllers, SPLIT_ID)
        return s is not None and s["counts"]["running"] == partitions

    if not await eventually(all_running, 90.0, 0.2, or_none=True):
        return [Violation("scenario", f"the batch's {partitions} moves never all ran")]

    async def throttled() -> bool:
        configs = await _configs(env.zk, SPLIT_TOPIC)
        brokers = [c for name, c in configs.items() if name.startswith("broker")]
        topic = configs[f"topic {SPLIT_TOPIC}"] or {}
        listed = topic.get("follower.replication.throttled.replicas", "").split(",")
        return len(listed) == partitions and all(
            (c or {}).get("leader.replication.throttled.rate") == str(SPLIT_RATE) for c in brokers
        )

    if not await eventually(throttled, 30.0, 0.2, or_none=True):
        configs = await _configs(env.zk, SPLIT_TOPIC)
        rates = {n: (c or {}).get("leader.replication.throttled.rate") for n, c in configs.items()}
        return [Violation("scenario", f"the running batch's throttles were never all set: {rates}")]
    return []


async def _split_ended(
    env: Env,
    point: str,
    before: Mapping[TopicPartition, tuple[int, ...]],
    configs_before: Mapping[str, dict[str, str]],
) -> list[str]:
    """The journal as the batch's end says, and the throttles back as they were."""
    violations: list[str] = []
    batch = (await read_journal(env.zk, SPLIT_ID)).batch
    want_batch, want_move = (
        (BatchState.STOPPED, BatchMoveState.CANCELLED)
        if point == "stop"
        else (BatchState.COMPLETED, BatchMoveState.COMPLETED)
    )
    if batch.state is not want_batch:
        violations.append(Violation("scenario", f"the journal says the batch is {batch.state}"))
    wrong = sorted(tp for tp, m in batch.moves.items() if m.state is not want_move or m.origins != before[tp])
    if wrong:
        violations.append(
            Violation(
                "assignment", f"journal: {len(wrong)} moves not {want_move} from where they were", wrong
            )
        )
    if batch.broker_throttles or batch.topic_throttles:
        violations.append(Violation("scenario", "the journal still records throttles it owns"))

    async def restored() -> bool:
        return _without_entity(await _configs(env.zk, SPLIT_TOPIC)) == configs_before

    if not await eventually(restored, 30.0, 0.2, or_none=True):
        after = _without_entity(await _configs(env.zk, SPLIT_TOPIC))
        violations.append(Violation("scenario", f"throttles not restored: {configs_before} -> {after}"))
    return violations


async def api_cancel_cut(env: Env, seed: int) -> Outcome:
    """A move a batch runs, cancelled through the API (``DELETE /v1/reassignments/<t>/<p>``) by a
    controller whose connection is cut right after the cancel's topic-znode write: the next
    controller does not start the move again (the cancel was journaled before that write). The
    client sends its DELETE again only if ZooKeeper may not have applied it; the batch's other
    moves complete."""
    rng = random.Random(seed)
    out = Outcome("api_cancel_cut", seed)
    async with proxy.ZkProxy(env.zk_port) as px:
        controllers = Controllers(env)
        await set_rate(env.zk, None, SLOW)
        if await _proxied_active(env, out, controllers, px.connect(env.chroot), len(BROKERS)) is None:
            return out
        before, after = _moves(rng, 4, (1, 2), (3, 4), 2)
        before, after = _renamed(before, "ac"), _renamed(after, "ac")
        await make_topic(env.zk, "ac", _by_partition(before), initial_bytes=300_000)
        await wait_online(env.zk, tps_of(before))
        body = {
            "batch_id": BATCH_ID,
            "partitions": [{"topic": t, "partition": p, "replicas": list(r)} for (t, p), r in after.items()],
            "limits": {"moves_per_broker": 4, "moves_in_cluster": 4, "leader_moves_per_broker": 4},
        }
        if not await _submit_until_accepted(controllers, body, 60.0):
            out.violations.append(Violation("scenario", "the batch was never accepted"))
            return out

        async def all_running() -> bool:
            s = await _batch_status(controllers, BATCH_ID)
            return s is not None and s["counts"]["running"] == len(after)

        if not await eventually(all_running, 60.0, 0.2, or_none=True):
            out.violations.append(Violation("scenario", "the batch's moves never all ran"))
        victim = sorted(after)[rng.randrange(len(after))]
        epoch = await _epoch(env.zk)
        cut = px.arm_cut(proxy.topic_write("ac"))
        cancel = f"/v1/reassignments/{victim[0]}/{victim[1]}"

        async def cancelled() -> str | None:
            c = await controllers.active()
            if c is None:
                return None
            code, resp = await c.delete(cancel)
            return f"{code} {resp}" if code == 200 else None

        out.notes.append(f"first cancel of {victim}: {await cancelled()}")
        await _fired(out, cut)
        # ZooKeeper applied the cut write (the cancel is durable): not retried, so a move the next
        # controller started again would not be cancelled by the client's retry
        if not cut.reply_seen:
            out.notes.append(f"retried cancel: {await eventually(cancelled, 60.0, 0.5, or_none=True)}")
        if await controllers.wait_active(timeout_s=30.0, ready=True) is None:
            out.violations.append(Violation("controller", "no controller active and ready after the cut"))
        await asyncio.sleep(3.0)  # a few executor ticks: a move started again would show now

        async def settled() -> bool:
            z = codec.decode_topic((await env.zk.get(paths.topic("ac"))).data)
            return z.partitions[victim[1]] == before[victim] and victim[1] not in z.adding

        if not await settled():
            out.violations.append(Violation("assignment", f"{victim} moves again after its cancel", [victim]))
        expected = {**after, victim: before[victim]}
        out = await finish(env, out, expected, controllers, None)
        batch = (await read_journal(env.zk, BATCH_ID)).batch
        states = {tp: m.state for tp, m in batch.moves.items()}
        want = {tp: BatchMoveState.CANCELLED if tp == victim else BatchMoveState.COMPLETED for tp in after}
        if states != want or batch.state is not BatchState.COMPLETED:
            out.violations.append(Violation("scenario", f"the journal says {batch.state}, moves {states}"))
        if (steps := await _epoch(env.zk) - epoch) > 1:
            out.violations.append(Violation("controller", f"the controller epoch moved {steps} times"))
        out.notes.append(f"proxy: {px.cuts_done} cut(s)")
    return out


JOURNAL_SPLIT_SCENARIOS: dict[str, Callable[[Env, int], Awaitable[Outcome]]] = {
    f"journal_split_{point}": functools.partial(journal_split, point=point) for point in SPLIT_POINTS
}

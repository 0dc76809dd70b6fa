"""Faults on adaptive concurrency's one ZooKeeper write: a change of a batch's caps rewrites the
journal's head alone (``/reassignd/batches/<id>``, one setData fenced by the controller epoch).

The story: topic ``ad`` (12 partitions led by broker 1 on brokers 1-2), a batch moving each to
brokers 1 and 3 with ``limits.adaptive`` {1, 4} from a cap of 1, run by a controller that talks to
ZooKeeper through the proxy and samples the agents every 0.3 s; a standby straight to ZooKeeper.
The cluster is healthy, so the caps rise; the proxy cuts the connection right after the first
head-only write (the outcome of the caps write unknown to the controller), and once it has, the
replication rate goes up so the batch has only to complete. Afterwards, on top of
the fault suite's invariants (every partition at its target, nothing stray, nothing offline):

- the batch completed, every move once, from the replicas the partition had before;
- every cap the journal ever held (sampled every 50 ms) and holds at the end is within [1, 4].
"""

from __future__ import annotations

import asyncio
import contextlib
import random

from reassignd.executor import paths as batch_paths
from reassignd.executor.model import BatchMoveState, BatchState
from reassignd.testing.polling import eventually
from reassignd.zk.errors import ZkError
from tests.faults import proxy
from tests.faults.batch_scenarios import _submit_until_accepted
from tests.faults.invariants import OfflineSampler, Violation
from tests.faults.scenarios import (
    FAST,
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
from tests.integration.harness import read_journal

BATCH_ID = "adaptive-batch"
LOW, HIGH = 1, 4
SAMPLING = ("--agent-sample-interval-s", "0.3")


def caps_write(request: proxy.Request) -> bool:
    """A write of the batch's journal head and nothing else: a change of its caps."""
    writes = request.writes()
    return (
        len(writes) == 1
        and writes[0].opcode == proxy.SET_DATA
        and writes[0].path is not None
        and writes[0].path.endswith(batch_paths.batch(BATCH_ID))
    )


async def proxy_cut_caps(env: Env, seed: int) -> Outcome:
    rng = random.Random(seed)
    out = Outcome("proxy_cut_caps", seed)
    async with proxy.ZkProxy(env.zk_port) as px:
        controllers = Controllers(env, *SAMPLING)
        await set_rate(env.zk, None, "100000")  # a move lasts 3 s: the caps have time to rise
        if await _proxied_active(env, out, controllers, px.connect(env.chroot), 3) is None:
            return out
        before = {("ad", p): (1, 2) for p in range(12)}
        after = {("ad", p): (1, 3) for p in range(12)}
        await make_topic(env.zk, "ad", _by_partition(before), initial_bytes=300_000)
        await wait_online(env.zk, tps_of(before))
        body = {
            "batch_id": BATCH_ID,
            "partitions": [{"topic": t, "partition": p, "replicas": list(r)} for (t, p), r in after.items()],
            "limits": {
                "moves_per_broker": LOW,
                "moves_in_cluster": 100,
                "adaptive": {"min": LOW, "max": HIGH},
            },
        }
        seen: list[dict[int, int]] = []
        watcher = asyncio.get_running_loop().create_task(_watch_caps(env, seen))
        sampler = await OfflineSampler(env.zk_connect, ["ad"]).start()
        try:
            cut = px.arm_cut(caps_write, rng.randint(1, 2))  # the first or the second change
            if not await _submit_until_accepted(controllers, body, 60.0):
                out.violations.append(Violation("scenario", "the batch was never accepted"))
            await _fired(out, cut)
            # the cut is behind: the rest has only to complete (at 100,000 B/s broker 3 takes
            # the twelve copies one after another whatever its cap: 36 s)
            await set_rate(env.zk, None, FAST)
            if not await eventually(lambda: _completed(controllers), 90.0, 0.2, or_none=True):
                out.violations.append(Violation("scenario", "the batch never completed"))
        except BaseException:
            await sampler.stop()
            raise
        finally:
            watcher.cancel()
        out = await finish(env, out, after, controllers, sampler)
        batch = (await read_journal(env.zk, BATCH_ID)).batch
        seen.append(dict(batch.broker_caps))
        if batch.state is not BatchState.COMPLETED:
            out.violations.append(Violation("scenario", f"the journal says the batch is {batch.state}"))
        for tp, move in sorted(batch.moves.items()):
            if move.state is not BatchMoveState.COMPLETED or move.origins != before[tp]:
                out.violations.append(
                    Violation("assignment", f"journal: {tp} {move.state} from {move.origins}", [tp])
                )
        outside = [caps for caps in seen if any(not LOW <= c <= HIGH for c in caps.values())]
        if outside:
            out.violations.append(Violation("scenario", f"caps outside [{LOW}, {HIGH}]: {outside}"))
        out.notes.append(f"caps journaled: {seen}")
        out.notes.append(f"proxy: {px.writes_seen} writes seen, {px.cuts_done} cut(s)")
    return out


async def _completed(controllers: Controllers) -> bool:
    c = await controllers.active()
    if c is None:
        return False
    code, resp = await c.get(f"/v1/batches/{BATCH_ID}")
    return code == 200 and resp["state"] == "completed"


async def _watch_caps(env: Env, seen: list[dict[int, int]]) -> None:
    while True:
        with contextlib.suppress(ZkError, TimeoutError, AssertionError):
            caps = dict((await read_journal(env.zk, BATCH_ID)).batch.broker_caps)
            if not seen or seen[-1] != caps:
                seen.append(caps)
        await asyncio.sleep(0.05)

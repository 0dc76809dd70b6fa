"""The batch executor end to end: real ZooKeeper, controller and agent processes, real HTTP.

Moves last a few seconds each (a topic of 200 kB partitions, brokers replicating at 100 kB/s), so
the tests can sample what is in flight while batches run.
"""

from __future__ import annotations

import asyncio
import collections
import functools
from typing import Any

import pytest

from reassignd.executor import paths as batch_paths
from reassignd.executor.model import BatchMoveState
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.batch_helpers import (
    RATE,
    SIZE,
    THROTTLE_KEYS,
    batch_body,
    config_of,
    journaled,
    put_config,
    state_is,
    status,
    submit,
)
from tests.integration.harness import (
    ControllerProc,
    Kit,
    Launcher,
    P,
    Procs,
    active_one,
    eventually,
    wait_brokers,
)
from tests.integration.reassignment_helpers import (
    FAST,
    completed,
    listed,
    make_topic,
    set_broker_rate,
    topic_znode,
)

pytestmark = pytest.mark.timeout(180)


async def cluster(
    procs: Launcher[P], zk: ZkClient, brokers: int, standby: bool = False
) -> list[ControllerProc[P]]:
    # the agents start with the controllers (their start-ups overlap), at the rate written first
    await set_broker_rate(zk, None, RATE)
    controllers = [procs.controller(9000, 2.0)]
    if standby:
        controllers.append(procs.controller(9001, 2.0))
    procs.cluster(brokers)
    active, _ = await active_one(*controllers)
    await wait_brokers(active, set(range(1, brokers + 1)))
    return [active, *(c for c in controllers if c is not active)]  # the active one first


class InFlight:
    """Samples GET /v1/reassignments: the most moves each broker had coming in and going out."""

    def __init__(self, c: ControllerProc) -> None:
        self.c = c
        self.incoming: collections.Counter[int] = collections.Counter()
        self.outgoing: collections.Counter[int] = collections.Counter()
        self.samples = 0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            try:
                moving = await listed(self.c)
            except (AssertionError, OSError):
                moving = {}
            inc: collections.Counter[int] = collections.Counter()
            out: collections.Counter[int] = collections.Counter()
            for m in moving.values():
                inc.update(m["adding_replicas"])
                out.update(m["removing_replicas"])
            for b, n in inc.items():
                self.incoming[b] = max(self.incoming[b], n)
            for b, n in out.items():
                self.outgoing[b] = max(self.outgoing[b], n)
            self.samples += 1
            await asyncio.sleep(0.1)

    def __enter__(self) -> InFlight:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="in-flight-sampler")
        return self

    def __exit__(self, *_: object) -> None:
        assert self._task is not None
        self._task.cancel()


async def test_two_batches_in_flight_respect_per_broker_caps(kit: Kit, zk: ZkClient) -> None:
    [c] = await cluster(kit, zk, 6)
    # every byte leaves broker 1 (the leader) at RATE: 12 moves of two new replicas of SIZE // 4
    # make about 12 s of copying, two moves (2 s) at a time, plenty for the 0.1 s sampler
    await make_topic(zk, "t", {p: (1, 2) for p in range(12)}, initial_bytes=SIZE // 4)
    limits = {"moves_per_broker": 2, "moves_in_cluster": 10, "leader_moves_per_broker": 10}
    a = {("t", p): [3, 4] for p in range(6)}
    b = {("t", p): [5, 6] for p in range(6, 12)}
    with InFlight(c) as sampled:
        first = await submit(c, batch_body("a", a, limits=limits, plan_id="plan-1"))
        second = await submit(c, batch_body("b", b, limits=limits, priority=1))
        assert all(p["error_code"] == 0 for p in first["partitions"] + second["partitions"])
        assert first["batch"]["plan_id"] == "plan-1"
        for batch_id in ("a", "b"):
            done = await eventually(
                functools.partial(state_is, c, batch_id, "completed"),
                timeout_s=120,
                what=f"batch {batch_id} completes",
            )
            assert done["counts"]["completed"] == 6
    assert sampled.samples > 10
    # every move leaves brokers 1 and 2, so no more than two ran at once, across both batches
    assert max(sampled.outgoing.values()) <= 2, sampled.outgoing
    assert max(sampled.incoming.values()) <= 2, sampled.incoming
    assert sampled.outgoing[1] == 2  # the cap was used, not just respected
    z = await topic_znode(zk, "t")
    assert {p: z.partitions[p] for p in range(12)} == {p: (3, 4) if p < 6 else (5, 6) for p in range(12)}
    assert not z.adding and not z.removing
    code, metrics = await c.get("/metrics")
    assert code == 200
    assert 'reassignd_batches{state="completed"} 2.0' in metrics
    assert 'reassignd_batch_moves{state="completed"} 12.0' in metrics
    assert 'reassignd_batch_moves{state="running"} 0.0' in metrics


async def test_a_standby_resumes_a_batch_after_the_active_controller_is_killed(
    procs: Procs, zk: ZkClient
) -> None:
    first, second = await cluster(procs, zk, 4, standby=True)
    # two moves at a time, each about 2 s of copying from broker 1 (SIZE // 4 to two new replicas
    # at RATE): the batch is four such rounds, so some are done and some pending at the kill
    await make_topic(zk, "t", {p: (1, 2) for p in range(8)}, initial_bytes=SIZE // 4)
    limits = {"moves_per_broker": 2, "moves_in_cluster": 10, "leader_moves_per_broker": 10}
    await submit(c=first, body=batch_body("k", {("t", p): [3, 4] for p in range(8)}, limits=limits))

    async def some_done() -> bool:
        s = await status(first, "k")
        return bool(s["counts"]["completed"] >= 1 and s["counts"]["pending"] >= 1)

    await eventually(some_done, timeout_s=60, what="the batch half-way")
    first.proc.kill()
    await active_one(second)
    done = await eventually(
        lambda: state_is(second, "k", "completed"), timeout_s=120, what="resumed to the end"
    )
    assert done["counts"]["completed"] == 8
    for p in range(8):
        assert await completed(zk, "t", p, (3, 4))
    written = await journaled(zk, "k")
    assert all(m.state is BatchMoveState.COMPLETED and m.origins == (1, 2) for m in written.moves.values())


async def test_stop_half_way_then_rollback(procs: Procs, zk: ZkClient) -> None:
    [c] = await cluster(procs, zk, 6)
    # replicas in an order that a cancel computed as RS − AR would not give back
    await make_topic(zk, "t", {p: (3, 5, 6) if p % 2 else (6, 5, 3) for p in range(8)}, initial_bytes=SIZE)
    before = (await topic_znode(zk, "t")).partitions
    limits = {"moves_per_broker": 1, "moves_in_cluster": 10, "leader_moves_per_broker": 10}
    moves = {("t", p): [1, 2, 4] for p in range(8)}
    await submit(c, batch_body("s", moves, limits=limits))

    async def some_done() -> dict[str, Any] | None:
        s = await status(c, "s")
        return s if s["counts"]["completed"] >= 2 and s["counts"]["running"] >= 1 else None

    await eventually(some_done, timeout_s=90, what="two moves done, one running")
    code, stopped = await c.post("/v1/batches/s/stop", {})
    assert code == 200, stopped
    assert stopped["state"] == "stopped"

    async def settled() -> bool:
        return not await listed(c)

    await eventually(settled, timeout_s=60, what="nothing moving after the stop")
    after_stop = await journaled(zk, "s")
    done = {tp for tp, m in after_stop.moves.items() if m.state is BatchMoveState.COMPLETED}
    assert 2 <= len(done) < 8
    z = await topic_znode(zk, "t")
    for p in range(8):
        if ("t", p) in done:
            assert z.partitions[p] == (1, 2, 4)
        else:  # reverted or never started: exactly as before, in order
            assert z.partitions[p] == before[p], (p, z.partitions[p], before[p])
            assert after_stop.moves[("t", p)].state is BatchMoveState.CANCELLED

    await set_broker_rate(zk, None, FAST)
    code, rolled = await c.post("/v1/batches/s/rollback", {})
    assert code == 200, rolled
    reverse = rolled["rollback_batch_id"]
    await eventually(
        lambda: state_is(c, reverse, "completed"), timeout_s=90, what="the rollback batch completes"
    )
    z = await topic_znode(zk, "t")
    assert {p: z.partitions[p] for p in range(8)} == dict(before)
    assert (await status(c, "s"))["state"] == "rolled_back"


async def test_refusals_idempotency_and_conflicts(procs: Procs, zk: ZkClient) -> None:
    [c] = await cluster(procs, zk, 4)
    await make_topic(zk, "t", {p: (1, 2) for p in range(4)}, initial_bytes=SIZE * 50)
    body = {
        "batch_id": "x",
        "partitions": [
            {"topic": "t", "partition": 0, "replicas": [3, 4], "expected_replicas": [1, 2]},
            {"topic": "t", "partition": 1, "replicas": [3, 4], "expected_replicas": [2, 1]},
            {"topic": "t", "partition": 9, "replicas": [3, 4]},
        ],
        "limits": {"moves_per_broker": 1},
    }
    first = await submit(c, body)
    codes = [p["error_code"] for p in first["partitions"]]
    assert codes == [0, 10002, 3]
    assert first["partitions"][1]["error_name"] == "STALE_PLAN"
    again = await submit(c, body)
    assert again["batch"]["batch_id"] == "x" and again["partitions"] == first["partitions"]
    code, conflict = await c.post("/v1/batches", {**body, "priority": 5})
    assert code == 409 and conflict["error_code"] == 10004
    other = await submit(c, batch_body("y", {("t", 0): [4, 3], ("t", 2): [3, 4]}))
    assert [p["error_code"] for p in other["partitions"]] == [10003, 0]
    assert other["partitions"][0]["error_name"] == "BATCH_CONFLICT"
    code, bad = await c.post("/v1/batches", {"batch_id": "z", "partitions": [{"topic": "t"}]})
    assert code == 400 and bad["error_code"] == 42
    assert await zk.exists(batch_paths.batch("z")) is None
    code, _ = await c.get("/v1/batches/nope")
    assert code == 404
    # the journal holds what the API answered
    written = await journaled(zk, "x")
    assert set(written.moves) == {("t", 0)} and set(written.refusals) == {("t", 1), ("t", 9)}
    assert await zk.exists(paths.topic("t")) is not None
    assert codec.decode_topic((await zk.get(paths.topic("t"))).data).partitions[1] == (1, 2)


async def throttled(zk: ZkClient, broker: int, rate: str) -> bool:
    config = await config_of(zk, paths.config_broker(broker)) or {}
    return all(config.get(k) == rate for k in THROTTLE_KEYS)


async def test_a_batch_owns_its_throttles_and_restores_them_exactly(kit: Kit, zk: ZkClient) -> None:
    [c] = await cluster(kit, zk, 5)
    operator_4 = {"leader.replication.throttled.rate": "12345", "some.other.key": "kept"}
    await put_config(zk, paths.config_broker(4), operator_4)
    await put_config(zk, paths.config_broker(5), {"follower.replication.throttled.rate": "777"})
    untouched = await zk.get(paths.config_broker(5))
    await put_config(
        zk,
        paths.config_topic("t"),
        {"reassignd.sim.initial.bytes": str(SIZE // 2), "follower.replication.throttled.replicas": "0:9"},
    )
    # three moves of two new replicas of SIZE // 2, all from broker 1 at the batch's 60 kB/s:
    # about 10 s in flight, while the throttles are checked
    await make_topic(zk, "t", {p: (1, 2) for p in range(3)})
    body = batch_body("th", {("t", p): [3, 4] for p in range(3)}, throttle_bytes_per_s=60000)
    await submit(c, body)
    for b in (1, 2, 3, 4):
        await eventually(
            functools.partial(throttled, zk, b, "60000"), what=f"broker {b} throttled by the batch"
        )
    topic_config = await config_of(zk, paths.config_topic("t"))
    assert topic_config is not None
    followers = set(topic_config["follower.replication.throttled.replicas"].split(","))
    assert {"0:9", "0:3", "0:4"} <= followers
    assert "0:1" in topic_config["leader.replication.throttled.replicas"]
    status_now = await status(c, "th")
    assert set(status_now["throttles"]["brokers"]) == {1, 2, 3, 4}

    await eventually(lambda: state_is(c, "th", "completed"), timeout_s=120, what="the batch completes")

    async def restored() -> bool:
        one = await config_of(zk, paths.config_broker(1)) or {}
        return (
            not any(k in one for k in THROTTLE_KEYS)
            and await config_of(zk, paths.config_broker(4)) == operator_4
        )

    await eventually(restored, what="broker throttles restored exactly")
    topic_config = await config_of(zk, paths.config_topic("t"))
    assert topic_config == {
        "reassignd.sim.initial.bytes": str(SIZE // 2),
        "follower.replication.throttled.replicas": "0:9",
    }
    assert (await zk.get(paths.config_broker(5))).stat.version == untouched.stat.version
    written = await journaled(zk, "th")
    assert not written.broker_throttles and not written.topic_throttles


async def test_throttles_restored_after_a_crash_and_a_stop(procs: Procs, zk: ZkClient) -> None:
    first, second = await cluster(procs, zk, 4, standby=True)
    await put_config(zk, paths.config_broker(3), {"leader.replication.throttled.rate": "999"})
    await make_topic(zk, "t", {p: (1, 2) for p in range(4)}, initial_bytes=SIZE * 50)
    await submit(first, batch_body("cs", {("t", p): [3, 4] for p in range(4)}, throttle_bytes_per_s=50000))
    await eventually(lambda: throttled(zk, 3, "50000"), what="broker 3 throttled by the batch")
    first.proc.kill()
    await active_one(second)
    await eventually(lambda: state_is(second, "cs", "running"), what="the standby has the batch")

    async def remaining() -> float | None:
        code, text = await second.get("/metrics")
        assert code == 200
        for line in text.splitlines():
            if line.startswith('reassignd_batch_bytes_remaining{batch="cs"}'):
                return float(line.rsplit(" ", 1)[1]) or None
        return None

    assert await eventually(remaining, what="the batch's remaining bytes in /metrics") > 0
    code, stopped = await second.post("/v1/batches/cs/stop", {})
    assert code == 200 and stopped["state"] == "stopped"

    async def restored() -> bool:
        configs = [await config_of(zk, paths.config_broker(b)) or {} for b in (1, 2, 4)]
        return all(not any(k in c for k in THROTTLE_KEYS) for c in configs) and await config_of(
            zk, paths.config_broker(3)
        ) == {"leader.replication.throttled.rate": "999"}

    await eventually(restored, what="every throttle back as it was")
    topic_config = await config_of(zk, paths.config_topic("t")) or {}
    assert "follower.replication.throttled.replicas" not in topic_config
    for p in range(4):
        assert await completed(zk, "t", p, (1, 2))


async def test_a_cancel_restores_the_exact_replica_order(procs: Procs, zk: ZkClient) -> None:
    """[3, 5, 6] moving to [6, 1, 5]: Kafka's cancel gives RS − AR = [6, 5, 3]; reassignd gives
    back [3, 5, 6] — for an API move, a legacy-znode move and after a failover."""
    first, second = await cluster(procs, zk, 6, standby=True)
    await make_topic(zk, "o", {p: (3, 5, 6) for p in range(3)}, initial_bytes=SIZE * 50)
    code, resp = await first.post(
        "/v1/reassignments",
        {"topics": [{"name": "o", "partitions": [{"partition": 0, "replicas": [6, 1, 5]}]}]},
    )
    assert code == 200 and resp["responses"][0]["partitions"][0]["error_code"] == 0
    await zk.create(
        paths.REASSIGN_PARTITIONS,
        admin_codec.encode_legacy_reassignment(
            (
                admin_codec.LegacyReassignmentEntry("o", 1, (6, 1, 5)),
                admin_codec.LegacyReassignmentEntry("o", 2, (6, 1, 5)),
            )
        ),
    )

    async def moving() -> bool:
        z = await topic_znode(zk, "o")
        return all(z.partitions[p] == (6, 1, 5, 3) for p in range(3))

    await eventually(moving, what="three moves in flight")
    for p in (0, 1):
        code, cancelled = await first.delete(f"/v1/reassignments/o/{p}")
        assert code == 200 and cancelled["responses"][0]["partitions"][0]["error_code"] == 0
        await eventually(functools.partial(completed, zk, "o", p, (3, 5, 6)), what=f"o-{p} back to [3, 5, 6]")
    first.proc.kill()
    await active_one(second)
    code, cancelled = await second.delete("/v1/reassignments/o/2")
    assert code == 200 and cancelled["responses"][0]["partitions"][0]["error_code"] == 0
    await eventually(lambda: completed(zk, "o", 2, (3, 5, 6)), what="o-2 back to [3, 5, 6] after a failover")
    await eventually(lambda: _gone(zk, paths.topic_origins("o")), what="the origins record removed")


async def _gone(zk: ZkClient, path: str) -> bool:
    return await zk.exists(path) is None


async def test_size_strategies_start_moves_in_size_order(procs: Procs, zk: ZkClient) -> None:
    """One move at a time (a cap of 1 per broker): large_first starts the largest partition first,
    small_first the smallest, whatever the order of the body (the sizes come from the leaders)."""
    [c] = await cluster(procs, zk, 3)
    sizes = {"a": 100_000, "b": 300_000, "c": 200_000}
    for topic, size in sizes.items():
        await make_topic(zk, topic, {0: (1, 2)}, initial_bytes=size)
    limits = {"moves_per_broker": 1, "moves_in_cluster": 10, "leader_moves_per_broker": 10}

    async def started_order(batch_id: str) -> list[str]:
        await eventually(
            lambda: state_is(c, batch_id, "completed"), timeout_s=120, what=f"{batch_id} completes"
        )
        moves = (await journaled(zk, batch_id)).moves
        assert all(m.size_bytes == sizes[t] for (t, _), m in moves.items()), moves
        return [t for (t, _), m in sorted(moves.items(), key=lambda kv: kv[1].started_at_ms or 0)]

    there = {(t, 0): [3, 2] for t in ("a", "c", "b")}  # the body's order is neither size order
    await submit(c, batch_body("large", there, limits=limits, strategy=["large_first"]))
    assert await started_order("large") == ["b", "c", "a"]
    back = {(t, 0): [1, 2] for t in ("c", "b", "a")}
    await submit(c, batch_body("small", back, limits=limits, strategy=["small_first"]))
    assert await started_order("small") == ["a", "c", "b"]

"""Partition reassignment end to end: real ZooKeeper, controller and agent processes, real HTTP.

Simulation speeds are configs in ZooKeeper: ``reassignd.sim.initial.bytes`` on the
topic sizes each partition, ``reassignd.sim.replication.bytes.per.s`` on a broker bounds its
replication in each direction. A "slow" broker keeps a move in flight for the whole test; a
"fast" one finishes it in a blink.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from reassignd.zk import admin_codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.values import Znode
from tests.integration.harness import (
    ControllerProc,
    Kit,
    Launcher,
    Procs,
    active_one,
    eventually,
    state_of,
    wait_brokers,
)
from tests.integration.reassignment_helpers import (
    FAST,
    SLOW,
    _not_hosted,
    alter,
    body,
    completed,
    listed,
    make_topic,
    none_listed,
    replica_on,
    set_broker_rate,
    start,
    topic_znode,
)


async def test_move_single_replica_partition(kit: Kit, zk: ZkClient) -> None:
    c = await start(kit, zk, 2)
    await make_topic(zk, "one", {0: (1,)}, initial_bytes=1_000_000)
    epochs: list[int] = []
    stop = asyncio.Event()

    async def watch_epochs() -> None:
        while True:
            done = stop.is_set()  # one last read after the move completed
            s = await state_of(zk, "one", 0)
            if s is not None and (not epochs or epochs[-1] != s.leader_epoch):
                epochs.append(s.leader_epoch)
            if done:
                return
            await asyncio.sleep(0.005)

    watcher = asyncio.create_task(watch_epochs())
    try:
        result = await alter(c, {("one", 0): [2]})
        assert result[("one", 0)]["error_code"] == 0
        await eventually(lambda: completed(zk, "one", 0, (2,)), what="move completes")
        s = await state_of(zk, "one", 0)
        assert s is not None and s.leader == 2 and s.isr == (2,)
    finally:
        stop.set()
        await watcher
    assert epochs == sorted(set(epochs)), f"leader epochs went back: {epochs}"
    assert epochs[-1] >= 2  # phase A and phase B each bump it
    await eventually(lambda: _not_hosted(c, 1, "one", 0), what="broker 1 deleted its replica")
    await none_listed(c)


async def test_move_three_replicas_with_visible_progress(kit: Kit, zk: ZkClient) -> None:
    c = await start(kit, zk, 6, rate="3000000")
    await make_topic(zk, "big", {0: (1, 2, 3)}, initial_bytes=15_000_000)
    await alter(c, {("big", 0): [4, 5, 6]})

    z = await topic_znode(zk, "big")
    assert z.partitions[0] == (4, 5, 6, 1, 2, 3)
    assert z.adding[0] == (4, 5, 6)
    assert z.removing[0] == (1, 2, 3)

    async def progress() -> dict[str, Any] | None:
        entry = (await listed(c)).get(("big", 0))
        return (
            entry["progress"] if entry and entry["progress"] and entry["progress"]["bytes_done"] > 0 else None
        )

    first = await eventually(progress, what="progress reported")
    entry = (await listed(c))[("big", 0)]
    assert entry["target_replicas"] == [4, 5, 6]
    assert entry["original_replicas"] == [1, 2, 3]
    assert entry["adding_replicas"] == [4, 5, 6]
    assert entry["source"] == "api"
    assert entry["started_at"].endswith("Z")

    async def grown() -> dict[str, Any] | None:
        p = await progress()
        return p if p and p["bytes_done"] > first["bytes_done"] else None

    second = await eventually(grown, what="progress grows")
    assert second["bytes_total"] >= second["bytes_done"]

    await eventually(lambda: completed(zk, "big", 0, (4, 5, 6)), timeout_s=60, what="move completes")
    s = await state_of(zk, "big", 0)
    assert s is not None and s.leader in (4, 5, 6) and set(s.isr) == {4, 5, 6}
    for b in (1, 2, 3):
        await eventually(functools.partial(_not_hosted, c, b, "big", 0), what=f"old replica on {b} deleted")
    await none_listed(c)


async def slow_move_with_fast_four(procs: Launcher[Any], zk: ZkClient, topic: str) -> ControllerProc:
    """[1,2,3] → [4,5,6] where broker 4 catches up at once and 5 and 6 never do."""
    c = await start(procs, zk, 6, rate=SLOW)
    for b in (1, 4):
        await set_broker_rate(zk, b, FAST)
    await make_topic(zk, topic, {0: (1, 2, 3), 1: (1, 2, 3)}, initial_bytes=5_000_000)
    await alter(c, {(topic, 0): [4, 5, 6], (topic, 1): [4, 5, 6]})

    async def four_in_isr() -> bool:
        states = [await state_of(zk, topic, p) for p in (0, 1)]
        return all(s is not None and 4 in s.isr for s in states)

    await eventually(four_in_isr, what="replica 4 joins the ISR")
    return c


async def test_cancel_reverts_and_deletes_adding_replicas(kit: Kit, zk: ZkClient) -> None:
    c = await slow_move_with_fast_four(kit, zk, "c")
    result = await alter(c, {("c", 0): None})
    assert result[("c", 0)]["error_code"] == 0
    code, resp = await c.delete("/v1/reassignments/c/1")
    assert code == 200 and resp["responses"][0]["partitions"][0]["error_code"] == 0
    for p in (0, 1):
        await eventually(functools.partial(completed, zk, "c", p, (1, 2, 3)), what=f"c-{p} reverted")
        for b in (4, 5, 6):
            await eventually(functools.partial(_not_hosted, c, b, "c", p), what=f"adding replica {b} deleted")
        s = await state_of(zk, "c", p)
        assert s is not None and s.leader in (1, 2, 3) and 4 not in s.isr
    await none_listed(c)


async def test_stop_keeps_the_caught_up_adding_replica(kit: Kit, zk: ZkClient) -> None:
    c = await slow_move_with_fast_four(kit, zk, "s")
    code, resp = await c.delete("/v1/reassignments/s?mode=stop")
    assert code == 200
    assert sorted(p["partition"] for t in resp["responses"] for p in t["partitions"]) == [0, 1]
    for p in (0, 1):
        await eventually(functools.partial(completed, zk, "s", p, (1, 2, 3, 4)), what=f"s-{p} stopped")
        for b in (5, 6):
            await eventually(functools.partial(_not_hosted, c, b, "s", p), what=f"replica {b} deleted")
    await none_listed(c)


async def test_retarget_is_relative_to_original_replicas(kit: Kit, zk: ZkClient) -> None:
    c = await start(kit, zk, 6, rate=SLOW)
    await make_topic(zk, "r", {0: (1, 2, 3), 1: (1, 2, 3)}, initial_bytes=5_000_000)
    await alter(c, {("r", 0): [1, 2, 4]})
    await eventually(lambda: replica_on(c, 4, "r", 0), what="replica 4 started")
    await alter(c, {("r", 0): [1, 2, 5]})
    z = await topic_znode(zk, "r")
    assert z.partitions[0] == (1, 2, 5, 3)
    assert z.adding[0] == (5,)
    assert z.removing[0] == (3,)
    await eventually(lambda: _not_hosted(c, 4, "r", 0), what="replica 4 stopped and deleted at once")

    # a re-target that keeps an adding replica keeps its bytes
    await alter(c, {("r", 1): [1, 4, 5]})

    async def fetched() -> dict[str, Any] | None:
        r = await replica_on(c, 4, "r", 1)
        return r if r and r["log_end_offset"] > 0 else None

    before = await eventually(fetched, what="replica 4 fetched some bytes")
    await alter(c, {("r", 1): [1, 4, 6]})
    after = await replica_on(c, 4, "r", 1)
    assert after is not None and after["log_end_offset"] >= before["log_end_offset"]
    z = await topic_znode(zk, "r")
    assert z.partitions[1] == (1, 4, 6, 2, 3)
    assert z.adding[1] == (4, 6)
    await eventually(lambda: _not_hosted(c, 5, "r", 1), what="replica 5 dropped")


async def test_validation_errors(kit: Kit, zk: ZkClient) -> None:
    c = await start(kit, zk, 3)
    standby = kit.controller(9001, 2.0)
    await make_topic(zk, "v", {p: (1, 2) for p in range(4)})
    await make_topic(zk, "doomed", {0: (1, 2)})
    await zk.create(paths.delete_topic("doomed"))
    await asyncio.sleep(0.5)
    result = await alter(
        c,
        {
            ("v", 0): [],
            ("v", 1): [1, 1],
            ("v", 2): [-1, 2],
            ("v", 3): [1, 9],
            ("v", 7): [1, 2],
            ("doomed", 0): [2, 3],
            ("unknown", 0): None,
        },
    )
    expected = {
        ("v", 0): (
            39,
            "INVALID_REPLICA_ASSIGNMENT",
            "Empty replica list specified in partition reassignment.",
        ),
        ("v", 1): (
            39,
            "INVALID_REPLICA_ASSIGNMENT",
            "Duplicate replica ids in partition reassignment replica list: [1, 1]",
        ),
        ("v", 2): (39, "INVALID_REPLICA_ASSIGNMENT", "Invalid broker id in replica list: [-1, 2]"),
        ("v", 3): (
            39,
            "INVALID_REPLICA_ASSIGNMENT",
            "Replica assignment has brokers that are not alive. Replica list: [9], live broker list: [1, 2, 3]",
        ),
        ("v", 7): (3, "UNKNOWN_TOPIC_OR_PARTITION", "The partition does not exist."),
        ("doomed", 0): (3, "UNKNOWN_TOPIC_OR_PARTITION", "The partition does not exist."),
        ("unknown", 0): (85, "NO_REASSIGNMENT_IN_PROGRESS", "No partition reassignment is in progress."),
    }
    assert {
        tp: (r["error_code"], r["error_name"], r["error_message"]) for tp, r in result.items()
    } == expected
    # cancel of a partition that is not moving
    code, resp = await c.delete("/v1/reassignments/v/0")
    assert code == 200 and resp["responses"][0]["partitions"][0]["error_code"] == 85
    # nothing moved
    assert (await topic_znode(zk, "v")).partitions == {p: (1, 2) for p in range(4)}
    await none_listed(c)
    # a standby refuses with NOT_CONTROLLER and names the active controller
    await eventually(lambda: _knows_active(standby), what="standby follows")
    code, resp = await standby.post("/v1/reassignments", body({("v", 0): [2, 1]}))
    assert code == 503
    assert resp["error_code"] == 41 and resp["error_name"] == "NOT_CONTROLLER"
    assert resp["active_controller"] == {"id": 9000, "http": c.url}


async def _knows_active(c: ControllerProc) -> bool:
    s = await c.status()
    return bool(s and s["active_controller"])


async def test_legacy_znode(kit: Kit, zk: ZkClient) -> None:
    c = await start(kit, zk, 4)
    await make_topic(zk, "leg", {0: (1, 2), 1: (1, 2), 2: (1, 2)}, initial_bytes=1_000_000)
    await set_broker_rate(zk, 4, SLOW)
    entries = (
        admin_codec.LegacyReassignmentEntry("leg", 0, (2, 3)),  # fast
        admin_codec.LegacyReassignmentEntry("leg", 1, (2, 4)),  # slow: broker 4 is throttled
        admin_codec.LegacyReassignmentEntry("nope", 0, (1,)),  # cannot start: dropped
    )
    await zk.create(paths.REASSIGN_PARTITIONS, admin_codec.encode_legacy_reassignment(entries))
    await eventually(lambda: completed(zk, "leg", 0, (2, 3)), what="leg-0 moves")

    async def pending() -> tuple[admin_codec.LegacyReassignmentEntry, ...] | None:
        znode = await zk.get_or_none(paths.REASSIGN_PARTITIONS)
        if znode is None:
            return None
        got = admin_codec.decode_legacy_reassignment(znode.data)
        return got if [(e.topic, e.partition) for e in got] == [("leg", 1)] else None

    left = await eventually(pending, what="failed and completed entries leave the znode")
    assert left[0].original_replicas == (1, 2)  # KIP-236: recorded when accepted
    assert (await listed(c))[("leg", 1)]["source"] == "zk"

    # an API request for a partition of the znode removes it from there (the latest wins)
    await alter(c, {("leg", 1): [1, 3]})
    await eventually(lambda: _absent(zk, paths.REASSIGN_PARTITIONS), what="znode deleted when empty")
    await eventually(lambda: completed(zk, "leg", 1, (1, 3)), what="API target applies")

    # a second znode written right after runs too
    await zk.create(
        paths.REASSIGN_PARTITIONS,
        admin_codec.encode_legacy_reassignment((admin_codec.LegacyReassignmentEntry("leg", 2, (3, 1)),)),
    )
    await eventually(lambda: completed(zk, "leg", 2, (3, 1)), what="second znode applied")
    await eventually(lambda: _absent(zk, paths.REASSIGN_PARTITIONS), what="second znode deleted")


async def _absent(zk: ZkClient, path: str) -> bool:
    return await zk.exists(path) is None


async def test_failover_mid_reassignment_keeps_progress_and_legacy_wins(procs: Procs, zk: ZkClient) -> None:
    c = await start(procs, zk, 6, rate="400000")
    standby = procs.controller(9001, 2.0)
    await make_topic(zk, "fo", {0: (1, 2, 3), 1: (1, 2, 3)}, initial_bytes=6_000_000)
    await alter(c, {("fo", 0): [4, 5, 6], ("fo", 1): [1, 2, 4]})

    async def fetched() -> dict[str, Any] | None:
        r = await replica_on(c, 4, "fo", 0)
        return r if r and r["log_end_offset"] > 0 else None

    before = await eventually(fetched, what="bytes fetched before the failover")
    c.proc.kill()
    _, status = await active_one(standby)
    assert status["controller_epoch"] == 2
    entry = (await listed(standby))[("fo", 0)]
    assert entry["target_replicas"] == [4, 5, 6] and entry["original_replicas"] == [1, 2, 3]
    after = await replica_on(standby, 4, "fo", 0)
    assert after is not None and after["log_end_offset"] >= before["log_end_offset"]  # not restarted

    # the legacy znode wins at failover: stop the controller, write a znode, start again
    assert standby.proc.terminate() == 0
    await zk.create(
        paths.REASSIGN_PARTITIONS,
        admin_codec.encode_legacy_reassignment((admin_codec.LegacyReassignmentEntry("fo", 1, (1, 2, 5)),)),
    )
    again = procs.controller(9002, 2.0)
    await active_one(again)
    z = await topic_znode(zk, "fo")
    assert z.partitions[1] == (1, 2, 5, 3)
    assert z.adding[1] == (5,)
    await set_broker_rate(zk, None, FAST)
    await eventually(lambda: completed(zk, "fo", 0, (4, 5, 6)), timeout_s=60, what="fo-0 completes")
    await eventually(lambda: completed(zk, "fo", 1, (1, 2, 5)), timeout_s=60, what="fo-1 completes")


async def test_reorder_only_completes_at_once_without_moving_data(kit: Kit, zk: ZkClient) -> None:
    c = await start(kit, zk, 3)
    await make_topic(zk, "ro", {0: (1, 2, 3)}, initial_bytes=1_000_000)

    async def hosted_everywhere() -> dict[int, dict[str, Any]] | None:
        found = {b: await replica_on(c, b, "ro", 0) for b in (1, 2, 3)}
        return {b: r for b, r in found.items() if r is not None} if all(found.values()) else None

    before = await eventually(hosted_everywhere, what="the three replicas exist")
    await alter(c, {("ro", 0): [3, 2, 1]})
    z = await topic_znode(zk, "ro")  # persisted before the answer, and complete at once
    assert z.partitions[0] == (3, 2, 1) and 0 not in z.adding and 0 not in z.removing
    await none_listed(c)
    for b in (1, 2, 3):
        r = await replica_on(c, b, "ro", 0)
        assert r is not None
        assert r["log_end_offset"] == before[b]["log_end_offset"], "no data moved"


async def test_legacy_entry_for_a_dead_broker_stalls_until_it_returns(procs: Procs, zk: ZkClient) -> None:
    c = await start(procs, zk, 3)
    four = procs.broker(4)
    await wait_brokers(c, {1, 2, 3, 4})
    assert four.terminate() == 0
    await wait_brokers(c, {1, 2, 3})
    await make_topic(zk, "dead", {0: (1, 2)})
    entries = (admin_codec.LegacyReassignmentEntry("dead", 0, (1, 4)),)
    await zk.create(paths.REASSIGN_PARTITIONS, admin_codec.encode_legacy_reassignment(entries))
    await eventually(lambda: _listed_partition(c, ("dead", 0)), what="the move is pending")
    await asyncio.sleep(1.0)  # a few controller events and agent reports: a finish would show
    assert ("dead", 0) in await listed(c), "it stalls while broker 4 is away"
    procs.broker(4)
    await eventually(lambda: completed(zk, "dead", 0, (1, 4)), what="completes once broker 4 is back")
    await eventually(lambda: _absent_path(zk, paths.REASSIGN_PARTITIONS), what="the znode disappears")


async def test_failover_leaves_an_unchanged_legacy_znode_unwritten(procs: Procs, zk: ZkClient) -> None:
    c = await start(procs, zk, 3)
    standby = procs.controller(9001, 2.0)
    await make_topic(zk, "kept", {0: (1, 2)})
    entries = (admin_codec.LegacyReassignmentEntry("kept", 0, (1, 4)),)  # broker 4 never comes: it stays
    await zk.create(paths.REASSIGN_PARTITIONS, admin_codec.encode_legacy_reassignment(entries))

    async def recorded() -> Znode | None:
        znode = await zk.get(paths.REASSIGN_PARTITIONS)
        return (
            znode
            if admin_codec.decode_legacy_reassignment(znode.data)[0].original_replicas == (1, 2)
            else None
        )

    before = await eventually(recorded, what="original_replicas recorded in the znode")
    c.proc.kill()
    _, status = await active_one(standby)
    assert status["controller_epoch"] == 2
    assert ("kept", 0) in await listed(standby), "the move resumed"
    after = await zk.get(paths.REASSIGN_PARTITIONS)
    assert after.data == before.data
    assert after.stat.version == before.stat.version, "the same entries are not written again"


async def _listed_partition(c: ControllerProc, tp: tuple[str, int]) -> bool:
    return tp in await listed(c)


async def _absent_path(zk: ZkClient, path: str) -> bool:
    return await zk.exists(path) is None


async def test_standby_finishes_200_in_flight_moves(procs: Procs, zk: ZkClient) -> None:
    c = await start(procs, zk, 4, rate=SLOW)
    standby = procs.controller(9001, 2.0)
    await make_topic(zk, "many", {p: (1, 2) for p in range(200)}, initial_bytes=1_000_000)
    await alter(c, {("many", p): [3, 4] for p in range(200)})
    assert len(await listed(c)) == 200
    c.proc.kill()
    await active_one(standby)
    await set_broker_rate(zk, None, FAST)

    async def all_done() -> bool:
        z = await topic_znode(zk, "many")
        return not z.adding and all(z.partitions[p] == (3, 4) for p in range(200))

    await eventually(all_done, timeout_s=90, what="the standby finishes every move")
    await none_listed(standby)


async def test_a_killed_target_agent_stalls_the_move_until_restarted(procs: Procs, zk: ZkClient) -> None:
    c = await start(procs, zk, 3)
    await set_broker_rate(zk, 4, SLOW)
    four = procs.broker(4)
    await wait_brokers(c, {1, 2, 3, 4})
    await make_topic(zk, "k", {0: (1, 2)}, initial_bytes=2_000_000)
    await alter(c, {("k", 0): [1, 4]})
    await eventually(lambda: replica_on(c, 4, "k", 0), what="replica 4 started")
    four.kill()
    await wait_brokers(c, {1, 2, 3})
    await asyncio.sleep(1.0)  # a few controller events and agent reports: a finish would show
    assert ("k", 0) in await listed(c), "the move stalls while broker 4 is dead"
    await set_broker_rate(zk, 4, FAST)
    procs.broker(4)
    await eventually(lambda: completed(zk, "k", 0, (1, 4)), timeout_s=60, what="completes after the restart")


async def test_a_cancel_in_a_topic_queued_for_deletion_answers_as_kafka(kit: Kit, zk: ZkClient) -> None:
    """Kafka's maybeTriggerPartitionReassignment: a topic queued for deletion takes no reassignment,
    a cancel of a moving partition included (3); a partition not moving answers 85 first."""
    c = await start(kit, zk, 3)
    await set_broker_rate(zk, 3, SLOW)
    await make_topic(zk, "doomed", {0: (1, 2), 1: (1, 2)}, initial_bytes=50_000_000)
    await eventually(lambda: state_of(zk, "doomed", 0), what="doomed online")
    assert (await alter(c, {("doomed", 0): [1, 3]}))[("doomed", 0)]["error_code"] == 0
    await zk.create(paths.delete_topic("doomed"))
    await asyncio.sleep(0.5)  # the controller reads the deletion queue (no API shows it)
    result = await alter(c, {("doomed", 0): None, ("doomed", 1): None})
    assert (result[("doomed", 0)]["error_code"], result[("doomed", 0)]["error_message"]) == (
        3,
        "The partition does not exist.",
    )
    assert result[("doomed", 1)]["error_code"] == 85
    assert (await topic_znode(zk, "doomed")).adding.get(0) == (3,)  # still moving

"""KIP-236 end to end: rollback through /admin/reassign_cancel, extra batches, sequenced requests."""

from __future__ import annotations

import functools
from typing import Any

from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.harness import ControllerProc, Kit, Launcher, Procs, active_one, eventually, state_of
from tests.integration.reassignment_helpers import (
    FAST,
    SLOW,
    _not_hosted,
    alter,
    completed,
    listed,
    make_topic,
    none_listed,
    replica_on,
    set_broker_rate,
    start,
    topic_znode,
)

Entry = admin_codec.LegacyReassignmentEntry


async def legacy_entries(zk: ZkClient) -> tuple[admin_codec.LegacyReassignmentEntry, ...] | None:
    znode = await zk.get_or_none(paths.REASSIGN_PARTITIONS)
    return None if znode is None else admin_codec.decode_legacy_reassignment(znode.data)


async def three_slow_legacy_moves(procs: Launcher[Any], zk: ZkClient) -> ControllerProc:
    """t-0..2 on [1,2] move to [3,4] through the legacy znode; broker 3 and 4 are slow."""
    c = await start(procs, zk, 6)
    await make_topic(zk, "t", {p: (1, 2) for p in range(5)}, initial_bytes=5_000_000)
    for b in (3, 4, 5):
        await set_broker_rate(zk, b, SLOW)
    entries = tuple(Entry("t", p, (3, 4)) for p in range(3))
    await zk.create(paths.REASSIGN_PARTITIONS, admin_codec.encode_legacy_reassignment(entries))

    async def recorded() -> tuple[admin_codec.LegacyReassignmentEntry, ...] | None:
        got = await legacy_entries(zk)
        return got if got and all(e.original_replicas for e in got) else None

    got = await eventually(recorded, what="original_replicas recorded")
    assert {(e.partition, e.replicas, e.original_replicas) for e in got} == {
        (p, (3, 4), (1, 2)) for p in range(3)
    }
    for p in range(3):
        await eventually(functools.partial(replica_on, c, 3, "t", p), what=f"t-{p} started on 3")
    return c


async def test_cancel_znode_rolls_back_and_blocks_new_reassignments(kit: Kit, zk: ZkClient) -> None:
    c = await three_slow_legacy_moves(kit, zk)
    await zk.create(paths.REASSIGN_CANCEL)
    for p in range(3):
        await eventually(functools.partial(completed, zk, "t", p, (1, 2)), what=f"t-{p} rolled back")
        for b in (3, 4):
            await eventually(functools.partial(_not_hosted, c, b, "t", p), what=f"new replica {b} deleted")
    await eventually(lambda: _absent(zk, paths.REASSIGN_PARTITIONS), what="legacy znode emptied")
    await none_listed(c)

    result = await alter(c, {("t", 3): [1, 5]})
    assert result[("t", 3)]["error_code"] == 10001
    assert result[("t", 3)]["error_name"] == "REASSIGNMENT_CANCEL_IN_PLACE"
    # a legacy znode written now stays untouched (and is reported)
    await zk.create(
        paths.REASSIGN_PARTITIONS, admin_codec.encode_legacy_reassignment((Entry("t", 4, (1, 5)),))
    )

    async def refused() -> bool:  # the controller read it and reported it left untouched
        code, status = await c.get("/v1/status")
        return code == 200 and any(
            p["path"].endswith(paths.REASSIGN_PARTITIONS) and "reassign_cancel" in p["reason"]
            for p in status["problems"]
        )

    await eventually(refused, what="the legacy znode reported refused")
    assert (await topic_znode(zk, "t")).partitions[4] == (1, 2)
    assert await zk.exists(paths.REASSIGN_CANCEL) is not None  # the controller never deletes it

    await zk.delete(paths.REASSIGN_CANCEL)
    await eventually(lambda: _moving(zk, "t", 4), what="the waiting legacy znode runs")
    await set_broker_rate(zk, 5, FAST)
    result = await alter(c, {("t", 3): [1, 5]})
    assert result[("t", 3)]["error_code"] == 0
    await eventually(lambda: completed(zk, "t", 3, (1, 5)), what="API reassignment goes through")


async def _absent(zk: ZkClient, path: str) -> bool:
    return await zk.exists(path) is None


async def _moving(zk: ZkClient, topic: str, p: int) -> bool:
    z = await topic_znode(zk, topic)
    return p in z.adding or z.partitions[p] != (1, 2)


async def test_extra_znode_merges_and_retargets(kit: Kit, zk: ZkClient) -> None:
    c = await three_slow_legacy_moves(kit, zk)
    extra = (Entry("t", 3, (1, 5)), Entry("t", 4, (2, 5)), Entry("t", 0, (3, 5)))
    await zk.create(paths.REASSIGN_PARTITIONS_EXTRA, admin_codec.encode_legacy_reassignment(extra))
    for p in (3, 4):
        await eventually(functools.partial(replica_on, c, 5, "t", p), what=f"t-{p} starts at once")
    await eventually(
        lambda: _absent(zk, paths.REASSIGN_PARTITIONS_EXTRA), what="extra znode deleted once merged"
    )
    z = await topic_znode(zk, "t")
    # t-0 re-targeted relative to its original replicas [1,2]: RS = [3,5] ++ [1,2]
    assert z.partitions[0] == (3, 5, 1, 2)
    assert z.adding[0] == (3, 5) and z.removing[0] == (1, 2)
    await eventually(lambda: _not_hosted(c, 4, "t", 0), what="t-0's intermediate replica 4 dropped")
    got = await legacy_entries(zk)
    assert got is not None
    merged = {e.partition: (e.replicas, e.original_replicas) for e in got}
    assert merged[0] == ((3, 5), (1, 2))
    assert merged[3] == ((1, 5), (1, 2))
    assert set(merged) == {0, 1, 2, 3, 4}
    assert (await listed(c))[("t", 3)]["source"] == "zk"


async def request(zk: ZkClient, assignments: dict[tuple[str, int], tuple[int, ...]]) -> str:
    data = admin_codec.encode_reassignment_request(admin_codec.ReassignmentRequest(assignments))
    return await zk.create(paths.REASSIGNMENT_REQUEST_PREFIX, data, sequential=True)


async def status(zk: ZkClient, topic: str, p: int) -> tuple[admin_codec.ReassignmentStatus, int] | None:
    znode = await zk.get_or_none(paths.reassignment_status(topic, p))
    return None if znode is None else (admin_codec.decode_reassignment_status(znode.data), znode.stat.czxid)


async def test_sequenced_requests_in_order_with_status_nodes(kit: Kit, zk: ZkClient) -> None:
    c = await start(kit, zk, 5)
    await make_topic(zk, "s", {p: (1, 2) for p in range(3)}, initial_bytes=5_000_000)
    await set_broker_rate(zk, 4, SLOW)
    first = await request(zk, {("s", 0): (3, 4), ("s", 1): (2, 3)})
    second = await request(zk, {("s", 0): (4, 5)})
    third = await request(zk, {("s", 2): (1, 3)})
    assert first < second < third
    await eventually(lambda: _no_requests(zk), what="every request applied and deleted")
    z = await topic_znode(zk, "s")
    assert z.partitions[0][:2] == (4, 5), "request 2 re-targets s-0 and wins"
    st = await status(zk, "s", 0)
    assert st is not None and st[0] == admin_codec.ReassignmentStatus((4, 5), (1, 2), 2)
    assert (await listed(c))[("s", 0)]["source"] == "request"
    # s-1 and s-2 (fast brokers) complete and their status nodes vanish
    await eventually(lambda: completed(zk, "s", 1, (2, 3)), what="s-1 completes")
    await eventually(lambda: completed(zk, "s", 2, (1, 3)), what="s-2 completes")
    await eventually(lambda: _absent(zk, paths.reassignment_status("s", 1)), what="s-1 status node deleted")
    # replacing s-0's reassignment re-creates its status node (new czxid)
    before = st[1]
    await request(zk, {("s", 0): (4, 3)})
    await eventually(lambda: _no_requests(zk), what="request 4 applied")
    after = await status(zk, "s", 0)
    assert after is not None and after[0].target == (4, 3) and after[1] != before
    # a request naming the original replicas cancels: they are restored
    await request(zk, {("s", 0): (1, 2)})
    await eventually(lambda: completed(zk, "s", 0, (1, 2)), what="s-0 restored")
    await eventually(lambda: _absent(zk, paths.reassignment_status("s", 0)), what="status deleted on cancel")
    await eventually(lambda: _not_hosted(c, 4, "s", 0), what="adding replica deleted")


async def _no_requests(zk: ZkClient) -> bool:
    return not await zk.children(paths.REASSIGNMENT_REQUESTS)


async def test_a_request_and_the_legacy_znode_never_take_each_others_moves(kit: Kit, zk: ZkClient) -> None:
    """A partition a sequenced request moves is not taken by the legacy znode (its entry is
    dropped), and one the legacy znode moves is not taken by a request (ignored, no status
    node): each move answers to one source."""
    c = await start(kit, zk, 5)
    await make_topic(zk, "x", {0: (1, 2), 1: (1, 2)}, initial_bytes=5_000_000)
    for b in (3, 4, 5):
        await set_broker_rate(zk, b, SLOW)
    await request(zk, {("x", 0): (3, 4)})
    await eventually(lambda: _no_requests(zk), what="the request applied")
    assert await status(zk, "x", 0) is not None
    entries = (Entry("x", 0, (1, 5)), Entry("x", 1, (3, 4)))
    await zk.create(paths.REASSIGN_PARTITIONS, admin_codec.encode_legacy_reassignment(entries))

    async def only_x1_pending() -> bool:
        got = await legacy_entries(zk)
        return got is not None and [(e.partition, e.replicas) for e in got] == [(1, (3, 4))]

    await eventually(only_x1_pending, what="x-0's legacy entry dropped, x-1's kept")

    async def both_listed() -> dict[tuple[str, int], Any] | None:  # the published view follows
        found = await listed(c)
        return found if {("x", 0), ("x", 1)} <= set(found) else None

    moving = await eventually(both_listed, what="both moves listed")
    assert (moving[("x", 0)]["source"], moving[("x", 0)]["target_replicas"]) == ("request", [3, 4])
    assert (moving[("x", 1)]["source"], moving[("x", 1)]["target_replicas"]) == ("zk", [3, 4])
    await request(zk, {("x", 1): (1, 5)})
    await eventually(lambda: _no_requests(zk), what="the second request applied (and deleted)")
    moving = await listed(c)
    assert (moving[("x", 1)]["source"], moving[("x", 1)]["target_replicas"]) == ("zk", [3, 4])
    assert await status(zk, "x", 1) is None
    assert (await topic_znode(zk, "x")).partitions[0][:2] == (3, 4)


async def test_malformed_request_is_reported_and_the_next_runs(kit: Kit, zk: ZkClient) -> None:
    c = await start(kit, zk, 3)
    await make_topic(zk, "m", {0: (1, 2)})
    await zk.create(paths.REASSIGNMENT_REQUEST_PREFIX, b'{"version":1,"assignments":7}', sequential=True)
    await request(zk, {("m", 0): (2, 3)})
    await eventually(lambda: completed(zk, "m", 0, (2, 3)), what="the next request runs")
    await eventually(lambda: _no_requests(zk), what="the malformed request is deleted")
    s: dict[str, Any] | None = await c.status()
    assert s is not None
    assert any(p["path"].startswith("/admin/reassignment_requests/request_") for p in s["problems"])


async def test_standby_applies_a_request_left_by_a_dead_controller(procs: Procs, zk: ZkClient) -> None:
    c = await start(procs, zk, 3)
    standby = procs.controller(9001, 2.0)
    await make_topic(zk, "f", {0: (1, 2)})
    c.proc.kill()
    await request(zk, {("f", 0): (2, 3)})  # nobody is active to process it now
    await active_one(standby)
    await eventually(lambda: completed(zk, "f", 0, (2, 3)), what="the standby applies it")
    await eventually(lambda: _no_requests(zk), what="and deletes it")
    s = await state_of(zk, "f", 0)
    assert s is not None and s.leader in (2, 3)


async def test_a_megabyte_class_submission_in_several_extra_writes(kit: Kit, zk: ZkClient) -> None:
    """14,000 legacy entries (over 1 MiB with their original_replicas) arrive as three extra
    batches; all are pending, the legacy znode stays under ZooKeeper's limit and the rest is kept
    in /reassignd/legacy_overflow (broker 9 never registers, so nothing completes)."""
    c = await start(kit, zk, 2)
    n = 14_000
    await zk.create(paths.topic("big"), codec.encode_topic(codec.TopicZnode({p: (1, 2) for p in range(n)})))

    async def online() -> bool:
        _, body = await c.get("/v1/topics")
        return any(t["name"] == "big" and t["partitions"] == n for t in body["topics"])

    await eventually(online, timeout_s=60, what="14,000 partitions online")
    for start_p in range(0, n, 4_700):
        batch = tuple(Entry("big", p, (1, 9)) for p in range(start_p, min(n, start_p + 4_700)))
        await eventually(
            lambda: _absent(zk, paths.REASSIGN_PARTITIONS_EXTRA), timeout_s=60, what="extra merged"
        )
        await zk.create(paths.REASSIGN_PARTITIONS_EXTRA, admin_codec.encode_legacy_reassignment(batch))
    await eventually(
        lambda: _absent(zk, paths.REASSIGN_PARTITIONS_EXTRA), timeout_s=60, what="last extra merged"
    )

    async def pending() -> set[int] | None:
        legacy = await zk.get_or_none(paths.REASSIGN_PARTITIONS)
        if legacy is None:
            return None
        entries = list(admin_codec.decode_legacy_reassignment(legacy.data))
        if await zk.exists(paths.LEGACY_OVERFLOW) is not None:
            for chunk in await zk.children(paths.LEGACY_OVERFLOW):
                entries += admin_codec.decode_legacy_reassignment(
                    (await zk.get(f"{paths.LEGACY_OVERFLOW}/{chunk}")).data
                )
        got = {e.partition for e in entries if e.original_replicas == (1, 2) and e.replicas == (1, 9)}
        return got if len(got) == n else None

    assert await eventually(pending, timeout_s=60, what="every entry pending, with original_replicas") == set(
        range(n)
    )
    legacy = await zk.get(paths.REASSIGN_PARTITIONS)
    assert legacy.stat.data_length < 1024 * 1024
    assert await zk.exists(paths.LEGACY_OVERFLOW) is not None
    assert len(await listed(c)) == n


async def test_failover_repairs_stale_and_malformed_status_nodes(procs: Procs, zk: ZkClient) -> None:
    """Status nodes left by a controller that died between a move's end and their deletion, or
    damaged by hand, are repaired (deleted, or rewritten for a partition still moving) and
    reported when the next controller loads."""
    c = await start(procs, zk, 6)
    await make_topic(zk, "t", {p: (1, 2) for p in range(5)}, initial_bytes=5_000_000)
    for b in (3, 4):
        await set_broker_rate(zk, b, SLOW)
    await request(zk, {("t", 0): (3, 4)})
    await eventually(lambda: status(zk, "t", 0), what="t-0's status node")
    await eventually(lambda: replica_on(c, 3, "t", 0), what="t-0 started on 3")
    c.proc.kill()
    stale = admin_codec.ReassignmentStatus((1, 5), (1, 2), 2)
    await zk.create(paths.reassignment_status("t", 3), admin_codec.encode_reassignment_status(stale))
    await zk.create(paths.reassignment_status("t", 4), b"{not json")  # t-4 is not moving
    await zk.set(paths.reassignment_status("t", 0), b'{"version":1}', -1)  # t-0 is moving
    await zk.create(f"{paths.reassignment_status_topic('t')}/x", b"")

    c2 = procs.controller(9001, 2.0)
    await active_one(c2)
    for gone in (
        paths.reassignment_status("t", 3),
        paths.reassignment_status("t", 4),
        f"{paths.reassignment_status_topic('t')}/x",
    ):
        await eventually(functools.partial(_absent, zk, gone), what=f"{gone} deleted")
    repaired = await status(zk, "t", 0)
    assert repaired is not None
    assert repaired[0] == admin_codec.ReassignmentStatus((3, 4), (1, 2), 2)
    st = await c2.status()
    assert st is not None
    reported = {p["path"] for p in st["problems"]}
    assert {
        paths.reassignment_status("t", 3),
        paths.reassignment_status("t", 4),
        paths.reassignment_status("t", 0),
    } <= reported
    # the repaired status node keeps t-0 in the request protocol's hands until it completes
    await set_broker_rate(zk, None, FAST)
    for b in (3, 4):
        await set_broker_rate(zk, b, FAST)
    await eventually(lambda: completed(zk, "t", 0, (3, 4)), what="t-0 completes")
    await eventually(lambda: _absent(zk, paths.reassignment_status("t", 0)), what="status deleted at the end")

"""The fault suite's own tools against a real ZooKeeper: the proxy's decoding and faults, the
ZooKeeper server's freeze, thaw and restart, the invariant checker and the offline sampler."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest

from reassignd.zk import _wire, codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import ConnectionLostError
from reassignd.zk.server import LocalZooKeeper, four_letter_word
from reassignd.zk.values import ZkSettings
from tests.faults import invariants, proxy
from tests.faults.invariants import OfflineSampler
from tests.faults.scenarios import Env
from tests.integration.harness import active_one

pytestmark = pytest.mark.faults


def _frame(request: _wire.Request, xid: int) -> bytes:
    return request.serialize(xid)


@pytest.mark.timeout(10)
def test_requests_are_decoded_with_their_paths() -> None:
    create = proxy.decode_request(_frame(_wire.create("/c/a", b"x", _wire.OPEN_ACL, ephemeral=True), 7))
    assert (create.xid, create.opcode, create.paths, create.is_write) == (7, proxy.CREATE, ("/c/a",), True)
    set_data = proxy.decode_request(_frame(_wire.set_data("/c/brokers/topics/t", b"{}", 3), 8))
    assert proxy.topic_write("t")(set_data) and not proxy.state_write(set_data)
    read = proxy.decode_request(_frame(_wire.get_data("/c/x", True), 9))
    assert read.paths == ("/c/x",) and not read.is_write
    election = proxy.decode_request(
        _frame(
            _wire.multi(
                [
                    _wire.create("/c/controller", b"{}", _wire.OPEN_ACL),
                    _wire.set_data("/c/controller_epoch", b"2", 1),
                ]
            ),
            10,
        )
    )
    assert proxy.election(election) and election.paths == ("/c/controller", "/c/controller_epoch")
    fenced_state = proxy.decode_request(
        _frame(
            _wire.multi(
                [
                    _wire.check("/c/controller_epoch", 4),
                    _wire.set_data("/c/brokers/topics/t/partitions/3/state", b"{}", 2),
                ]
            ),
            11,
        )
    )
    assert proxy.state_write(fenced_state) and not proxy.election(fenced_state)
    assert [op.opcode for op in fenced_state.ops] == [proxy.CHECK, proxy.SET_DATA]
    assert [op.opcode for op in fenced_state.writes()] == [proxy.SET_DATA]
    multi_read = proxy.decode_request(_frame(_wire.multi_read(_wire.GET_DATA, ["/c/a", "/c/b"]), 12))
    assert multi_read.paths == ("/c/a", "/c/b") and not multi_read.is_write
    after = proxy.after(proxy.election, proxy.any_write)
    assert [after(r) for r in (set_data, election, read, set_data)] == [False, False, False, True]


@pytest.mark.timeout(60)
async def test_proxy_cuts_after_a_write_delays_and_refuses(zookeeper: LocalZooKeeper) -> None:
    async with proxy.ZkProxy(zookeeper.port) as px:
        client = ZkClient(ZkSettings(px.connect("/proxy-test-" + str(time.time_ns())), session_timeout_s=4.0))
        await client.start()
        try:
            session = client.session_id
            await client.create("/a", b"1")
            cut = px.arm_cut(proxy.writes_path(endswith="/a", opcodes=(proxy.SET_DATA,)))
            writes_before = px.writes_seen
            with pytest.raises(ConnectionLostError):
                await client.set("/a", b"2", 0)
            request = await cut.wait(5.0)
            assert cut.reply_seen and request.opcode == proxy.SET_DATA
            assert px.writes_seen == writes_before + 1
            znode = await client.get("/a")  # applied, and the session survived the cut
            assert (znode.data, znode.stat.version) == (b"2", 1)
            assert client.session_id == session

            px.set_delay(300)
            started = time.monotonic()
            await client.get("/a")
            assert time.monotonic() - started >= 0.25
            px.set_delay(0)

            px.refuse_for(1.0)
            px.cut_all()
            await client.get("/a")  # reconnects once the proxy accepts again
            assert px.connections_refused >= 1
            assert client.session_id == session
        finally:
            await client.close()
    assert px.connections == 0


@pytest.mark.timeout(90)
async def test_zookeeper_freeze_thaw_and_restart_keep_data() -> None:
    # a session that outlives a JVM's restart on a loaded machine (ticks of 500 ms: up to 10 s)
    server = LocalZooKeeper(tick_time_ms=500).start()
    try:
        port = server.port
        client = ZkClient(ZkSettings(server.connect + "/restart", session_timeout_s=10.0))
        await client.start()
        try:
            await client.create("/kept", b"yes")
            server.freeze()
            with pytest.raises(OSError):
                await asyncio.to_thread(four_letter_word, port, b"ruok", 0.5)
            server.thaw()
            assert await asyncio.to_thread(four_letter_word, port, b"ruok") == b"imok"
            await asyncio.to_thread(server.restart)
            assert server.port == port
            znode = await client.get("/kept")  # the client reconnects to the same port
            assert znode.data == b"yes"
            await asyncio.to_thread(lambda: server.restart(kill=True))
            assert (await client.get("/kept")).data == b"yes"
            server.freeze()  # stop() works on a frozen server too
        finally:
            with contextlib.suppress(Exception):
                server.thaw()
            await client.close()
    finally:
        server.stop()
    assert server.process is None


@pytest.mark.timeout(60)
async def test_invariants_and_sampler_see_strays_offline_partitions_and_half_done_moves(env: Env) -> None:
    c = env.procs.controller(9000, 2.0)
    await active_one(c)
    env.procs.cluster(2)
    zk = env.zk
    await zk.create(paths.topic("t"), codec.encode_topic(codec.TopicZnode({0: (1, 2)})))
    expected = {("t", 0): (1, 2)}

    async def check() -> list[str]:
        return await invariants.check(zk, expected, [c.url])

    assert await invariants.settle(check, 30.0) == []

    async with OfflineSampler(env.zk_connect, ["t"], interval_s=0.05) as sampler:
        assert c.proc.terminate() == 0  # nobody repairs what follows
        # broker 2's replica is now a stray, t-0 is not at its expected replicas, and offline
        # (no leader while broker 1, live, is in its ISR)
        znode = await zk.get(paths.topic("t"))
        await zk.set(paths.topic("t"), codec.encode_topic(codec.TopicZnode({0: (1,)})), znode.stat.version)
        state = await zk.get(paths.partition_state("t", 0))
        await zk.set(
            paths.partition_state("t", 0),
            codec.encode_partition_state(codec.PartitionState(-1, 9, 1, (1,))),
            state.stat.version,
        )
        await asyncio.sleep(0.5)
    assert sampler.samples_offline > 0 and sampler.records[0].leader == -1
    assert [e.split(" offline")[0] for e in sampler.offline(0.1)] == ["t-0"]
    found = await check()
    assert invariants.partitions_of(found, "assignment") == {("t", 0)}
    assert invariants.partitions_of(found, "offline") == {("t", 0)}
    assert invariants.replicas_of(found, "stray") == 1
    assert invariants.counts(found)["controller"] == 1

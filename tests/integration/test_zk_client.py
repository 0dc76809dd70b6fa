"""ZkClient against a real ZooKeeper: versions and errors, multis and fences, size limits,
one-shot watches, bulk reads, and what the session does when the server goes away.

Most tests share the session-wide server, each in a chroot of its own (``zk_connect``). The
outage tests start a server of their own, on a fixed port with a data directory that survives a
restart, and stop and start it under the client.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from reassignd.errors import NotController
from reassignd.testing.polling import eventually
from reassignd.zk._bulk import MULTI_MAX_OPS
from reassignd.zk.client import MAX_ZNODE_BYTES, ZkClient
from reassignd.zk.errors import (
    BadVersionError,
    ConnectionLostError,
    MultiFailedError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    ZkError,
    ZkTimeoutError,
    ZnodeTooLargeError,
)
from reassignd.zk.server import LocalZooKeeper, free_port
from reassignd.zk.values import Check, Create, Delete, Fence, Op, SessionState, SetData, Stat, ZkSettings

pytestmark = pytest.mark.timeout(90)


# --- helpers -------------------------------------------------------------------------------------


@pytest.fixture
def own_zookeeper(tmp_path: Path) -> Iterator[LocalZooKeeper]:
    """A server of the test's own: fixed port, data kept across stop()/start()."""
    server = LocalZooKeeper(port=free_port(), tick_time_ms=250, data_dir=tmp_path / "zk")
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def settle(zk: ZkClient) -> None:
    """ZooKeeper sends a watch event before the reply to any later request of the same session;
    after one more round trip and a few loop turns every due callback has run."""
    await zk.exists("/")
    await asyncio.sleep(0.05)


# --- session and chroot --------------------------------------------------------------------------


async def test_start_creates_the_chroot(zookeeper: LocalZooKeeper, zk_connect: str) -> None:
    nested = ZkClient(ZkSettings(f"{zk_connect}/nested/deeper"))
    root = ZkClient(ZkSettings(zookeeper.connect))
    chroot = zk_connect.split("/", 1)[1]
    await nested.start()
    await root.start()
    try:
        assert nested.connected and nested.session_id is not None
        assert await nested.children("/") == []
        assert await root.exists(f"/{chroot}/nested/deeper") is not None
        assert await nested.create("/x", b"1") == "/x"
        assert (await root.get(f"/{chroot}/nested/deeper/x")).data == b"1"
    finally:
        await root.delete_recursive(f"/{chroot}")
        await root.close()
        await nested.close()
    assert nested.session_id is None and not nested.connected


async def test_ephemeral_znodes_go_when_the_client_closes(zk: ZkClient, zk_connect: str) -> None:
    owner = ZkClient(ZkSettings(zk_connect))
    states: list[SessionState] = []
    owner.on_session_state(states.append)
    await owner.start()
    await owner.create("/member", b"1", ephemeral=True)
    stat = await zk.exists("/member")
    assert stat is not None and stat.ephemeral_owner == owner.session_id
    await owner.close()
    assert await zk.exists("/member") is None
    assert states == [SessionState.CONNECTED, SessionState.CLOSED]
    with pytest.raises(ConnectionLostError):
        await owner.get("/")


async def test_start_without_a_server_times_out(tmp_path: Path) -> None:
    client = ZkClient(ZkSettings(f"127.0.0.1:{free_port()}", request_timeout_s=1.0))
    started = time.monotonic()
    with pytest.raises(ZkTimeoutError):
        await client.start()
    assert time.monotonic() - started < 15
    await client.close()  # a no-op after a failed start


# --- reads and writes ----------------------------------------------------------------------------


async def test_create_get_set_delete_with_versions(zk: ZkClient) -> None:
    assert await zk.create("/a", b"v0") == "/a"
    znode = await zk.get("/a")
    assert (znode.path, znode.data, znode.stat.version, znode.stat.ephemeral_owner) == ("/a", b"v0", 0, 0)
    assert znode.stat.data_length == 2

    stat = await zk.set("/a", b"v1", 0)
    assert stat.version == 1 and stat.mzxid > znode.stat.mzxid and stat.czxid == znode.stat.czxid
    with pytest.raises(BadVersionError) as stale:
        await zk.set("/a", b"v2", 0)
    assert stale.value.path == "/a"
    assert (await zk.get("/a")).data == b"v1"

    with pytest.raises(BadVersionError):
        await zk.delete("/a", 0)
    await zk.delete("/a", 1)
    assert await zk.exists("/a") is None
    assert await zk.get_or_none("/a") is None

    await zk.create("/null")
    assert (await zk.get("/null")).data is None
    await zk.create("/deep/er/node", b"x", make_parents=True)
    assert await zk.children("/deep/er") == ["node"]
    assert (await zk.get("/deep")).data is None


async def test_errors_map_to_typed_exceptions(zk: ZkClient) -> None:
    for call in (
        zk.get("/missing"),
        zk.set("/missing", b"", -1),
        zk.delete("/missing"),
        zk.children("/missing"),
        zk.create("/missing/child"),
    ):
        with pytest.raises(NoNodeError) as missing:
            await call
        assert missing.value.path in ("/missing", "/missing/child")
    await zk.create("/p")
    with pytest.raises(NodeExistsError):
        await zk.create("/p")
    await zk.create("/p/c")
    with pytest.raises(NotEmptyError):
        await zk.delete("/p")
    await zk.create("/eph", ephemeral=True)
    with pytest.raises(ZkError, match="NOCHILDRENFOREPHEMERALS"):
        await zk.create("/eph/child")
    with pytest.raises(ValueError, match="absolute"):
        await zk.get("relative")


async def test_sequential_create_returns_the_suffixed_path(zk: ZkClient) -> None:
    first = await zk.create("/seq/item-", b"1", sequential=True, make_parents=True)
    second = await zk.create("/seq/item-", b"2", sequential=True)
    assert (first, second) == ("/seq/item-0000000000", "/seq/item-0000000001")
    third = await zk.create("/seq/item-", ephemeral=True, sequential=True)
    assert third == "/seq/item-0000000002"
    stat = await zk.exists(third)
    assert stat is not None and stat.ephemeral_owner == zk.session_id
    assert sorted(await zk.children("/seq")) == ["item-0000000000", "item-0000000001", "item-0000000002"]


async def test_ensure_path_and_delete_recursive(zk: ZkClient) -> None:
    await zk.ensure_path("/t/a/b/c")
    await zk.ensure_path("/t/a/b/c")  # idempotent
    assert (await zk.get("/t/a/b/c")).data is None
    await zk.create("/t/a/d", b"d")
    await zk.create("/t/e", b"e", ephemeral=True)
    await zk.create("/t/many")
    await zk.multi([Create(f"/t/many/n{i:04d}", b"x") for i in range(600)])
    await zk.create("/keep", b"k")

    await zk.delete_recursive("/t")
    assert await zk.exists("/t") is None
    assert (await zk.get("/keep")).data == b"k"
    await zk.delete_recursive("/t")  # missing: a no-op


# --- multi and fenced multi ----------------------------------------------------------------------


async def test_multi_applies_every_op(zk: ZkClient) -> None:
    await zk.create("/m", b"0")
    results = await zk.multi(
        [
            Create("/m/a", b"a"),
            Create("/m/s-", sequential=True),
            SetData("/m", b"1", 0),
            Check("/m", 1),
            Delete("/m/a"),
        ]
    )
    assert results[0] == "/m/a"
    assert results[1] == "/m/s-0000000001"
    assert isinstance(results[2], Stat) and results[2].version == 1
    assert results[3:] == [None, None]
    assert await zk.children("/m") == ["s-0000000001"]
    assert await zk.multi([]) == []


async def test_a_failed_multi_applies_nothing_and_names_the_failing_op(zk: ZkClient) -> None:
    await zk.create("/f", b"orig")
    ops: list[Op] = [
        Create("/f/a"),
        SetData("/f", b"x", -1),
        Create("/f/b"),
        SetData("/f", b"y", 7),
        Create("/f/c"),
    ]
    with pytest.raises(MultiFailedError) as failed:
        await zk.multi(ops)
    assert failed.value.index == 3
    assert isinstance(failed.value.cause, BadVersionError) and failed.value.path == "/f"
    assert await zk.children("/f") == []
    assert (await zk.get("/f")).data == b"orig"

    with pytest.raises(MultiFailedError) as exists:
        await zk.multi([Create("/f/x"), Create("/f/x")])
    assert exists.value.index == 1 and isinstance(exists.value.cause, NodeExistsError)
    with pytest.raises(MultiFailedError) as missing:
        await zk.multi([Delete("/f/nope"), Create("/f/y")])
    assert missing.value.index == 0 and isinstance(missing.value.cause, NoNodeError)
    assert await zk.children("/f") == []


async def test_fenced_multi_writes_only_under_the_current_fence(zk: ZkClient) -> None:
    await zk.create("/controller_epoch", b"1")
    fence = Fence("/controller_epoch", 0)
    results = await zk.fenced_multi(fence, [Create("/p", b"x"), SetData("/p", b"y", 0)])
    assert results[0] == "/p"
    assert isinstance(results[1], Stat) and results[1].version == 1
    assert await zk.fenced_multi(fence, []) == []  # a bare fence check

    await zk.set("/controller_epoch", b"2", 0)  # another controller was elected
    with pytest.raises(NotController) as stale:
        await zk.fenced_multi(fence, [SetData("/p", b"z", 1), Create("/q")])
    assert "/controller_epoch" in str(stale.value)
    assert (await zk.get("/p")).data == b"y"
    assert await zk.exists("/q") is None
    with pytest.raises(NotController):
        await zk.fenced_multi(fence, [])
    with pytest.raises(NotController):
        await zk.fenced_multi(Fence("/no_such_epoch", 0), [Create("/q")])

    current = Fence("/controller_epoch", 1)
    with pytest.raises(MultiFailedError) as failed:
        await zk.fenced_multi(current, [Create("/r"), SetData("/p", b"z", 99)])
    assert failed.value.index == 1 and isinstance(failed.value.cause, BadVersionError)
    assert await zk.exists("/r") is None


async def test_fenced_multi_splits_long_op_lists(zk: ZkClient) -> None:
    await zk.create("/epoch", b"0")
    fence = Fence("/epoch", 0)
    paths = [f"/big/n{i:05d}" for i in range(2600)]
    await zk.create("/big")
    created = await zk.fenced_multi(fence, [Create(p, b"x" * 100) for p in paths])
    assert created == paths
    assert len(await zk.children("/big")) == 2600

    # Op 1700 fails: the chunks before its chunk are applied, its own chunk is not.
    ops = [SetData(p, b"y", 0 if i != 1700 else 5) for i, p in enumerate(paths)]
    with pytest.raises(MultiFailedError) as failed:
        await zk.fenced_multi(fence, ops)
    assert failed.value.index == 1700 and failed.value.path == paths[1700]
    versions = [z.stat.version if z else None for z in await zk.get_many(paths)]
    chunk = 1700 // MULTI_MAX_OPS * MULTI_MAX_OPS
    assert chunk > 0 and set(versions[:chunk]) == {1}
    assert set(versions[chunk:1701]) == {0}  # the failing op's chunk: nothing of it applied


# --- size limits ---------------------------------------------------------------------------------


async def test_oversized_writes_are_refused_before_sending(zk: ZkClient) -> None:
    session = zk.session_id
    too_big = b"x" * (MAX_ZNODE_BYTES + 1)
    with pytest.raises(ZnodeTooLargeError) as refused:
        await zk.create("/big", too_big)
    assert refused.value.path == "/big"
    await zk.create("/ok", b"1")
    with pytest.raises(ZnodeTooLargeError):
        await zk.set("/ok", too_big, -1)
    with pytest.raises(ZnodeTooLargeError):  # each op fits, the multi does not
        await zk.multi([SetData("/ok", b"a" * 600_000, -1), SetData("/ok", b"b" * 600_000, -1)])
    with pytest.raises(ZnodeTooLargeError):  # data at the limit + request framing: over jute.maxbuffer
        await zk.set("/ok", b"x" * MAX_ZNODE_BYTES, -1)
    await zk.create("/epoch")
    with pytest.raises(ZnodeTooLargeError):  # nothing of a split fenced multi is sent
        await zk.fenced_multi(Fence("/epoch", 0), [Create("/first"), SetData("/ok", too_big, -1)])
    assert await zk.exists("/first") is None

    # the session survived and the client still works, large writes under the limit included
    assert zk.connected and zk.session_id == session
    assert (await zk.get("/ok")).data == b"1"
    await zk.create("/large", b"l" * 900_000)
    assert (await zk.get("/large")).stat.data_length == 900_000


# --- watches -------------------------------------------------------------------------------------


async def test_a_data_watch_fires_once(zk: ZkClient) -> None:
    fired: list[str] = []
    await zk.create("/w", b"0")
    await zk.get("/w", watch=fired.append)
    await zk.set("/w", b"1", -1)
    await zk.set("/w", b"2", -1)
    await settle(zk)
    assert fired == ["/w"]

    await zk.get("/w", watch=fired.append)  # re-armed; deletion fires it too
    await zk.create("/w/child")  # a child does not fire a data watch
    await settle(zk)
    assert fired == ["/w"]
    await zk.delete("/w/child")
    await zk.delete("/w")
    await settle(zk)
    assert fired == ["/w", "/w"]


async def test_watches_armed_since_a_zxid_fire_for_what_changed_after_it(zk: ZkClient) -> None:
    # What failover does: read many states in bulk, then arm their watches in a few SetWatches
    # requests, as if each had been read with a watch at the zxid before the bulk read.
    for name in ("a", "b", "c", "d"):
        await zk.create(f"/{name}", b"0")
    since = zk.last_zxid
    assert since > 0
    await zk.set("/a", b"1", -1)  # changed after `since`: fires as soon as it is armed
    await zk.delete("/c")  # gone after `since`: fires too
    fired: list[str] = []
    await zk.watch_data_since({f"/{n}": fired.append for n in ("a", "b", "c", "d")}, since)
    await settle(zk)
    assert sorted(fired) == ["/a", "/c"]
    await zk.set("/b", b"1", -1)  # unchanged until now: armed, fires on this change, once
    await zk.set("/b", b"2", -1)
    await zk.create("/d/child")  # a child is not a data change
    await settle(zk)
    assert sorted(fired) == ["/a", "/b", "/c"]
    await zk.delete("/d/child")
    await zk.delete("/d")
    await settle(zk)
    assert sorted(fired) == ["/a", "/b", "/c", "/d"]


async def test_thousands_of_watches_armed_since_a_zxid_in_a_few_requests(zk: ZkClient) -> None:
    paths = [f"/a-longer-znode-name-{i:05d}" for i in range(5000)]  # > 128 KiB: several SetWatches
    for start in range(0, len(paths), 500):
        await zk.multi([Create(p, b"0") for p in paths[start : start + 500]])
    since = zk.last_zxid
    fired: set[str] = set()
    await zk.watch_data_since({p: fired.add for p in paths}, since)
    await settle(zk)
    assert fired == set()
    await zk.multi([SetData(p, b"1", -1) for p in paths[::500]])
    await eventually(lambda: len(fired) == 10, 10.0, 0.05)
    assert fired == set(paths[::500])


async def test_a_children_watch_fires_once(zk: ZkClient) -> None:
    fired: list[str] = []
    await zk.create("/c", b"0")
    assert await zk.children("/c", watch=fired.append) == []
    await zk.set("/c", b"1", -1)  # data changes do not fire a children watch
    await settle(zk)
    assert fired == []
    await zk.create("/c/a")
    await zk.create("/c/b")
    await settle(zk)
    assert fired == ["/c"]


async def test_an_exists_watch_fires_on_creation_once(zk: ZkClient) -> None:
    fired: list[str] = []
    assert await zk.exists("/e", watch=fired.append) is None
    assert await zk.get_or_none("/g", watch=fired.append) is None
    await zk.create("/e", b"1")
    await zk.set("/e", b"2", -1)
    await zk.create("/g", b"1")
    await settle(zk)
    assert fired == ["/e", "/g"]


async def test_several_callbacks_on_one_path_each_fire_once(zk: ZkClient) -> None:
    fired: list[tuple[str, str]] = []

    def recorder(name: str) -> Callable[[str], None]:
        return lambda path: fired.append((name, path))

    def broken(path: str) -> None:
        raise RuntimeError("a watch callback that fails")

    await zk.create("/s", b"0")
    first, second, third = recorder("first"), recorder("second"), recorder("third")
    await zk.get("/s", watch=broken)
    await zk.get("/s", watch=first)
    await zk.get("/s", watch=second)
    await zk.get("/s", watch=second)  # the same watch armed twice fires once
    await zk.exists("/s", watch=third)
    await zk.set("/s", b"1", -1)
    await zk.set("/s", b"2", -1)
    await settle(zk)
    assert sorted(fired) == [("first", "/s"), ("second", "/s"), ("third", "/s")]
    assert (await zk.get("/s")).data == b"2"  # the failing callback broke nothing


async def test_a_watch_whose_read_failed_is_not_left_armed(zk: ZkClient) -> None:
    fired: list[str] = []
    with pytest.raises(NoNodeError):
        await zk.get("/later", watch=fired.append)
    with pytest.raises(NoNodeError):
        await zk.children("/later", watch=fired.append)
    await zk.create("/later", b"1")
    await zk.set("/later", b"2", -1)
    await settle(zk)
    assert fired == []


async def test_watching_tells_whether_a_callback_is_still_armed(zk: ZkClient) -> None:
    """What the controller relies on to re-arm a watch instead of believing one is in place."""
    fired: list[str] = []

    def on_data(path: str) -> None:
        fired.append(path)

    def missing(path: str) -> None:
        fired.append("missing " + path)

    await zk.create("/w", b"0")
    await zk.get("/w", watch=on_data)
    assert zk.watching(on_data)
    with pytest.raises(NoNodeError):
        await zk.get("/w-absent", watch=missing)
    assert not zk.watching(missing)  # the read failed: nothing is armed
    await zk.set("/w", b"1", -1)
    await settle(zk)
    assert fired == ["/w"]
    assert not zk.watching(on_data)  # it fired
    await zk.get("/w", watch=on_data)
    zk.drop_watches()
    assert not zk.watching(on_data)
    await zk.set("/w", b"2", -1)
    await settle(zk)
    assert fired == ["/w"]  # a dropped watch never fires


# --- bulk reads ----------------------------------------------------------------------------------


async def test_get_many_keeps_order_and_reports_missing_znodes(zk: ZkClient) -> None:
    await zk.create("/gm")
    existing = [f"/gm/n{i:05d}" for i in range(2500)]
    for start in range(0, len(existing), 500):
        await zk.multi([Create(p, p.encode()) for p in existing[start : start + 500]])
    await zk.delete("/gm/n01234")
    wanted = [*existing, "/gm/missing", "/nowhere/at/all"]
    wanted.insert(10, "/gm/also-missing")

    znodes = await zk.get_many(wanted)
    assert len(znodes) == len(wanted)
    for path, znode in zip(wanted, znodes, strict=True):
        if "missing" in path or path in ("/gm/n01234", "/nowhere/at/all"):
            assert znode is None
        else:
            assert znode is not None and znode.path == path and znode.data == path.encode()
            assert znode.stat.version == 0
    assert await zk.get_many([]) == []

    listed = await zk.children_many(["/gm", "/gm/missing", "/gm/n00000"])
    assert listed[0] is not None and len(listed[0]) == 2499
    assert listed[1:] == [None, []]


async def test_get_many_reads_large_znodes(zk: ZkClient) -> None:
    payloads = {f"/large/n{i:02d}": bytes([i]) * 300_000 for i in range(40)}
    await zk.create("/large")
    for path, data in payloads.items():
        await zk.create(path, data)
    znodes = await zk.get_many(list(payloads))
    assert [z.data if z else None for z in znodes] == list(payloads.values())


# --- outages -------------------------------------------------------------------------------------


async def test_a_short_outage_resumes_the_same_session(own_zookeeper: LocalZooKeeper) -> None:
    client = ZkClient(
        # longer than a ZooKeeper restart takes on a loaded machine (a JVM's start: 10 s was
        # passed at load 16); the session ends only when the outage is longer
        ZkSettings(f"{own_zookeeper.connect}/outage", session_timeout_s=30.0, request_timeout_s=5.0)
    )
    states: list[SessionState] = []
    client.on_session_state(states.append)
    await client.start()
    try:
        session = client.session_id
        await client.create("/member", b"1", ephemeral=True)
        fired: list[str] = []
        await client.get("/member", watch=fired.append)

        await asyncio.to_thread(own_zookeeper.stop)
        await eventually(lambda: SessionState.SUSPENDED in states, 5, 0.05)
        assert not client.connected
        await asyncio.to_thread(own_zookeeper.start)
        # the state callback is delivered with call_soon, just after `connected` turns true
        await eventually(lambda: client.connected and states[-1:] == [SessionState.CONNECTED], 15, 0.05)

        assert states == [SessionState.CONNECTED, SessionState.SUSPENDED, SessionState.CONNECTED]
        assert client.session_id == session
        stat = await client.exists("/member")
        assert stat is not None and stat.ephemeral_owner == session
        assert fired == []  # nothing changed: re-arming the watch did not fire it
        await client.set("/member", b"2", -1)  # the watch was re-armed on the restarted server
        await settle(client)
        assert fired == ["/member"]
    finally:
        await client.close()


async def test_session_expiry_is_reported_and_a_new_session_opened(own_zookeeper: LocalZooKeeper) -> None:
    session_timeout_s = 2.0
    client = ZkClient(
        ZkSettings(
            f"{own_zookeeper.connect}/expiry", session_timeout_s=session_timeout_s, request_timeout_s=8.0
        )
    )
    states: list[SessionState] = []
    client.on_session_state(states.append)
    await client.start()
    try:
        old_session = client.session_id
        await client.create("/member", b"1", ephemeral=True)
        fired: list[str] = []
        await client.get("/member", watch=fired.append)

        await asyncio.to_thread(own_zookeeper.stop)
        lost = time.monotonic()
        await eventually(lambda: SessionState.SUSPENDED in states, 5, 0.05)
        waiting = asyncio.create_task(client.get("/member"))  # waits for the connection...
        await eventually(lambda: SessionState.EXPIRED in states, session_timeout_s + 3, 0.05)
        assert time.monotonic() - lost <= session_timeout_s + 2.0  # in time to resign (slack for a slow host)
        with pytest.raises(ConnectionLostError):  # ...and fails when the session is given up
            await waiting
        assert not client.connected

        await asyncio.sleep(session_timeout_s)  # down for longer than the session timeout
        await asyncio.to_thread(own_zookeeper.start)
        # the state callback is delivered with call_soon, just after `connected` turns true
        await eventually(lambda: client.connected and states[-1:] == [SessionState.CONNECTED], 15, 0.05)

        assert states == [
            SessionState.CONNECTED,
            SessionState.SUSPENDED,
            SessionState.EXPIRED,
            SessionState.CONNECTED,
        ]
        assert client.session_id not in (None, old_session)

        async def member_gone() -> bool:
            return await client.exists("/member") is None

        await eventually(member_gone, 5, 0.05)  # the old session's ephemeral went with it
        assert fired == []  # watches of the old session were dropped
        assert await client.create("/member", b"2", ephemeral=True) == "/member"
        stat = await client.exists("/member")
        assert stat is not None and stat.ephemeral_owner == client.session_id
    finally:
        await client.close()
    assert states[-1] is SessionState.CLOSED


async def test_requests_time_out_and_close_returns_while_the_server_is_down(
    own_zookeeper: LocalZooKeeper,
) -> None:
    client = ZkClient(
        ZkSettings(f"{own_zookeeper.connect}/down", session_timeout_s=20.0, request_timeout_s=1.0)
    )
    states: list[SessionState] = []
    client.on_session_state(states.append)
    await client.start()
    fired: list[str] = []
    await client.create("/w", b"1")
    await client.get("/w", watch=fired.append)
    await asyncio.to_thread(own_zookeeper.stop)
    await eventually(lambda: SessionState.SUSPENDED in states, 5, 0.05)

    started = time.monotonic()
    with pytest.raises(ZkTimeoutError):
        await client.get("/w")
    assert 0.9 <= time.monotonic() - started < 10  # bounded (generous for a slow host)

    waiting = asyncio.create_task(client.exists("/w"))
    await asyncio.sleep(0.1)
    started = time.monotonic()
    await client.close()
    assert time.monotonic() - started < 10
    with pytest.raises(ConnectionLostError):
        await waiting
    assert states[-1] is SessionState.CLOSED
    assert fired == []
    await client.close()  # twice is fine


async def test_a_server_that_stops_answering_is_detected(own_zookeeper: LocalZooKeeper) -> None:
    """SIGSTOP: the TCP connection stays open and nothing answers (as in a network partition)."""
    session_timeout_s = 3.0
    client = ZkClient(
        ZkSettings(
            f"{own_zookeeper.connect}/frozen", session_timeout_s=session_timeout_s, request_timeout_s=10.0
        )
    )
    states: list[SessionState] = []
    client.on_session_state(states.append)
    await client.start()
    try:
        await client.create("/w", b"1")
        own_zookeeper.freeze()  # returns once every server thread is stopped
        frozen = time.monotonic()
        with pytest.raises(ConnectionLostError):  # its reply never came: applied or not, unknown
            await client.set("/w", b"2", -1)
        assert SessionState.SUSPENDED in states
        await eventually(lambda: SessionState.EXPIRED in states, session_timeout_s + 2, 0.05)
        assert time.monotonic() - frozen <= session_timeout_s + 2.0
        started = time.monotonic()
        await client.close()
        assert time.monotonic() - started < 10
    finally:
        own_zookeeper.thaw()
        await client.close()
    assert states == [
        SessionState.CONNECTED,
        SessionState.SUSPENDED,
        SessionState.EXPIRED,
        SessionState.CLOSED,
    ]

"""The ZooKeeper client's decisions without a server: the session supervisor against a fake
transport (a ``Link``), and the watch registry's one-shot watches and dispatch.

The integration tests (tests/integration/test_zk_client.py) run the same behaviour against a real
ZooKeeper, with real outages; these pin each decision on its own, at exact moments.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from reassignd.testing.polling import eventually
from reassignd.zk import _wire
from reassignd.zk._connection import ConnectionDropped, parse_servers
from reassignd.zk._supervisor import RequestLost, SessionState, SessionSupervisor
from reassignd.zk._transport import set_watches_chunks
from reassignd.zk._watches import WATCH_EVENTS, WatchRegistry

TIMEOUT_S = 1.0


class FakeLink:
    """A transport whose connection the test opens, drops and re-establishes by hand. Like the
    real one, dropping the connection tells the supervisor synchronously, before the requests in
    flight fail."""

    def __init__(self) -> None:
        self.supervisor: SessionSupervisor | None = None
        self.session_id: int | None = 1
        self.password = b"pw-1"
        self.negotiated_timeout_s: float | None = TIMEOUT_S
        self.established = True
        self.last_recv = asyncio.get_running_loop().time()
        self.server: tuple[str, int] | None = ("127.0.0.1", 2181)
        self.sent: list[tuple[_wire.Request, asyncio.Future[Any]]] = []
        self.dropped: list[str] = []
        self.abandoned = 0
        self.kept_alive = 0

    def send(self, request: _wire.Request) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.sent.append((request, future))
        return future

    def drop_connection(self, reason: str) -> None:
        self.dropped.append(reason)
        self.lose()

    def abandon_session(self) -> None:
        self.abandoned += 1
        self.session_id = None
        self.password = b"\x00"

    def keep_alive(self) -> None:
        self.kept_alive += 1

    # --- what the test does ------------------------------------------------------------------

    def lose(self) -> None:
        """The connection dies: the supervisor hears it, then the requests in flight fail."""
        if not self.established:
            return
        self.established = False
        assert self.supervisor is not None
        self.supervisor.on_connection_lost(self.last_recv)
        for _, future in self.sent:
            if not future.done():
                future.set_exception(ConnectionDropped("dropped"))

    def reconnect(self, session_id: int, password: bytes = b"pw") -> bool:
        """A reconnect completes on ``session_id``: what the supervisor answers (re-arm watches?)."""
        self.session_id, self.password = session_id, password
        self.established = True
        self.last_recv = asyncio.get_running_loop().time()
        assert self.supervisor is not None
        return self.supervisor.on_established(session_id)


class Harness:
    def __init__(self, link: FakeLink) -> None:
        self.link = link
        self.states: list[SessionState] = []
        self.expired = 0
        self.reaped: list[tuple[str, int, list[tuple[int, bytes]]]] = []
        self.supervisor = SessionSupervisor(
            session_timeout_s=TIMEOUT_S,
            on_change=self.states.append,
            on_expired=self._expired,
            poll_interval_s=0.01,
            reaper=self._reap,
        )
        link.supervisor = self.supervisor
        self.supervisor.attach(link)
        self.task: asyncio.Task[None] | None = None

    def run(self) -> None:
        self.task = asyncio.create_task(self.supervisor.run())

    def _expired(self) -> None:
        self.expired += 1

    async def _reap(
        self, host: str, port: int, sessions: list[tuple[int, bytes]], *, timeout_s: float
    ) -> None:
        assert 0 < timeout_s <= TIMEOUT_S
        self.reaped.append((host, port, sessions))


@pytest.fixture
async def harness() -> AsyncIterator[Harness]:
    """A supervisor on a fake link, its first session up. Its poll loop is not running: the tests
    call ``check(now)`` at the moments that matter (``run`` starts the loop)."""
    h = Harness(FakeLink())
    h.supervisor.begin()
    yield h
    h.supervisor.close()
    if h.task is not None:
        h.task.cancel()
        await asyncio.gather(h.task, return_exceptions=True)
    await h.supervisor.stop_reaper()


# --- the supervisor's states ------------------------------------------------------------------------


async def test_a_lost_connection_suspends_then_expires_just_before_the_session_timeout(
    harness: Harness,
) -> None:
    link, supervisor = harness.link, harness.supervisor
    lost_at = link.last_recv = asyncio.get_running_loop().time()
    link.lose()
    assert harness.states == [SessionState.CONNECTED, SessionState.SUSPENDED]
    assert not supervisor.ready.is_set()
    # given up a little before the server could expire it (the timeout, from the last byte),
    # allowing for the poll period: 2 × 10 ms
    supervisor.check(now=lost_at + TIMEOUT_S - 0.021)
    assert harness.states == [SessionState.CONNECTED, SessionState.SUSPENDED]
    supervisor.check(now=lost_at + TIMEOUT_S - 0.019)
    assert harness.states == [SessionState.CONNECTED, SessionState.SUSPENDED, SessionState.EXPIRED]
    assert supervisor.generation == 1
    assert harness.expired == 1
    assert link.abandoned == 1 and link.session_id is None  # never resumed again
    harness.run()
    await asyncio.sleep(0.05)
    assert harness.reaped == []  # no server reachable yet
    # a server answers again, with a new session: reported, and the old one is closed
    assert link.reconnect(7) is False  # the watches were of the old session: not re-armed
    assert harness.states == [
        SessionState.CONNECTED,
        SessionState.SUSPENDED,
        SessionState.EXPIRED,
        SessionState.CONNECTED,
    ]
    assert supervisor.session_id == 7 and supervisor.ready.is_set()
    await eventually(lambda: _true(harness.reaped), 2, 0.005)
    assert harness.reaped == [("127.0.0.1", 2181, [(1, b"pw-1")])]


async def test_the_same_session_back_in_time_is_resumed_with_its_watches(harness: Harness) -> None:
    link, supervisor = harness.link, harness.supervisor
    lost_at = link.last_recv
    link.lose()
    assert link.reconnect(1) is True  # same session: re-arm the watches
    assert harness.states == [SessionState.CONNECTED, SessionState.SUSPENDED, SessionState.CONNECTED]
    later = lost_at + 2 * TIMEOUT_S  # past the lost connection's deadline, pings answered
    link.last_recv = later
    supervisor.check(now=later)
    assert harness.states[-1] is SessionState.CONNECTED
    assert supervisor.generation == 0 and harness.expired == 0 and link.abandoned == 0


async def test_a_reconnect_into_a_new_session_is_reported_as_expiry(harness: Harness) -> None:
    link, supervisor = harness.link, harness.supervisor
    link.lose()
    assert link.reconnect(9) is False
    assert harness.states == [
        SessionState.CONNECTED,
        SessionState.SUSPENDED,
        SessionState.EXPIRED,
        SessionState.CONNECTED,
    ]
    assert supervisor.session_id == 9 and supervisor.generation == 1 and harness.expired == 1


async def test_a_session_given_up_and_then_resumed_by_a_late_reconnect_is_dropped(harness: Harness) -> None:
    link = harness.link
    link.lose()
    harness.supervisor.check(now=link.last_recv + TIMEOUT_S)
    assert harness.states[-1] is SessionState.EXPIRED
    abandoned = link.abandoned
    # a reconnect that was under way resumes session 1, which the owner has already given up on
    link.reconnect(1)
    assert link.dropped[-1] == "resumed a session already given up"
    assert link.abandoned == abandoned + 1
    assert harness.states[-1] is SessionState.EXPIRED  # no CONNECTED for a dead session


async def test_silence_on_a_healthy_connection_drops_it(harness: Harness) -> None:
    link = harness.link
    harness.supervisor.check(now=link.last_recv + TIMEOUT_S * 2 / 3 - 0.01)
    assert link.dropped == []
    harness.supervisor.check(now=link.last_recv + TIMEOUT_S * 2 / 3 + 0.01)
    assert link.dropped[0].startswith("nothing received for")
    assert harness.states == [SessionState.CONNECTED, SessionState.SUSPENDED]


async def test_the_negotiated_timeout_wins_when_shorter(harness: Harness) -> None:
    harness.link.negotiated_timeout_s = 0.4
    assert harness.supervisor.effective_timeout_s == 0.4
    harness.link.negotiated_timeout_s = 30.0
    assert harness.supervisor.effective_timeout_s == TIMEOUT_S


async def test_the_transport_is_kept_alive_while_running(harness: Harness) -> None:
    harness.run()
    await eventually(lambda: _true(harness.link.kept_alive >= 3), 2, 0.005)


# --- requests through the supervisor ---------------------------------------------------------------


async def test_a_write_whose_connection_drops_is_lost_not_resent(harness: Harness) -> None:
    link = harness.link
    request = _wire.set_data("/a", b"1", -1)
    exchange = asyncio.create_task(harness.supervisor.exchange(request, retry=False))
    await eventually(lambda: _true(link.sent), 1, 0.001)
    link.lose()
    with pytest.raises(RequestLost, match="may or may not have been applied"):
        await exchange
    assert len(link.sent) == 1


async def test_a_read_is_resent_on_the_same_session_after_a_drop(harness: Harness) -> None:
    link = harness.link
    request = _wire.get_data("/a")
    exchange = asyncio.create_task(harness.supervisor.exchange(request, retry=True))
    await eventually(lambda: _true(link.sent), 1, 0.001)
    link.lose()
    await asyncio.sleep(0.02)
    assert len(link.sent) == 1  # nothing is sent while suspended
    link.reconnect(1)
    await eventually(lambda: _true(len(link.sent) == 2), 1, 0.001)
    assert link.sent[1][0] is request
    link.sent[1][1].set_result((b"x", (0,) * 11))
    assert await exchange == (b"x", (0,) * 11)


async def test_a_request_waiting_out_an_outage_does_not_cross_into_a_new_session(harness: Harness) -> None:
    link = harness.link
    link.lose()
    exchange = asyncio.create_task(harness.supervisor.exchange(_wire.get_data("/a"), retry=True))
    await asyncio.sleep(0.02)
    assert not exchange.done() and link.sent == []
    link.reconnect(5)  # a new session: what the request was part of is gone
    with pytest.raises(RequestLost, match="expired"):
        await exchange
    assert link.sent == []


async def test_server_errors_pass_through_and_a_closed_supervisor_refuses(harness: Harness) -> None:
    link = harness.link
    exchange = asyncio.create_task(harness.supervisor.exchange(_wire.delete("/a", 3), retry=False))
    await eventually(lambda: _true(link.sent), 1, 0.001)
    link.sent[0][1].set_exception(_wire.ServerError(_wire.BAD_VERSION))
    with pytest.raises(_wire.ServerError) as caught:
        await exchange
    assert caught.value.code == _wire.BAD_VERSION
    link.lose()
    waiting = asyncio.create_task(harness.supervisor.exchange(_wire.get_data("/a"), retry=True))
    await asyncio.sleep(0.01)
    harness.supervisor.close()
    with pytest.raises(RequestLost, match="closed"):
        await waiting


# --- the watch registry ----------------------------------------------------------------------------


def _registry() -> WatchRegistry:
    return WatchRegistry(lambda absolute: absolute.removeprefix("/chroot") or "/")


async def test_a_watch_fires_once_on_the_first_of_its_events_with_the_relative_path() -> None:
    registry = _registry()
    fired: list[str] = []
    registry.arm("data", "/chroot/a", WATCH_EVENTS["data"], fired.append)
    assert registry.holds(fired.append) and len(registry) == 1
    registry.dispatch(_wire.EVENT_DELETED, "/chroot/a")
    registry.dispatch(_wire.EVENT_DATA_CHANGED, "/chroot/a")
    await asyncio.sleep(0)
    assert fired == ["/a"]
    assert not registry.holds(fired.append) and len(registry) == 0
    assert registry.watched_paths() == ([], [], [])


async def test_one_watch_armed_by_two_reads_fires_once() -> None:
    registry = _registry()
    fired: list[str] = []
    assert registry.arm("children", "/chroot/b", WATCH_EVENTS["children"], fired.append) is not None
    assert registry.arm("children", "/chroot/b", WATCH_EVENTS["children"], fired.append) is None
    registry.dispatch(_wire.EVENT_CHILDREN_CHANGED, "/chroot/b")
    registry.dispatch(_wire.EVENT_CHILDREN_CHANGED, "/chroot/b")
    await asyncio.sleep(0)
    assert fired == ["/b"]


async def test_events_for_other_paths_or_types_and_state_events_fire_nothing() -> None:
    registry = _registry()
    fired: list[str] = []
    registry.arm("data", "/chroot/a", WATCH_EVENTS["data"], fired.append)
    registry.dispatch(_wire.EVENT_CHILDREN_CHANGED, "/chroot/a")  # not an event a data watch gets
    registry.dispatch(_wire.EVENT_DATA_CHANGED, "/chroot/other")
    registry.dispatch(-1, "")  # a session state event
    await asyncio.sleep(0)
    assert fired == [] and registry.holds(fired.append)


async def test_dropping_all_watches_cancels_callbacks_already_scheduled() -> None:
    registry = _registry()
    fired: list[str] = []
    registry.arm("exists", "/chroot/c", WATCH_EVENTS["exists"], fired.append)
    registry.dispatch(_wire.EVENT_CREATED, "/chroot/c")  # scheduled with call_soon...
    assert registry.drop_all() == 1  # ...and the session expires before it runs
    await asyncio.sleep(0)
    assert fired == [] and len(registry) == 0


async def test_a_disarmed_watch_fires_nothing_and_others_on_the_path_still_do() -> None:
    registry = _registry()
    first: list[str] = []
    second: list[str] = []
    armed = registry.arm("data", "/chroot/a", WATCH_EVENTS["data"], first.append)
    registry.arm("exists", "/chroot/a", WATCH_EVENTS["exists"], second.append)
    registry.disarm(armed)  # its read failed
    registry.dispatch(_wire.EVENT_DATA_CHANGED, "/chroot/a")
    await asyncio.sleep(0)
    assert first == [] and second == ["/a"]


def test_the_watches_to_re_arm_are_listed_as_set_watches_wants_them() -> None:
    registry = _registry()
    registry.arm("data", "/chroot/d", WATCH_EVENTS["data"], print)
    registry.arm("exists", "/chroot/e", WATCH_EVENTS["exists"], print)
    registry.arm("children", "/chroot/c", WATCH_EVENTS["children"], print)
    data, exist, child = registry.watched_paths()
    # a deletion fires data, children and exists watches alike, so each path is re-armed as a
    # data watch too (re-arming twice is harmless: each fires once)
    assert data == ["/chroot/c", "/chroot/d", "/chroot/e"]
    assert exist == ["/chroot/e"]
    assert child == ["/chroot/c"]


# --- pure helpers ----------------------------------------------------------------------------------


def test_server_lists_parse_like_zookeepers_connect_string() -> None:
    assert parse_servers("a:1,b,[::1]:3") == [("a", 1), ("b", 2181), ("::1", 3)]
    with pytest.raises(ValueError, match="no ZooKeeper server"):
        parse_servers(" , ")


def test_set_watches_requests_stay_small() -> None:
    paths = [f"/brokers/topics/t/partitions/{i}/state" for i in range(20_000)]
    chunks = set_watches_chunks(42, paths, [], [])
    assert len(chunks) > 1
    assert all(chunk.packet_size < 200 * 1024 for chunk in chunks)
    assert sum(chunk.body.count(b"/state") for chunk in chunks) == len(paths)


def test_a_watch_event_decodes() -> None:
    body = b"\x00\x00\x00\x03\x00\x00\x00\x03\x00\x00\x00\x02/a"
    assert _wire.decode_watch_event(body) == (_wire.EVENT_DATA_CHANGED, 3, "/a")


async def _true(value: object) -> bool:
    return bool(value)

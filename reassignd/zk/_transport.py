"""aiozk's Session and Connection, with the weak spots reassignd cannot live with replaced.

What is kept from aiozk: the connect handshake, the session state machine, heartbeats, the xid
counter, the watch-callback table. What is replaced, and why (all seen with aiozk 0.32):

- ``Connection.connect``: the ``srvr`` handshake read had no timeout (a hung server hung the
  reconnect loop forever).
- ``Connection.read_response``/``read_loop``: field-by-field decoding was slow (see ``_wire``);
  a closed socket ended the read loop silently, leaving every in-flight request blocked until the
  next heartbeat noticed; a reply for an unknown xid killed the read loop with a KeyError. Here a
  dead connection fails its pending requests at once and tells the session.
- ``Session.find_server``: exponential backoff up to 60 s between rounds (a server back after a
  short outage was found long after the session had expired). Capped at 1 s here.
- ``Session.repair_loop``/``heartbeat``: an unexpected exception ended them for good; an invalid
  state transition raised inside them.
- ``Session.set_existing_watches``: re-armed the previous session's watches on a *new* session
  (aiozk hides expiry), sent one unbounded SetWatches packet (over 1 MiB the server drops the
  connection, forever), and retried through ``Session.send``, which blocks for a whole outage.
- ``Session.establish_session``: lost the last zxid seen on every reconnect (see there).
- ``Session.close``: see ``close_session``; the client tears the rest down itself.
- ``Session.event_dispatch``: looking up a path in the defaultdict created empty entries that
  were then re-armed as server watches on every reconnect.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable
from typing import Any

from aiozk import exc, protocol
from aiozk.connection import Connection
from aiozk.session import Session
from aiozk.states import States

from reassignd.zk import _wire

log = logging.getLogger(__name__)

_WATCH_XID = -1
_SPECIAL_XIDS = (protocol.PING_XID, protocol.AUTH_XID)
_SET_WATCHES_MAX_PATH_BYTES = 128 * 1024  # as the Java client's SET_WATCHES_MAX_LENGTH
_MAX_FIND_BACKOFF_S = 1.0


class ZkConnection(Connection):  # type: ignore[misc]
    """One TCP connection to one server."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        watch_handler: Callable[[Any], None],
        connect_timeout_s: float,
        on_zxid: Callable[[int], None],
        on_dead: Callable[[ZkConnection], None],
    ) -> None:
        super().__init__(host, port, watch_handler=watch_handler, read_timeout=connect_timeout_s)
        self.connect_timeout_s = connect_timeout_s
        self._on_zxid = on_zxid
        self._on_dead = on_dead
        self.last_recv = asyncio.get_running_loop().time()
        self.dead = False
        self._outgoing: list[bytes] = []
        self._flush_scheduled = False

    @property
    def alive(self) -> bool:
        task = self.read_loop_task
        return not self.dead and not self.closing and task is not None and not task.done()

    async def connect(self) -> None:
        async with asyncio.timeout(self.connect_timeout_s):
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
            try:
                await self._make_handshake()  # the `srvr` four-letter word: server version
            finally:
                self.writer.close()
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        self.last_recv = asyncio.get_running_loop().time()

    def send(self, request: Any, xid: int | None = None) -> asyncio.Future[Any]:
        """Queue a request; requests queued in one event-loop iteration go out in one write.

        (aiozk wrote each request with its own ``send()`` system call: with many requests in
        flight that was most of the client's CPU time.)"""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        if self.closing:
            future.set_exception(exc.ConnectError(self.host, self.port))
            return future
        if request.special_xid:
            xid = request.special_xid
        payload = request.serialize(xid)
        self.opcode_xref[xid] = request.opcode
        if xid in _SPECIAL_XIDS:
            self.pending_specials[xid].append(future)
        else:
            self.pending[xid] = future
        self._outgoing.append(_wire.SIZE_PREFIX.pack(len(payload)))
        self._outgoing.append(payload)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            loop.call_soon(self._flush)
        return future

    def _flush(self) -> None:
        self._flush_scheduled = False
        data = b"".join(self._outgoing)
        self._outgoing.clear()
        if self.closing or not data:
            return
        try:
            self.writer.write(data)
        except Exception as e:
            self.kill(f"write failed: {e!r}")

    async def read_response(self, initial_connect: bool = False) -> tuple[Any, Any, Any]:
        try:
            (size,) = _wire.SIZE_PREFIX.unpack(await self.reader.readexactly(4))
            buf = await self.reader.readexactly(size)
        except asyncio.IncompleteReadError as e:
            raise ConnectionAbortedError from e
        self.last_recv = asyncio.get_running_loop().time()
        if initial_connect:
            return None, None, protocol.ConnectResponse.deserialize(buf)
        xid, zxid, error = _wire.REPLY_HEADER.unpack_from(buf)
        if zxid > 0:
            self._on_zxid(zxid)
        if xid == _WATCH_XID:
            return xid, zxid, protocol.WatchEvent.deserialize(buf[_wire.REPLY_HEADER.size :])
        opcode = self.opcode_xref.pop(xid, None) if xid not in _SPECIAL_XIDS else self.opcode_xref.get(xid)
        if error:
            return xid, zxid, _wire.ServerError(error)
        if opcode is None:
            return xid, zxid, None
        if _wire.can_decode(opcode):
            return xid, zxid, _wire.decode_reply(opcode, buf, _wire.REPLY_HEADER.size)
        return xid, zxid, protocol.response_xref[opcode].deserialize(buf[_wire.REPLY_HEADER.size :])

    async def read_loop(self) -> None:
        reason = "connection closed by the server"
        try:
            while not self.closing:
                try:
                    xid, zxid, response = await self.read_response()
                except (ConnectionAbortedError, ConnectionError) as e:
                    reason = f"connection lost: {e!r}"
                    return
                except Exception as e:
                    log.exception("unreadable reply from %s:%s", self.host, self.port)
                    reason = f"unreadable reply: {e!r}"
                    return
                if xid == _WATCH_XID:
                    try:
                        self.watch_handler(response)
                    except Exception:
                        log.exception("dispatching watch event %s failed", response)
                    continue
                if xid in _SPECIAL_XIDS:
                    waiting = self.pending_specials[xid]
                    future = waiting.pop(0) if waiting else None
                else:
                    future = self.pending.pop(xid, None)
                if future is None or future.done():
                    continue
                if isinstance(response, Exception):
                    future.set_exception(response)
                else:
                    future.set_result((zxid, response))
        finally:
            if not self.closing:
                self.kill(reason)

    def kill(self, reason: str) -> None:
        """Drop the connection now: fail every pending request, tell the session. Idempotent."""
        if self.dead:
            return
        self.dead = True
        self.closing = True
        log.info("ZooKeeper connection to %s:%s dropped: %s", self.host, self.port, reason)
        task = self.read_loop_task
        if task is not None and not task.done() and task is not asyncio.current_task():
            task.cancel()
        if self.writer is not None:
            with contextlib.suppress(Exception):
                self.writer.close()
        self._on_dead(self)
        failure = exc.ConnectError(self.host, self.port)
        for future in self.drain_all_pending():  # aiozk's abort(), without its warning per call
            if not future.done():
                future.set_exception(failure)


class ZkSession(Session):  # type: ignore[misc]
    """aiozk's Session with the replacements listed in the module docstring.

    ``on_established(session_id)`` is asked, right after every (re)connect, whether the watches
    in ``watch_callbacks`` belong to this session (and may be re-armed); ``on_connection_lost``
    is told at once when a connection dies.
    """

    # attributes of aiozk's Session this class reads and writes
    conn: Any
    last_zxid: int | None
    xid: int
    session_id: int | None
    password: bytes
    heartbeat_handle: asyncio.TimerHandle | None

    def __init__(
        self,
        servers: str,
        timeout_s: float,
        *,
        connect_timeout_s: float,
        on_established: Callable[[int | None], bool],
        on_connection_lost: Callable[[float], None],
    ) -> None:
        super().__init__(servers, timeout_s, None, False, connect_timeout_s)
        self.connect_timeout_s = connect_timeout_s
        self._on_established = on_established
        self._on_connection_lost = on_connection_lost

    # --- connections -----------------------------------------------------------------------------

    async def make_connection(self, host: str, port: Any) -> ZkConnection | None:
        conn = ZkConnection(
            host,
            int(port),
            watch_handler=self.event_dispatch,
            connect_timeout_s=self.connect_timeout_s,
            on_zxid=self.note_zxid,
            on_dead=self._connection_died,
        )
        try:
            await conn.connect()
        except Exception as e:
            log.info("cannot connect to ZooKeeper at %s:%s: %r", host, port, e)
            conn.dead = conn.closing = True
            if conn.writer is not None:
                conn.writer.close()
            return None
        return conn

    async def find_server(self, allow_read_only: bool) -> None:
        delay_s = 0.05
        conn: ZkConnection | None = None
        while conn is None:
            for host, port in random.sample(self.hosts, len(self.hosts)):
                conn = await self.make_connection(host, port)
                if conn is not None and conn.start_read_only and not allow_read_only:
                    conn.kill("read-only server")
                    conn = None
                if conn is not None:
                    break
            if conn is None:
                await asyncio.sleep(delay_s * random.uniform(0.5, 1.0))
                delay_s = min(delay_s * 2, _MAX_FIND_BACKOFF_S)
        old, self.conn = self.conn, conn
        if old is not None and old is not conn:
            old.kill("replaced by a new connection")

    def kill_connection(self, reason: str) -> None:
        if self.conn is not None:
            self.conn.kill(reason)

    def _connection_died(self, conn: ZkConnection) -> None:
        if conn is self.conn and self.state.current_state in (States.CONNECTED, States.READ_ONLY):
            self.state.transition_to(States.SUSPENDED)
        if conn is self.conn:
            self._on_connection_lost(conn.last_recv)

    def note_zxid(self, zxid: int) -> None:
        if zxid > (self.last_zxid or 0):
            self.last_zxid = zxid

    def next_xid(self) -> int:
        self.xid = self.xid + 1 if self.xid < 0x7FFFFFFF else 1
        xid: int = self.xid
        return xid

    def abandon_session(self) -> None:
        """Make the next connect open a new session instead of resuming this one."""
        self.session_id = None
        self.password = b"\x00"

    # --- the repair loop -------------------------------------------------------------------------

    async def establish_session(self) -> None:
        # aiozk sets last_zxid from the connect reply, which carries none: it became None after
        # every reconnect, so re-armed watches fired for nothing (SetWatches relative to zxid 0)
        # and the next connect no longer told the server which zxid we had seen.
        seen = self.last_zxid
        await super().establish_session()
        if seen and seen > (self.last_zxid or 0):
            self.last_zxid = seen

    async def repair_loop(self) -> None:
        while not self.closing:
            await self.state.wait_for(States.SUSPENDED, States.LOST)
            if self.closing:
                return
            try:
                await self.find_server(allow_read_only=False)
                await asyncio.wait_for(self.establish_session(), self.timeout)
            except (exc.SessionLost, TimeoutError) as e:
                log.info("ZooKeeper session not re-established: %r", e)
                self.kill_connection("session not re-established")
                self.abandon_session()
                continue
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("ZooKeeper reconnect failed")
                self.kill_connection("reconnect failed")
                await asyncio.sleep(0.1)
                continue
            if self.state.current_state in (States.CONNECTED, States.READ_ONLY):
                continue  # cannot happen (we only get here from SUSPENDED/LOST); be safe
            self.state.transition_to(States.CONNECTED)
            self.conn.start_read_loop()
            await self.set_existing_watches()

    async def heartbeat(self) -> None:
        if self.closing:
            return
        conn: ZkConnection | None = None
        try:
            await self.ensure_safe_state()
            conn = self.conn
            await asyncio.wait_for(conn.send(protocol.PingRequest()), self.timeout * 2 / 3)
        except (exc.ConnectError, TimeoutError):
            if conn is not None:
                conn.kill("no answer to a ping")
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("ZooKeeper heartbeat failed")
        finally:
            if not self.closing:
                self.set_heartbeat()

    async def set_existing_watches(self) -> None:
        """Re-arm our watches on a resumed session; drop them on a new one (never raises)."""
        if not self._on_established(self.session_id):
            return
        keys = [key for key, callbacks in self.watch_callbacks.items() if callbacks]
        data = sorted({path for kind, path in keys if kind in (_DATA_CHANGED, _DELETED)})
        exist = sorted({path for kind, path in keys if kind == _CREATED})
        child = sorted({path for kind, path in keys if kind == _CHILDREN_CHANGED})
        conn = self.conn
        try:
            for chunk in set_watches_chunks(self.last_zxid or 0, data, exist, child):
                await asyncio.wait_for(conn.send(chunk, xid=self.next_xid()), self.timeout)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            log.warning("re-arming watches failed (%r); reconnecting", e)
            conn.kill("re-arming watches failed")

    # --- watch events ----------------------------------------------------------------------------

    def event_dispatch(self, event: Any) -> None:
        if event.type is None or event.type <= 0:
            log.debug("ZooKeeper state event ignored: %s", event)
            return
        callbacks = self.watch_callbacks.get((event.type, event.path))
        if callbacks:
            loop = asyncio.get_running_loop()
            for callback in list(callbacks):
                loop.call_soon(callback, event.path)

    # --- shutdown --------------------------------------------------------------------------------

    async def close_session(self, timeout_s: float) -> None:
        """CloseSession, so the server drops the session's ephemerals now (bounded; best effort).

        (aiozk's close() sent it through Session.send: with no connection it waited a whole
        session timeout, then raised and skipped the rest of its cleanup.)"""
        try:
            async with asyncio.timeout(timeout_s):
                await self.conn.send(_wire.close_session(), xid=self.next_xid())
        except (TimeoutError, exc.ConnectError, _wire.ServerError) as e:
            log.info("closing the ZooKeeper session failed: %r", e)

    def shut_down(self) -> list[asyncio.Task[Any]]:
        """Stop everything now; returns the tasks to await (bounded) for a clean exit."""
        self.closing = True
        tasks: list[asyncio.Task[Any]] = []
        for task in (self.repair_loop_task, self.heartbeat_task):
            if task is not None and not task.done():
                task.cancel()
                tasks.append(task)
        if self.heartbeat_handle is not None:
            self.heartbeat_handle.cancel()
            self.heartbeat_handle = None
        self.watch_callbacks.clear()
        conn = self.conn
        if conn is not None:
            read_loop = conn.read_loop_task
            conn.kill("client closed")
            if read_loop is not None and not read_loop.done():
                tasks.append(read_loop)
        self.started = False
        return tasks


_CREATED = protocol.WatchEvent.CREATED
_DELETED = protocol.WatchEvent.DELETED
_DATA_CHANGED = protocol.WatchEvent.DATA_CHANGED
_CHILDREN_CHANGED = protocol.WatchEvent.CHILDREN_CHANGED

# The watch event types each kind of watch fires on (keyed by WatchKind values).
WATCH_EVENTS: dict[str, tuple[int, ...]] = {
    "data": (_DATA_CHANGED, _DELETED),
    "children": (_CHILDREN_CHANGED, _DELETED),
    "exists": (_CREATED, _DATA_CHANGED, _DELETED),
}

# What a pending request fails with when its connection drops.
ConnectionDropped: type[Exception] = exc.ConnectError


def set_watches_chunks(
    relative_zxid: int, data: list[str], exist: list[str], child: list[str]
) -> list[_wire.Request]:
    """SetWatches requests of at most ~128 KiB of paths each (a packet over 1 MiB is refused)."""
    chunks: list[_wire.Request] = []
    lists: tuple[list[str], list[str], list[str]] = ([], [], [])
    size = 0
    for index, paths in enumerate((data, exist, child)):
        for path in paths:
            if size + len(path) > _SET_WATCHES_MAX_PATH_BYTES and size:
                chunks.append(_wire.set_watches(relative_zxid, *lists))
                lists, size = ([], [], []), 0
            lists[index].append(path)
            size += len(path) + 4
    if size:
        chunks.append(_wire.set_watches(relative_zxid, *lists))
    return chunks

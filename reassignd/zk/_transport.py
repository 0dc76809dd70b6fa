"""The ZooKeeper session and its connections: typed, ours, under ``ZkClient``.

``Connection`` is one TCP connection to one server; ``Session`` is one ZooKeeper session over a
succession of connections (find a server, open or resume the session, ping, re-arm the watches of a
resumed session, reconnect when a connection dies). Whether the session is still ours after a
reconnect, and when to give it up, is the supervisor's decision (``_supervisor``); which watches
exist is the registry's (``_watches``). aiozk encodes the handshake (``_aiozk``); the rest of the
wire format is ``_wire``'s.

All of it runs on the client's I/O loop, in its own thread (``_io``), never on the caller's:
callbacks it makes (``on_watch``, ``on_established``, ``on_connection_lost``, ``watched``) run on
that thread, and whatever must reach the caller is forwarded by their owners through the
caller's mailbox. A request is sent from the I/O loop only; ``Connection.send`` and the reply
futures are that loop's.

This replaced aiozk 0.32's Session and Connection, which reassignd used to subclass. What it does
differently, and why (each seen with aiozk):

- The ``srvr`` handshake read has a timeout (a hung server hung aiozk's reconnect loop forever).
- A dead connection fails its pending requests at once and tells the session (aiozk's read loop
  ended silently on a closed socket, leaving requests blocked until the next heartbeat noticed; a
  reply for an unknown xid killed it with a KeyError). Replies are decoded by ``_wire`` in one
  pass (aiozk parsed field by field: seconds for 100,000 znodes).
- Requests queued in one event-loop iteration go out in one write (aiozk made a ``send()`` system
  call per request: with many in flight, most of the client's CPU).
- Finding a server backs off to at most 1 s between rounds (aiozk: 60 s, so a server back after a
  short outage was found long after the session had expired).
- The reconnect and heartbeat loops survive unexpected errors (``keep_alive`` restarts them).
- The watches of a session are re-armed only when the same session is resumed (aiozk re-armed
  them on a new session: it hides expiry), in SetWatches requests of bounded size (aiozk sent
  one; over 1 MiB the server drops the connection, forever), relative to the last zxid seen
  (aiozk lost it on every reconnect, so re-armed watches fired for nothing).
- A handshake that fails (connection lost, no answer) is retried on the same session; only the
  server's answer that the session is gone (session id 0) opens a new one, as ZooKeeper's Java
  client does. (aiozk gave the session up on any failed handshake.)
- Closing is bounded (aiozk's close() waited a whole session timeout without a connection, then
  skipped its cleanup).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import re
import ssl
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reassignd.zk import _aiozk, _wire
from reassignd.zk.digest_md5 import DigestMd5Client, SaslError
from reassignd.zk.errors import ZkAuthFailed, ZkTlsRefused

log = logging.getLogger(__name__)

DEFAULT_PORT = 2181
_SET_WATCHES_MAX_PATH_BYTES = 128 * 1024  # as the Java client's SET_WATCHES_MAX_LENGTH
_MAX_FIND_BACKOFF_S = 1.0
_NO_PASSWORD = b"\x00" * 16
_VERSION = re.compile(rb"Zookeeper version: (\d+)\.(\d+)\.(\d+)")
_PING = _wire.ping()

WatchHandler = Callable[[int, str], None]  # (event type, absolute path); must not block
WatchedPaths = tuple[list[str], list[str], list[str]]  # data, exist and child watches to re-arm
SaslClientFactory = Callable[[], DigestMd5Client]  # one per authentication
_AUTH_RETRY_S = 5.0  # after the session was up once, a refused authentication is retried this often


@dataclass(frozen=True, slots=True)
class Protection:
    """How the session's connections are protected: SASL authentication on each (a new
    DIGEST-MD5 client per connection), TLS (the server verified by the context)."""

    sasl: SaslClientFactory | None = None
    ssl_context: ssl.SSLContext | None = None


class ConnectionDropped(Exception):
    """The connection closed before this request's reply came: it may or may not have been applied."""


def parse_servers(servers: str) -> list[tuple[str, int]]:
    """``host:port,[v6::addr]:port,host`` → [(host, port), ...] (port 2181 when absent)."""
    hosts: list[tuple[str, int]] = []
    for item in servers.split(","):
        server = item.strip()
        if not server:
            continue
        bracketed = re.fullmatch(r"\[(.*)\]:(\d+)", server)
        if bracketed is not None:
            hosts.append((bracketed.group(1), int(bracketed.group(2))))
        elif ":" in server:
            host, port = server.rsplit(":", 1)
            hosts.append((host, int(port)))
        else:
            hosts.append((server, DEFAULT_PORT))
    if not hosts:
        raise ValueError(f"no ZooKeeper server in {servers!r}")
    return hosts


class Connection:
    """One TCP connection to one server: ``open``, ``handshake``, then ``start_reading``; requests
    and their replies are matched by xid; a watch notification goes to ``on_watch``. Once dead
    (``kill``, the server closed it, an unreadable reply) it stays dead: every pending request fails
    with ``ConnectionDropped`` and ``on_dead`` is called (before those failures are delivered)."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        connect_timeout_s: float,
        on_watch: WatchHandler,
        on_zxid: Callable[[int], None],
        on_dead: Callable[[Connection], None],
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.ssl_context = ssl_context
        self.host = host
        self.port = port
        self.connect_timeout_s = connect_timeout_s
        self.version: tuple[int, int, int] = (0, 0, 0)
        self.read_only = False
        self.last_recv = asyncio.get_running_loop().time()  # loop time of the last byte received
        self.dead = False
        self._on_watch = on_watch
        self._on_zxid = on_zxid
        self._on_dead = on_dead
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._pending: dict[int, tuple[int, asyncio.Future[Any]]] = {}  # xid → (opcode, reply)
        self._pings: deque[asyncio.Future[Any]] = deque()  # ping replies come back in order
        self._outgoing: list[bytes] = []
        self._flush_scheduled = False
        self._read_task: asyncio.Task[None] | None = None

    @property
    def alive(self) -> bool:
        task = self._read_task
        return not self.dead and task is not None and not task.done()

    async def open(self) -> None:
        """Ask the server's version with the ``srvr`` four-letter word (multiRead needs 3.6; a
        read-only server is not used), then open the connection the session runs on. Bounded by
        the connect timeout; on failure nothing is left open."""
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.connect_timeout_s):
                reader, writer = await self._open()
                try:
                    writer.write(b"srvr")
                    answer = await reader.read()  # the server closes after answering
                finally:
                    self._shut(writer)
                match = _VERSION.match(answer.split(b"\n", 1)[0])
                if match is None:
                    raise ConnectionError(f"unexpected answer to srvr: {answer[:80]!r}")
                major, minor, patch = (int(group) for group in match.groups())
                self.version = (major, minor, patch)
                self.read_only = b"READ_ONLY" in answer
                self._reader, self._writer = await self._open()
        except BaseException:
            self.discard()
            raise
        self.last_recv = loop.time()

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self.ssl_context is None:
            return await asyncio.open_connection(self.host, self.port)
        return await asyncio.open_connection(
            self.host, self.port, ssl=self.ssl_context, server_hostname=self.host
        )

    async def handshake(self, request: bytes) -> _aiozk.ConnectReply:
        """Send a ConnectRequest and read its reply (which has no reply header). Not bounded here:
        the caller is. Raises ConnectionError when the server closes the connection instead."""
        reader, writer = self._reader, self._writer
        if reader is None or writer is None or self.dead:
            raise ConnectionError("the connection is not open")
        writer.write(_wire.SIZE_PREFIX.pack(len(request)) + request)
        try:
            (size,) = _wire.SIZE_PREFIX.unpack(await reader.readexactly(4))
            body = await reader.readexactly(size)
        except asyncio.IncompleteReadError:
            raise ConnectionError("the server closed the connection during the handshake") from None
        self.last_recv = asyncio.get_running_loop().time()
        return _aiozk.connect_reply(body)

    def start_reading(self) -> None:
        self._read_task = asyncio.create_task(self._read_loop(), name=f"zk-read-{self.host}:{self.port}")

    def send(self, request: _wire.Request, xid: int) -> asyncio.Future[Any]:
        """Queue ``request``; the future gets the decoded reply, or ServerError, or
        ConnectionDropped. Requests queued in one event-loop iteration go out in one write."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        if self.dead:
            future.set_exception(ConnectionDropped(f"no connection to {self.host}:{self.port}"))
            return future
        if xid == _wire.PING_XID:
            self._pings.append(future)
        else:
            self._pending[xid] = (request.opcode, future)
        self._outgoing.append(_wire.SIZE_PREFIX.pack(request.packet_size))
        self._outgoing.append(request.serialize(xid))
        if not self._flush_scheduled:
            self._flush_scheduled = True
            loop.call_soon(self._flush)
        return future

    def _flush(self) -> None:
        self._flush_scheduled = False
        data = b"".join(self._outgoing)
        self._outgoing.clear()
        if self.dead or not data or self._writer is None:
            return
        try:
            self._writer.write(data)
        except Exception as e:
            self.kill(f"write failed: {e!r}")

    async def _read_loop(self) -> None:
        reader = self._reader
        assert reader is not None, "start_reading() before open()"
        loop = asyncio.get_running_loop()
        reason = "connection closed by the server"
        try:
            while not self.dead:
                try:
                    (size,) = _wire.SIZE_PREFIX.unpack(await reader.readexactly(4))
                    buf = await reader.readexactly(size)
                except (asyncio.IncompleteReadError, OSError) as e:
                    reason = f"connection lost: {e!r}"
                    return
                self.last_recv = loop.time()
                try:
                    self._dispatch(buf)
                except Exception as e:
                    log.exception("unreadable reply from %s:%s", self.host, self.port)
                    reason = f"unreadable reply: {e!r}"
                    return
        except ValueError as e:  # a negative size
            reason = f"unreadable reply: {e!r}"
        finally:
            self.kill(reason)

    def _dispatch(self, buf: bytes) -> None:
        xid, zxid, error = _wire.REPLY_HEADER.unpack_from(buf)
        if zxid > 0:
            self._on_zxid(zxid)
        if xid == _wire.WATCH_XID:
            event_type, _state, path = _wire.decode_watch_event(buf, _wire.REPLY_HEADER.size)
            try:
                self._on_watch(event_type, path)
            except Exception:
                log.exception("dispatching the watch event (%s, %s) failed", event_type, path)
            return
        if xid == _wire.PING_XID:
            if not self._pings:
                return
            opcode, future = _wire.PING, self._pings.popleft()
        else:
            entry = self._pending.pop(xid, None)
            if entry is None:
                return  # nobody waits for it
            opcode, future = entry
        if future.done():
            return  # its caller gave up (timeout, cancellation)
        if error:
            future.set_exception(_wire.ServerError(error))
            return
        try:
            value = _wire.decode_reply(opcode, buf, _wire.REPLY_HEADER.size)
        except Exception:
            future.set_exception(ConnectionDropped("unreadable reply"))
            raise
        future.set_result(value)

    def kill(self, reason: str) -> None:
        """Drop the connection now: tell the owner, then fail every pending request. Idempotent."""
        if self.dead:
            return
        self.dead = True
        log.info("ZooKeeper connection to %s:%s dropped: %s", self.host, self.port, reason)
        task = self._read_task
        if task is not None and not task.done() and task is not asyncio.current_task():
            task.cancel()
        self._close_writer()
        self._on_dead(self)
        pending = [future for _, future in self._pending.values()]
        pending.extend(self._pings)
        self._pending.clear()
        self._pings.clear()
        self._outgoing.clear()
        for future in pending:
            if not future.done():
                future.set_exception(
                    ConnectionDropped(f"connection to {self.host}:{self.port} dropped: {reason}")
                )

    def discard(self) -> None:
        """Close a connection that never carried the session (no report, nothing pending)."""
        self.dead = True
        self._close_writer()

    def _close_writer(self) -> None:
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._shut(self._writer)

    def _shut(self, writer: asyncio.StreamWriter) -> None:
        """Close a connection now. A TLS one is aborted: its graceful shutdown waits for the
        server's close_notify (up to 30 s), and a loop stopped meanwhile would leak its socket;
        nothing is left to send on a connection given up."""
        if self.ssl_context is not None:
            writer.transport.abort()
        else:
            writer.close()

    @property
    def read_task(self) -> asyncio.Task[None] | None:
        return self._read_task


class Session:
    """One ZooKeeper session over a succession of connections.

    ``on_established(session_id)`` is asked right after every (re)connect whether the watches belong
    to this session (then ``watched()`` says which to re-arm); ``on_connection_lost(last_recv)`` is
    told at once when the connection carrying the session dies. ``on_watch`` gets every watch
    notification. The loops start with ``start`` and stop with ``shut_down``.
    """

    def __init__(
        self,
        servers: str,
        timeout_s: float,
        *,
        connect_timeout_s: float,
        on_established: Callable[[int | None], bool],
        on_connection_lost: Callable[[float], None],
        on_watch: WatchHandler,
        watched: Callable[[], WatchedPaths],
        protection: Protection | None = None,
    ) -> None:
        self.hosts = parse_servers(servers)
        self._sasl = protection.sasl if protection is not None else None
        self._ssl_context = protection.ssl_context if protection is not None else None
        self.auth_failure: ZkAuthFailed | None = None  # the first session's authentication was refused
        self._ever_up = False
        self.requested_timeout_s = timeout_s
        self.negotiated_timeout_s: float | None = None
        self.connect_timeout_s = connect_timeout_s
        self.conn: Connection | None = None
        self.session_id: int | None = None
        self.password = _NO_PASSWORD
        self.last_zxid = 0  # kept across reconnects: the server refuses a client that saw newer
        self.closing = False
        self._xid = 0
        self._established = False  # the session is open on self.conn
        self._broken = asyncio.Event()  # set: the reconnect loop has work
        self._up = asyncio.Event()  # set while the session is open on a live connection
        self._on_established = on_established
        self._on_connection_lost = on_connection_lost
        self._on_watch = on_watch
        self._watched = watched
        self._repair_task: asyncio.Task[None] | None = None
        self._heartbeat_task: asyncio.Task[None] | None = None

    # --- what the supervisor reads -----------------------------------------------------------------

    @property
    def timeout_s(self) -> float:
        return self.negotiated_timeout_s or self.requested_timeout_s

    @property
    def established(self) -> bool:
        """The session is open on a live connection."""
        conn = self.conn
        return self._established and conn is not None and conn.alive

    @property
    def last_recv(self) -> float:
        return self.conn.last_recv if self.conn is not None else 0.0

    @property
    def server(self) -> tuple[str, int] | None:
        conn = self.conn
        return (conn.host, conn.port) if conn is not None else None

    @property
    def server_version(self) -> tuple[int, int, int]:
        return self.conn.version if self.conn is not None else (0, 0, 0)

    # --- lifecycle ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """Open the first session; returns once it is open (not bounded here: the caller is)."""
        self._broken.set()
        self.keep_alive()
        await self._up.wait()
        if self.auth_failure is not None:
            raise self.auth_failure

    def keep_alive(self) -> None:
        """(Re)start the reconnect and heartbeat loops if they are not running (an unexpected error
        ended them; it was logged)."""
        if self.closing:
            return
        if _needs_restart(self._repair_task, "reconnect loop"):
            self._repair_task = asyncio.create_task(self._repair_loop(), name="zk-reconnect-loop")
        if _needs_restart(self._heartbeat_task, "heartbeat loop"):
            self._heartbeat_task = asyncio.create_task(self._heartbeat_loop(), name="zk-heartbeat-loop")

    async def close_session(self, timeout_s: float) -> None:
        """CloseSession, so the server drops the session's ephemerals now (bounded; best effort).
        No reconnect follows (the server closes the connection after answering)."""
        self.closing = True
        conn = self.conn
        if conn is None:
            return
        try:
            async with asyncio.timeout(timeout_s):
                await conn.send(_wire.close_session(), self.next_xid())
        except (TimeoutError, ConnectionDropped, _wire.ServerError) as e:
            log.info("closing the ZooKeeper session failed: %r", e)

    def shut_down(self) -> list[asyncio.Task[Any]]:
        """Stop everything now; returns the tasks to await (bounded) for a clean exit."""
        self.closing = True
        self._up.set()  # start() returns (the caller sees the client closed)
        tasks: list[asyncio.Task[Any]] = []
        for task in (self._repair_task, self._heartbeat_task):
            if task is not None and not task.done():
                task.cancel()
                tasks.append(task)
        conn = self.conn
        if conn is not None:
            read_task = conn.read_task
            conn.kill("client closed")
            if read_task is not None and not read_task.done():
                tasks.append(read_task)
        return tasks

    # --- requests ----------------------------------------------------------------------------------

    def next_xid(self) -> int:
        self._xid = self._xid + 1 if self._xid < 0x7FFFFFFF else 1
        return self._xid

    def send(self, request: _wire.Request) -> asyncio.Future[Any]:
        """Send on the current connection (whatever its state: the supervisor decides when)."""
        conn = self.conn
        if conn is None:
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            future.set_exception(ConnectionDropped("no connection"))
            return future
        return conn.send(request, self.next_xid())

    def drop_connection(self, reason: str) -> None:
        if self.conn is not None:
            self.conn.kill(reason)

    def abandon_session(self) -> None:
        """Make the next connect open a new session instead of resuming this one."""
        self.session_id = None
        self.password = _NO_PASSWORD

    # --- connections -------------------------------------------------------------------------------

    def _note_zxid(self, zxid: int) -> None:
        self.last_zxid = max(self.last_zxid, zxid)

    def _connection_died(self, conn: Connection) -> None:
        if conn is not self.conn:
            return
        was_established, self._established = self._established, False
        self._up.clear()
        if not self.closing:
            self._broken.set()
        if was_established:
            self._on_connection_lost(conn.last_recv)

    async def _find_server(self) -> Connection:
        delay_s = 0.05
        while True:
            for host, port in random.sample(self.hosts, len(self.hosts)):
                conn = Connection(
                    host,
                    port,
                    connect_timeout_s=self.connect_timeout_s,
                    on_watch=self._on_watch,
                    on_zxid=self._note_zxid,
                    on_dead=self._connection_died,
                    ssl_context=self._ssl_context,
                )
                try:
                    await conn.open()
                except ssl.SSLError as e:  # a certificate not verified, a failed TLS handshake
                    reason = f"TLS to ZooKeeper at {host}:{port} failed: {e}"
                    if not self._ever_up:
                        raise ZkTlsRefused(reason) from None
                    log.error("%s", reason)
                    continue
                except (OSError, TimeoutError) as e:
                    log.info("cannot connect to ZooKeeper at %s:%s: %r", host, port, e)
                    continue
                if conn.read_only:
                    log.info("ZooKeeper at %s:%s is read-only; trying another server", host, port)
                    conn.discard()
                    continue
                old, self.conn = self.conn, conn
                if old is not None:
                    old.kill("replaced by a new connection")
                return conn
            await asyncio.sleep(delay_s * random.uniform(0.5, 1.0))
            delay_s = min(delay_s * 2, _MAX_FIND_BACKOFF_S)

    async def _repair_loop(self) -> None:
        while not self.closing:
            await self._broken.wait()
            if self.closing:
                return
            try:
                conn = await self._find_server()
            except ZkTlsRefused as e:  # before the first session was up: start() raises it
                self.auth_failure = e
                self.closing = True
                self._up.set()
                return
            request = _aiozk.connect_request(
                last_zxid=self.last_zxid,
                timeout_ms=int(self.requested_timeout_s * 1000),
                session_id=self.session_id or 0,
                password=self.password,
            )
            try:
                async with asyncio.timeout(self.timeout_s):
                    reply = await conn.handshake(request)
            except (OSError, TimeoutError, ValueError) as e:
                log.info("ZooKeeper session 0x%x not re-established: %r", self.session_id or 0, e)
                conn.kill("handshake failed")
                await asyncio.sleep(0.05)
                continue
            if reply.session_id == 0 or reply.timeout_ms <= 0:
                log.info("ZooKeeper session 0x%x is gone on the server", self.session_id or 0)
                conn.kill("session expired on the server")
                self.abandon_session()
                continue
            self.session_id, self.password = reply.session_id, reply.password
            self.negotiated_timeout_s = reply.timeout_ms / 1000
            self._broken.clear()
            conn.start_reading()
            if self._sasl is not None and not await self._authenticate(conn, self._sasl()):
                continue
            self._established = True
            self._ever_up = True
            self._up.set()
            await self._restore_watches(conn)

    async def _authenticate(self, conn: Connection, client: DigestMd5Client) -> bool:
        """ZooKeeper's SASL exchange on a new connection, before any other request (the session
        is not ``established`` until it succeeds, so nothing else is sent): an empty token, the
        server's challenge, the response, the server's ``rspauth``. True when authenticated.

        Refused (AUTHFAILED, or the server does not prove it knows the password): before the
        first session was up, ``start()`` raises ZkAuthFailed and nothing is retried; later (the
        password was changed on the server) it is logged and retried every few seconds. A lost
        connection or no answer is retried as a failed handshake is."""
        try:
            async with asyncio.timeout(self.timeout_s):
                challenge = await conn.send(_wire.sasl(b""), self.next_xid())
                if not challenge:
                    raise SaslError("the server offers no SASL challenge (no JAAS Server section?)")
                response = client.respond(challenge)
                final = await conn.send(_wire.sasl(response), self.next_xid())
                client.verify(final or b"")
            log.info("ZooKeeper SASL DIGEST-MD5 authentication of %s succeeded", client.user)
            return True
        except (_wire.ServerError, SaslError) as e:
            reason = (
                f"ZooKeeper refused the SASL authentication of {client.user!r}: {e}"
                if isinstance(e, _wire.ServerError)
                else f"ZooKeeper SASL authentication of {client.user!r} failed: {e}"
            )
            conn.kill("SASL authentication failed")
            if not self._ever_up:
                self.auth_failure = ZkAuthFailed(reason)
                self.closing = True
                self._up.set()  # start() raises it
                return False
            log.error("%s; retrying in %.0f s", reason, _AUTH_RETRY_S)
            await asyncio.sleep(_AUTH_RETRY_S)
            return False
        except (ConnectionDropped, TimeoutError, OSError) as e:
            log.info("ZooKeeper SASL authentication did not complete: %r", e)
            conn.kill("SASL authentication did not complete")
            await asyncio.sleep(0.05)
            return False

    async def _restore_watches(self, conn: Connection) -> None:
        """Re-arm the watches on a resumed session; on a new one they are dropped (never raises)."""
        if not self._on_established(self.session_id):
            return
        data, exist, child = self._watched()
        try:
            for chunk in set_watches_chunks(self.last_zxid, data, exist, child):
                async with asyncio.timeout(self.timeout_s):
                    await conn.send(chunk, self.next_xid())
        except Exception as e:
            log.warning("re-arming watches failed (%r); reconnecting", e)
            conn.kill("re-arming watches failed")

    async def _heartbeat_loop(self) -> None:
        while not self.closing:
            await asyncio.sleep(self.timeout_s / 3)
            conn = self.conn
            if conn is None or not self.established:
                continue
            try:
                async with asyncio.timeout(self.timeout_s * 2 / 3):
                    await conn.send(_PING, _wire.PING_XID)
            except (ConnectionDropped, TimeoutError, _wire.ServerError):
                conn.kill("no answer to a ping")


def _needs_restart(task: asyncio.Task[None] | None, what: str) -> bool:
    if task is None:
        return True
    if not task.done():
        return False
    if not task.cancelled() and task.exception() is not None:
        log.error("the ZooKeeper %s died (%r); restarting it", what, task.exception())
    return True


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

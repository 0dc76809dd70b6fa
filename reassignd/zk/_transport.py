"""The ZooKeeper session and its connections: typed, ours, under ``ZkClient``.

``Connection`` (``_connection``) is one TCP or TLS connection to one server; ``Session`` is one
ZooKeeper session (authenticated with SASL on every connection when it has credentials) over a
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
import logging
import random
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reassignd.zk import _aiozk, _wire
from reassignd.zk._connection import Connection, ConnectionDropped, WatchHandler, parse_servers
from reassignd.zk.digest_md5 import DigestMd5Client, SaslError
from reassignd.zk.errors import ZkAuthFailed, ZkTlsRefused
from reassignd.zk.values import SaslCredentials

log = logging.getLogger(__name__)

_SET_WATCHES_MAX_PATH_BYTES = 128 * 1024  # as the Java client's SET_WATCHES_MAX_LENGTH
_MAX_FIND_BACKOFF_S = 1.0
_NO_PASSWORD = b"\x00" * 16
_PING = _wire.ping()

WatchedPaths = tuple[list[str], list[str], list[str]]  # data, exist and child watches to re-arm
SaslClientFactory = Callable[[], DigestMd5Client]  # one per authentication
_AUTH_RETRY_S = 5.0  # after the session was up once, a refused authentication is retried this often


@dataclass(frozen=True, slots=True)
class Protection:
    """How the session's connections are protected: SASL authentication on each (a new
    DIGEST-MD5 client per connection), TLS (the server verified by the context)."""

    sasl: SaslClientFactory | None = None
    ssl_context: ssl.SSLContext | None = None

    @staticmethod
    def of(credentials: SaslCredentials | None, ssl_context: ssl.SSLContext | None) -> Protection:
        if credentials is None:
            return Protection(None, ssl_context)
        return Protection(lambda: DigestMd5Client(credentials.user, credentials.password), ssl_context)


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

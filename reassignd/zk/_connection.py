"""One TCP (or TLS) connection to one ZooKeeper server, under ``_transport``'s Session: the
version check (``srvr``), the handshake, requests matched to replies by xid, watch notifications,
and its death (every pending request failed at once). See ``_transport``'s docstring for why it
is ours and what it does differently from aiozk's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import ssl
from collections import deque
from collections.abc import Callable
from typing import Any

from reassignd.zk import _aiozk, _wire

log = logging.getLogger(__name__)

DEFAULT_PORT = 2181
_VERSION = re.compile(rb"Zookeeper version: (\d+)\.(\d+)\.(\d+)")

WatchHandler = Callable[[int, str], None]  # (event type, absolute path); must not block


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

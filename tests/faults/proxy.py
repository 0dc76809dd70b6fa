"""A TCP proxy between one ZooKeeper client (a controller process) and a real ZooKeeper server.

Loopback only. It understands ZooKeeper's framing — a 4-byte big-endian length before every
frame; the client's first frame is the ConnectRequest, every later one starts with ``xid`` and
``type`` (int32 each); the server's first frame is the ConnectResponse, every later one starts
with ``xid`` (int32), ``zxid`` (int64) and ``err`` (int32) — so faults can be aimed at one
request. Connections that open with a four-letter word (aiozk sends ``srvr`` before every
session connection) are piped through untouched.

Faults, armed at run time:

- ``arm_cut(predicate, nth)``: the ``nth`` request (by default: write) that matches is forwarded
  to ZooKeeper; the proxy then waits for ZooKeeper's reply to it (so the server has applied it),
  drops that reply and closes both sockets. The client sees its connection lost with the outcome
  of its write unknown. Requests the client sent after that one are never forwarded.
- ``set_delay(ms)``: every server frame reaches the client ``ms`` later (order kept).
- ``refuse_for(s)``: new connections are accepted and closed at once for ``s`` seconds.
- ``cut_all()``: drop every connection now.

Bounded: at most ``max_connections`` connections (more are closed at once), at most
``max_buffered_frames`` server frames waiting for their delay per connection, the request log
keeps the last ``log_size`` requests. ``stop()`` closes every socket and task it made.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

_INT = struct.Struct("!i")
_HEADER = struct.Struct("!ii")  # xid, type
_MULTI_HEADER = struct.Struct("!i?i")  # type, done, err

# opcodes (ZooDefs.OpCode)
CREATE = 1
DELETE = 2
EXISTS = 3
GET_DATA = 4
SET_DATA = 5
GET_CHILDREN = 8
PING = 11
GET_CHILDREN2 = 12
CHECK = 13
MULTI = 14
CREATE2 = 15
CREATE_CONTAINER = 19
CREATE_TTL = 21
MULTI_READ = 22
CLOSE = -11

WRITE_OPCODES = frozenset({CREATE, DELETE, SET_DATA, MULTI, CREATE2, CREATE_CONTAINER, CREATE_TTL})
_CREATES = frozenset({CREATE, CREATE2, CREATE_CONTAINER, CREATE_TTL})
PING_XID = -2
MAX_FRAME_BYTES = 16 * 1024 * 1024
REPLY_WAIT_S = 5.0  # a cut waits at most this for ZooKeeper's reply before closing anyway


@dataclass(frozen=True, slots=True)
class Op:
    """One operation: a plain request, or one op of a multi."""

    opcode: int
    path: str | None


@dataclass(frozen=True, slots=True)
class Request:
    """A client request as the proxy decoded it. For a multi, ``ops`` lists its operations."""

    xid: int
    opcode: int
    ops: tuple[Op, ...]
    at: float = field(default_factory=time.monotonic)

    @property
    def is_write(self) -> bool:
        return self.opcode in WRITE_OPCODES

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(op.path for op in self.ops if op.path is not None)

    def writes(self) -> tuple[Op, ...]:
        """The write operations (a multi's check ops are not writes)."""
        return tuple(op for op in self.ops if op.opcode in WRITE_OPCODES)

    def __str__(self) -> str:
        ops = ", ".join(f"{_NAMES.get(op.opcode, op.opcode)} {op.path}" for op in self.ops)
        return f"xid {self.xid} {_NAMES.get(self.opcode, self.opcode)} [{ops}]"


_NAMES = {
    CREATE: "create",
    DELETE: "delete",
    EXISTS: "exists",
    GET_DATA: "getData",
    SET_DATA: "setData",
    GET_CHILDREN: "getChildren",
    GET_CHILDREN2: "getChildren2",
    CHECK: "check",
    MULTI: "multi",
    CREATE2: "create2",
    CREATE_CONTAINER: "createContainer",
    CREATE_TTL: "createTTL",
    MULTI_READ: "multiRead",
    PING: "ping",
    CLOSE: "close",
}

Predicate = Callable[[Request], bool]


# --- decoding ------------------------------------------------------------------------------------


class _Reader:
    def __init__(self, buf: bytes, offset: int) -> None:
        self.buf = buf
        self.offset = offset

    def int32(self) -> int:
        (value,) = _INT.unpack_from(self.buf, self.offset)
        self.offset += 4
        return int(value)

    def skip(self, n: int) -> None:
        if n < 0 or self.offset + n > len(self.buf):
            raise ValueError("truncated")
        self.offset += n

    def buffer(self) -> bytes | None:
        size = self.int32()
        if size < 0:
            return None
        start = self.offset
        self.skip(size)
        return self.buf[start : self.offset]

    def string(self) -> str:
        raw = self.buffer()
        return "" if raw is None else raw.decode("utf-8", errors="replace")


def _skip_op_body(r: _Reader, opcode: int) -> None:
    """Skip what follows the path of one op of a multi."""
    if opcode in _CREATES:
        r.buffer()  # data
        for _ in range(r.int32()):  # ACLs: perms, scheme, id
            r.skip(4)
            r.buffer()
            r.buffer()
        r.skip(4)  # flags
        if opcode == CREATE_TTL:
            r.skip(8)
    elif opcode == SET_DATA:
        r.buffer()
        r.skip(4)
    elif opcode in (DELETE, CHECK):
        r.skip(4)
    elif opcode in (GET_DATA, GET_CHILDREN, GET_CHILDREN2, EXISTS):
        r.skip(1)  # watch flag
    else:
        raise ValueError(f"no decoder for op {opcode} in a multi")


def decode_request(frame: bytes) -> Request:
    """Decode a client frame (after the ConnectRequest). Paths are decoded where the proxy knows
    the request's layout; an undecodable body still gives xid and opcode."""
    xid, opcode = _HEADER.unpack_from(frame, 0)
    ops: list[Op] = []
    try:
        r = _Reader(frame, _HEADER.size)
        if opcode in (MULTI, MULTI_READ):
            while True:
                op, done, _err = _MULTI_HEADER.unpack_from(frame, r.offset)
                r.offset += _MULTI_HEADER.size
                if done or op == -1:
                    break
                path = r.string()
                ops.append(Op(op, path))
                _skip_op_body(r, op)
        elif opcode in (*_CREATES, DELETE, SET_DATA, CHECK, EXISTS, GET_DATA, GET_CHILDREN, GET_CHILDREN2):
            ops.append(Op(opcode, r.string()))
        else:
            ops.append(Op(opcode, None))
    except (ValueError, struct.error):
        if not ops:
            ops.append(Op(opcode, None))
    return Request(xid, opcode, tuple(ops))


# --- predicates ----------------------------------------------------------------------------------


def any_write(request: Request) -> bool:
    return request.is_write


def is_multi(request: Request) -> bool:
    return request.opcode == MULTI


def writes_path(
    contains: str | None = None, *, endswith: str | None = None, opcodes: Iterable[int] | None = None
) -> Predicate:
    """A write with an op (of one of ``opcodes``, default every write op) whose path contains
    ``contains`` and ends with ``endswith``."""
    wanted = frozenset(opcodes) if opcodes is not None else WRITE_OPCODES

    def predicate(request: Request) -> bool:
        return any(
            op.opcode in wanted
            and op.path is not None
            and (contains is None or contains in op.path)
            and (endswith is None or op.path.endswith(endswith))
            for op in request.writes()
        )

    return predicate


def election(request: Request) -> bool:
    """The election multi: create /controller (with setData of /controller_epoch)."""
    return request.opcode == MULTI and any(
        op.opcode in _CREATES and op.path is not None and op.path.endswith("/controller")
        for op in request.ops
    )


def state_write(request: Request) -> bool:
    """A write of a partition state znode (``/brokers/topics/<t>/partitions/<p>/state``)."""
    return writes_path("/partitions/", endswith="/state", opcodes=(SET_DATA,))(request)


def topic_write(topic: str) -> Predicate:
    """A setData of the topic znode ``/brokers/topics/<topic>`` (phase U and phase B)."""
    return writes_path(endswith=f"/brokers/topics/{topic}", opcodes=(SET_DATA,))


def after(first: Predicate, then: Predicate) -> Predicate:
    """False until ``first`` matched a request; from the next request on, ``then``. Stateful:
    make one per arm_cut."""
    seen = False

    def predicate(request: Request) -> bool:
        nonlocal seen
        if not seen:
            seen = first(request)
            return False
        return then(request)

    return predicate


# --- the proxy -----------------------------------------------------------------------------------


class Cut:
    """An armed cut: ``fired`` is set once a connection was cut for it; ``request`` is the request
    whose reply was dropped; ``reply_seen`` tells whether ZooKeeper answered it before the close."""

    def __init__(self, predicate: Predicate, nth: int, writes_only: bool) -> None:
        self.predicate = predicate
        self.remaining = nth
        self.writes_only = writes_only
        self.fired = asyncio.Event()
        self.request: Request | None = None
        self.reply_seen = False

    def offer(self, request: Request) -> bool:
        if self.request is not None or (self.writes_only and not request.is_write):
            return False
        if not self.predicate(request):
            return False
        self.remaining -= 1
        if self.remaining > 0:
            return False
        self.request = request
        return True

    async def wait(self, timeout_s: float) -> Request:
        await asyncio.wait_for(self.fired.wait(), timeout_s)
        assert self.request is not None
        return self.request


class _Conn:
    def __init__(
        self,
        proxy: ZkProxy,
        client: tuple[asyncio.StreamReader, asyncio.StreamWriter],
        upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter],
    ) -> None:
        self.proxy = proxy
        self.client_reader, self.client_writer = client
        self.up_reader, self.up_writer = upstream
        self.cut: Cut | None = None
        self.closed = asyncio.Event()
        self.frames: asyncio.Queue[tuple[float, bytes] | None] = asyncio.Queue(proxy.max_buffered_frames)
        self.tasks: list[asyncio.Task[None]] = []

    def close(self) -> None:
        if self.closed.is_set():
            return
        self.closed.set()
        for writer in (self.client_writer, self.up_writer):
            with contextlib.suppress(Exception):
                transport = writer.transport
                transport.abort()  # RST, no lingering: the client sees the loss at once
        for task in self.tasks:
            if task is not asyncio.current_task():
                task.cancel()

    async def run(self) -> None:
        first = await self.client_reader.readexactly(4)
        if first.isalpha():  # a four-letter word: pipe both ways untouched until both ends close
            self.up_writer.write(first)
            self.tasks = [
                asyncio.create_task(self._pipe(self.client_reader, self.up_writer)),
                asyncio.create_task(self._pipe(self.up_reader, self.client_writer)),
            ]
            await asyncio.wait(self.tasks, timeout=10.0)
            self.close()
            return
        (size,) = _INT.unpack(first)
        connect = await self._read_body(self.client_reader, size)
        self.up_writer.write(first + connect)
        self.tasks = [
            asyncio.create_task(self._client_to_server()),
            asyncio.create_task(self._server_to_queue()),
            asyncio.create_task(self._queue_to_client()),
        ]
        await asyncio.wait(self.tasks, return_when=asyncio.FIRST_COMPLETED)
        cut = self.cut
        if cut is not None:
            # wait for ZooKeeper's reply to the cut request (the server applied it), at most
            # REPLY_WAIT_S (a frozen server never answers)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.closed.wait(), REPLY_WAIT_S)
            self._fire(cut)
        self.close()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    @staticmethod
    async def _read_body(reader: asyncio.StreamReader, size: int) -> bytes:
        if size < 0 or size > MAX_FRAME_BYTES:
            raise ConnectionError(f"frame of {size} bytes")
        return await reader.readexactly(size)

    async def _read_frame(self, reader: asyncio.StreamReader) -> bytes:
        (size,) = _INT.unpack(await reader.readexactly(4))
        return await self._read_body(reader, size)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError, OSError):
            while chunk := await reader.read(65536):
                writer.write(chunk)
                await writer.drain()
            with contextlib.suppress(OSError):
                writer.write_eof()
            # keep going until the other direction ends too

    async def _client_to_server(self) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError, OSError):
            while True:
                frame = await self._read_frame(self.client_reader)
                request = decode_request(frame)
                cut = self.proxy._observe(request)
                if cut is not None:
                    self.cut = cut  # before forwarding: its reply must not slip through
                    log.info("proxy: cutting after forwarding %s", request)
                self.up_writer.write(_INT.pack(len(frame)) + frame)
                await self.up_writer.drain()
                if cut is not None:
                    return  # nothing after it reaches ZooKeeper; wait for its reply

    async def _server_to_queue(self) -> None:
        try:
            with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError, OSError):
                await self.frames.put((time.monotonic(), await self._read_frame(self.up_reader)))  # connect
                while True:
                    frame = await self._read_frame(self.up_reader)
                    cut = self.cut
                    if cut is not None and cut.request is not None and len(frame) >= 4:
                        (xid,) = _INT.unpack_from(frame, 0)
                        if xid == cut.request.xid:
                            cut.reply_seen = True
                            return  # dropped; the client gets what came before, then the cut
                    await self.frames.put((time.monotonic(), frame))
        finally:
            with contextlib.suppress(asyncio.QueueFull):
                self.frames.put_nowait(None)

    def _fire(self, cut: Cut) -> None:
        self.close()
        if not cut.fired.is_set():
            self.proxy.cuts_done += 1
            cut.fired.set()

    async def _queue_to_client(self) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while (item := await self.frames.get()) is not None:
                received, frame = item
                delay_s = self.proxy.delay_ms / 1000.0
                if delay_s > 0:
                    wait = received + delay_s - time.monotonic()
                    if wait > 0:
                        await asyncio.sleep(wait)
                self.client_writer.write(_INT.pack(len(frame)) + frame)
                await self.client_writer.drain()
        cut = self.cut
        if cut is not None:
            # what came before the dropped reply reaches the client before the connection drops
            # (close() aborts, which would discard a transport's unsent bytes)
            for _ in range(100):
                if self.client_writer.transport.get_write_buffer_size() == 0:
                    break
                await asyncio.sleep(0.01)
            self._fire(cut)


class ZkProxy:
    """``await ZkProxy(zk_port).start()``; point a client at ``proxy.connect(chroot)``."""

    def __init__(
        self,
        upstream_port: int,
        *,
        max_connections: int = 32,
        max_buffered_frames: int = 10_000,
        log_size: int = 10_000,
    ) -> None:
        self.upstream_port = upstream_port
        self.max_connections = max_connections
        self.max_buffered_frames = max_buffered_frames
        self.port = 0
        self.delay_ms = 0.0
        self.requests_seen = 0
        self.writes_seen = 0
        self.connections_accepted = 0
        self.connections_refused = 0
        self.cuts_done = 0
        self.log: deque[Request] = deque(maxlen=log_size)
        self._server: asyncio.Server | None = None
        self._conns: set[_Conn] = set()
        self._handlers: set[asyncio.Task[None]] = set()
        self._cut: Cut | None = None
        self._refuse_until = 0.0

    def connect(self, chroot: str = "") -> str:
        return f"127.0.0.1:{self.port}{chroot}"

    async def start(self) -> ZkProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for conn in list(self._conns):
            conn.close()  # aborts its sockets: its handler ends by itself
        if self._handlers:
            _, pending = await asyncio.wait(list(self._handlers), timeout=3.0)
            for task in pending:  # (asyncio's stream server logs an error for a cancelled one)
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
            self._server = None

    async def __aenter__(self) -> ZkProxy:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # --- faults ----------------------------------------------------------------------------------

    def arm_cut(self, predicate: Predicate = any_write, nth: int = 1, *, writes_only: bool = True) -> Cut:
        """Cut the connection right after forwarding the ``nth`` request matching ``predicate``
        (only writes are offered unless ``writes_only`` is false). Replaces an armed cut."""
        self._cut = Cut(predicate, nth, writes_only)
        return self._cut

    def disarm(self) -> None:
        self._cut = None

    def set_delay(self, ms: float) -> None:
        self.delay_ms = ms

    def refuse_for(self, seconds: float) -> None:
        self._refuse_until = time.monotonic() + seconds

    def cut_all(self) -> None:
        for conn in list(self._conns):
            conn.close()

    @property
    def connections(self) -> int:
        return len(self._conns)

    def writes(self) -> list[Request]:
        return [r for r in self.log if r.is_write]

    # --- internals -------------------------------------------------------------------------------

    def _observe(self, request: Request) -> Cut | None:
        self.requests_seen += 1
        if request.is_write:
            self.writes_seen += 1
        if request.xid != PING_XID:
            self.log.append(request)
        cut = self._cut
        if cut is not None and cut.offer(request):
            self._cut = None
            return cut
        return None

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        if time.monotonic() < self._refuse_until or len(self._conns) >= self.max_connections:
            self.connections_refused += 1
            with contextlib.suppress(Exception):
                writer.transport.abort()
            return
        self._handlers.add(task)
        conn: _Conn | None = None
        try:
            try:
                upstream = await asyncio.wait_for(
                    asyncio.open_connection("127.0.0.1", self.upstream_port), timeout=5.0
                )
            except (OSError, TimeoutError):
                writer.transport.abort()
                return
            self.connections_accepted += 1
            conn = _Conn(self, (reader, writer), upstream)
            self._conns.add(conn)
            with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError, OSError):
                await conn.run()
        finally:
            if conn is not None:
                conn.close()
                self._conns.discard(conn)
                await asyncio.gather(*conn.tasks, return_exceptions=True)
            else:
                writer.transport.abort()
            self._handlers.discard(task)

"""The ZooKeeper client: fenced writes, pipelined reads, watches, session supervision.

Everything else in reassignd uses only this module, its errors (:mod:`.errors`) and its values
(:mod:`.values`). The private modules beside it do the
work: ``_wire`` (the jute wire format), ``_requests`` (a write op's request, creates with their
ACLs), ``_transport`` (the session, its SASL and TLS) and ``_connection`` (one connection),
``_supervisor`` (the session state, expiry detection), ``_watches`` (one-shot watches), ``_reaper``
(closing sessions given up), ``_bulk`` (multiRead batches, fenced-multi chunks; in flight on
:func:`reassignd.concurrency.for_each`), ``_io`` (the I/O thread and its mailboxes), ``_relay``
(a single request's hand-over), ``_replies`` (replies to values, codes to errors, the size
check), ``_chroot``, and ``_aiozk``, the only module that imports aiozk (the session handshake).

Two loops. The session — Session, SessionSupervisor, the reaper, every connection's reads and
writes, reply decoding — runs on the client's own event loop in its own daemon thread
(``zk-io-<role>``, from ``start()`` to ``close()``), so a caller's loop busy for seconds never
stops a ping. The public API is called and answered on the caller's loop: a single request is
built and size-checked there and handed over (``_relay``); a bulk call (get_many,
children_many, fenced_multi's chunks, delete_recursive, ensure_path) runs on the I/O loop as a
whole and crosses once each way. Watch callbacks, session state reports and replies all reach the
caller's loop through one FIFO (``IoThread.deliver``), so ZooKeeper's order holds there: a watch
event comes before the reply of a later read that sees its change.

Who owns what: the I/O thread alone writes the session and the supervisor (the caller reads
``session_id``, ``connected``, ``last_zxid`` as single attributes); the watch registry is shared
and locked (``_watches``); ``_state_callbacks`` is appended to by the caller and copied by the
I/O thread before each report.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Any, TypeVar

from reassignd.concurrency import for_each
from reassignd.errors import NotController
from reassignd.zk import _bulk, _wire
from reassignd.zk._chroot import Chroot, split_connect
from reassignd.zk._io import IoClosed, IoThread
from reassignd.zk._reaper import close_sessions
from reassignd.zk._relay import Relay
from reassignd.zk._replies import ROLLED_BACK, check_packet, error, multi_results, too_large
from reassignd.zk._replies import stat as _stat
from reassignd.zk._requests import Requests
from reassignd.zk._supervisor import RequestLost, SessionSupervisor
from reassignd.zk._transport import Protection, Session, set_watches_chunks
from reassignd.zk._watches import WATCH_EVENTS, ArmedWatch, WatchRegistry
from reassignd.zk.acls import Acl
from reassignd.zk.errors import (
    ConnectionLostError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    ZkError,
    ZkTimeoutError,
)
from reassignd.zk.values import (
    Create,
    Delete,
    Fence,
    Op,
    SessionState,
    SetData,
    Stat,
    WatchCallback,
    WatchKind,
    ZkSettings,
    Znode,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

MAX_ZNODE_BYTES = _wire.MAX_ZNODE_BYTES  # ZooKeeper's default jute.maxbuffer
MAX_REQUEST_BYTES = _wire.MAX_PACKET_BYTES  # a bigger request packet drops the connection


_CLOSE_TIMEOUT_S = 2.0  # close(): at most this for the CloseSession round trip


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"


class ZkClient:
    """A ZooKeeper session for one process role (controller, or one broker agent).

    - Every call has a timeout (``request_timeout_s``) and raises ``ZkTimeoutError`` past it
      (bulk calls — get_many, children_many, split fenced_multi, delete_recursive — per request
      they send).
    - ``session_id`` is the current session; a new session id after a reconnect is reported as
      ``SessionState.EXPIRED`` (a reconnect may land in a new session without any call failing).
    - ``on_session_state(cb)`` registers a callback invoked on the caller's loop (scheduled,
      never blocking the I/O thread) on every state change: SUSPENDED when the connection drops, CONNECTED when the same
      session comes back, EXPIRED when the session was lost, CLOSED on close().
      The supervisor must notice SUSPENDED → EXPIRED within the session timeout of losing it.
      EXPIRED is followed by CONNECTED once a new session is open (``session_id`` changed).
      CONNECTED is also reported once by start().
    - Watches are one-shot, like ZooKeeper's: ``get(path, watch=cb)`` arms a data watch and ``cb``
      is called at most once. After an EXPIRED report, armed watches are dropped; the owner re-arms.
    - Writes larger than MAX_ZNODE_BYTES, and any request (a read too) over the server's packet
      limit, raise ``ZnodeTooLargeError`` before sending.
    - A write whose connection drops before its reply raises ``ConnectionLostError`` (it may or
      may not have been applied); reads are retried on the same session. A request that would
      cross into a new session (started before an EXPIRED report) raises ``ConnectionLostError``.
    """

    def __init__(self, settings: ZkSettings) -> None:
        self.settings = settings
        self._servers, chroot = split_connect(settings.connect)
        self._chroot = Chroot(chroot)
        self._absolute = self._chroot.absolute
        self._relative = self._chroot.relative
        self._requests = Requests(self._absolute, self._relative, set_acl=settings.set_acl)
        self._principal = settings.principal  # named in NOAUTH errors
        self._session: Session | None = None  # made, run and closed on the I/O loop
        # TLS: the files were checked with the settings (config); loaded once, here
        self._ssl_context = None if settings.tls is None else settings.tls.context()
        self._supervisor = SessionSupervisor(
            session_timeout_s=settings.session_timeout_s,
            on_change=self._report,
            on_expired=self._drop_watches,
            reaper=functools.partial(close_sessions, ssl_context=self._ssl_context),
        )
        self._supervisor_task: asyncio.Task[None] | None = None
        self._io = IoThread(f"zk-io-{settings.role}")
        self._watches = WatchRegistry(self._relative, schedule=self._io.deliver)
        self._relay = Relay(self._io, self._supervisor)
        self._state_callbacks: list[Callable[[SessionState], None]] = []
        self._started = False
        self._closed = False
        self._multi_read = True

    @property
    def session_id(self) -> int | None:
        if not self._started or self._closed:
            return None
        return self._supervisor.session_id

    @property
    def connected(self) -> bool:
        return self._started and not self._closed and self._supervisor.state is SessionState.CONNECTED

    def on_session_state(self, callback: Callable[[SessionState], None]) -> None:
        self._state_callbacks.append(callback)

    async def start(self) -> None:
        """Start the I/O thread, connect, open a session (authenticated with SASL when the
        settings say so: a refusal raises ZkAuthFailed), create the chroot if missing."""
        if self._started:
            raise RuntimeError("ZkClient.start() called twice")
        self._started = True
        self._io.start()
        try:
            await self._on_io(self._start_io())
        except BaseException:
            await self.close()
            raise

    async def _start_io(self) -> None:  # on the I/O loop
        supervisor = self._supervisor
        session = Session(
            self._servers,
            self.settings.session_timeout_s,
            connect_timeout_s=min(max(self.settings.session_timeout_s / 3, 1.0), 5.0),
            on_established=supervisor.on_established,
            on_connection_lost=supervisor.on_connection_lost,
            on_watch=self._watches.dispatch,
            watched=self._watches.watched_paths,
            protection=Protection.of(self.settings.sasl, self._ssl_context),
        )
        self._session = session
        supervisor.attach(session)
        try:
            async with asyncio.timeout(self.settings.request_timeout_s):
                await session.start()
        except TimeoutError:
            raise ZkTimeoutError(
                f"no ZooKeeper session with {self._servers} within {self.settings.request_timeout_s} s"
            ) from None
        if session.closing:  # close() ran while the first session was being opened
            raise ConnectionLostError("the ZooKeeper client is closed")
        self._multi_read = session.server_version >= (3, 6, 0)
        supervisor.begin()
        self._supervisor_task = asyncio.create_task(supervisor.run(), name="zk-session-supervisor")
        if self._chroot.prefix:
            await self._ensure_absolute(self._chroot.prefix)

    async def close(self) -> None:
        """Close the session (ephemeral znodes go at once); cancels every watch task, stops and
        joins the I/O thread; never hangs.

        Bounded: at most _CLOSE_TIMEOUT_S for the CloseSession round trip (skipped when not
        connected), then the connection is dropped, the session's tasks are cancelled and the I/O
        loop is stopped (its leftover tasks cancelled and awaited, bounded)."""
        if self._closed:
            return
        self._closed = True
        if not self._started:
            return
        reported = self._supervisor.state is not None
        self._watches.drop_all()
        try:
            async with asyncio.timeout(_CLOSE_TIMEOUT_S + 2.0):
                await self._on_io(self._close_io())
        except (TimeoutError, ConnectionLostError) as e:
            log.warning("closing the ZooKeeper session did not finish: %r", e)
        finally:
            if reported:
                self._report(SessionState.CLOSED)
                await asyncio.sleep(0)  # CLOSED is delivered by the time close() returns
            await self._io.stop()

    async def _close_io(self) -> None:  # on the I/O loop
        session, supervisor = self._session, self._supervisor
        supervisor.close()  # no more reports; waiting requests wake up and see the client closed
        if session is None:
            return
        was_connected = supervisor.state is SessionState.CONNECTED and session.established
        tasks: list[asyncio.Task[Any]] = []
        if self._supervisor_task is not None:
            self._supervisor_task.cancel()
            tasks.append(self._supervisor_task)
        try:
            if was_connected:
                await session.close_session(min(self.settings.request_timeout_s, _CLOSE_TIMEOUT_S))
        finally:
            tasks.extend(session.shut_down())
            await supervisor.stop_reaper()
            if tasks:
                done, _ = await asyncio.wait(tasks, timeout=1.0)
                for task in done:
                    if not task.cancelled():
                        task.exception()  # retrieved: a task that failed has logged it

    async def _on_io(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the I/O loop, awaited here (cancelling the caller cancels it there)."""
        try:
            future = self._io.submit(coro)
        except IoClosed as e:
            raise ConnectionLostError(str(e)) from None
        try:
            return await future
        except IoClosed as e:
            raise ConnectionLostError(str(e)) from None

    # --- reads -----------------------------------------------------------------------------------

    async def get(self, path: str, watch: WatchCallback | None = None) -> Znode:
        """Raises NoNodeError."""
        absolute = self._absolute(path)
        armed = self._arm(WatchKind.DATA, absolute, watch)
        try:
            data, stat = await self._call(_wire.get_data(absolute, watch is not None), path, retry=True)
        except BaseException:
            self._watches.disarm(armed)
            raise
        return Znode(path, data, _stat(stat))

    async def get_or_none(self, path: str, watch: WatchCallback | None = None) -> Znode | None:
        """None when the znode does not exist (with ``watch``, an EXISTS watch is armed then)."""
        if watch is None:
            try:
                return await self.get(path)
            except NoNodeError:
                return None
        absolute = self._absolute(path)
        for _ in range(3):
            try:
                return await self.get(path, watch)
            except NoNodeError:
                pass
            armed = self._arm(WatchKind.EXISTS, absolute, watch)
            try:
                await self._call(_wire.exists(absolute, True), path, retry=True)
            except NoNodeError:
                return None  # the EXISTS watch stays armed: it fires on creation
            except BaseException:
                self._watches.disarm(armed)
                raise
            self._watches.disarm(armed)  # created in between: read it again (arming a data watch)
        # It keeps appearing and vanishing: report it missing and tell the owner to look again.
        asyncio.get_running_loop().call_soon(self._invoke, watch, path)
        return None

    async def exists(self, path: str, watch: WatchCallback | None = None) -> Stat | None:
        absolute = self._absolute(path)
        armed = self._arm(WatchKind.EXISTS, absolute, watch)
        try:
            stat = await self._call(_wire.exists(absolute, watch is not None), path, retry=True)
        except NoNodeError:
            return None  # a watch stays armed: ZooKeeper set an exists watch
        except BaseException:
            self._watches.disarm(armed)
            raise
        return _stat(stat)

    async def get_acl(self, path: str) -> tuple[list[Acl], Stat]:
        """The znode's ACL list (as the server stores it: ``auth:`` resolved to the creator's ids)
        and its stat. Raises NoNodeError."""
        acls, stat = await self._call(_wire.get_acl(self._absolute(path)), path, retry=True)
        return acls, _stat(stat)

    async def set_acl(self, path: str, acls: Sequence[Acl], aversion: int) -> Stat:
        """Replace the znode's ACL list if its ACL version (``Stat.aversion``) is ``aversion``
        (-1: whatever it is). ``auth:`` entries are resolved by the server to this session's
        authenticated ids, as for a create. Raises NoNodeError, BadVersionError, NoAuthError
        (the session lacks ADMIN on it)."""
        request = _wire.set_acl(self._absolute(path), acls, aversion)
        return _stat(await self._call(request, path, retry=False))

    async def who_am_i(self) -> list[tuple[str, str]]:
        """The ids the server holds for this session, as (scheme, id): ``("sasl", "kafka")``, a
        client certificate's ``("x509", subject)``, and its address ``("ip", ...)``. ZooKeeper
        3.7+ (an older server answers UNIMPLEMENTED: UnimplementedError)."""
        ids: list[tuple[str, str]] = await self._call(_wire.who_am_i(), None, retry=True)
        return ids

    @property
    def last_zxid(self) -> int:
        """The newest zxid this session has seen (0 before any): whatever a read sent after this
        returns reflects at least every change up to it."""
        session = self._session
        return session.last_zxid if session is not None else 0

    async def watch_data_since(self, watches: Mapping[str, WatchCallback], zxid: int) -> None:
        """A data watch on each path as if the znode had been read at ``zxid``: ZooKeeper's
        SetWatches (what a client sends to re-arm its watches after a reconnect), which fires at
        once for a znode changed or deleted since ``zxid``. Thousands of watches take a few
        requests, where a read with a watch takes one round trip each."""
        absolutes = {self._absolute(path): callback for path, callback in watches.items()}
        armed = [self._arm(WatchKind.DATA, path, callback) for path, callback in absolutes.items()]
        try:
            for chunk in set_watches_chunks(zxid, list(absolutes), [], []):
                await self._call(chunk, None, retry=True)  # re-arming twice is harmless
        except BaseException:
            for watch in armed:
                self._watches.disarm(watch)
            raise

    async def children(self, path: str, watch: WatchCallback | None = None) -> list[str]:
        """Raises NoNodeError."""
        absolute = self._absolute(path)
        armed = self._arm(WatchKind.CHILDREN, absolute, watch)
        try:
            children: list[str] = await self._call(
                _wire.get_children(absolute, watch is not None), path, retry=True
            )
        except BaseException:
            self._watches.disarm(armed)
            raise
        return children

    async def get_many(self, paths: Sequence[str]) -> list[Znode | None]:
        """Pipelined/batched reads (multiRead); None for missing znodes; result order = paths.
        The whole read runs on the I/O loop: one hand-over each way, not one per request."""
        return await self._on_io(self._get_many_io(self._absolutes(paths), paths))

    async def _get_many_io(self, absolutes: list[str], paths: Sequence[str]) -> list[Znode | None]:
        values = await self._read_many_io(absolutes, paths, _wire.GET_DATA)
        result: list[Znode | None] = []
        append = result.append
        for path, value in zip(paths, values, strict=True):
            if value is None:
                append(None)
            else:
                append(Znode(path, value[0], _stat(value[1])))
        return result

    async def children_many(self, paths: Sequence[str]) -> list[list[str] | None]:
        """Like get_many, for children lists (multiRead of getChildren)."""
        return await self._on_io(self._read_many_io(self._absolutes(paths), paths, _wire.GET_CHILDREN))

    async def _children_many_io(self, paths: Sequence[str]) -> list[list[str] | None]:
        return await self._read_many_io(self._absolutes(paths), paths, _wire.GET_CHILDREN)

    # --- plain writes ----------------------------------------------------------------------------

    async def create(
        self,
        path: str,
        data: bytes | None = None,
        *,
        ephemeral: bool = False,
        sequential: bool = False,
        make_parents: bool = False,
    ) -> str:
        """Returns the created path (with the sequence suffix). Raises NodeExistsError/NoNodeError."""
        request = self._requests.op(Create(path, data, ephemeral, sequential))
        try:
            created: str = await self._call(request, path, retry=False)
        except NoNodeError:
            if not make_parents:
                raise
            await self.ensure_path(_parent(path))
            created = await self._call(request, path, retry=False)
        return self._relative(created)

    async def set(self, path: str, data: bytes, version: int) -> Stat:
        stat = await self._call(self._requests.op(SetData(path, data, version)), path, retry=False)
        return _stat(stat)

    async def delete(self, path: str, version: int = -1) -> None:
        await self._call(self._requests.op(Delete(path, version)), path, retry=False)

    async def _delete_io(self, path: str) -> None:
        await self._exchange(self._requests.op(Delete(path, -1)), path, retry=False)

    async def delete_recursive(self, path: str) -> None:
        """Delete a subtree (no-op if missing); on the I/O loop as a whole."""
        self._absolute(path)  # a bad path fails here
        await self._on_io(
            _bulk.delete_tree(
                path, self._children_many_io, self._delete_io, missing=NoNodeError, not_empty=NotEmptyError
            )
        )

    async def ensure_path(self, path: str) -> None:
        """Create every missing persistent znode on the way (null data)."""
        await self._on_io(self._ensure_absolute(self._absolute(path)))

    async def _ensure_absolute(self, absolute: str) -> None:  # on the I/O loop
        if absolute == "/":
            return
        try:
            await self._exchange(_wire.exists(absolute), absolute, retry=True)
            return
        except NoNodeError:
            pass
        parts = absolute.strip("/").split("/")
        for depth in range(1, len(parts) + 1):
            prefix = "/" + "/".join(parts[:depth])
            with contextlib.suppress(NodeExistsError):
                await self._exchange(self._requests.create(prefix, None), prefix, retry=False)

    async def multi(self, ops: Sequence[Op]) -> list[Stat | str | None]:
        """Atomic multi. Per op: SetData → Stat, Create → created path, Delete/Check → None.
        Raises MultiFailedError (index of the failing op) when it failed: nothing applied.
        A request over the server's packet limit raises ZnodeTooLargeError (nothing sent); an
        error of the whole request (not of one op) raises that error."""
        if not ops:
            return []
        requests = [self._requests.op(op) for op in ops]
        request = _wire.multi(requests)
        check_packet(request, None)
        values = await self._call(request, None, retry=False)
        return multi_results(ops, values, offset=0, relative=self._relative, principal=self._principal)

    async def fenced_multi(
        self, fence: Fence, ops: Sequence[Op], *, atomic: bool = False
    ) -> list[Stat | str | None]:
        """``multi([Check(fence), *ops])``; results without the check. A failed check raises
        :class:`reassignd.errors.NotController` (another controller was elected); another op's failure raises MultiFailedError (index without the check).
        Large op lists are split into several fenced multis of bounded size (each carrying the
        check), sent pipelined; they are not atomic with each other: when one fails, those before
        it are applied, later ones not yet sent are not sent, later ones already sent may apply
        (unless the fence failed: then none after it can). With ``atomic``, never split: one
        multi, or ZnodeTooLargeError (nothing sent) when it cannot be one request. An empty
        ``ops`` just checks the fence."""
        check = _wire.check(self._absolute(fence.path), fence.version)
        requests = [self._requests.op(op) for op in ops]
        if atomic:
            check_packet(_wire.multi([check, *requests]), ops[0].path if ops else None)
            chunks = [(0, len(requests))]
        else:
            chunks = _bulk.chunk_bounds(
                check,
                requests,
                lambda index, size: too_large("fenced multi", size, _wire.MAX_PACKET_BYTES, ops[index].path),
            )
        return await self._on_io(self._fenced_multi_io(fence, ops, check, requests, chunks))

    async def _fenced_multi_io(
        self,
        fence: Fence,
        ops: Sequence[Op],
        check: _wire.Request,
        requests: list[_wire.Request],
        chunks: list[tuple[int, int]],
    ) -> list[Stat | str | None]:
        """The chunks of a fenced multi, WRITE_WINDOW in flight, on the I/O loop."""
        results: list[Stat | str | None] = [None] * len(ops)
        errors: list[tuple[int, ZkError | NotController]] = []

        async def send(start: int, end: int) -> None:
            try:
                values = await self._exchange(_wire.multi([check, *requests[start:end]]), None, retry=False)
                first = values[0]
                if isinstance(first, _wire.ServerError) and first.code not in ROLLED_BACK:
                    raise NotController(
                        f"fence {fence.path}@{fence.version} failed ({first}): another controller was elected"
                    )
                # the check passed (or was rolled back because one of the ops failed)
                results[start:end] = multi_results(
                    ops[start:end],
                    values[1:],
                    offset=start,
                    relative=self._relative,
                    principal=self._principal,
                )
            except (ZkError, NotController) as e:
                errors.append((start, e))
                raise

        try:
            await for_each(
                chunks, lambda chunk: send(*chunk), _bulk.WRITE_WINDOW, drain=True, name="zk-multi"
            )
        except (ZkError, NotController):
            fenced = [e for _, e in errors if isinstance(e, NotController)]
            raise (fenced[0] if fenced else min(errors, key=lambda item: item[0])[1]) from None
        return results

    # --- internals -------------------------------------------------------------------------------

    def _absolutes(self, paths: Sequence[str]) -> list[str]:
        """The absolute paths of a bulk read; one too long to be read raises ZnodeTooLargeError
        before anything is sent (naming it)."""
        absolutes = [self._absolute(p) for p in paths]
        for path, absolute in zip(paths, absolutes, strict=True):
            if len(absolute) * 4 > _wire.MAX_PACKET_BYTES - 64:  # maybe over, encoded: measure it
                check_packet(_wire.get_data(absolute), path)
        return absolutes

    async def _read_many_io(self, absolutes: list[str], paths: Sequence[str], opcode: int) -> list[Any]:
        def send(request: _wire.Request, index: int | None) -> Awaitable[Any]:
            return self._exchange(request, None if index is None else paths[index], retry=True)

        return await _bulk.read_many(
            send,
            absolutes,
            opcode,
            multi_read=self._multi_read,
            missing=NoNodeError,
            failed=lambda code, index: error(code, paths[index], self._principal),
        )

    async def _call(self, request: _wire.Request, path: str | None, *, retry: bool) -> Any:
        """One request, handed to the I/O loop; its reply (or error) back on the caller's loop.
        A request too large to send raises ZnodeTooLargeError here, before any hand-over."""
        check_packet(request, path)
        holder: list[asyncio.Task[Any]] = []
        try:
            async with asyncio.timeout(self.settings.request_timeout_s):
                future = self._relay.request(request, retry, holder)
                try:
                    return await future
                except asyncio.CancelledError:  # the caller's, or the timeout's
                    self._relay.cancel(holder)
                    raise
        except TimeoutError:
            raise ZkTimeoutError(f"no reply within {self.settings.request_timeout_s} s", path) from None
        except (RequestLost, IoClosed) as e:
            raise ConnectionLostError(str(e), path) from None
        except _wire.ServerError as e:
            raise error(e.code, path, self._principal) from None

    async def _exchange(self, request: _wire.Request, path: str | None, *, retry: bool) -> Any:
        """On the I/O loop: one request under the request timeout; failures mapped to ZkError.
        Every request goes through here: none over the server's packet limit is ever sent (the
        server would drop the connection, and a read would be resent after every reconnect)."""
        check_packet(request, path if path is not None else request.path)
        try:
            async with asyncio.timeout(self.settings.request_timeout_s):
                return await self._supervisor.exchange(request, retry=retry)
        except TimeoutError:
            raise ZkTimeoutError(f"no reply within {self.settings.request_timeout_s} s", path) from None
        except RequestLost as e:
            raise ConnectionLostError(str(e), path) from None
        except _wire.ServerError as e:
            raise error(e.code, path, self._principal) from None

    # --- watches and state reports ---------------------------------------------------------------

    def _arm(self, kind: WatchKind, absolute: str, callback: WatchCallback | None) -> ArmedWatch | None:
        if callback is None:
            return None
        if self._closed:
            raise ConnectionLostError("the ZooKeeper client is closed", self._relative(absolute))
        return self._watches.arm(kind, absolute, WATCH_EVENTS[kind.value], callback)

    def watching(self, callback: WatchCallback) -> bool:
        """Whether ``callback`` is still armed: a watch whose read failed, whose znode was missing
        for a data or children read, that fired, or that was dropped, is not."""
        return self._watches.holds(callback)

    def drop_watches(self) -> None:
        """Disarm every watch of this client: their events, if any, are ignored from now on (a
        controller that resigns re-arms what it needs when it loads again)."""
        self._drop_watches()

    def _drop_watches(self) -> None:
        dropped = self._watches.drop_all()
        if dropped:
            log.info("dropped %d watches of the expired ZooKeeper session", dropped)

    @staticmethod
    def _invoke(callback: Callable[[Any], None], argument: object) -> None:
        try:
            callback(argument)
        except Exception:
            log.exception("callback %r(%r) failed", callback, argument)

    def _report(self, state: SessionState) -> None:
        """Called by the supervisor on the I/O loop (CLOSED: by close() on the caller's): each
        callback runs on the caller's loop, in the same FIFO as watch events and replies."""
        for callback in list(self._state_callbacks):
            self._io.deliver(self._invoke, callback, state)

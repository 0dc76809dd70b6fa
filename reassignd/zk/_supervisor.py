"""Session supervision: tells the owner when its ZooKeeper session is suspended, back, or gone.

A reconnect may land in a new session (the old one expired on the server: ephemerals and watches
gone) without any call failing. The supervisor compares session ids, and also gives the session up
on its own once the connection has been lost for (almost) the session timeout, measured from the
last byte received: by then the server may have expired it and another controller may be elected,
so the owner must have resigned. A session given up is never resumed (the next connect opens a new
one) and, once a server is reachable again, is closed explicitly (``_reaper``) so its ephemerals go
at once.

The one session state is ``SessionState``: CONNECTED (the same session, or a new one after
EXPIRED), SUSPENDED, EXPIRED, and CLOSED (reported by the client). Requests wait for ``ready``
(waking on ``changed``) and compare ``generation`` (bumped on every expiry) to refuse crossing into
a new session. The transport is seen through ``Link``, so the decisions are tested against a fake.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import enum
import logging
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from reassignd.zk import _wire
from reassignd.zk._connection import ConnectionDropped
from reassignd.zk._reaper import close_sessions

log = logging.getLogger(__name__)


# A read resent this many times after its connection dropped is logged (once): the server may be
# dropping the connection on it. It is still resent (see docs/design.md on why it is not failed).
_DROPS_NOTED = 3


class SessionState(enum.Enum):
    CONNECTED = "connected"  # connected, same session as before (or a new one after EXPIRED)
    SUSPENDED = "suspended"  # connection lost, the session may still be alive
    EXPIRED = "expired"  # the session is gone (expired, given up, or the server opened a new one)
    CLOSED = "closed"  # the client was closed


class Link(Protocol):
    """What the supervisor needs of the transport (``_transport.Session``)."""

    @property
    def session_id(self) -> int | None: ...
    @property
    def password(self) -> bytes: ...
    @property
    def negotiated_timeout_s(self) -> float | None: ...
    @property
    def established(self) -> bool: ...  # the session is open on a live connection
    @property
    def last_recv(self) -> float: ...  # loop time of the last byte received on the connection
    @property
    def server(self) -> tuple[str, int] | None: ...  # the current connection's server

    def send(self, request: _wire.Request) -> asyncio.Future[Any]: ...
    def drop_connection(self, reason: str) -> None: ...
    def abandon_session(self) -> None: ...
    def keep_alive(self) -> None: ...


Reaper = Callable[..., Coroutine[Any, Any, None]]  # close_sessions(host, port, sessions, *, timeout_s)


class RequestLost(Exception):
    """The request was not answered: the client closed, the session expired, or the connection
    dropped before the reply (a write may or may not have been applied)."""


class SessionSupervisor:
    def __init__(
        self,
        *,
        session_timeout_s: float,
        on_change: Callable[[SessionState], None],
        on_expired: Callable[[], None],
        poll_interval_s: float = 0.05,
        reaper: Reaper = close_sessions,
    ) -> None:
        self._timeout_s = session_timeout_s
        self._on_change = on_change
        self._on_expired = on_expired
        self._poll_interval_s = min(poll_interval_s, session_timeout_s / 20)
        self._link: Link | None = None
        self._reap = reaper
        self._active = False
        self._closed = False
        self._wake = asyncio.Event()
        self._last_alive = 0.0  # loop time of the last byte received on a healthy connection
        self._lost_since: float | None = None
        self._password = b""
        # the sessions given up, newest last (bounded: a reconnect resumes only a recent one)
        self._abandoned_ids: collections.deque[int] = collections.deque(maxlen=64)
        self._to_reap: list[tuple[int, bytes]] = []
        self._reaper: asyncio.Task[None] | None = None
        self.session_id: int | None = None
        self.state: SessionState | None = None
        self.generation = 0
        self.ready = asyncio.Event()
        self.changed = asyncio.Event()  # set (and replaced) on every state change

    def attach(self, link: Link) -> None:
        self._link = link

    @property
    def effective_timeout_s(self) -> float:
        negotiated = self._link.negotiated_timeout_s if self._link is not None else None
        return min(self._timeout_s, negotiated or self._timeout_s)

    # --- hooks called by the transport (synchronously, so no request slips through) ------------

    def on_established(self, session_id: int | None) -> bool:
        """A (re)connect completed; True when it resumed our session (watches may be re-armed)."""
        if not self._active:
            return False
        previous = self.session_id
        self.check()
        return session_id is not None and session_id == previous and self.state is SessionState.CONNECTED

    def on_connection_lost(self, last_recv: float) -> None:
        self._last_alive = max(self._last_alive, last_recv)
        self.check()
        self._wake.set()

    # --- lifecycle -------------------------------------------------------------------------------

    def begin(self) -> None:
        """The first session is up (``Session.start`` returned)."""
        link = self._require_link()
        self._active = True
        self.session_id = link.session_id
        self._password = link.password
        self._last_alive = link.last_recv
        self._set(SessionState.CONNECTED)

    def close(self) -> None:
        """Stop reporting; wake every waiting request (they see the client closed)."""
        self._active = False
        self._closed = True
        self.ready.set()
        self._signal_change()

    async def run(self) -> None:
        while True:
            self.check()
            self._maybe_reap()
            self._require_link().keep_alive()
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._poll_interval_s):
                    await self._wake.wait()

    async def stop_reaper(self) -> None:
        task = self._reaper
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=1.0)

    # --- requests --------------------------------------------------------------------------------

    def send_now(self, request: Any) -> asyncio.Future[Any] | None:
        """The fast path of ``exchange``: send ``request`` now if the session is usable (the
        future of its reply, as ``Link.send``), else None (then ``exchange`` waits for it)."""
        if self._closed or not self._active or not self.ready.is_set():
            return None
        return self._require_link().send(request)

    async def exchange(
        self, request: Any, *, retry: bool, generation: int | None = None, dropped: int = 0
    ) -> Any:
        """Send ``request`` on the current connection once the session is usable; its decoded
        reply. Waits while suspended; ``retry`` resends it (reads only) when the connection drops
        first. Raises RequestLost, or ServerError for an error reply. No timeout of its own.
        ``generation``: the session's generation when the request was first sent (``send_now``);
        ``dropped``: how many connections already dropped with it in flight."""
        if generation is None:
            generation = self.generation
        drops = dropped
        while True:
            if self._closed or not self._active:
                raise RequestLost("the ZooKeeper client is closed")
            if self.generation != generation:
                raise RequestLost("the ZooKeeper session expired")
            if not self.ready.is_set():
                await self.changed.wait()
                continue
            future = self._require_link().send(request)
            try:
                value = await future
            except ConnectionDropped:
                if retry and not self._closed:
                    drops += 1
                    if drops == _DROPS_NOTED:
                        log.warning(
                            "%s was in flight on %d connections in a row that dropped; still resending",
                            request,
                            drops,
                        )
                    await asyncio.sleep(0)
                    continue
                raise RequestLost(
                    "connection lost before the reply: the request may or may not have been applied"
                ) from None
            return value

    # --- the decision ----------------------------------------------------------------------------

    def check(self, now: float | None = None) -> None:
        """Decide on the link's state as of ``now`` (loop time; the current time by default)."""
        if self._active:
            self._check(asyncio.get_running_loop().time() if now is None else now)

    def _check(self, now: float) -> None:
        link = self._require_link()
        healthy = link.established
        timeout_s = self.effective_timeout_s
        if healthy and now - link.last_recv > timeout_s * 2 / 3:
            # dropping the connection reports back through on_connection_lost (a nested check)
            # before it fails the requests in flight, so the owner hears SUSPENDED first
            link.drop_connection(f"nothing received for {now - link.last_recv:.1f} s")
            return
        if healthy:
            self._last_alive = max(self._last_alive, link.last_recv)
            sid = link.session_id
            if sid == self.session_id and self.state is not SessionState.EXPIRED:
                self._lost_since = None
                self._password = link.password
                if self.state is not SessionState.CONNECTED:
                    log.info("ZooKeeper session 0x%x resumed", sid)
                    self._set(SessionState.CONNECTED)
            elif sid in self._abandoned_ids:
                # a reconnect that was under way when we gave the session up resumed it
                link.abandon_session()
                link.drop_connection("resumed a session already given up")
                return
            else:
                if self.state is not SessionState.EXPIRED:
                    self._expire(f"the server gave us a new session 0x{sid or 0:x}")
                log.info("ZooKeeper session 0x%x established", sid or 0)
                self.session_id = sid
                self._password = link.password
                self._lost_since = None
                self._set(SessionState.CONNECTED)
            return
        if self._lost_since is None:
            self._lost_since = self._last_alive
        if self.state is SessionState.CONNECTED:
            log.warning("ZooKeeper connection lost; session 0x%x suspended", self.session_id or 0)
            self._set(SessionState.SUSPENDED)
        # Give the session up a little before the server could: requests and replies in flight,
        # and this check's own period, must not let the owner outlive its session.
        deadline = self._lost_since + timeout_s - 2 * self._poll_interval_s
        if self.state is SessionState.SUSPENDED and now >= deadline:
            self._expire(f"no connection for {now - self._lost_since:.1f} s (session timeout {timeout_s} s)")

    def _expire(self, reason: str) -> None:
        link = self._require_link()
        old = self.session_id
        log.warning("ZooKeeper session 0x%x expired: %s", old or 0, reason)
        self.generation += 1
        if old is not None:
            self._abandoned_ids.append(old)
            self._to_reap.append((old, self._password))
            if link.session_id == old:
                link.abandon_session()
        self._set(SessionState.EXPIRED)
        self._on_expired()

    def _set(self, state: SessionState) -> None:
        self.state = state
        if state is SessionState.CONNECTED:
            self.ready.set()
        else:
            self.ready.clear()
        self._signal_change()
        self._on_change(state)

    def _signal_change(self) -> None:
        changed, self.changed = self.changed, asyncio.Event()
        changed.set()

    # --- housekeeping ----------------------------------------------------------------------------

    def _maybe_reap(self) -> None:
        if self._reaper is not None and self._reaper.done():
            self._reaper = None
        if not self._to_reap or self.state is not SessionState.CONNECTED or self._reaper is not None:
            return
        server = self._require_link().server
        if server is None:
            return
        sessions, self._to_reap = self._to_reap, []
        self._reaper = asyncio.create_task(
            self._reap(*server, sessions, timeout_s=min(5.0, self.effective_timeout_s)),
            name="zk-session-reaper",
        )

    def _require_link(self) -> Link:
        if self._link is None:
            raise RuntimeError("supervisor not attached to a session")
        return self._link

"""Session supervision: tells the owner when its ZooKeeper session is suspended, back, or gone.

aiozk hides session expiry: it silently opens a new session (ephemerals and watches gone) and no
call fails. The supervisor compares session ids, and also gives the session up on its own once the
connection has been lost for (almost) the session timeout, measured from the last byte received:
by then the server may have expired it and another controller may be elected, so the owner must
have resigned. A session given up is never resumed (the next connect opens a new one) and, once a
server is reachable again, is closed explicitly (``_reaper``) so its ephemerals go at once.

States (strings, mapped to ``SessionState`` by the client): ``connected`` (the same session, or a
new one after ``expired``), ``suspended``, ``expired``. Requests wait for ``ready`` (waking on
``changed``) and compare ``generation`` (bumped on every expiry) to refuse crossing into a new
session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from aiozk.states import States

from reassignd.zk._reaper import close_sessions
from reassignd.zk._transport import ConnectionDropped, ZkSession

log = logging.getLogger(__name__)


class RequestLost(Exception):
    """The request was not answered: the client closed, the session expired, or the connection
    dropped before the reply (a write may or may not have been applied)."""


class SessionSupervisor:
    def __init__(
        self,
        *,
        session_timeout_s: float,
        on_change: Callable[[str], None],
        on_expired: Callable[[], None],
        poll_interval_s: float = 0.05,
    ) -> None:
        self._timeout_s = session_timeout_s
        self._on_change = on_change
        self._on_expired = on_expired
        self._poll_interval_s = min(poll_interval_s, session_timeout_s / 20)
        self._session: ZkSession | None = None
        self._active = False
        self._closed = False
        self._wake = asyncio.Event()
        self._last_alive = 0.0  # loop time of the last byte received on a healthy connection
        self._lost_since: float | None = None
        self._password = b""
        self._abandoned_ids: set[int] = set()
        self._to_reap: list[tuple[int, bytes]] = []
        self._reaper: asyncio.Task[None] | None = None
        self.session_id: int | None = None
        self.state: str | None = None
        self.generation = 0
        self.ready = asyncio.Event()
        self.changed = asyncio.Event()  # set (and replaced) on every state change

    def attach(self, session: ZkSession) -> None:
        self._session = session

    @property
    def effective_timeout_s(self) -> float:
        negotiated = self._session.timeout if self._session is not None else None
        return min(self._timeout_s, negotiated or self._timeout_s)

    # --- hooks called by ZkSession (synchronously, so no request slips through) -----------------

    def on_established(self, session_id: int | None) -> bool:
        """A (re)connect completed; True when it resumed our session (watches may be re-armed)."""
        if not self._active:
            return False
        previous = self.session_id
        self.check()
        return session_id is not None and session_id == previous and self.state == "connected"

    def on_connection_lost(self, last_recv: float) -> None:
        self._last_alive = max(self._last_alive, last_recv)
        self.check()
        self._wake.set()

    # --- lifecycle -------------------------------------------------------------------------------

    def begin(self) -> None:
        """The first session is up (``ZkSession.start`` returned)."""
        session = self._require_session()
        self._active = True
        self.session_id = session.session_id
        self._password = session.password
        self._last_alive = session.conn.last_recv
        self._set("connected")

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
            self._keep_repair_loop_alive()
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

    async def exchange(self, request: Any, *, retry: bool) -> Any:
        """Send ``request`` on the current connection once the session is usable; its decoded
        reply. Waits while suspended; ``retry`` resends it (reads only) when the connection drops
        first. Raises RequestLost, or ServerError for an error reply. No timeout of its own."""
        generation = self.generation
        while True:
            if self._closed or not self._active:
                raise RequestLost("the ZooKeeper client is closed")
            if self.generation != generation:
                raise RequestLost("the ZooKeeper session expired")
            if not self.ready.is_set():
                await self.changed.wait()
                continue
            session = self._require_session()
            future = session.conn.send(request, xid=session.next_xid())
            try:
                _zxid, value = await future
            except ConnectionDropped:
                if retry and not self._closed:
                    await asyncio.sleep(0)
                    continue
                raise RequestLost(
                    "connection lost before the reply: the request may or may not have been applied"
                ) from None
            return value

    # --- the decision ----------------------------------------------------------------------------

    def check(self) -> None:
        if self._active:
            self._check(asyncio.get_running_loop().time())

    def _check(self, now: float) -> None:
        session = self._require_session()
        conn: Any = session.conn
        healthy = session.state.current_state == States.CONNECTED and conn is not None and conn.alive
        timeout_s = self.effective_timeout_s
        if healthy and now - conn.last_recv > timeout_s * 2 / 3:
            # kill() reports back through on_connection_lost (a nested check) before it fails
            # the requests in flight, so the owner hears SUSPENDED first
            conn.kill(f"nothing received for {now - conn.last_recv:.1f} s")
            return
        if healthy:
            self._last_alive = max(self._last_alive, conn.last_recv)
            sid = session.session_id
            if sid == self.session_id and self.state != "expired":
                self._lost_since = None
                self._password = session.password
                if self.state != "connected":
                    log.info("ZooKeeper session 0x%x resumed", sid)
                    self._set("connected")
            elif sid in self._abandoned_ids:
                # a reconnect that was under way when we gave the session up resumed it
                session.abandon_session()
                conn.kill("resumed a session already given up")
                return
            else:
                if self.state != "expired":
                    self._expire(f"the server gave us a new session 0x{sid or 0:x}")
                log.info("ZooKeeper session 0x%x established", sid or 0)
                self.session_id = sid
                self._password = session.password
                self._lost_since = None
                self._set("connected")
            return
        if self._lost_since is None:
            self._lost_since = self._last_alive
        if self.state == "connected":
            log.warning("ZooKeeper connection lost; session 0x%x suspended", self.session_id or 0)
            self._set("suspended")
        # Give the session up a little before the server could: requests and replies in flight,
        # and this check's own period, must not let the owner outlive its session.
        deadline = self._lost_since + timeout_s - 2 * self._poll_interval_s
        if self.state == "suspended" and now >= deadline:
            self._expire(f"no connection for {now - self._lost_since:.1f} s (session timeout {timeout_s} s)")

    def _expire(self, reason: str) -> None:
        session = self._require_session()
        old = self.session_id
        log.warning("ZooKeeper session 0x%x expired: %s", old or 0, reason)
        self.generation += 1
        if old is not None:
            self._abandoned_ids.add(old)
            self._to_reap.append((old, self._password))
            if session.session_id == old:
                session.abandon_session()
        self._set("expired")
        self._on_expired()

    def _set(self, state: str) -> None:
        self.state = state
        if state == "connected":
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
        if not self._to_reap or self.state != "connected" or self._reaper is not None:
            return
        conn: Any = self._require_session().conn
        sessions, self._to_reap = self._to_reap, []
        self._reaper = asyncio.create_task(
            close_sessions(conn.host, conn.port, sessions, timeout_s=min(5.0, self.effective_timeout_s)),
            name="zk-session-reaper",
        )

    def _keep_repair_loop_alive(self) -> None:
        session = self._require_session()
        task = session.repair_loop_task
        if task is None or not task.done() or session.closing:
            return
        if not task.cancelled() and task.exception() is not None:
            log.error("aiozk's reconnect loop died (%r); restarting it", task.exception())
        session.repair_loop_task = asyncio.create_task(session.repair_loop(), name="zk-reconnect-loop")

    def _require_session(self) -> ZkSession:
        if self._session is None:
            raise RuntimeError("supervisor not attached to a session")
        return self._session

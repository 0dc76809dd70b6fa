"""One-shot watches: the table of what is armed, the dispatch of watch events, the paths to re-arm.

A watch is armed *before* the read that registers it on the server is sent, so no event can slip
between the read and the registration. Each armed watch fires at most once, on the first of its
event types, and is then removed from every key it was registered under. A watch whose read failed
is disarmed. ``drop_all`` (session expired, client closed) disarms everything, including callbacks
already scheduled, so nothing armed in a dead session ever fires. Callbacks run from the event
loop (``call_soon``), never inside the connection's read loop.

Two threads touch the table (see ``client``): the caller's loop arms and disarms (a read that
arms its watch, a callback that fires, ``drop_watches``), the I/O thread dispatches events, lists
the paths to re-arm on a resumed session and drops everything on expiry. One lock guards every
method; nothing calls out while holding it (``dispatch`` only schedules, with ``schedule``: the
caller loop's ``call_soon_threadsafe``). A watch fires at most once because the check and the
disarm in ``ArmedWatch.__call__`` are one step under the lock (``claim``), so a drop that races
a scheduled callback either comes first (the callback does nothing) or after it (it ran).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Hashable
from typing import Any

from reassignd.zk import _wire

log = logging.getLogger(__name__)

# The watch event types each kind of watch fires on (keyed by the client's WatchKind values).
WATCH_EVENTS: dict[str, tuple[int, ...]] = {
    "data": (_wire.EVENT_DATA_CHANGED, _wire.EVENT_DELETED),
    "children": (_wire.EVENT_CHILDREN_CHANGED, _wire.EVENT_DELETED),
    "exists": (_wire.EVENT_CREATED, _wire.EVENT_DATA_CHANGED, _wire.EVENT_DELETED),
}


class ArmedWatch:
    """Registered in the table under ``(event_type, absolute path)`` for each of its events."""

    __slots__ = ("_registry", "callback", "done", "events", "key", "path")

    def __init__(
        self,
        registry: WatchRegistry,
        key: tuple[Hashable, str, Callable[[str], None]],
        path: str,
        events: tuple[int, ...],
        callback: Callable[[str], None],
    ) -> None:
        self._registry = registry
        self.key = key
        self.path = path
        self.events = events
        self.callback = callback
        self.done = False

    def __call__(self, event_path: str) -> None:  # scheduled by WatchRegistry.dispatch (call_soon)
        if not self._registry.claim(self):
            return
        relative = self._registry.relative(event_path)
        try:
            self.callback(relative)
        except Exception:
            log.exception("watch callback %r for %s failed", self.callback, relative)


Schedule = Callable[..., Any]  # schedule(callback, *args) on the owner's loop


class WatchRegistry:
    def __init__(self, relative: Callable[[str], str], schedule: Schedule | None = None) -> None:
        """``schedule`` runs a fired watch's callback on the owner's loop (by default the loop
        running ``dispatch``: ``call_soon``)."""
        self.relative = relative
        self._schedule = schedule
        self._lock = threading.Lock()
        self._table: dict[tuple[int, str], set[ArmedWatch]] = {}
        self._armed: dict[tuple[Hashable, str, Callable[[str], None]], ArmedWatch] = {}
        self._per_callback: dict[Callable[[str], None], int] = {}  # armed watches per callback

    def dispatch(self, event_type: int, path: str) -> None:
        """A watch event from the server (absolute path): schedule each watch armed for it. State
        events (type -1, none of ours) are ignored."""
        with self._lock:
            armed = self._table.get((event_type, path))
            watches = list(armed) if armed else []
        if not watches:
            if event_type <= 0:
                log.debug("ZooKeeper state event ignored: type %s, %s", event_type, path)
            return
        schedule = self._schedule or asyncio.get_running_loop().call_soon
        for watch in watches:
            schedule(watch, path)

    def watched_paths(self) -> tuple[list[str], list[str], list[str]]:
        """What to re-arm on a resumed session, as SetWatches lists it: data, exist and child
        watches (sorted, each path once)."""
        with self._lock:
            keys = [key for key, armed in self._table.items() if armed]
        data = sorted(
            {path for event, path in keys if event in (_wire.EVENT_DATA_CHANGED, _wire.EVENT_DELETED)}
        )
        exist = sorted({path for event, path in keys if event == _wire.EVENT_CREATED})
        child = sorted({path for event, path in keys if event == _wire.EVENT_CHILDREN_CHANGED})
        return data, exist, child

    def arm(
        self, kind: Hashable, path: str, events: tuple[int, ...], callback: Callable[[str], None]
    ) -> ArmedWatch | None:
        """Arm ``callback`` for ``events`` on ``path``. None when that very watch (same kind, path
        and callback) is already armed: it fires once for both reads, as ZooKeeper's would."""
        key = (kind, path, callback)
        with self._lock:
            if key in self._armed:
                return None
            armed = ArmedWatch(self, key, path, events, callback)
            self._armed[key] = armed
            self._per_callback[callback] = self._per_callback.get(callback, 0) + 1
            for event in events:
                self._table.setdefault((event, path), set()).add(armed)
            return armed

    def disarm(self, armed: ArmedWatch | None) -> None:
        if armed is not None:
            self.claim(armed)

    def claim(self, armed: ArmedWatch) -> bool:
        """Disarm ``armed``; True when it was still armed (its callback may run: once)."""
        with self._lock:
            if armed.done:
                return False
            self._disarm(armed)
            return True

    def _disarm(self, armed: ArmedWatch) -> None:
        armed.done = True
        if self._armed.get(armed.key) is armed:
            del self._armed[armed.key]
            left = self._per_callback.get(armed.callback, 0) - 1
            if left > 0:
                self._per_callback[armed.callback] = left
            else:
                self._per_callback.pop(armed.callback, None)
        for event in armed.events:
            callbacks = self._table.get((event, armed.path))
            if callbacks is not None:
                callbacks.discard(armed)
                if not callbacks:
                    del self._table[(event, armed.path)]

    def drop_all(self) -> int:
        """Disarm every watch; returns how many there were."""
        with self._lock:
            count = len(self._armed)
            for armed in self._armed.values():
                armed.done = True
            self._armed.clear()
            self._per_callback.clear()
            self._table.clear()
            return count

    def holds(self, callback: Callable[[str], None]) -> bool:
        """Whether ``callback`` is armed on some path (it has not fired, failed or been dropped)."""
        with self._lock:
            return callback in self._per_callback

    def __len__(self) -> int:
        with self._lock:
            return len(self._armed)

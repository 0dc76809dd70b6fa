"""One-shot watches over aiozk's watch-callback table (aiozk's watcher recipes are not used).

A watch is armed *before* the read that registers it on the server is sent, so no event can slip
between the read and the registration. Each armed watch fires at most once, on the first of its
event types, and is then removed from every key it was registered under. A watch whose read failed
is disarmed. ``drop_all`` (session expired, client closed) disarms everything, including callbacks
aiozk already scheduled, so nothing armed in a dead session ever fires.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, MutableMapping

log = logging.getLogger(__name__)

WatchTable = MutableMapping[tuple[int, str], set[Callable[[str], None]]]


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

    def __call__(self, event_path: str) -> None:  # scheduled by aiozk's event dispatch (call_soon)
        if self.done:
            return
        self._registry.disarm(self)
        relative = self._registry.relative(event_path)
        try:
            self.callback(relative)
        except Exception:
            log.exception("watch callback %r for %s failed", self.callback, relative)


class WatchRegistry:
    def __init__(self, relative: Callable[[str], str]) -> None:
        self.relative = relative
        self._table: WatchTable = {}
        self._armed: dict[tuple[Hashable, str, Callable[[str], None]], ArmedWatch] = {}
        self._per_callback: dict[Callable[[str], None], int] = {}  # armed watches per callback

    def attach(self, table: WatchTable) -> None:
        """Use aiozk's ``session.watch_callbacks`` (aiozk dispatches events through it)."""
        self._table = table

    def arm(
        self, kind: Hashable, path: str, events: tuple[int, ...], callback: Callable[[str], None]
    ) -> ArmedWatch | None:
        """Arm ``callback`` for ``events`` on ``path``. None when that very watch (same kind, path
        and callback) is already armed: it fires once for both reads, as ZooKeeper's would."""
        key = (kind, path, callback)
        if key in self._armed:
            return None
        armed = ArmedWatch(self, key, path, events, callback)
        self._armed[key] = armed
        self._per_callback[callback] = self._per_callback.get(callback, 0) + 1
        for event in events:
            self._table.setdefault((event, path), set()).add(armed)
        return armed

    def disarm(self, armed: ArmedWatch | None) -> None:
        if armed is None or armed.done:
            return
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
        count = len(self._armed)
        for armed in self._armed.values():
            armed.done = True
        self._armed.clear()
        self._per_callback.clear()
        self._table.clear()
        return count

    def holds(self, callback: Callable[[str], None]) -> bool:
        """Whether ``callback`` is armed on some path (it has not fired, failed or been dropped)."""
        return callback in self._per_callback

    def __len__(self) -> int:
        return len(self._armed)

"""Bounds that keep a flood of clients from taking the process down: the bytes of requests held
at once (read and not yet answered) across every connection, a cache of encoded answers bounded
in bytes, the connections per client address, and a warning log that cannot flood (a few lines a
second, the rest counted)."""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable, Hashable


class ByteBudget:
    """At most ``limit`` bytes held; ``acquire`` waits (the connection stops reading) until
    answers release enough. A single request never needs more than ``limit``: the frame limit
    is at most the budget."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._freed = asyncio.Event()

    async def acquire(self, n: int) -> None:
        n = min(n, self.limit)
        while self.used + n > self.limit:
            self._freed.clear()
            await self._freed.wait()
        self.used += n

    def release(self, n: int) -> None:
        self.used = max(0, self.used - min(n, self.limit))
        self._freed.set()  # every waiter checks again


class RateLimitedLog:
    """``warn(fmt, *args)``: at most ``per_s`` lines a second; the lines dropped are counted and
    reported with the next line that goes out."""

    def __init__(
        self, logger: logging.Logger, per_s: int = 10, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.logger = logger
        self.per_s = per_s
        self.clock = clock
        self._window = -1
        self._lines = 0
        self.dropped = 0

    def __call__(self, fmt: str, *args: object) -> None:
        window = int(self.clock())
        if window != self._window:
            self._window, self._lines = window, 0
        if self._lines >= self.per_s:
            self.dropped += 1
            return
        self._lines += 1
        if self.dropped:
            fmt += " (and %d similar lines not logged)"
            args = (*args, self.dropped)
            self.dropped = 0
        self.logger.warning(fmt, *args)


class FrameCache:
    """Encoded answers, each kept with the part of the snapshot it was built from (compared by
    identity): at most ``max_entries`` and ``max_bytes`` together, oldest used first out; an
    answer over a quarter of ``max_bytes`` is not kept (it would push out everything else)."""

    def __init__(self, max_entries: int, max_bytes: int) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.bytes = 0
        self._entries: collections.OrderedDict[Hashable, tuple[object, bytes]] = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable, part: object) -> bytes | None:
        hit = self._entries.get(key)
        if hit is None or hit[0] is not part:
            return None
        self._entries.move_to_end(key)
        return hit[1]

    def put(self, key: Hashable, part: object, frame: bytes) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self.bytes -= len(old[1])
        if len(frame) > self.max_bytes // 4:
            return
        self._entries[key] = (part, frame)
        self.bytes += len(frame)
        while len(self._entries) > self.max_entries or self.bytes > self.max_bytes:
            _, (_, dropped) = self._entries.popitem(last=False)
            self.bytes -= len(dropped)


class PerAddress:
    """Connections open per client address: ``enter`` says whether one more may open."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: dict[str, int] = {}

    def enter(self, address: str) -> bool:
        n = self._open.get(address, 0)
        if n >= self.limit:
            return False
        self._open[address] = n + 1
        return True

    def leave(self, address: str) -> None:
        n = self._open.get(address, 0) - 1
        if n > 0:
            self._open[address] = n
        else:
            self._open.pop(address, None)

    def count(self, address: str) -> int:
        return self._open.get(address, 0)

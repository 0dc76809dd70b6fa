"""Bounds that keep a flood of clients from taking the process down: the bytes of requests held
at once (read and not yet answered) across every connection, and a warning log that cannot
flood (a few lines a second, the rest counted)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable


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

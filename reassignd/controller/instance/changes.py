"""Waiting on a condition instead of polling it: whoever changes the state calls ``notify``, and
each waiter checks its condition again then (and once more at its deadline)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class Changes:
    """Wakes every waiter at each change (the snapshot published, a znode's watch fired)."""

    def __init__(self) -> None:
        self._changed = asyncio.Event()

    def notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()  # the waiters woken hold the one set

    async def next(self) -> None:
        """Return at the next change."""
        await self._changed.wait()

    async def until(self, done: Callable[[], bool], deadline: float, clock: Callable[[], float]) -> bool:
        """Whether ``done()`` held by ``deadline`` (on ``clock``): checked now, at each change,
        and once more at the deadline."""
        while not done():
            remaining_s = deadline - clock()
            if remaining_s <= 0:
                return False
            changed = self._changed
            try:
                async with asyncio.timeout(remaining_s):
                    await changed.wait()
            except TimeoutError:
                pass
        return True

"""``eventually``: poll until something is true, failing after a bound meant for hangs only."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import aiohttp

T = TypeVar("T")


async def eventually(
    probe: Callable[[], Awaitable[T | None]], timeout_s: float = 30.0, interval_s: float = 0.1, what: str = ""
) -> T:
    """Poll ``probe`` until it returns something truthy and return that; raise AssertionError
    after ``timeout_s`` (a bound for hangs, not a speed assertion). A connection error counts
    as "not yet" (a process still starting)."""
    deadline = time.monotonic() + timeout_s
    last: T | None = None
    while time.monotonic() < deadline:
        try:
            last = await probe()
        except (aiohttp.ClientError, OSError):
            last = None
        if last:
            return last
        await asyncio.sleep(interval_s)
    raise AssertionError(f"not reached within {timeout_s}s: {what} (last: {last!r})")

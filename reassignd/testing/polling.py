"""``eventually``: the one way tests (and the benchmarks) poll until something is true, failing
after a bound meant for hangs only."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Literal, TypeVar, overload

import aiohttp

from reassignd.zk.errors import ZkError

T = TypeVar("T")

# what a cluster that is still starting, or briefly away, raises: "not yet"
NOT_YET: tuple[type[BaseException], ...] = (aiohttp.ClientError, OSError, ZkError, TimeoutError)


@overload
async def eventually(
    probe: Callable[[], Awaitable[T | None]],
    timeout_s: float = ...,
    interval_s: float = ...,
    what: str = ...,
    *,
    or_none: Literal[False] = ...,
    tolerate: tuple[type[BaseException], ...] = ...,
) -> T: ...


@overload
async def eventually(
    probe: Callable[[], Awaitable[T | None]],
    timeout_s: float = ...,
    interval_s: float = ...,
    what: str = ...,
    *,
    or_none: Literal[True],
    tolerate: tuple[type[BaseException], ...] = ...,
) -> T | None: ...


@overload
async def eventually(
    probe: Callable[[], bool],
    timeout_s: float = ...,
    interval_s: float = ...,
    what: str = ...,
    *,
    or_none: Literal[False] = ...,
    tolerate: tuple[type[BaseException], ...] = ...,
) -> bool: ...


async def eventually(
    probe: Callable[[], Awaitable[T | None]] | Callable[[], bool],
    timeout_s: float = 30.0,
    interval_s: float = 0.1,
    what: str = "",
    *,
    or_none: bool = False,
    tolerate: tuple[type[BaseException], ...] = NOT_YET,
) -> T | bool | None:
    """Call ``probe`` (a coroutine function, or a plain predicate) until it returns something
    truthy, and return that. After ``timeout_s`` (a bound for hangs, not a speed assertion) raise
    AssertionError naming ``what`` and the last result or error, or, with ``or_none``, return None
    (a fault scenario records a violation instead). An error of ``tolerate`` counts as "not yet"."""
    deadline = time.monotonic() + timeout_s
    last: object = None
    while True:
        try:
            result = probe()
            last = await result if inspect.isawaitable(result) else result
        except tolerate as e:
            last = e
        else:
            if last:
                return last  # the probe's truthy result
        if time.monotonic() >= deadline:
            if or_none:
                return None
            raise AssertionError(f"not reached within {timeout_s}s: {what} (last: {last!r})")
        await asyncio.sleep(interval_s)

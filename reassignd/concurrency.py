"""The bounded-concurrency primitives: ``for_each`` runs ``work(item)`` for every item with at
most ``window`` in flight. Used wherever many requests go out at once: the ZooKeeper client's
pipelined reads, writes and deletes, the controller's reads and fenced writes of one event, the
feeder's reads of the controller's topics.

``window`` worker tasks pull from one iterator, in order, so thousands of items cost ``window``
tasks, not thousands (and the iterator may be lazy: the next item is made when a worker is free).
The first failure stops it: no new item starts, and then either

- the items in flight are **cancelled** (the default: a failed event must leave no work behind), or
- with ``drain``, they **finish** (their requests are on the wire; their outcome is still learned),

and once every worker has stopped, the failure is raised as itself (with ``prefer``, a failure of
that type rather than another that came first: a failed fencing check outranks what it caused).
No work outlives the call; cancelling the caller cancels the items in flight.

``pace()`` bounds how long the loop is held by many tasks at once: when hundreds of workers'
replies arrive in one read, asyncio runs every continuation in one iteration of the loop, and
each continuation's own work (a chunk's commit: 100 partitions) adds up to seconds with no timer
or socket served. A worker awaits ``pace()`` before such work: once the current iteration has run
``PACE_BUDGET_S``, it yields, and the rest go on in later iterations, with I/O and timers served
between them. Order within one task is kept; what several tasks do is unchanged, only spread.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Awaitable, Callable, Iterable, Sized
from typing import TypeVar

T = TypeVar("T")

_END = object()

PACE_BUDGET_S = 0.01  # work of many tasks in one loop iteration before the rest yield


class _Pace:
    """One loop's pacing: ``mark`` is when the current stretch of work began (reset by a
    callback at the start of the next iteration once someone had to yield)."""

    __slots__ = ("loop", "mark", "reset_pending")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.mark = time.perf_counter()
        self.reset_pending = False

    def reset(self) -> None:
        self.mark = time.perf_counter()
        self.reset_pending = False

    async def wait(self, budget_s: float) -> None:
        while time.perf_counter() - self.mark > budget_s:
            if not self.reset_pending:
                self.reset_pending = True
                self.loop.call_soon(self.reset)  # runs first in the next iteration
            await asyncio.sleep(0)


_paces: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Pace] = weakref.WeakKeyDictionary()


async def pace(budget_s: float = PACE_BUDGET_S) -> None:
    """Yield to the loop if this stretch of work (across tasks) has run ``budget_s`` already."""
    loop = asyncio.get_running_loop()
    state = _paces.get(loop)
    if state is None:
        state = _paces[loop] = _Pace(loop)
    await state.wait(budget_s)


async def for_each(
    items: Iterable[T],
    work: Callable[[T], Awaitable[None]],
    window: int,
    *,
    drain: bool = False,
    prefer: type[BaseException] | None = None,
    name: str = "for-each",
) -> None:
    workers = min(window, len(items)) if isinstance(items, Sized) else window
    if workers <= 0:
        return
    iterator = iter(items)
    failures: list[BaseException] = []

    async def worker() -> None:
        while not failures:
            item = next(iterator, _END)
            if item is _END:
                return
            try:
                await work(item)  # type: ignore[arg-type]  # an item of ``items``
            except Exception as e:
                failures.append(e)
                if not drain:
                    raise

    try:
        async with asyncio.TaskGroup() as tg:
            for i in range(workers):
                tg.create_task(worker(), name=f"{name}-{i}")
    except BaseExceptionGroup as group:
        failures.extend(e for e in group.exceptions if e not in failures)
    if failures:
        preferred = [e for e in failures if prefer is not None and isinstance(e, prefer)]
        raise (preferred or failures)[0] from None

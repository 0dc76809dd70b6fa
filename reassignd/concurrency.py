"""The one bounded-concurrency primitive: ``for_each`` runs ``work(item)`` for every item with at
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
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sized
from typing import TypeVar

T = TypeVar("T")

_END = object()


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

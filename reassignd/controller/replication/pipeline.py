"""Many ZooKeeper requests in flight from one event, without a task or a semaphore waiter each.

``for_each`` runs ``work(item)`` for every item on at most ``window`` worker tasks that pull from
one iterator, so thousands of partitions cost ``window`` tasks, not thousands. The workers live in
an ``asyncio.TaskGroup``: the first failure cancels the others (nothing new starts; work waiting
for a reply is cancelled) and is raised as itself (a fencing failure stays a NotControllerError)
once every worker has stopped, so no work of an event outlives it. Every concurrent ZooKeeper
write of the controller runs here (``asyncio.gather`` would leave the others running).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

from reassignd.zk.client import NotControllerError

T = TypeVar("T")

DEFAULT_WINDOW = 256


async def for_each(
    items: Iterable[T], work: Callable[[T], Awaitable[None]], window: int = DEFAULT_WINDOW
) -> None:
    pending = list(items)
    if not pending:
        return
    iterator = iter(pending)

    async def worker() -> None:
        for item in iterator:
            await work(item)

    try:
        async with asyncio.TaskGroup() as tg:
            for i in range(min(window, len(pending))):
                tg.create_task(worker(), name=f"zk-pipeline-{i}")
    except BaseExceptionGroup as group:
        errors = list(group.exceptions)
        fenced = [e for e in errors if isinstance(e, NotControllerError)]
        raise (fenced or errors)[0] from None

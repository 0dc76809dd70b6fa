"""The controller's ZooKeeper work of one event, many requests in flight, on the one bounded-
concurrency primitive (:func:`reassignd.concurrency.for_each`): at most ``window`` at once on
that many worker tasks, the first failure cancelling the others (nothing new starts; work waiting
for a reply is cancelled) and raised once every worker has stopped, a failed fencing check over
what it caused (it stays a NotController), so no work of an event outlives it. Every
concurrent ZooKeeper write of the controller runs here (``asyncio.gather`` would leave the others
running).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

from reassignd import concurrency
from reassignd.errors import NotController

T = TypeVar("T")

DEFAULT_WINDOW = 256


async def for_each(
    items: Iterable[T], work: Callable[[T], Awaitable[None]], window: int = DEFAULT_WINDOW
) -> None:
    await concurrency.for_each(items, work, window, prefer=NotController, name="zk-pipeline")

"""The controller's event queue: many producers, one consumer, queue-time metrics.

Producers (watch callbacks, HTTP handlers, the control channel) call :meth:`ControllerEventQueue.put`,
which never blocks. The controller's single consumer task calls :meth:`get`. On resign or
shutdown :meth:`clear` drops what is queued and returns it so the caller can fail the events
that carry a reply future.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

E = TypeVar("E")


@dataclass(frozen=True, slots=True)
class Queued(Generic[E]):
    event: E
    enqueued_at_s: float


class ControllerEventQueue(Generic[E]):
    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        on_size: Callable[[int], None] | None = None,
        recent: int = 1024,
    ) -> None:
        self._clock = clock
        self._items: collections.deque[Queued[E]] = collections.deque()
        self._ready = asyncio.Event()
        self._on_size = on_size
        self._recent_queue_times_ms: collections.deque[float] = collections.deque(maxlen=recent)
        self._percentiles: dict[str, float] | None = None  # of the recent times; None: to compute

    def put(self, event: E) -> None:
        self._items.append(Queued(event, self._clock()))
        self._ready.set()
        self._report()

    def put_first(self, event: E) -> None:
        """Preemption: ahead of everything queued (resign, shutdown)."""
        self._items.appendleft(Queued(event, self._clock()))
        self._ready.set()
        self._report()

    async def get(self) -> tuple[E, float]:
        """The next event and its queue time in milliseconds."""
        while not self._items:
            self._ready.clear()
            await self._ready.wait()
        item = self._items.popleft()
        self._report()
        queue_time_ms = (self._clock() - item.enqueued_at_s) * 1000.0
        self._recent_queue_times_ms.append(queue_time_ms)
        self._percentiles = None
        return item.event, queue_time_ms

    def take(self, select: Callable[[E], bool | None]) -> list[E]:
        """Pop queued events for the one being handled (coalescing), scanning from the head:
        ``select`` says take (True), leave in place and look further (False), or stop (None).
        The events taken count in the queue-time figures as handled now."""
        taken: list[E] = []
        kept: list[Queued[E]] = []
        items = self._items
        while items:
            verdict = select(items[0].event)
            if verdict is None:
                break
            item = items.popleft()
            if verdict:
                taken.append(item.event)
                self._recent_queue_times_ms.append((self._clock() - item.enqueued_at_s) * 1000.0)
                self._percentiles = None
            else:
                kept.append(item)
        items.extendleft(reversed(kept))
        if taken:
            self._report()
        return taken

    def clear(self) -> list[E]:
        dropped = [item.event for item in self._items]
        self._items.clear()
        self._report()
        return dropped

    def __len__(self) -> int:
        return len(self._items)

    def queue_time_percentiles_ms(self) -> dict[str, float]:
        """Computed once per new queue time (GET /v1/status asks on every call, the window holds
        many): a copy, the caller may keep it."""
        if self._percentiles is None:
            self._percentiles = self._compute_percentiles()
        return dict(self._percentiles)

    def _compute_percentiles(self) -> dict[str, float]:
        values = sorted(self._recent_queue_times_ms)
        if not values:
            return {"p50": 0.0, "p99": 0.0}

        def pick(q: float) -> float:
            return round(values[min(len(values) - 1, int(q * len(values)))], 3)

        return {"p50": pick(0.50), "p99": pick(0.99)}

    def _report(self) -> None:
        if self._on_size is not None:
            self._on_size(len(self._items))

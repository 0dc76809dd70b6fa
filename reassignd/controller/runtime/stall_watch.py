"""How long the event loop is held: a ticker that measures its own lateness.

Everything of a controller instance shares one asyncio loop — the event consumer, the HTTP
answers, the Kafka listener. A stretch of work without an ``await`` (a big event's loop over
partitions, an answer built inline) holds every other task of the process for its duration. The
watch wakes every ``interval_s``; the time it wakes late is how long something held the loop
(give or take the interval). Each stall is observed in a histogram, the worst one is a gauge, and
one of ``warn_ms`` or more is logged with what the controller was handling meanwhile, so a slow
event or answer names itself in the log without a profiler. The worst stall is kept per event kind
(``during`` = the event's name, or ``none`` between events: an answer, a read, I/O), which is what
``bench/scale.py`` prints.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from prometheus_client import Gauge, Histogram

from reassignd.controller.runtime.stall_sampler import StallSampler

log = logging.getLogger(__name__)

INTERVAL_S = 0.02
WARN_MS = 100.0  # the bound: no event or answer holds the loop longer (docs/design.md)


@dataclass(frozen=True, slots=True)
class StallMetrics:
    stall_ms: Histogram  # every lateness of the ticker over one interval
    worst_ms: Gauge  # the worst since the process started, labelled ``during``: an event's name


def lateness_ms(expected: float, woke: float) -> float:
    """How late a wake-up came, in ms (0 when on time). Pure."""
    return max(0.0, (woke - expected) * 1000.0)


async def watch_stalls(
    metrics: StallMetrics,
    handling: Callable[[], str | None],
    *,
    interval_s: float = INTERVAL_S,
    warn_ms: float = WARN_MS,
    clock: Callable[[], float] = time.perf_counter,
    sampler: StallSampler | None = None,
) -> None:
    """Run until cancelled. ``handling`` names what the controller has in hand (an event's name),
    read when a stall ends: the event that was running while the loop was held; ``sampler``
    (``stall_sampler``) tells where it was held."""
    worst: dict[str, float] = {}
    while True:
        expected = clock() + interval_s
        await asyncio.sleep(interval_s)
        late = lateness_ms(expected, clock())
        if sampler is not None:
            sampler.beat()
        if late < interval_s * 1000.0:
            continue  # scheduling noise, not a stall
        metrics.stall_ms.observe(late)
        what = handling()
        during = what or "none"
        if late > worst.get(during, 0.0):
            worst[during] = late
            metrics.worst_ms.labels(during).set(late)
        places = sampler.take() if sampler is not None else []
        if late >= warn_ms:
            log.warning(
                "the event loop was held for %.0f ms (%s)%s",
                late,
                f"while handling {what}" if what else "outside any controller event: an answer or I/O",
                "; sampled in " + ", ".join(f"{where} ({n})" for where, n in places) if places else "",
            )


async def watch_the_loop(metrics: StallMetrics, handling: Callable[[], str | None]) -> None:
    """``watch_stalls`` on the calling thread's loop with a sampler of it; until cancelled."""
    sampler = StallSampler(threading.get_ident())
    sampler.start()
    try:
        await watch_stalls(metrics, handling, sampler=sampler)
    finally:
        sampler.stop()

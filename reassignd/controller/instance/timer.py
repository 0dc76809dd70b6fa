"""The controller's one timer: "call this once after N s (or at a time on the injected clock),
unless a call is pending already; cancellable".

Every periodic event of an instance (the executor's and self-healing's ticks, the auto leader
rebalance check, a run for election again, a deferred reload) is one of these, re-armed after
each event while it is wanted: the due time is read from the injected clock, the event loop's
timer only wakes the controller, which enqueues the event and handles it like any other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class Timer:
    """At most one pending call of ``fire``."""

    def __init__(self, clock: Callable[[], float], fire: Callable[[], None]) -> None:
        self._clock = clock
        self._fire = fire
        self._handle: asyncio.TimerHandle | None = None

    @property
    def pending(self) -> bool:
        return self._handle is not None

    def after(self, delay_s: float) -> bool:
        """Call ``fire`` in ``delay_s`` (at once when not positive), unless a call is pending;
        True when this armed it."""
        if self._handle is not None:
            return False
        self._handle = asyncio.get_running_loop().call_later(max(0.0, delay_s), self._run)
        return True

    def at(self, when: float) -> bool:
        """Call ``fire`` at ``when`` on the injected clock, unless a call is pending."""
        return self.after(when - self._clock())

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _run(self) -> None:
        self._handle = None
        self._fire()

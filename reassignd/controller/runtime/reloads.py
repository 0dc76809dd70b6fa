"""The reload policy's shell: when a refused event may reload the cluster, which events wait for
a deferred reload, and which inputs are quarantined (the pure parts: ``reload_budget``).
docs/design.md, "Two kinds of failure".
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections.abc import Callable

from reassignd.controller.instance.event_queue import ControllerEventQueue
from reassignd.controller.instance.events import (
    ApiPartitionReassignment,
    ControllerChanged,
    ControllerEvent,
    HandOverRequested,
    Reelect,
    ReloadDue,
    RequestEvent,
    SessionExpired,
    Startup,
    event_name,
)
from reassignd.controller.instance.shared import Shared
from reassignd.controller.instance.timer import Timer
from reassignd.controller.runtime.reload_budget import Key, Quarantine, ReloadBudget
from reassignd.errors import EventRefused, ReassigndError, RequestTimedOut

log = logging.getLogger(__name__)

# the periodic events: one that fails on a quarantined input is held back, not run again at once
_TICKS = frozenset({"ExecutorTick", "SelfHealingTick", "AutoLeaderRebalanceTick"})
# the events of the instance itself (never held for a reload)
_OWN = (Startup, ControllerChanged, SessionExpired, Reelect, ReloadDue, HandOverRequested)


def fail_request(event: RequestEvent, error: ReassigndError) -> None:
    """Answer a request event (every request of a coalesced group) with ``error``."""
    replies = [e.reply for e in event.group] if isinstance(event, ApiPartitionReassignment) else [event.reply]
    for reply in replies:
        if not reply.done():
            reply.set_exception(error)


def input_key(event: ControllerEvent, where: str) -> Key:
    """What a refused event's input is: a request by its content (the same request resent is
    the same input), any other event by the znode (or step) it failed on."""
    name = event_name(event)
    if isinstance(event, RequestEvent) and dataclasses.is_dataclass(event):
        content = repr([getattr(event, f.name) for f in dataclasses.fields(event) if f.compare])
        return name, hashlib.sha1(content.encode(), usedforsecurity=False).hexdigest()[:16]
    return name, where


class Reloads:
    """One instance's reload budget, its deferred reload and its quarantine."""

    def __init__(
        self, shared: Shared, queue: ControllerEventQueue[ControllerEvent], clock: Callable[[], float]
    ) -> None:
        self._shared = shared
        self._clock = clock
        self._budget = ReloadBudget(clock())  # how many reloads refused events may cost
        self._quarantine = Quarantine()  # the inputs that failed again after their reload
        self._due_at: float | None = None  # a reload deferred by the budget is due then
        self._timer = Timer(clock, lambda: queue.put_first(ReloadDue()))

    def held(self, event: ControllerEvent, active: bool) -> bool:
        """Whether ``event`` does not run now: every event of the active role while a deferred
        reload is due (memory may hold half of a refused event: nothing runs on it; the reload
        reads everything a dropped watch or tick event would have read, and a request is
        answered REQUEST_TIMED_OUT, to retry), and a quarantined request (refused at once)."""
        if isinstance(event, _OWN):
            return False
        if self._due_at is not None and active:
            wait_s = max(0.0, self._due_at - self._clock())
            if isinstance(event, RequestEvent):
                fail_request(
                    event,
                    RequestTimedOut(
                        f"the controller reloads the cluster in {wait_s:.0f} s (after a refused input); retry then"
                    ),
                )
            else:
                log.debug("%s dropped: a reload is due in %.1f s", event_name(event), wait_s)
            return True
        if isinstance(event, RequestEvent):
            reason = self._quarantine.holds(input_key(event, ""))
            if reason is not None:
                fail_request(
                    event, EventRefused(f"quarantined: this request failed again after a reload ({reason})")
                )
                return True
        return False

    def refused(self, event: ControllerEvent, where: str, reason: str) -> bool:
        """A refused event's input is recorded (quarantined when it failed again after its
        reload); True when the reload may run now, False when the budget deferred it."""
        name = event_name(event)
        now = self._clock()
        if self._quarantine.failed(input_key(event, where), reason):
            what = "request" if isinstance(event, RequestEvent) else "input"
            held = ""
            if name in _TICKS:
                held = f"; {name} held back {self._quarantine.hold_tick(name, now):.0f} s"
            self._shared.metrics.refused_inputs.labels("quarantined").inc()
            self._shared.refuse(
                f"quarantine:{name}:{where}",
                f"{name} {what} quarantined: it failed again after a reload ({reason}){held}",
                "quarantined",
            )
        if self._budget.take(now):
            return True
        self._defer(self._budget.next_at(now), f"{name} refused")
        return False

    def _defer(self, when: float, reason: str) -> None:
        if self._due_at is not None:
            return
        self._due_at = when
        log.warning(
            "reload budget spent: the reload after %s is deferred %.1f s; the active role's events "
            "wait for it (requests are answered REQUEST_TIMED_OUT)",
            reason,
            when - self._clock(),
        )
        self._timer.at(when)

    def due(self, active: bool) -> bool:
        """A ReloadDue event: whether the deferred reload runs now (not when none is due, or the
        instance resigned meanwhile: the next term loads afresh)."""
        if self._due_at is None:
            return False
        self._due_at = None
        if not active:
            return False
        self._budget.take(self._clock())  # the token it waited for
        return True

    def tick_delay_s(self, tick: str, delay_s: float) -> float:
        """``delay_s``, or longer while ``tick`` is held back (it failed on a quarantined input)."""
        until = self._quarantine.tick_held_until(tick)
        return delay_s if until is None else max(delay_s, until - self._clock())

    def cancel(self) -> None:
        """The term ended (or the instance stops): no deferred reload."""
        self._due_at = None
        self._timer.cancel()

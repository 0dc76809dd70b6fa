"""When the auto leader rebalance checks run (Kafka's auto-leader-rebalance-task): the first one
``FIRST_CHECK_S`` after an instance becomes active (or one interval, when that is shorter), then
every ``leader_imbalance_check_interval_s``, only on the active controller and only with
``auto_leader_rebalance_enable``.

The due time is read from the injected clock; the event loop's timer only wakes the controller,
which enqueues an :class:`~reassignd.controller.instance.events.AutoLeaderRebalanceTick` handled like any
other event.
"""

from __future__ import annotations

from collections.abc import Callable

from reassignd.controller.instance.event_queue import ControllerEventQueue
from reassignd.controller.instance.events import AutoLeaderRebalanceTick, ControllerEvent
from reassignd.controller.instance.timer import Timer
from reassignd.controller.settings import ControllerSettings

# Kafka schedules the first check 5 s after the failover.
FIRST_CHECK_S = 5.0


class RebalanceTimer:
    def __init__(
        self,
        settings: ControllerSettings,
        clock: Callable[[], float],
        queue: ControllerEventQueue[ControllerEvent],
    ) -> None:
        self._settings = settings
        self._clock = clock
        self._timer = Timer(clock, lambda: queue.put(AutoLeaderRebalanceTick()))
        self.due_s: float | None = None  # the next check, on the clock; None: none planned

    def start_term(self) -> None:
        """The instance became active (or reloaded: then the planned check keeps its time)."""
        if self._settings.auto_leader_rebalance_enable and self.due_s is None:
            self.due_s = self._clock() + min(FIRST_CHECK_S, self._settings.leader_imbalance_check_interval_s)

    def stop(self) -> None:
        """The term ended: no check until the next one starts."""
        self._timer.cancel()
        self.due_s = None

    def schedule(self) -> None:
        """Wake the controller when the planned check is due (after every event; once)."""
        if self.due_s is not None:
            self._timer.at(self.due_s)

    def take(self) -> bool:
        """Whether a check is due now; if so, the next one is planned one interval later, whatever
        this one does (so a failing check is not retried at once). A tick of an earlier term, or
        one early, is not due."""
        now = self._clock()
        if self.due_s is None or now < self.due_s:
            return False
        self.due_s = now + self._settings.leader_imbalance_check_interval_s
        return True

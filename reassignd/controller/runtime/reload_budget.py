"""How often a refused event may cost a reload, and which inputs lost the right to one (pure: no
I/O; the controller's clock is passed in). docs/design.md, "Two kinds of failure".

A reload (the failover load run again under the same epoch) is the last resort after an event
failed deterministically half-way: it re-reads every topic and state and sends every broker a
full LeaderAndIsr. So:

- **a token bucket**: at most ``capacity`` reloads at once, refilled at ``capacity`` per
  ``window_s``; a reload over budget is deferred to when the next token comes (the controller
  takes no other event on its memory meanwhile: see ``Controller._refuse``);
- **a quarantine**: an input (the event's kind and its request, or the znode it failed on) that
  fails again after a reload it caused is quarantined: a request is refused at once without
  running (nothing written, no reload), a tick's kind is held back ``hold_s`` (doubling while it
  keeps failing), and either is listed as a problem.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field

RELOADS_PER_WINDOW = 3
RELOAD_WINDOW_S = 60.0
TICK_HOLD_MIN_S = 60.0
TICK_HOLD_MAX_S = 900.0
MAX_REMEMBERED = 1000  # inputs remembered as failed once (oldest forgotten first)

Key = tuple[str, str]  # (event name, the request's fingerprint or the znode it failed on)


@dataclass
class ReloadBudget:
    """A token bucket of reloads."""

    now_s: float  # the controller's clock when the bucket was made (full)
    capacity: int = RELOADS_PER_WINDOW
    window_s: float = RELOAD_WINDOW_S
    tokens: float = field(init=False)
    _updated_s: float = field(init=False)

    def __post_init__(self) -> None:
        self.tokens = float(self.capacity)
        self._updated_s = self.now_s

    def _refill(self, now_s: float) -> None:
        rate = self.capacity / self.window_s
        self.tokens = min(float(self.capacity), self.tokens + max(0.0, now_s - self._updated_s) * rate)
        self._updated_s = max(self._updated_s, now_s)

    def take(self, now_s: float) -> bool:
        """A reload now, if the budget allows one (the token is spent)."""
        self._refill(now_s)
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False

    def next_at(self, now_s: float) -> float:
        """When the next token is there."""
        self._refill(now_s)
        missing = max(0.0, 1.0 - self.tokens)
        return now_s + missing * self.window_s / self.capacity


@dataclass
class Quarantine:
    """Inputs that failed once (and caused a reload) and those that failed again after it."""

    _failed: collections.OrderedDict[Key, None] = field(default_factory=collections.OrderedDict)
    quarantined: dict[Key, str] = field(default_factory=dict)  # key -> the reason
    _holds: dict[str, tuple[float, float]] = field(default_factory=dict)  # tick -> (until, hold)

    def failed(self, key: Key, reason: str) -> bool:
        """``key`` failed (deterministically); True when it is quarantined now: it had failed
        before, and a reload came between."""
        if key in self.quarantined:
            return True
        if key in self._failed:
            del self._failed[key]
            if len(self.quarantined) >= MAX_REMEMBERED:
                self.quarantined.pop(next(iter(self.quarantined)))
            self.quarantined[key] = reason
            return True
        self._failed[key] = None
        while len(self._failed) > MAX_REMEMBERED:
            self._failed.popitem(last=False)
        return False

    def holds(self, key: Key) -> str | None:
        """The reason ``key`` is quarantined, or None."""
        return self.quarantined.get(key)

    def hold_tick(self, tick: str, now_s: float) -> float:
        """A tick kind failed on a quarantined input: hold it back (the hold doubles while it
        keeps failing). Returns the hold's length."""
        _, previous = self._holds.get(tick, (0.0, 0.0))
        hold = min(TICK_HOLD_MAX_S, max(TICK_HOLD_MIN_S, previous * 2))
        self._holds[tick] = (now_s + hold, hold)
        return hold

    def tick_held_until(self, tick: str) -> float | None:
        until = self._holds.get(tick)
        return None if until is None else until[0]

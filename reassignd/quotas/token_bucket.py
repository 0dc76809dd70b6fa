"""Kafka's ``TokenBucket`` (KIP-599) in strict mode: pure, time passed in.

Tokens K refill at R per second up to the burst B = R × window_num × window_size_s. Admission is
Kafka's ``StrictControllerMutationQuota``: refill, reject while K < 0 (K unchanged, throttle =
round(−K / R × 1000) ms), otherwise take N tokens even if that leaves K far below zero. K = 0
exactly is admitted; there is no "K ≥ N" rule. No I/O, no clock reads: every call takes ``now_s``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from reassignd.int_limits import INT32_MAX

THROTTLE_MS_MAX = INT32_MAX  # Kafka's throttle_time_ms is an int32


@dataclass(frozen=True, slots=True)
class Admission:
    """The outcome of charging one topic: admitted, or rejected (89) with a throttle time."""

    admitted: bool
    throttle_ms: int = 0


ADMITTED = Admission(admitted=True)


def burst(rate_per_s: float, window_num: int, window_size_s: float) -> float:
    """Kafka's burst: ``samples × window × quota`` (B = 11·R with the defaults)."""
    return rate_per_s * window_num * window_size_s


def throttle_ms_for(tokens: float, rate_per_s: float) -> int:
    """Time for ``tokens`` to climb back to zero: Kafka's ``Math.round(-K / R * 1000)``, never
    below 0, at most ``THROTTLE_MS_MAX`` (a zero rate never refills)."""
    if tokens >= 0:
        return 0
    if rate_per_s <= 0:
        return THROTTLE_MS_MAX
    ms = -tokens / rate_per_s * 1000.0
    return THROTTLE_MS_MAX if ms >= THROTTLE_MS_MAX else math.floor(ms + 0.5)  # Java rounds half up


class TokenBucket:
    """One quota entity's bucket. Starts full; ``last_update_s`` is None until first used."""

    __slots__ = ("burst", "last_update_s", "rate_per_s", "tokens")

    def __init__(self, rate_per_s: float, burst: float) -> None:
        _check(rate_per_s, burst)
        self.rate_per_s = rate_per_s
        self.burst = burst
        self.tokens = burst
        self.last_update_s: float | None = None

    def __repr__(self) -> str:
        return f"TokenBucket(rate_per_s={self.rate_per_s}, burst={self.burst}, tokens={self.tokens})"

    def tokens_at(self, now_s: float) -> float:
        """K as a refill at ``now_s`` would leave it, without changing the bucket."""
        elapsed_s = 0.0 if self.last_update_s is None else max(0.0, now_s - self.last_update_s)
        return min(self.burst, self.tokens + self.rate_per_s * elapsed_s)

    def refill(self, now_s: float) -> None:
        """K ← min(B, K + R·Δt). A clock that steps back adds nothing (and is not rewound)."""
        self.tokens = self.tokens_at(now_s)
        if self.last_update_s is None or now_s > self.last_update_s:
            self.last_update_s = now_s

    def throttle_ms(self, now_s: float) -> int:
        """The current throttle: how long until K is back at zero (0 while K ≥ 0)."""
        return throttle_ms_for(self.tokens_at(now_s), self.rate_per_s)

    def try_admit(self, n: float, now_s: float) -> Admission:
        """Strict admission of ``n`` tokens (a topic's partition mutations) at ``now_s``."""
        if n < 0 or not math.isfinite(n):
            raise ValueError(f"cannot charge {n} tokens")
        self.refill(now_s)
        if self.tokens < 0:
            return Admission(admitted=False, throttle_ms=throttle_ms_for(self.tokens, self.rate_per_s))
        self.tokens -= n
        return ADMITTED

    def set_rate(self, rate_per_s: float, burst: float) -> None:
        """A quota change: the new R and B apply from the next refill, which caps K at the new B."""
        _check(rate_per_s, burst)
        self.rate_per_s = rate_per_s
        self.burst = burst


def _check(rate_per_s: float, burst: float) -> None:
    if not (math.isfinite(rate_per_s) and rate_per_s >= 0 and math.isfinite(burst) and burst >= 0):
        raise ValueError(f"rate {rate_per_s}/s and burst {burst} must be finite and non-negative")

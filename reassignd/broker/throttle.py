"""Byte-rate limiting for replication, pure: token buckets with injected time, budget splits.

A broker's replication bandwidth (in and out) and Kafka's KIP-73 throttles
(``leader/follower.replication.throttled.rate``) are each a :class:`TokenBucket`. Buckets may go
into debt (a transfer decided against one bucket can overdraw another that concurrent fetches
share); a bucket in debt grants nothing until the debt is repaid, so the long-run rate holds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

BURST_S = 0.5  # a bucket holds at most this many seconds of its rate
MAX_GRANT = 2**53  # cap on a single grant, so "unlimited" stays a finite JSON integer


@dataclass(frozen=True, slots=True)
class TokenBucket:
    """``rate_per_s`` bytes per second, ``math.inf`` for unlimited; ``tokens`` as of ``at_s``."""

    rate_per_s: float
    tokens: float
    at_s: float
    burst_s: float = BURST_S

    @staticmethod
    def full(rate_per_s: float, now: float, burst_s: float = BURST_S) -> TokenBucket:
        return TokenBucket(rate_per_s, _capacity(rate_per_s, burst_s), now, burst_s)

    @property
    def unlimited(self) -> bool:
        return math.isinf(self.rate_per_s)

    def refilled(self, now: float) -> TokenBucket:
        if self.unlimited:
            return replace(self, tokens=math.inf, at_s=now)
        elapsed = max(0.0, now - self.at_s)
        tokens = min(self.tokens + elapsed * self.rate_per_s, _capacity(self.rate_per_s, self.burst_s))
        return replace(self, tokens=tokens, at_s=max(now, self.at_s))

    def available(self, now: float) -> float:
        """Bytes that may be transferred now (0 while in debt)."""
        return max(0.0, self.refilled(now).tokens)

    def take(self, n: float, now: float) -> TokenBucket:
        """Charge ``n`` bytes; the bucket may go into debt."""
        bucket = self.refilled(now)
        if bucket.unlimited:
            return bucket
        return replace(bucket, tokens=bucket.tokens - n)

    def with_rate(self, rate_per_s: float, now: float) -> TokenBucket:
        """The same bucket at a new rate from ``now`` on (tokens kept, capped at the new capacity)."""
        if rate_per_s == self.rate_per_s:
            return self
        bucket = self.refilled(now)
        if math.isinf(rate_per_s):
            return TokenBucket(rate_per_s, math.inf, now, self.burst_s)
        tokens = bucket.tokens if not bucket.unlimited else _capacity(rate_per_s, self.burst_s)
        return TokenBucket(rate_per_s, min(tokens, _capacity(rate_per_s, self.burst_s)), now, self.burst_s)


def _capacity(rate_per_s: float, burst_s: float) -> float:
    return math.inf if math.isinf(rate_per_s) else rate_per_s * burst_s


def grant(budget: float) -> int:
    """A budget in bytes as a finite integer."""
    return MAX_GRANT if math.isinf(budget) else max(0, min(MAX_GRANT, int(budget)))


def allocate(budget: int, needs: Sequence[int], *, spread_leftover: bool = False) -> list[int]:
    """Split ``budget`` bytes over ``needs`` max-min fairly (water-filling): no share exceeds its
    need, and a share is only smaller than another's when its need is. With ``spread_leftover``
    what nobody needs is spread evenly over all (so caught-up replicas can fetch new data)."""
    n = len(needs)
    shares = [0] * n
    remaining = max(0, budget)
    order = sorted(range(n), key=lambda i: needs[i])
    for pos, i in enumerate(order):
        left = n - pos
        fair = remaining // left
        need = max(0, needs[i])
        if need <= fair:
            shares[i] = need
            remaining -= need
            continue
        # everyone from here on needs more than the fair share: each gets it, plus one byte of
        # the remainder for the first ones
        extra = remaining - fair * left
        for k, j in enumerate(order[pos:]):
            shares[j] = fair + (1 if k < extra else 0)
        remaining = 0
        break
    if spread_leftover and remaining > 0 and n > 0:
        each, extra = divmod(remaining, n)
        for i in range(n):
            shares[i] += each + (1 if i < extra else 0)
    return shares


@dataclass(frozen=True, slots=True)
class ThrottledReplicas:
    """A topic's ``leader/follower.replication.throttled.replicas``: ``""``, ``"*"`` or
    ``"partition:broker,..."``."""

    everything: bool = False
    pairs: frozenset[tuple[int, int]] = frozenset()

    def covers(self, partition: int, broker_id: int) -> bool:
        return self.everything or (partition, broker_id) in self.pairs

    @staticmethod
    def parse(value: str) -> ThrottledReplicas:
        """Raises ValueError on a malformed list."""
        text = value.strip()
        if text == "":
            return ThrottledReplicas()
        if text == "*":
            return ThrottledReplicas(everything=True)
        pairs = set()
        for item in text.split(","):
            partition, sep, broker = item.strip().partition(":")
            if not sep or not partition.strip().isdigit() or not broker.strip().isdigit():
                raise ValueError(f"not a partition:broker pair: '{item.strip()}'")
            pairs.add((int(partition), int(broker)))
        return ThrottledReplicas(pairs=frozenset(pairs))


def allocate_throttled(
    budget: int,
    throttle_budget: int,
    needs: Sequence[int],
    throttled: Sequence[bool],
    *,
    spread_leftover: bool = False,
) -> list[int]:
    """:func:`allocate`, with the ``throttled`` entries together bounded by ``throttle_budget``
    (what they cannot use goes to the others)."""
    shares = allocate(budget, needs, spread_leftover=spread_leftover)
    limited = [i for i, t in enumerate(throttled) if t]
    if sum(shares[i] for i in limited) <= throttle_budget:
        return shares
    free = [i for i, t in enumerate(throttled) if not t]
    limited_shares = allocate(
        min(budget, throttle_budget), [needs[i] for i in limited], spread_leftover=spread_leftover
    )
    rest = budget - sum(limited_shares)
    free_shares = allocate(rest, [needs[i] for i in free], spread_leftover=spread_leftover)
    out = [0] * len(needs)
    for i, s in zip(limited, limited_shares, strict=True):
        out[i] = s
    for i, s in zip(free, free_shares, strict=True):
        out[i] = s
    return out

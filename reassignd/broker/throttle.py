"""The fair-share functions of replication, pure: how a budget of bytes is split among the
partitions that want bytes, and which replicas Kafka's KIP-73 throttles cover.

:func:`allocate` is max-min fair (water-filling) with integer bytes; :func:`allocate_throttled`
adds the KIP-73 constraint (the throttled partitions together get at most the throttle's budget,
and what they cannot use goes to the others), which is again the max-min fair split under both
constraints. bandwidth.py keeps the budgets over time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

MAX_GRANT = 2**53  # cap on a single grant, so "unlimited" stays a finite JSON integer


def grant(budget: float) -> int:
    """A budget in bytes as a finite integer."""
    return MAX_GRANT if math.isinf(budget) else max(0, min(MAX_GRANT, int(budget)))


def allocate(budget: int, needs: Sequence[int]) -> list[int]:
    """Split ``budget`` bytes over ``needs`` max-min fairly (water-filling): no share exceeds its
    need, the shares add up to the budget or to every need, and a share is only smaller than
    another's when it is its whole need (integer bytes: the remainder of an even split goes one
    byte each to the first ones, so unsatisfied shares differ by at most one byte)."""
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
        break
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
) -> list[int]:
    """:func:`allocate`, with the ``throttled`` entries together bounded by ``throttle_budget``
    (what they cannot use goes to the others)."""
    shares = allocate(budget, needs)
    limited = [i for i, t in enumerate(throttled) if t]
    if sum(shares[i] for i in limited) <= throttle_budget:
        return shares
    free = [i for i, t in enumerate(throttled) if not t]
    limited_shares = allocate(min(budget, throttle_budget), [needs[i] for i in limited])
    rest = budget - sum(limited_shares)
    free_shares = allocate(rest, [needs[i] for i in free])
    out = [0] * len(needs)
    for i, s in zip(limited, limited_shares, strict=True):
        out[i] = s
    for i, s in zip(free, free_shares, strict=True):
        out[i] = s
    return out

"""A broker's replication bandwidth in one direction, shared max-min fairly. Pure (time injected).

One :class:`FairBucket` per direction: the follower side's (inbound: what this broker copies from
every leader it follows, keyed by partition) and the leader side's (outbound: what it serves to
every follower, keyed by partition and follower). Each is a token bucket of ``rate_per_s`` bytes
per second holding at most ``burst_s`` of it, with Kafka's KIP-73 throttle as a second, smaller
bucket that bounds the throttled keys together.

Tokens are not handed to whichever fetch comes first. Once per round (``round_s``, when a fetch
finds one has passed, and at once when a key starts wanting bytes, so that a move does not wait a
round for its first bytes) the tokens that came in are split with :func:`~reassignd.broker.
throttle.allocate_throttled` among the keys that **want** bytes (their demand, i.e. their lag plus
expected growth, is positive, and they were heard of within ``stale_s``), and each key keeps its
share as **credit** until its own fetch spends it. So every partition that is behind gets the same
rate, whatever session or leader it travels through and however often its fetch runs, except where
its demand is smaller (max-min fairness: what it cannot use goes to the others). A key's credit is
bounded by its share of the burst (``rate × burst_s ÷ keys wanting``), so a key whose fetches stall
(or whose other end is the bottleneck) cannot hoard: beyond that bound its share goes to the others.

What could have moved while nobody wanted bytes is not kept (a link does not store it: a broker
never beats its rate by more than a round's worth); tokens that came back while keys wanted bytes
(refunds, forgotten keys) go out at most as fast again as the rate, split like the rest. A key
whose lag is not known yet (a new replica, or a caught-up one) is a **probe**: a fetch gives its
probes an even split of what is in the pool, at most a round's worth in all, which is how they
learn their lag (a head start of a round's worth at most; after that the rounds even it out).

Accounting: credits and the pool together never hold more than the burst (restored at each round:
a refund of bytes granted but not transferred may exceed it until then), and only a round's worth
after a quiet spell; bytes leave the bucket when a fetch takes them, and a refund puts back what
was granted but not transferred. So no more than the burst plus ``rate ×`` the time since moves
from any start, and no more than a round's worth plus that from the end of a quiet spell; likewise
for the throttle.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from reassignd.broker.throttle import MAX_GRANT, allocate_throttled, grant

K = TypeVar("K", bound=Hashable)

# a bucket holds this many seconds of its rate, so a fetch loop slowed down by a busy process (the
# agents of a `reassignd cluster` share one) still gets its whole share
BURST_S = 1.0
ROUND_S = 0.05  # tokens are split among the keys that want bytes at most this often
STALE_S = 2.0  # a key not heard of for this long no longer wants bytes


@dataclass(slots=True)
class Want:
    demand: int  # bytes the key wants: its known lag, plus growth
    throttled: bool  # KIP-73 covers it (and it is outside the ISR)
    seen_s: float


@dataclass(frozen=True, slots=True)
class Take(Generic[K]):
    """What one key of a fetch asks for: at most ``need`` bytes."""

    key: K
    need: int
    throttled: bool


class FairBucket(Generic[K]):
    def __init__(
        self,
        rate_per_s: float,
        throttle_rate_per_s: float,
        now: float,
        *,
        burst_s: float = BURST_S,
        round_s: float = ROUND_S,
        stale_s: float = STALE_S,
    ) -> None:
        self.rate_per_s = rate_per_s
        self.throttle_rate_per_s = throttle_rate_per_s
        self.burst_s = burst_s
        self.round_s = round_s
        self.stale_s = stale_s
        self.pool = self.capacity  # starts full
        self.throttle_pool = self.throttle_capacity
        self.at_s = now
        self.wants: dict[K, Want] = {}
        self.credits: dict[K, int] = {}
        self._busy = False  # some key wanted bytes at the latest round
        self._joined = False  # a key started wanting bytes since the latest round

    # --- configuration -------------------------------------------------------------------------

    @property
    def capacity(self) -> float:
        return self.rate_per_s * self.burst_s

    @property
    def throttle_capacity(self) -> float:
        return self.throttle_rate_per_s * self.burst_s

    def with_rates(self, rate_per_s: float, throttle_rate_per_s: float, now: float) -> None:
        """New rates from ``now`` on: what came in until now at the old ones is kept (up to the new
        burst); credits are bounded anew at the next round."""
        self._refill(now)
        self.rate_per_s, self.throttle_rate_per_s = rate_per_s, throttle_rate_per_s
        self.pool = min(self.pool, self.capacity)
        self.throttle_pool = min(self.throttle_pool, self.throttle_capacity)

    # --- who wants bytes -----------------------------------------------------------------------

    def want(self, key: K, demand: int, throttled: bool, now: float) -> None:
        """``key`` wants ``demand`` bytes (0: nothing now, its credit goes back)."""
        known = self.wants.get(key)
        if demand <= 0:
            if known is not None:
                self._release(key, known.throttled)
                del self.wants[key]
            return
        if known is None:
            self.wants[key] = Want(demand, throttled, now)
            self._joined = True
            return
        if known.throttled != throttled:  # its credit was counted against the other budgets
            self._release(key, known.throttled)
        known.demand, known.throttled, known.seen_s = demand, throttled, now

    def forget(self, key: K) -> None:
        known = self.wants.pop(key, None)
        if known is not None:
            self._release(key, known.throttled)

    def _release(self, key: K, throttled: bool) -> None:
        credit = self.credits.pop(key, 0)
        self.pool += credit
        if throttled:
            self.throttle_pool += credit

    # --- rounds --------------------------------------------------------------------------------

    def _refill(self, now: float) -> None:
        elapsed = now - self.at_s
        if elapsed <= 0:
            return
        self.at_s = now
        self.pool = math.inf if math.isinf(self.rate_per_s) else self.pool + self.rate_per_s * elapsed
        self.throttle_pool = (
            math.inf
            if math.isinf(self.throttle_rate_per_s)
            else self.throttle_pool + self.throttle_rate_per_s * elapsed
        )

    def advance(self, now: float) -> None:
        """A round, if one has passed or a key started wanting bytes since the latest one (so it
        need not wait for its first share): the tokens that came in are split max-min fairly among
        the keys that want bytes, up to each one's demand and share of the burst."""
        if now - self.at_s < self.round_s and not self._joined:
            return
        self._joined = False
        elapsed = now - self.at_s
        self._refill(now)
        if not self._busy:  # nobody wanted bytes: a link does not store what it could have carried
            self.pool = min(self.pool, self.rate_per_s * self.round_s)
            self.throttle_pool = min(self.throttle_pool, self.throttle_rate_per_s * self.round_s)
        for key in [k for k, w in self.wants.items() if now - w.seen_s > self.stale_s]:
            self.forget(key)
        wants = self.wants
        n, n_throttled = len(wants), sum(1 for w in wants.values() if w.throttled)
        bound = self.capacity / n if n else math.inf
        throttle_bound = self.throttle_capacity / n_throttled if n_throttled else math.inf
        keys: list[K] = []
        rooms: list[int] = []
        flags: list[bool] = []
        held = held_throttled = 0
        for key, w in wants.items():
            limit = min(bound, throttle_bound) if w.throttled else bound
            credit = self.credits.get(key, 0)
            if credit > limit:  # the burst is shared by more keys now: the excess goes back
                self.pool += credit - int(limit)
                if w.throttled:
                    self.throttle_pool += credit - int(limit)
                credit = self.credits[key] = int(limit)
            held += credit
            if w.throttled:
                held_throttled += credit
            keys.append(key)
            rooms.append(max(0, grant(min(w.demand, limit)) - credit))
            flags.append(w.throttled)
        self.pool = max(0.0, min(self.pool, self.capacity - held))
        self.throttle_pool = max(0.0, min(self.throttle_pool, self.throttle_capacity - held_throttled))
        busy, self._busy = self._busy, bool(keys)
        if not keys:
            return
        # what came in while keys wanted bytes is theirs; what came back goes out at most as
        # fast again (a round's worth at most at once)
        span = (elapsed if busy else 0.0) + min(elapsed, self.round_s)
        budget = min(self.pool, self.rate_per_s * span)
        throttle_budget = min(self.throttle_pool, self.throttle_rate_per_s * span)
        shares = allocate_throttled(grant(budget), grant(throttle_budget), rooms, flags)
        for key, share, throttled in zip(keys, shares, flags, strict=True):
            if share:
                self.credits[key] = self.credits.get(key, 0) + share
                self.pool -= share
                if throttled:
                    self.throttle_pool -= share

    # --- fetches -------------------------------------------------------------------------------

    def take(self, asks: Sequence[Take[K]]) -> list[int]:
        """Bytes granted to each ask of one fetch, never more than its need: a key that wants
        bytes gets its credit; the others (their lag is not known) an even split of what is left
        in the pool, at most a round's worth in all."""
        granted = []
        for a in asks:
            credit = self.credits.get(a.key, 0)
            n = min(max(0, a.need), credit)
            if n:
                if n == credit:
                    del self.credits[a.key]
                else:
                    self.credits[a.key] = credit - n
            granted.append(n)
        budget = min(self.pool, self.rate_per_s * self.round_s)
        throttle_budget = min(self.throttle_pool, self.throttle_rate_per_s * self.round_s)
        if grant(budget) <= 0:
            return granted
        extra = allocate_throttled(
            grant(budget),
            grant(throttle_budget),
            [0 if a.key in self.wants else max(0, a.need) for a in asks],
            [a.throttled for a in asks],
        )
        for i, (a, share) in enumerate(zip(asks, extra, strict=True)):
            if share:
                granted[i] += share
                self.pool -= share
                if a.throttled:
                    self.throttle_pool -= share
        return granted

    def refund(self, key: K, n: int, throttled: bool) -> None:
        """``n`` bytes granted to ``key`` were not transferred: its credit again if it still wants
        bytes, else the pool's (bounded at the next round, like everything the bucket holds)."""
        if n <= 0:
            return
        n = min(n, MAX_GRANT)
        if key in self.wants:
            self.credits[key] = self.credits.get(key, 0) + n
            return
        self.pool += n
        if throttled:
            self.throttle_pool += n

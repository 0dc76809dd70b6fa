"""Adaptive concurrency: a batch's per-broker caps of moves, adjusted while it runs. Pure.

A batch whose ``limits.adaptive`` gives bounds ``{min, max}`` starts every broker at
``moves_per_broker`` (held within the bounds) and, at each sample of the agents' reports, does
what Cruise Control's concurrency adjuster does, with a faster rise (a cap grows by half of
itself, at least one move, and halves):

- **halve** every broker's cap (never below ``min``) when the cluster is not healthy: a partition
  outside every move has a live replica out of its ISR (the moves are starving the brokers'
  ordinary replication), or one of the batch's moves is stuck (Cruise Control's rule: running
  long and slow);
- otherwise **raise** by :func:`step` (never above ``max``) the cap of each broker that holds one of
  the batch's pending moves back (its moves in flight fill its cap) and that uses what it has: a
  broker receiving copies must fetch near its bandwidth (``NEAR_BANDWIDTH`` of the rate its agent
  reports), so that a broker whose copies crawl for a reason more moves cannot fix (a throttle, a
  slow disk) is left where it is;
- leave the rest alone.

The decision is :func:`adjust`; what it reads — the moves in flight, the agents' rates, the health
signals — is gathered by the controller's batch runner and the sampler of the agents' reports.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from reassignd.executor.model import Adaptive
from reassignd.executor.scheduler import MoveShape

MIN_STEP = 1  # moves added to a broker's cap per healthy sample, at least


def step(cap: int) -> int:
    """How many moves a healthy sample adds to a broker's ``cap``: half of it, at least one
    (1, 2, 3, 4, 6, 9, 13, ...: from the default cap to 40 in five samples, where one move a
    sample took 35; a cap too high is halved by the next unhealthy sample)."""
    return max(MIN_STEP, cap // 2)


NEAR_BANDWIDTH = 0.8  # a receiving broker may grow while it fetches at least this share of its rate

HEALTHY = "healthy"
UNDER_REPLICATED = "under_replicated"
STUCK = "stuck"


@dataclass(frozen=True, slots=True)
class BrokerRate:
    """One broker's replication as its agent reports it."""

    fetch_bytes_per_s: float  # what its follower replicas fetch now, summed (copies and produce alike)
    bandwidth_bytes_per_s: float | None  # its replication rate (None: the agent does not say)


@dataclass(frozen=True, slots=True)
class SampleHealth:
    """The cluster-wide signals of one sample."""

    under_replicated: int  # partitions outside every move with a live replica out of their ISR
    stuck: int  # the batch's stuck moves


@dataclass(frozen=True, slots=True)
class Pressure:
    """Where the batch stands against its caps (:func:`pressure`)."""

    brokers: frozenset[int]  # every broker its pending or running moves load
    binding: frozenset[int]  # brokers whose cap holds one of its pending moves back
    receiving: frozenset[int]  # brokers its running moves add a replica to


@dataclass(frozen=True, slots=True)
class CapChange:
    caps: Mapping[int, int]  # the new cap of each broker that changed
    previous: Mapping[int, int]  # their caps before
    reason: str  # HEALTHY (raised), UNDER_REPLICATED or STUCK (halved)

    @property
    def raised(self) -> bool:
        return self.reason == HEALTHY


def pressure(
    in_flight: Iterable[MoveShape],
    mine_running: Iterable[MoveShape],
    mine_pending: Iterable[MoveShape],
    cap: Mapping[int, int] | None,
    initial: int,
) -> Pressure:
    """``in_flight``: every move in flight in the cluster (the batch's own included);
    ``mine_running`` and ``mine_pending``: the batch's. A broker binds when one of the batch's
    pending moves adds to (or takes from) it and its incoming (or outgoing) moves in flight
    already fill its cap."""
    caps = cap or {}
    incoming: Counter[int] = Counter()
    outgoing: Counter[int] = Counter()
    for move in in_flight:
        incoming.update(move.destinations)
        outgoing.update(move.sources)
    brokers: set[int] = set()
    receiving: set[int] = set()
    binding: set[int] = set()
    for move in mine_running:
        brokers.update(move.destinations | move.sources)
        receiving.update(move.destinations)
    for move in mine_pending:
        brokers.update(move.destinations | move.sources)
        binding.update(b for b in move.destinations if incoming[b] >= caps.get(b, initial))
        binding.update(b for b in move.sources if outgoing[b] >= caps.get(b, initial))
    return Pressure(frozenset(brokers), frozenset(binding), frozenset(receiving))


def _uses_its_share(rate: BrokerRate | None) -> bool:
    if rate is None or not rate.bandwidth_bytes_per_s:
        return False  # not reported: nothing says more moves would help
    return rate.fetch_bytes_per_s >= NEAR_BANDWIDTH * rate.bandwidth_bytes_per_s


def adjust(
    caps: Mapping[int, int],
    initial: int,
    bounds: Adaptive,
    health: SampleHealth,
    where: Pressure,
    rates: Mapping[int, BrokerRate],
) -> CapChange | None:
    """The caps to change after one sample (None: none). ``caps`` are the batch's adjusted ones
    (absent: ``initial``); every cap stays within ``bounds``."""

    def now(b: int) -> int:
        return min(max(caps.get(b, initial), bounds.min), bounds.max)

    if health.under_replicated or health.stuck:
        reason = UNDER_REPLICATED if health.under_replicated else STUCK
        changed = {b: max(bounds.min, now(b) // 2) for b in sorted(where.brokers | set(caps))}
    else:
        reason = HEALTHY
        changed = {
            b: min(bounds.max, now(b) + step(now(b)))
            for b in sorted(where.binding)
            if b not in where.receiving or _uses_its_share(rates.get(b))
        }
    changed = {b: c for b, c in changed.items() if c != caps.get(b, initial)}
    if not changed:
        return None
    return CapChange(changed, {b: caps.get(b, initial) for b in changed}, reason)


def fetch_rates(
    followers: Iterable[tuple[int, float, bool]], bandwidth: Mapping[int, float | None]
) -> dict[int, BrokerRate]:
    """Each broker's rate from its agent's report: ``followers`` are (broker, fetch rate, in the
    ISR) of the replicas it follows. Every follower counts, in the ISR or not: the bandwidth a
    broker's copies may use is what its ordinary replication leaves them, so a broker whose copies
    and produce traffic together fill its bandwidth uses its share."""
    fetched: dict[int, float] = dict.fromkeys(bandwidth, 0.0)
    for broker, rate, _in_isr in followers:
        fetched[broker] = fetched.get(broker, 0.0) + rate
    return {b: BrokerRate(f, bandwidth.get(b)) for b, f in fetched.items()}


def under_replicated_outside(
    partitions: Iterable[tuple[Collection[int], Collection[int]]], live: Collection[int]
) -> int:
    """How many of ``partitions`` (replicas, ISR; the caller leaves out those being moved) have a
    live replica out of their ISR."""
    return sum(1 for replicas, isr in partitions if any(r in live and r not in isr for r in replicas))

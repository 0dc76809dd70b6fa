"""The KIP-73 throttles a batch owns. Pure.

While a batch with ``throttle_bytes_per_s`` has moves running, every broker they touch (a source,
a destination or the leader serving the copies) has ``leader.replication.throttled.rate`` and
``follower.replication.throttled.rate`` set to that rate in ``/config/brokers/<id>``, and every
topic they touch lists the moving replicas in ``leader.replication.throttled.replicas`` (the
replicas serving: ORS) and ``follower.replication.throttled.replicas`` (the adding replicas), in
Kafka's ``partition:broker,...`` format, merged with what an operator set there.

Before a batch first changes a key it records the value it found (``None``: absent) in its
journal; once the broker or topic no longer takes part in a running move of the batch (the
moves completed, the batch stopped or was rolled back, or a new controller found it so), the key
goes back to **exactly** that value — unless someone else changed it meanwhile (a broker rate
that is no longer the batch's is left as it is). A key another unfinished batch has recorded is
owned by that batch: this one adds its replicas to a topic's lists but records and restores
nothing there, and leaves such a broker's rates alone.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from reassignd.executor.model import ThrottleValues
from reassignd.topic_partition import TopicPartition

LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
BROKER_KEYS = (LEADER_RATE, FOLLOWER_RATE)
TOPIC_KEYS = (LEADER_REPLICAS, FOLLOWER_REPLICAS)
ALL = "*"


@dataclass(frozen=True, slots=True)
class RunningCopy:
    """A running move as throttles see it: who serves (ORS) and who copies (AR)."""

    tp: TopicPartition
    serving: tuple[int, ...]
    adding: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Wanted:
    brokers: frozenset[int]
    leader_entries: Mapping[str, frozenset[tuple[int, int]]]  # topic -> {(partition, broker)}
    follower_entries: Mapping[str, frozenset[tuple[int, int]]]


def wanted(moves: Iterable[RunningCopy]) -> Wanted:
    brokers: set[int] = set()
    leaders: dict[str, set[tuple[int, int]]] = {}
    followers: dict[str, set[tuple[int, int]]] = {}
    for m in moves:
        brokers.update(m.serving)
        brokers.update(m.adding)
        topic, p = m.tp
        leaders.setdefault(topic, set()).update((p, b) for b in m.serving)
        followers.setdefault(topic, set()).update((p, b) for b in m.adding)
    return Wanted(
        frozenset(brokers),
        {t: frozenset(e) for t, e in leaders.items()},
        {t: frozenset(e) for t, e in followers.items()},
    )


def parse_replicas(value: str | None) -> frozenset[tuple[int, int]] | None:
    """``"0:1,1:2"`` -> {(0, 1), (1, 2)}; ``"*"`` -> None (every replica); malformed entries are
    kept out (they stay in the written value, see :func:`merged_replicas`)."""
    if value is None:
        return frozenset()
    if value.strip() == ALL:
        return None
    out = set()
    for item in value.split(","):
        p, _, b = item.strip().partition(":")
        if p.isdigit() and b.isdigit():
            out.add((int(p), int(b)))
    return frozenset(out)


def merged_replicas(current: str | None, ours: Collection[tuple[int, int]]) -> str | None:
    """``current`` with ``ours`` added (``"*"`` stays ``"*"``), entries of ``current`` kept as
    written; None when nothing changes."""
    present = parse_replicas(current)
    if present is None:
        return None
    missing = sorted(set(ours) - present)
    if not missing:
        return None
    added = ",".join(f"{p}:{b}" for p, b in missing)
    return added if not current or not current.strip() else f"{current},{added}"


def owned_elsewhere(
    others: Iterable[tuple[Mapping[int, ThrottleValues], Mapping[str, ThrottleValues]]],
) -> tuple[set[int], set[str]]:
    """Brokers and topics whose throttles another unfinished batch recorded (and so owns)."""
    brokers: set[int] = set()
    topics: set[str] = set()
    for b, t in others:
        brokers.update(b)
        topics.update(t)
    return brokers, topics


def rate_value(bytes_per_s: int) -> str:
    return str(int(bytes_per_s))

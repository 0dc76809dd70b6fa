"""The ``disk`` goal: replicas moved between the log directories of their broker so that every
directory of a broker fills to the same fraction of its capacity (Cruise Control's intra-broker
disk balance). Pure.

A directory's **usage** is the bytes of the replicas in it divided by its capacity; a broker's
**target** is the bytes of all its placed replicas divided by the capacity of all its directories
(directories without a known capacity count as equal to each other: then bytes are evened out).
Each broker is planned on its own (one Spark task per broker group): repeatedly, the fullest
directory (highest usage) gives the largest replica that does not take it below the target nor
the emptiest directory above it, to the emptiest; when no replica fits so, the smallest one that
still lowers the larger of the two usages moves. It stops when the fullest directory is within
``(1 + tolerance) × target``, when no move helps, or when the broker's byte budget is spent.
Each replica moves at most once; a replica whose directory is not known (a new replica an earlier
goal placed: Kafka puts it in a directory of its own choosing, ``"any"``) is not moved and
counts nowhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from reassignd.feeder.model import CURRENT, ORIGINAL, PARTITION, SIZE, TOPIC, Row

ANY_DIR = "any"  # Kafka's plan format: a replica not pinned to a directory

# One replica in a directory: topic, partition, size_bytes, log dir, preferred leader?
DirReplica = tuple[str, int, int, str, bool]


@dataclass(frozen=True, slots=True, order=True)
class DirMove:
    """Move broker ``broker``'s replica of ``topic``-``partition`` from ``from_dir`` to ``to_dir``."""

    topic: str
    partition: int
    broker: int
    from_dir: str
    to_dir: str
    size_bytes: int


@dataclass(frozen=True, slots=True)
class DirLoad:
    """What one directory holds, and its capacity (None: not known)."""

    size_bytes: int = 0
    replicas: int = 0
    leaders: int = 0
    capacity_bytes: int | None = None

    def usage(self) -> float | None:
        """Bytes held over capacity; None without a capacity."""
        if self.capacity_bytes is None or self.capacity_bytes <= 0:
            return None
        return self.size_bytes / self.capacity_bytes


def _weights(dirs: Sequence[str], capacities: Mapping[str, int]) -> dict[str, float]:
    """Each directory's capacity; all 1 when one of them has none (bytes evened out)."""
    if all(capacities.get(d, 0) > 0 for d in dirs):
        return {d: float(capacities[d]) for d in dirs}
    return dict.fromkeys(dirs, 1.0)


def broker_dirs(replicas: Iterable[DirReplica], capacities: Mapping[str, int]) -> list[str]:
    """The broker's directories: those with a capacity and those holding a replica, sorted."""
    return sorted(set(capacities) | {r[3] for r in replicas if r[3] != ANY_DIR})


def balance_broker(
    broker: int,
    replicas: Sequence[DirReplica],
    capacities: Mapping[str, int],
    budget_bytes: int | None,
    tolerance: float = 0.02,
    topics: str | None = None,
) -> list[DirMove]:
    """The directory moves that balance ``broker``'s directories (see the module's text); only
    replicas of topics matching ``topics`` (whole name) move, all of them count."""
    pattern = re.compile(topics) if topics is not None else None
    dirs = broker_dirs(replicas, capacities)
    if len(dirs) < 2:
        return []
    weight = _weights(dirs, capacities)
    used = dict.fromkeys(dirs, 0)
    holding: dict[str, list[DirReplica]] = {d: [] for d in dirs}
    for r in replicas:
        if r[3] in used:
            used[r[3]] += r[2]
            holding[r[3]].append(r)
    total_w = sum(weight.values())
    target = sum(used.values()) / total_w
    if target <= 0:
        return []
    moves: list[DirMove] = []
    moved: set[tuple[str, int]] = set()
    left = budget_bytes

    def usage(d: str) -> float:
        return used[d] / weight[d]

    for _ in range(sum(len(h) for h in holding.values())):
        full = max(dirs, key=lambda d: (usage(d), d))
        empty = min(dirs, key=lambda d: (usage(d), d))
        if usage(full) <= target * (1 + tolerance) or full == empty:
            break
        excess = used[full] - target * weight[full]
        room = target * weight[empty] - used[empty]
        worst = usage(full)
        candidates = [
            r
            for r in holding[full]
            if (r[0], r[1]) not in moved
            and r[2] > 0
            and (left is None or r[2] <= left)
            and (pattern is None or pattern.fullmatch(r[0]) is not None)
        ]
        fitting = [r for r in candidates if r[2] <= min(excess, room)]
        pick = max(fitting, key=lambda r: (r[2], r[0], -r[1]), default=None)
        if pick is None:
            helping = [
                r
                for r in candidates
                if max((used[full] - r[2]) / weight[full], (used[empty] + r[2]) / weight[empty]) < worst
            ]
            pick = min(helping, key=lambda r: (r[2], r[0], r[1]), default=None)
        if pick is None:
            break
        holding[full].remove(pick)
        holding[empty].append(pick)
        used[full] -= pick[2]
        used[empty] += pick[2]
        moved.add((pick[0], pick[1]))
        if left is not None:
            left -= pick[2]
        moves.append(DirMove(pick[0], pick[1], broker, full, empty, pick[2]))
    return moves


def excess_bytes(replicas: Sequence[DirReplica], capacities: Mapping[str, int]) -> int:
    """Bytes the broker's directories hold above their target: what balancing it must move
    at least (the share of the byte budget it gets)."""
    dirs = broker_dirs(replicas, capacities)
    if len(dirs) < 2:
        return 0
    weight = _weights(dirs, capacities)
    used = dict.fromkeys(dirs, 0)
    for r in replicas:
        if r[3] in used:
            used[r[3]] += r[2]
    target = sum(used.values()) / sum(weight.values())
    return round(sum(max(0.0, used[d] - target * weight[d]) for d in dirs))


def budget_slices(excess: Mapping[int, int], left: int | None) -> dict[int, int | None]:
    """Each broker's share of the bytes the plan may still copy, in proportion to its excess."""
    if left is None:
        return dict.fromkeys(excess, None)
    total = sum(excess.values())
    if total <= left:
        return {b: left for b in excess}  # every broker can do all it needs
    return {b: left * e // total for b, e in excess.items()}


def dir_loads(
    placed: Iterable[tuple[int, DirReplica]], capacities: Mapping[int, Mapping[str, int]]
) -> dict[tuple[int, str], DirLoad]:
    """Each (broker, directory)'s load from its ``(broker, replica)`` pairs, every directory with
    a capacity included (replicas in ``"any"`` counted under that name)."""
    acc: dict[tuple[int, str], list[int]] = {}
    for b, dirs in capacities.items():
        for d in dirs:
            acc[(b, d)] = [0, 0, 0]
    for b, r in placed:
        v = acc.setdefault((b, r[3]), [0, 0, 0])
        v[0] += r[2]
        v[1] += 1
        v[2] += r[4]
    out: dict[tuple[int, str], DirLoad] = {}
    for (b, d), v in sorted(acc.items()):
        cap = capacities.get(b, {}).get(d)
        out[(b, d)] = DirLoad(v[0], v[1], v[2], cap if cap is not None and cap > 0 else None)
    return out


def usage_spread(loads: Mapping[tuple[int, str], DirLoad]) -> dict[int, float]:
    """Per broker with several directories: the fullest directory's usage over the broker's
    (max/mean of usage fractions; bytes when a capacity is missing)."""
    per: dict[int, list[DirLoad]] = {}
    for (b, d), v in loads.items():
        if d != ANY_DIR:
            per.setdefault(b, []).append(v)
    out: dict[int, float] = {}
    for b, vs in sorted(per.items()):
        if len(vs) < 2:
            continue
        known = all(v.capacity_bytes for v in vs)
        total = sum(v.size_bytes for v in vs)
        if total == 0:
            out[b] = 1.0
            continue
        if known:
            target = total / sum(v.capacity_bytes or 0 for v in vs)
            out[b] = max(v.size_bytes / (v.capacity_bytes or 1) for v in vs) / target
        else:
            out[b] = max(v.size_bytes for v in vs) / (total / len(vs))
    return out


def placed_replicas(
    rows: Iterable[Row], log_dirs: Mapping[tuple[str, int, int], str], *, after: bool
) -> Iterator[tuple[int, DirReplica]]:
    """Every replica with its broker and directory: as the plan found them (``after`` False),
    or once the broker goals ran (``after`` True: a replica new on its broker is in ``"any"``,
    one that left is gone). Directory moves are applied by :func:`apply_dir_moves`."""
    for row in rows:
        replicas = row[CURRENT] if after else row[ORIGINAL]
        original = set(row[ORIGINAL])
        for i, b in enumerate(replicas):
            known = b in original
            d = log_dirs.get((row[TOPIC], row[PARTITION], b), ANY_DIR) if known else ANY_DIR
            yield b, (row[TOPIC], row[PARTITION], row[SIZE], d, i == 0)


def staying_replicas(
    rows: Iterable[Row], log_dirs: Mapping[tuple[str, int, int], str]
) -> Iterator[tuple[int, DirReplica]]:
    """The replicas the ``disk`` goal may move: on the same broker before and after the broker
    goals, in a known directory."""
    for b, r in placed_replicas(rows, log_dirs, after=True):
        if r[3] != ANY_DIR:
            yield b, r


def apply_dir_moves(
    placed: Iterable[tuple[int, DirReplica]], moves: Iterable[DirMove]
) -> Iterator[tuple[int, DirReplica]]:
    to = {(m.topic, m.partition, m.broker): m.to_dir for m in moves}
    for b, r in placed:
        d = to.get((r[0], r[1], b))
        yield (b, r) if d is None else (b, (r[0], r[1], r[2], d, r[4]))


def plan_brokers(
    per_broker: Mapping[int, Sequence[DirReplica]],
    capacity: Mapping[int, Mapping[str, int]],
    budget_bytes: int | None,
    tolerance: float,
    topics: str | None,
) -> list[DirMove]:
    """Every broker balanced, the byte budget shared in proportion to the brokers' excess."""
    excess = {b: excess_bytes(rs, capacity.get(b, {})) for b, rs in per_broker.items()}
    slices = budget_slices(excess, budget_bytes)
    moves = [
        m
        for b in sorted(per_broker)
        for m in balance_broker(b, per_broker[b], capacity.get(b, {}), slices[b], tolerance, topics)
    ]
    return sorted(moves)

"""The cluster as the planner sees it: brokers with racks, partitions with replicas and sizes. Pure.

A partition is a plain tuple (:data:`Row`) so that a million of them pickle quickly into Spark
tasks: ``(topic, partition, size_bytes, original, current)``, where ``original`` is its replicas
when the plan started and ``current`` what the goals made of them so far (preferred leader first).
A plan is the rows whose ``current`` differs from ``original``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from reassignd.topic_partition import Replicas, TopicPartition

Row = tuple[str, int, int, Replicas, Replicas]  # topic, partition, size_bytes, original, current

TOPIC: Final = 0
PARTITION: Final = 1
SIZE: Final = 2
ORIGINAL: Final = 3
CURRENT: Final = 4


class ClusterError(ValueError):
    """A cluster description the planner cannot use; ``str(error)`` is a one-line reason."""


@dataclass(frozen=True, slots=True)
class Cluster:
    """Brokers (id → rack, None when unset) and partitions, sorted by topic then partition.
    ``offline`` brokers hold replicas but are not registered: they receive nothing."""

    racks: Mapping[int, str | None]
    rows: tuple[Row, ...]
    offline: frozenset[int] = frozenset()
    # JBOD: each replica's log directory, (topic, partition, broker) -> path (absent: not known),
    # and each broker's directories with their capacity in bytes (0: not known)
    log_dirs: Mapping[tuple[str, int, int], str] = field(default_factory=dict)
    dir_capacity: Mapping[int, Mapping[str, int]] = field(default_factory=dict)

    @property
    def broker_ids(self) -> list[int]:
        return sorted(self.racks)


def make_row(topic: str, partition: int, replicas: Sequence[int], size_bytes: int = 0) -> Row:
    r = tuple(replicas)
    return (topic, partition, size_bytes, r, r)


def build_cluster(
    racks: Mapping[int, str | None], rows: Iterable[Row], *, allow_offline: bool = False
) -> Cluster:
    """Checked: replicas name known brokers (or, with ``allow_offline``, brokers not listed
    become offline brokers without a rack), once each; each partition appears once."""
    racks = dict(racks)
    offline: set[int] = set()
    ordered = sorted(rows, key=lambda r: (r[TOPIC], r[PARTITION]))
    for i, row in enumerate(ordered):
        if i and ordered[i - 1][:2] == row[:2]:
            raise ClusterError(f"partition {row[TOPIC]}-{row[PARTITION]} is listed twice")
        replicas = row[CURRENT]
        if not replicas:
            raise ClusterError(f"partition {row[TOPIC]}-{row[PARTITION]} has no replicas")
        if len(set(replicas)) != len(replicas):
            raise ClusterError(
                f"partition {row[TOPIC]}-{row[PARTITION]} lists a replica twice: {list(replicas)}"
            )
        unknown = [b for b in replicas if b not in racks]
        if unknown and allow_offline:
            offline.update(unknown)
            racks.update(dict.fromkeys(unknown))
        elif unknown:
            raise ClusterError(
                f"partition {row[TOPIC]}-{row[PARTITION]} has replicas on unknown brokers {unknown}"
            )
        if row[SIZE] < 0:
            raise ClusterError(f"partition {row[TOPIC]}-{row[PARTITION]} has a negative size")
    return Cluster(racks, tuple(ordered), frozenset(offline))


def with_sizes(cluster: Cluster, sizes: Mapping[TopicPartition, int]) -> Cluster:
    """The same cluster with each partition's size from ``sizes`` (kept when absent)."""
    rows = tuple((t, p, sizes.get((t, p), s), o, c) for t, p, s, o, c in cluster.rows)
    return replace(cluster, rows=rows)


def with_dirs(
    cluster: Cluster,
    log_dirs: Mapping[tuple[str, int, int], str],
    capacity: Mapping[int, Mapping[str, int]],
) -> Cluster:
    """The same cluster with each replica's directory and each broker's directories (those
    given replace the cluster's own; replicas of partitions it does not have are left out)."""
    replicas = {(r[TOPIC], r[PARTITION], b) for r in cluster.rows for b in r[ORIGINAL]}
    dirs = dict(cluster.log_dirs)
    dirs.update({k: d for k, d in log_dirs.items() if k in replicas})
    caps = {b: dict(v) for b, v in cluster.dir_capacity.items()}
    for b, v in capacity.items():
        caps.setdefault(b, {}).update(v)
    return replace(cluster, log_dirs=dirs, dir_capacity=caps)


def moved_bytes(row: Row) -> int:
    """Bytes copied to carry out the row's move: its size per replica it gains."""
    return row[SIZE] * len(set(row[CURRENT]) - set(row[ORIGINAL]))


def split_groups(rows: Sequence[Row], groups: int) -> list[list[Row]]:
    """``rows`` in ``groups`` contiguous slices of near-equal length (each a Spark task's work)."""
    n = max(1, min(groups, len(rows)))
    size, extra = divmod(len(rows), n)
    out: list[list[Row]] = []
    start = 0
    for g in range(n):
        end = start + size + (1 if g < extra else 0)
        out.append(list(rows[start:end]))
        start = end
    return out

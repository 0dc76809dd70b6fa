"""What the demo does, decided without I/O (its options are in :mod:`reassignd.demo.options`): the demo topic's assignment, which broker
takes each replica off the drained broker, and reading the HTTP API's answers. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from reassignd.api_client.shapes import alter_request, reassignments_by_partition
from reassignd.contracts.cluster import Brokers, Topic
from reassignd.contracts.reassignments import (
    AlterReassignmentsResponse,
    ListReassignmentsResponse,
    Progress,
    Reassignment,
)
from reassignd.contracts.requests import KafkaAlterReassignments
from reassignd.topic_partition import TopicPartition

Json = dict[str, Any]
MiB = 1024 * 1024


def round_robin_assignment(
    broker_ids: Sequence[int], partitions: int, replication_factor: int
) -> dict[int, tuple[int, ...]]:
    """Partition p gets ``replication_factor`` consecutive brokers starting at broker ``p``."""
    ids = sorted(broker_ids)
    if replication_factor > len(ids):
        raise ValueError(f"replication factor {replication_factor} > {len(ids)} brokers")
    return {p: tuple(ids[(p + i) % len(ids)] for i in range(replication_factor)) for p in range(partitions)}


def replacement(
    replicas: Sequence[int],
    leaving: int,
    racks: Mapping[int, str | None],
    load: Mapping[int, int],
    exclude: Sequence[int] = (),
) -> int:
    """The broker that takes ``leaving``'s replica of a partition on ``replicas``.

    Any broker of ``racks`` (the live ones) that holds no replica of the partition and is not
    excluded; first one whose rack no staying replica uses (rack-aware, as Kafka places
    replicas), then the one with the fewest replicas in ``load``, then the lowest id.
    """
    staying = [b for b in replicas if b != leaving]
    used = {racks.get(b) for b in staying} - {None}
    candidates = [b for b in racks if b not in replicas and b != leaving and b not in exclude]
    if not candidates:
        raise ValueError(f"no broker can take broker {leaving}'s replica of [{ids(replicas)}]")
    return min(candidates, key=lambda b: (racks[b] in used, load.get(b, 0), b))


def replica_load(assignment: Mapping[int, Sequence[int]]) -> dict[int, int]:
    load: dict[int, int] = {}
    for replicas in assignment.values():
        for b in replicas:
            load[b] = load.get(b, 0) + 1
    return load


def drain_targets(
    assignment: Mapping[int, Sequence[int]], broker: int, racks: Mapping[int, str | None]
) -> dict[int, list[int]]:
    """New replicas of every partition on ``broker``: each of its replicas goes, in place (the
    replica order, hence the preferred leader order, is kept), to :func:`replacement`."""
    load = replica_load(assignment)
    targets: dict[int, list[int]] = {}
    for p in sorted(assignment):
        replicas = list(assignment[p])
        if broker in replicas:
            new = replacement(replicas, broker, racks, load, exclude=[broker])
            load[new] = load.get(new, 0) + 1
            load[broker] -= 1
            targets[p] = [new if b == broker else b for b in replicas]
    return targets


# --- the HTTP API's documents -------------------------------------------------------------------


def alter_body(topic: str, targets: Mapping[int, Sequence[int] | None]) -> KafkaAlterReassignments:
    """An AlterPartitionReassignments request in Kafka's shape (``None`` cancels)."""
    return alter_request({(topic, p): r for p, r in targets.items()})


def partition_errors(response: AlterReassignmentsResponse) -> list[str]:
    """The failures in an AlterPartitionReassignments response, one line each (none: [])."""
    if response.error_code != 0:
        return [f"{response.error_name} ({response.error_message})"]
    return [
        f"{t.name}-{p.partition}: {p.error_name} ({p.error_message})"
        for t in response.responses
        for p in t.partitions
        if p.error_code != 0
    ]


def listed(listing: ListReassignmentsResponse) -> list[tuple[TopicPartition, Reassignment]]:
    """The partitions of a ListPartitionReassignments answer, by topic and partition."""
    return sorted(reassignments_by_partition(listing).items())


def assignment_of(topic: Topic) -> dict[int, list[int]]:
    """Replicas per partition from ``GET /v1/topics/{topic}``."""
    return {p.partition: list(p.replicas) for p in topic.partitions}


def racks_of(brokers: Brokers) -> dict[int, str | None]:
    """Rack per live broker from ``GET /v1/brokers``."""
    return {b.id: b.rack for b in brokers.brokers}


def fraction_done(progress: Progress | None) -> float | None:
    if progress is None or progress.bytes_total <= 0:
        return None
    return min(1.0, progress.bytes_done / progress.bytes_total)


def ids(values: Sequence[int]) -> str:
    """``[4, 1, 2]`` -> ``4,1,2``; ``[]`` -> ``-``."""
    return ",".join(str(v) for v in values) or "-"

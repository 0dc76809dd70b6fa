"""The controller's answers as the API client hands them on, and its requests. Pure.

The answers are decoded once, into the contract's structs (``reassignd.contracts``), by
:func:`decode`; a body that is not the documented shape is one line of :class:`ResponseError`.
A few answers are then flattened for their users: the per-partition results and the
reassignments keyed by their partition (``(topic, partition)``), as the admin tools print them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import msgspec

from reassignd.api_client.errors import ResponseError
from reassignd.contracts.cluster import Partition, Topic
from reassignd.contracts.reassignments import AlterReassignmentsResponse, ListReassignmentsResponse
from reassignd.contracts.requests import KafkaAlterReassignments, ReassignablePartition, ReassignableTopic
from reassignd.topic_partition import Replicas, TopicPartition

NO_REASSIGNMENT_IN_PROGRESS = 85

T = TypeVar("T")


def decode(body: Any, shape: type[T]) -> T:
    """``body`` (decoded JSON) as the contract's ``shape``: unknown fields ignored, a missing or
    mistyped one refused with ResponseError naming where."""
    try:
        return msgspec.convert(body, shape)
    except msgspec.ValidationError as e:
        raise ResponseError(str(e)) from None


@dataclass(frozen=True, slots=True)
class PartitionResult:
    """One partition's result in AlterPartitionReassignments' response."""

    tp: TopicPartition
    error_code: int
    error_name: str
    error_message: str | None

    @property
    def ok(self) -> bool:
        return self.error_code == 0


@dataclass(frozen=True, slots=True)
class Progress:
    bytes_total: int
    bytes_done: int
    bytes_per_s: float | None
    eta_s: float | None


@dataclass(frozen=True, slots=True)
class Reassignment:
    """One entry of ListPartitionReassignments."""

    tp: TopicPartition
    replicas: Replicas
    adding: Replicas
    removing: Replicas
    progress: Progress | None = None


# --- answers ---------------------------------------------------------------------------------------


def alter_results(answer: AlterReassignmentsResponse) -> list[PartitionResult]:
    """AlterPartitionReassignments' results (also ``DELETE /v1/reassignments``'), in order."""
    return [
        PartitionResult((t.name, p.partition), p.error_code, p.error_name, p.error_message)
        for t in answer.responses
        for p in t.partitions
    ]


def reassignments_by_partition(answer: ListReassignmentsResponse) -> dict[TopicPartition, Reassignment]:
    """ListPartitionReassignments: the partitions being reassigned."""
    found: dict[TopicPartition, Reassignment] = {}
    for t in answer.topics:
        for p in t.partitions:
            tp = (t.name, p.partition)
            g = p.progress
            progress = None if g is None else Progress(g.bytes_total, g.bytes_done, g.bytes_per_s, g.eta_s)
            found[tp] = Reassignment(tp, p.replicas, p.adding_replicas, p.removing_replicas, progress)
    return found


def partitions_by_id(topic: Topic) -> dict[int, Partition]:
    """``GET /v1/topics/{topic}``: partition id → the partition (its ``original`` replicas too)."""
    return {p.partition: p for p in topic.partitions}


# --- requests --------------------------------------------------------------------------------------


def cancel_request(partitions: Iterable[TopicPartition]) -> KafkaAlterReassignments:
    """AlterPartitionReassignments with ``replicas: null`` for each partition (Kafka's --cancel)."""
    return alter_request({tp: None for tp in partitions})


def alter_request(targets: Mapping[TopicPartition, Sequence[int] | None]) -> KafkaAlterReassignments:
    """AlterPartitionReassignments in Kafka's shape: each partition's target replicas (None
    cancels its move), topics and partitions in order."""
    by_topic: dict[str, list[ReassignablePartition]] = {}
    for (topic, partition), replicas in sorted(targets.items()):
        by_topic.setdefault(topic, []).append(
            ReassignablePartition(partition, None if replicas is None else tuple(replicas))
        )
    return KafkaAlterReassignments(tuple(ReassignableTopic(t, tuple(ps)) for t, ps in by_topic.items()))

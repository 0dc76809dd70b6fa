"""The controller's answers as the API client hands them on, and its requests. Pure.

The answers are decoded once, into the contract's structs (``reassignd.contracts``), by
:func:`decode`; a body that is not the documented shape is one line of :class:`ResponseError`.
The client returns those structs; its users may key the per-partition ones by their partition
(``(topic, partition)``) with the functions here, as the admin tools print them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

import msgspec

from reassignd.api_client.errors import ResponseError
from reassignd.contracts.cluster import Partition, Topic
from reassignd.contracts.reassignments import (
    AlterReassignmentsResponse,
    ListReassignmentsResponse,
    PartitionResult,
    Reassignment,
)
from reassignd.contracts.requests import KafkaAlterReassignments, ReassignablePartition, ReassignableTopic
from reassignd.topic_partition import TopicPartition

NO_REASSIGNMENT_IN_PROGRESS = 85

T = TypeVar("T")


def decode(body: Any, shape: type[T]) -> T:
    """``body`` (decoded JSON) as the contract's ``shape``: unknown fields ignored, a missing or
    mistyped one refused with ResponseError naming where."""
    try:
        return msgspec.convert(body, shape)
    except msgspec.ValidationError as e:
        raise ResponseError(str(e)) from None


# --- answers ---------------------------------------------------------------------------------------


def partition_results(answer: AlterReassignmentsResponse) -> list[tuple[TopicPartition, PartitionResult]]:
    """AlterPartitionReassignments' results (also ``DELETE /v1/reassignments``'), in order, each
    with its partition."""
    return [((t.name, p.partition), p) for t in answer.responses for p in t.partitions]


def reassignments_by_partition(answer: ListReassignmentsResponse) -> dict[TopicPartition, Reassignment]:
    """ListPartitionReassignments: the partitions being reassigned."""
    return {(t.name, p.partition): p for t in answer.topics for p in t.partitions}


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

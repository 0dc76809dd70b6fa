"""The HTTP API's answers about partitions: ListPartitionReassignments and
AlterPartitionReassignments (also the cancels' answer), ElectLeaders, and a broker's demotion or
promotion. Kafka's messages in snake_case: whole-request ``error_code``/``error_name``/
``error_message``, then per-partition results grouped by topic. Pure."""

from __future__ import annotations

from typing import Annotated

import msgspec

from reassignd.contracts.errors import ErrorCode, ErrorName, PartitionId

Ids = tuple[int, ...]

_DATE_TIME = msgspec.Meta(extra_json_schema={"format": "date-time"})


class PartitionResult(msgspec.Struct, frozen=True):
    """One partition's result (0: done)."""

    partition: PartitionId
    error_code: ErrorCode
    error_name: ErrorName
    error_message: str | None

    @property
    def ok(self) -> bool:
        return self.error_code == 0


class TopicResults(msgspec.Struct, frozen=True):
    name: str
    partitions: tuple[PartitionResult, ...]


class AlterReassignmentsResponse(msgspec.Struct, frozen=True):
    """AlterPartitionReassignments' answer (also ``DELETE /v1/reassignments...``): topics in order
    of first appearance, partitions in the controller's order."""

    throttle_time_ms: int
    error_code: ErrorCode
    error_name: ErrorName
    error_message: str | None
    responses: tuple[TopicResults, ...]


class Progress(msgspec.Struct, frozen=True):
    bytes_total: int
    bytes_done: int
    bytes_per_s: int
    eta_s: int | None


class Reassignment(msgspec.Struct, frozen=True):
    """One partition being reassigned."""

    partition: PartitionId
    replicas: Ids
    adding_replicas: Ids
    removing_replicas: Ids
    target_replicas: Ids
    original_replicas: Ids
    source: Annotated[str, msgspec.Meta(extra_json_schema={"enum": ["api", "zk", "request", "batch"]})]
    started_at: Annotated[str, _DATE_TIME] | None
    progress: Progress | None


class TopicReassignments(msgspec.Struct, frozen=True):
    name: str
    partitions: tuple[Reassignment, ...]


class ListReassignmentsResponse(msgspec.Struct, frozen=True):
    """ListPartitionReassignments' answer: topics sorted by name, partitions by id."""

    error_code: ErrorCode
    error_name: ErrorName
    error_message: str | None
    topics: tuple[TopicReassignments, ...]


# --- leader elections ------------------------------------------------------------------------------


class ElectionTopicResults(msgspec.Struct, frozen=True):
    topic: str
    partitions: Annotated[
        tuple[PartitionResult, ...],
        msgspec.Meta(
            description="0 elected, 84 ELECTION_NOT_NEEDED, 80 PREFERRED_LEADER_NOT_AVAILABLE, "
            "83 ELIGIBLE_LEADERS_NOT_AVAILABLE, 3 UNKNOWN_TOPIC_OR_PARTITION"
        ),
    ]


class ElectLeadersResponse(msgspec.Struct, frozen=True):
    """ElectLeaders' answer: topics in order of first appearance."""

    throttle_time_ms: int
    error_code: ErrorCode
    error_name: ErrorName
    error_message: str | None
    replica_election_results: tuple[ElectionTopicResults, ...]


# --- demotions -------------------------------------------------------------------------------------


class TopicPartitionResult(msgspec.Struct, frozen=True):
    """One partition's result, named by topic and partition (0: done)."""

    topic: str
    partition: PartitionId
    error_code: ErrorCode
    error_name: ErrorName
    error_message: str | None

    @property
    def ok(self) -> bool:
        return self.error_code == 0


class DemotionResponse(msgspec.Struct, frozen=True):
    """``POST /v1/brokers/{broker_id}/demote|promote``."""

    broker_id: int
    leaders_moved: Annotated[int, msgspec.Meta(description="leaderships the elections moved")]
    refused: Annotated[int, msgspec.Meta(description="partitions refused (error_code not 0)")]
    partitions: Annotated[
        tuple[TopicPartitionResult, ...],
        msgspec.Meta(
            description="each partition acted on (0) or refused: 83 ELIGIBLE_LEADERS_NOT_AVAILABLE "
            "(no other live in-sync replica can lead), 60 REASSIGNMENT_IN_PROGRESS (being moved), "
            "10002 STALE_PLAN (promote: its replicas changed since the demotion)"
        ),
    ]

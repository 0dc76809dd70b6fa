"""Requests that HTTP handlers hand to the controller, and the results they get back. Pure values.

The HTTP layer parses and validates the JSON shape (400/42 on malformed input); the controller
validates against its context (per-partition Kafka errors) inside its event.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from reassignd.errors import error_name

TopicPartition = tuple[str, int]


class CancelMode(enum.Enum):
    CANCEL = "cancel"  # revert to the original replicas (KIP-455 final, Kafka's --cancel)
    STOP = "stop"  # keep adding replicas already in the ISR: ORS + (AR ∩ ISR)


class Source(enum.Enum):
    API = "api"
    ZK = "zk"  # the legacy /admin/reassign_partitions znode
    REQUEST = "request"  # KIP-236 sequenced protocol
    BATCH = "batch"


@dataclass(frozen=True, slots=True)
class AlterReassignments:
    """AlterPartitionReassignments: a target per partition; ``None`` cancels (in ``mode``).
    Duplicate partitions: the last one wins."""

    targets: tuple[tuple[TopicPartition, tuple[int, ...] | None], ...]
    mode: CancelMode = CancelMode.CANCEL


@dataclass(frozen=True, slots=True)
class CancelReassignments:
    """DELETE /v1/reassignments[/{topic}[/{partition}]]: every, one topic's, or one partition's."""

    topic: str | None = None
    partition: int | None = None
    mode: CancelMode = CancelMode.CANCEL


@dataclass(frozen=True, slots=True)
class PartitionResult:
    topic: str
    partition: int
    error_code: int = 0
    error_message: str | None = None

    @property
    def error_name(self) -> str:
        return error_name(self.error_code)


@dataclass(frozen=True, slots=True)
class AlterResult:
    results: tuple[PartitionResult, ...]

"""Requests that the HTTP API and the Kafka listener hand to the controller, and the results they
get back. Pure values.

Each door decodes a request into its contract struct (``reassignd.contracts.requests``; the HTTP
API refuses a malformed body with 400/42) and one function per request kind builds the request
here from it (``from_contracts.py``); the controller's
door (``ControllerApi`` with ``admission.py``) refuses what is wrong whatever the cluster holds
before anything is queued; the rest is validated against the context (per-partition Kafka errors)
inside the event.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from reassignd.errors import error_name
from reassignd.topic_partition import TopicPartition


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
class AlterPartitionResult:
    topic: str
    partition: int
    error_code: int = 0
    error_message: str | None = None

    @property
    def error_name(self) -> str:
        return error_name(self.error_code)


@dataclass(frozen=True, slots=True)
class AlterResult:
    results: tuple[AlterPartitionResult, ...]


# --- topic mutations (CreateTopics / DeleteTopics / CreatePartitions) and quotas ---------------


@dataclass(frozen=True, slots=True)
class Requester:
    """Who asks: the authenticated user (``ANONYMOUS`` without auth) and the X-Client-Id."""

    user: str = "ANONYMOUS"
    client_id: str = ""


NO_NUM_PARTITIONS = -1
"""Kafka's CreateTopicsRequest.NO_NUM_PARTITIONS: use the broker default."""
NO_REPLICATION_FACTOR = -1
"""Kafka's CreateTopicsRequest.NO_REPLICATION_FACTOR: use the broker default."""


@dataclass(frozen=True, slots=True)
class TopicToCreate:
    """One CreateTopics entry (Kafka's CreatableTopic); -1 means "the broker default"."""

    name: str
    num_partitions: int = NO_NUM_PARTITIONS
    replication_factor: int = NO_REPLICATION_FACTOR
    assignments: Mapping[int, Sequence[int]] | None = None
    configs: Mapping[str, str | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PartitionsToAdd:
    """One CreatePartitions entry: the new total ``count`` and, optionally, one replica list per
    new partition (None: placed by reassignd)."""

    name: str
    count: int
    assignments: Sequence[Sequence[int]] | None = None


@dataclass(frozen=True, slots=True)
class CreateTopics:
    topics: tuple[TopicToCreate, ...]
    caller: Requester = Requester()
    validate_only: bool = False
    timeout_ms: int = 30000
    strict_quota: bool = True  # False: KIP-599's permissive quota (Kafka's older request versions)


@dataclass(frozen=True, slots=True)
class DeleteTopics:
    names: tuple[str, ...]
    caller: Requester = Requester()
    timeout_ms: int = 30000
    strict_quota: bool = True


@dataclass(frozen=True, slots=True)
class CreatePartitions:
    topics: tuple[PartitionsToAdd, ...]
    caller: Requester = Requester()
    validate_only: bool = False
    timeout_ms: int = 30000
    strict_quota: bool = True


@dataclass(frozen=True, slots=True)
class TopicOutcome:
    name: str
    error_code: int = 0
    error_message: str | None = None
    num_partitions: int | None = None  # CreateTopics: what was (or would be) created
    replication_factor: int | None = None

    @property
    def error_name(self) -> str:
        return error_name(self.error_code)


@dataclass(frozen=True, slots=True)
class TopicsResult:
    """Per-topic results in request order; ``throttle_time_ms`` > 0 when a topic was throttled
    (HTTP adds ``Retry-After``)."""

    results: tuple[TopicOutcome, ...]
    throttle_time_ms: int = 0
    decided_at_s: float | None = None  # the controller's clock when throttle_time_ms was computed

    def answered_at(self, now_s: float) -> TopicsResult:
        """The result as it goes out at ``now_s``: ``throttle_time_ms`` is the time still to wait
        then (Kafka's throttleTime less the time the answer took, never below 0)."""
        if self.decided_at_s is None or self.throttle_time_ms <= 0:
            return self
        waited_ms = max(0, math.floor((now_s - self.decided_at_s) * 1000.0))
        return dataclasses.replace(
            self, throttle_time_ms=max(0, self.throttle_time_ms - waited_ms), decided_at_s=now_s
        )


@dataclass(frozen=True, slots=True)
class QuotaChange:
    """One entity of AlterClientQuotas: ``user``/``client_id`` (None = not part of the entity,
    ``<default>`` = the default), and ``controller_mutation_rate`` (None removes it)."""

    user: str | None
    client_id: str | None
    controller_mutation_rate: float | None


@dataclass(frozen=True, slots=True)
class AlterQuotas:
    entries: tuple[QuotaChange, ...]


@dataclass(frozen=True, slots=True)
class QuotaAlterationResult:
    user: str | None
    client_id: str | None
    error_code: int = 0
    error_message: str | None = None

    @property
    def error_name(self) -> str:
        return error_name(self.error_code)


@dataclass(frozen=True, slots=True)
class QuotaDescription:
    user: str | None
    client_id: str | None
    values: tuple[tuple[str, float], ...]  # (("controller_mutation_rate", 2.0),)

"""Requests of the Kafka listener that the controller handles besides the HTTP API's
(``requests.py``): AlterConfigs and IncrementalAlterConfigs, ElectLeaders, and their results. Pure
values."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from reassignd.errors import error_name
from reassignd.topic_partition import TopicPartition
from reassignd.zk import paths


class ResourceType(enum.IntEnum):
    """Kafka's ConfigResource.Type codes."""

    TOPIC = 2
    BROKER = 4


class ConfigOp(enum.IntEnum):
    """IncrementalAlterConfigs' operations."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


@dataclass(frozen=True, slots=True)
class ConfigResource:
    type: ResourceType
    name: str  # a topic; a broker id, or "" for the cluster-wide default

    @property
    def path(self) -> str:
        if self.type is ResourceType.TOPIC:
            return paths.config_topic(self.name)
        return paths.config_broker(int(self.name) if self.name else None)


@dataclass(frozen=True, slots=True)
class ConfigChange:
    name: str
    op: ConfigOp
    value: str | None


@dataclass(frozen=True, slots=True)
class ResourceAlteration:
    """The changes to one resource's dynamic config. ``replace``: AlterConfigs (33), whose
    changes are the whole new config (every key not named is removed, as Kafka does); otherwise
    IncrementalAlterConfigs (44), whose changes apply to the stored config."""

    resource: ConfigResource
    changes: tuple[ConfigChange, ...]
    replace: bool = False


@dataclass(frozen=True, slots=True)
class AlterConfigs:
    """AlterConfigs or IncrementalAlterConfigs: the resources' changes (each resource answered on
    its own)."""

    resources: tuple[ResourceAlteration, ...]
    validate_only: bool = False
    user: str = "ANONYMOUS"


@dataclass(frozen=True, slots=True)
class ConfigResult:
    resource: ConfigResource
    error_code: int = 0
    error_message: str | None = None

    @property
    def error_name(self) -> str:
        return error_name(self.error_code)


class ElectionType(enum.IntEnum):
    PREFERRED = 0
    UNCLEAN = 1


@dataclass(frozen=True, slots=True)
class ElectLeaders:
    election_type: ElectionType
    partitions: tuple[TopicPartition, ...] | None  # None: every partition


@dataclass(frozen=True, slots=True)
class ElectionResult:
    topic: str
    partition: int
    error_code: int = 0
    error_message: str | None = None

    @property
    def error_name(self) -> str:
        return error_name(self.error_code)


@dataclass(frozen=True, slots=True)
class DemotionResult:
    """``POST /v1/brokers/{id}/demote`` or ``/promote``: per partition acted on or refused, 0 or
    why not (``ElectionResult``'s shape: topic, partition, error code and message)."""

    broker_id: int
    partitions: tuple[ElectionResult, ...]
    leaders_moved: int

    @property
    def refused(self) -> int:
        return sum(1 for p in self.partitions if p.error_code != 0)

"""Strict JSON codecs for every znode of ZK_LAYOUT.md.

Each ``decode_*`` takes the raw bytes (``None`` for a znode with null data) and returns a typed
value or raises :class:`CodecError` with a one-line human reason ("invalid JSON at byte 1",
"field 'leader' must be an integer"). Unknown keys are accepted. Each ``encode_*`` returns compact
UTF-8 JSON bytes. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

TopicPartition = tuple[str, int]


class CodecError(ValueError):
    """A znode's content could not be decoded; ``reason`` says why in one line."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --- /controller, /controller_epoch, /cluster/id -------------------------------------------------


@dataclass(frozen=True, slots=True)
class ControllerInfo:
    broker_id: int
    timestamp_ms: int
    http: str | None = None


def encode_controller(info: ControllerInfo) -> bytes:
    """``{"version":1,"brokerid":N,"timestamp":"<ms>"[,"http":url]}``."""
    raise NotImplementedError


def decode_controller(data: bytes | None) -> ControllerInfo:
    raise NotImplementedError


def encode_controller_epoch(epoch: int) -> bytes:
    """The epoch as a decimal string: ``b"7"``."""
    raise NotImplementedError


def decode_controller_epoch(data: bytes | None) -> int:
    raise NotImplementedError


def encode_cluster_id(cluster_id: str) -> bytes:
    """``{"version":"1","id":"<22-char id>"}``."""
    raise NotImplementedError


def decode_cluster_id(data: bytes | None) -> str:
    raise NotImplementedError


def new_uuid_base64() -> str:
    """A random UUID as 22-char url-safe base64 without padding (Kafka's Uuid.toString)."""
    raise NotImplementedError


# --- /brokers/ids/<id> ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Endpoint:
    listener: str  # "PLAINTEXT", "CONTROL"
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.listener}://{self.host}:{self.port}"


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    """Kafka's v5 broker registration plus reassignd's CONTROL listener."""

    broker_id: int
    host: str
    port: int
    endpoints: tuple[Endpoint, ...]
    rack: str | None = None
    timestamp_ms: int = 0
    jmx_port: int = -1

    def endpoint(self, listener: str) -> Endpoint | None:
        for ep in self.endpoints:
            if ep.listener == listener:
                return ep
        return None

    @property
    def control_url(self) -> str | None:
        """``http://host:port`` of the CONTROL listener, if registered."""
        ep = self.endpoint("CONTROL")
        return None if ep is None else f"http://{ep.host}:{ep.port}"


def encode_broker(reg: BrokerRegistration) -> bytes:
    """Kafka v5: version, host, port, jmx_port, timestamp (string), endpoints (strings),
    rack (only if set), listener_security_protocol_map (every listener -> "PLAINTEXT"),
    features ({})."""
    raise NotImplementedError


def decode_broker(broker_id: int, data: bytes | None) -> BrokerRegistration:
    """Accepts versions 1-5 (v1-3 without endpoints use host/port as PLAINTEXT)."""
    raise NotImplementedError


# --- /brokers/topics/<topic> ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TopicZnode:
    """The topic znode: RS per partition and the AR/RR of partitions being reassigned.

    ``adding``/``removing`` hold only partitions with a non-empty list.
    """

    partitions: Mapping[int, tuple[int, ...]]
    adding: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    removing: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    topic_id: str | None = None


def encode_topic(znode: TopicZnode) -> bytes:
    """Version 3 when ``topic_id`` is set, else version 2; both maps always written."""
    raise NotImplementedError


def decode_topic(data: bytes | None) -> TopicZnode:
    """Versions 1, 2 and 3. Partition keys must be non-negative decimal integers, replica lists
    lists of non-negative ints without duplicates; AR/RR keys must name existing partitions."""
    raise NotImplementedError


# --- /brokers/topics/<topic>/partitions/<p>/state ------------------------------------------------


@dataclass(frozen=True, slots=True)
class PartitionState:
    """LeaderIsrAndControllerEpoch; the partition epoch is the znode version, kept beside it."""

    leader: int
    leader_epoch: int
    controller_epoch: int
    isr: tuple[int, ...]


def encode_partition_state(state: PartitionState) -> bytes:
    """``{"version":1,"leader":1,"leader_epoch":3,"controller_epoch":5,"isr":[1,2,3]}``."""
    raise NotImplementedError


def decode_partition_state(data: bytes | None) -> PartitionState:
    raise NotImplementedError


# --- /admin/reassign_partitions (and _extra) -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class LegacyReassignmentEntry:
    topic: str
    partition: int
    replicas: tuple[int, ...]
    original_replicas: tuple[int, ...] | None = None


def encode_legacy_reassignment(entries: tuple[LegacyReassignmentEntry, ...]) -> bytes:
    """``{"version":1,"partitions":[{"topic","partition","replicas"[,"original_replicas"]}]}``."""
    raise NotImplementedError


def decode_legacy_reassignment(data: bytes | None) -> tuple[LegacyReassignmentEntry, ...]:
    raise NotImplementedError


# --- KIP-236 sequenced protocol ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReassignmentRequest:
    assignments: Mapping[TopicPartition, tuple[int, ...]]
    legacy: bool = False


def encode_reassignment_request(request: ReassignmentRequest) -> bytes:
    """``{"version":1,"assignments":{"t":{"0":[1,2,3]}},"legacy":false}``."""
    raise NotImplementedError


def decode_reassignment_request(data: bytes | None) -> ReassignmentRequest:
    raise NotImplementedError


@dataclass(frozen=True, slots=True)
class ReassignmentStatus:
    target: tuple[int, ...]
    original: tuple[int, ...]
    top: int


def encode_reassignment_status(status: ReassignmentStatus) -> bytes:
    """``{"version":1,"target":[...],"original":[...],"top":N}``."""
    raise NotImplementedError


def decode_reassignment_status(data: bytes | None) -> ReassignmentStatus:
    raise NotImplementedError


# --- /isr_change_notification --------------------------------------------------------------------


def encode_isr_change(partitions: tuple[TopicPartition, ...]) -> bytes:
    """``{"version":1,"partitions":[{"topic":"foo","partition":0}]}``."""
    raise NotImplementedError


def decode_isr_change(data: bytes | None) -> tuple[TopicPartition, ...]:
    raise NotImplementedError


# --- /config -------------------------------------------------------------------------------------


def encode_entity_config(config: Mapping[str, str]) -> bytes:
    """``{"version":1,"config":{"k":"v"}}``; values are strings."""
    raise NotImplementedError


def decode_entity_config(data: bytes | None) -> dict[str, str]:
    """Values must be strings (Kafka stores every config value as a string)."""
    raise NotImplementedError


def encode_config_change(entity_path: str) -> bytes:
    """``{"version":2,"entity_path":"users/alice/clients/app-1"}``."""
    raise NotImplementedError


def decode_config_change(data: bytes | None) -> str:
    """Returns the entity path. Version 1 notifications (``entity_type``/``entity_name``) are
    turned into the same form (``topics/foo``)."""
    raise NotImplementedError

"""The HTTP API's read answers about the controller and the cluster: ``/healthz``, ``/readyz``,
``/v1/status``, ``/v1/whoami``, ``/v1/brokers``, ``/v1/topics``, ``/v1/topics/{topic}`` and
``/v1/log-dirs``. The server builds and encodes these structs, the API client decodes them, and
the OpenAPI document's components are generated from them. Pure."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from reassignd.contracts.errors import ActiveController, ErrorCode, ErrorName, PartitionId

Ids = tuple[int, ...]


def _one_of(*values: str, description: str | None = None) -> msgspec.Meta:
    """A string the server writes from a closed set (the client reads any string)."""
    return msgspec.Meta(extra_json_schema={"enum": list(values)}, description=description)


# --- health ----------------------------------------------------------------------------------------


class Health(msgspec.Struct, frozen=True):
    status: Literal["ok"]


class Readiness(msgspec.Struct, frozen=True, omit_defaults=True):
    status: Annotated[str, _one_of("ready", "not ready")]
    reason: str | None = None


class Caller(msgspec.Struct, frozen=True):
    """``GET /v1/whoami``: the caller's user and role."""

    user: str
    role: Annotated[str, _one_of("viewer", "admin")]


class HandOver(msgspec.Struct, frozen=True):
    """``POST /v1/controller/resign``: the instance that won the role (null: none did)."""

    active_controller: ActiveController | None


# --- status ----------------------------------------------------------------------------------------


class ZooKeeper(msgspec.Struct, frozen=True):
    connected: bool
    session_id: Annotated[str | None, msgspec.Meta(description="0x... (ZooKeeper's spelling)")]
    principal: Annotated[
        str,
        msgspec.Meta(
            description="who the session is to ZooKeeper: sasl:<user> (SASL DIGEST-MD5), its client "
            "certificate over TLS, or anonymous; never a password"
        ),
    ] = "anonymous"
    tls: Annotated[bool, msgspec.Meta(description="connected over TLS, the server verified")] = False
    acls: Annotated[
        Literal["open", "kafka"],
        msgspec.Meta(
            description="the ACLs of the znodes it creates: open (world:anyone, every permission) or "
            "kafka (Kafka's zookeeper.set.acl: the creator all, anyone read, sensitive paths creator only)"
        ),
    ] = "open"


class LiveBrokers(msgspec.Struct, frozen=True):
    live: Ids


class EventQueue(msgspec.Struct, frozen=True):
    size: int
    queue_time_ms: dict[str, float]


class StatusProblem(msgspec.Struct, frozen=True):
    path: str
    reason: str


class LostBrokerStatus(msgspec.Struct, frozen=True):
    broker_id: int
    lost_at_ms: int
    heal_at_ms: int
    state: Annotated[str, _one_of("waiting", "healing", "incomplete")]
    batch_ids: tuple[str, ...]
    replicas: int


class HealOutcome(msgspec.Struct, frozen=True):
    broker_id: int
    batch_id: str | None
    outcome: Annotated[str, _one_of("completed", "returned", "incomplete", "failed")]
    reason: str
    at_ms: int


class SelfHealing(msgspec.Struct, frozen=True):
    """The active controller's self-healing (docs/operations.md, "Self-healing")."""

    enabled: bool
    broker_grace_s: float
    brokers: tuple[LostBrokerStatus, ...]
    recent: tuple[HealOutcome, ...]


class KafkaSinkStatus(msgspec.Struct, frozen=True):
    topic: str
    connected: bool
    sent: int
    dropped: int
    buffered: int


class EventsStatus(msgspec.Struct, frozen=True, omit_defaults=True):
    last_event_id: str | None
    history: int
    kafka: KafkaSinkStatus | None = None


class Status(msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True):
    """``GET /v1/status``: this instance and the cluster."""

    controller_id: int
    active: bool
    controller_epoch: int
    active_controller: ActiveController | None
    zookeeper: ZooKeeper
    brokers: LiveBrokers
    topics: int
    partitions: int
    reassigning_partitions: int
    event_queue: EventQueue
    uptime_s: int
    problems: tuple[StatusProblem, ...]
    self_healing: SelfHealing | None = None
    events: EventsStatus | None = None


# --- brokers and topics ----------------------------------------------------------------------------


class Broker(msgspec.Struct, frozen=True):
    id: int
    rack: str | None
    endpoints: tuple[str, ...]
    broker_epoch: int


class Brokers(msgspec.Struct, frozen=True):
    """``GET /v1/brokers``: the registered brokers, and the demoted ones (registered or not)."""

    brokers: tuple[Broker, ...]
    demoted: Annotated[
        dict[str, int],
        msgspec.Meta(
            description="each demoted broker (by id, registered or not): the partitions whose "
            "replica order its demotion recorded, which promote restores"
        ),
    ]


class TopicSummary(msgspec.Struct, frozen=True):
    name: str
    partitions: int
    replication_factor: int
    reassigning_partitions: int


class Topics(msgspec.Struct, frozen=True):
    """``GET /v1/topics``."""

    topics: tuple[TopicSummary, ...]


class Partition(msgspec.Struct, frozen=True, gc=False):
    """One partition of a topic (``GET /v1/topics/{topic}``); also the controller's published
    view of it (15× faster to build than a frozen dataclass: 0.2 against 2.9 µs)."""

    partition: PartitionId
    replicas: Ids
    leader: int  # -1 when none (or no state znode yet)
    leader_epoch: int
    isr: Ids
    adding_replicas: Ids
    removing_replicas: Ids

    @property
    def original(self) -> Ids:
        """RS − AR: the replicas before the move in flight (the replicas when none is)."""
        return tuple(r for r in self.replicas if r not in self.adding_replicas)


class Topic(msgspec.Struct, frozen=True):
    """``GET /v1/topics/{topic}``: partitions sorted by id."""

    name: str
    topic_id: str | None
    partitions: tuple[Partition, ...]


# --- log dirs (the JSON kafka-log-dirs --describe prints) ------------------------------------------


class LogDirPartition(msgspec.Struct, frozen=True, rename="camel"):
    partition: Annotated[str, msgspec.Meta(description="<topic>-<partition>")]
    size: int
    offset_lag: int
    is_future: bool


class LogDir(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    log_dir: str
    error: str | None
    partitions: tuple[LogDirPartition, ...]
    # a broker agent with --log-dirs: the dir's capacity and what is left of it (-1: none given)
    total_bytes: int | None = None
    usable_bytes: int | None = None


class BrokerLogDirs(msgspec.Struct, frozen=True, rename="camel"):
    broker: int
    log_dirs: tuple[LogDir, ...]


class LogDirs(msgspec.Struct, frozen=True):
    """``GET /v1/log-dirs``."""

    version: Literal[1]
    brokers: tuple[BrokerLogDirs, ...]


class LogDirMoveResult(msgspec.Struct, frozen=True):
    """One replica's answer (Kafka's AlterReplicaLogDirs codes): 0 the move started (or was not
    needed), 9 REPLICA_NOT_AVAILABLE (the broker does not host it yet: the dir is remembered for
    when it comes), 57 LOG_DIR_NOT_FOUND, 56 KAFKA_STORAGE_ERROR (the agent could not be asked)."""

    topic: str
    partition: PartitionId
    dir: str
    error_code: ErrorCode
    error_name: ErrorName
    error_message: str | None


class MoveLogDirsResponse(msgspec.Struct, frozen=True):
    """``POST /v1/log-dirs/moves``: one result per move, in the request's order."""

    broker: int
    results: tuple[LogDirMoveResult, ...]

"""The control channel's wire format (BROKERS.md): controller → broker agent, HTTP/JSON.

Shared by the controller (which builds and sends these) and the agent (which parses them). Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeGuard

LEADER_AND_ISR_PATH = "/control/leader_and_isr"
STOP_REPLICA_PATH = "/control/stop_replica"
UPDATE_METADATA_PATH = "/control/update_metadata"
REPLICAS_PATH = "/replicas"
FETCH_PATH = "/replication/fetch"

NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
STALE_CONTROLLER_EPOCH = 11
STALE_BROKER_EPOCH = 77
INVALID_REQUEST = 42


class WireError(ValueError):
    """A control request body that does not match the wire format."""


def _int(obj: dict[str, Any], key: str) -> int:
    value = obj.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise WireError(f"field '{key}' must be an integer")
    return value


def _ints(obj: dict[str, Any], key: str, default: list[int] | None = None) -> tuple[int, ...]:
    value = obj.get(key, default)
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise WireError(f"field '{key}' must be a list of integers")
    return tuple(value)


def _int_list(value: Any) -> TypeGuard[list[int]]:
    """A list of integers (not booleans): the fast paths' check."""
    if type(value) is not list:
        return False
    for v in value:  # noqa: SIM110 (a loop beats all() on the short lists here)
        if type(v) is not int:
            return False
    return True


def _str(obj: dict[str, Any], key: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise WireError(f"field '{key}' must be a string")
    return value


def _obj(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise WireError(f"{what} must be an object")
    return value


def _list(obj: dict[str, Any], key: str) -> list[Any]:
    value = obj.get(key, [])
    if not isinstance(value, list):
        raise WireError(f"field '{key}' must be a list")
    return value


_NO_IDS: list[int] = []


@dataclass(frozen=True, slots=True)
class WirePartitionState:
    topic: str
    partition: int
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()
    is_new: bool = False

    def to_json(self, *, with_is_new: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "topic": self.topic,
            "partition": self.partition,
            "controller_epoch": self.controller_epoch,
            "leader": self.leader,
            "leader_epoch": self.leader_epoch,
            "isr": list(self.isr),
            "partition_epoch": self.partition_epoch,
            "replicas": list(self.replicas),
            "adding_replicas": list(self.adding_replicas),
            "removing_replicas": list(self.removing_replicas),
        }
        if with_is_new:
            out["is_new"] = self.is_new
        return out

    @staticmethod
    def from_json(raw: Any) -> WirePartitionState:
        if type(raw) is dict:  # the fast path: every field present and well typed
            get = raw.get
            topic, partition, leader = get("topic"), get("partition"), get("leader")
            controller_epoch, leader_epoch = get("controller_epoch"), get("leader_epoch")
            partition_epoch, isr, replicas = get("partition_epoch"), get("isr"), get("replicas")
            adding, removing = get("adding_replicas", _NO_IDS), get("removing_replicas", _NO_IDS)
            if (
                type(topic) is str
                and type(partition) is int
                and type(controller_epoch) is int
                and type(leader) is int
                and type(leader_epoch) is int
                and type(partition_epoch) is int
                and _int_list(isr)
                and _int_list(replicas)
                and _int_list(adding)
                and _int_list(removing)
            ):
                return WirePartitionState(
                    topic,
                    partition,
                    controller_epoch,
                    leader,
                    leader_epoch,
                    tuple(isr),
                    partition_epoch,
                    tuple(replicas),
                    tuple(adding),
                    tuple(removing),
                    bool(get("is_new", False)),
                )
        obj = _obj(raw, "partition state")
        return WirePartitionState(
            topic=_str(obj, "topic"),
            partition=_int(obj, "partition"),
            controller_epoch=_int(obj, "controller_epoch"),
            leader=_int(obj, "leader"),
            leader_epoch=_int(obj, "leader_epoch"),
            isr=_ints(obj, "isr"),
            partition_epoch=_int(obj, "partition_epoch"),
            replicas=_ints(obj, "replicas"),
            adding_replicas=_ints(obj, "adding_replicas", []),
            removing_replicas=_ints(obj, "removing_replicas", []),
            is_new=bool(obj.get("is_new", False)),
        )


@dataclass(frozen=True, slots=True)
class LiveBroker:
    broker_id: int
    rack: str | None
    endpoints: tuple[str, ...]  # "LISTENER://host:port"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.broker_id, "rack": self.rack, "endpoints": list(self.endpoints)}

    @staticmethod
    def from_json(raw: Any) -> LiveBroker:
        obj = _obj(raw, "live broker")
        if "id" not in obj and "broker_id" in obj:
            # BROKERS.md's live_leaders example: {"broker_id", "host", "port"}; reassignd's agents
            # serve PLAINTEXT and CONTROL on that one port
            host, port = _str(obj, "host"), _int(obj, "port")
            return LiveBroker(
                _int(obj, "broker_id"), None, (f"PLAINTEXT://{host}:{port}", f"CONTROL://{host}:{port}")
            )
        rack = obj.get("rack")
        if rack is not None and not isinstance(rack, str):
            raise WireError("field 'rack' must be a string or null")
        endpoints = _list(obj, "endpoints")
        if not all(isinstance(e, str) for e in endpoints):
            raise WireError("field 'endpoints' must be a list of strings")
        return LiveBroker(_int(obj, "id"), rack, tuple(endpoints))


@dataclass(frozen=True, slots=True)
class Header:
    controller_id: int
    controller_epoch: int
    broker_epoch: int

    def to_json(self) -> dict[str, Any]:
        return {
            "controller_id": self.controller_id,
            "controller_epoch": self.controller_epoch,
            "broker_epoch": self.broker_epoch,
        }

    @staticmethod
    def from_json(obj: dict[str, Any]) -> Header:
        return Header(_int(obj, "controller_id"), _int(obj, "controller_epoch"), _int(obj, "broker_epoch"))


@dataclass(frozen=True, slots=True)
class LeaderAndIsrRequest:
    header: Header
    partition_states: tuple[WirePartitionState, ...]
    live_leaders: tuple[LiveBroker, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            **self.header.to_json(),
            "partition_states": [p.to_json() for p in self.partition_states],
            "live_leaders": [b.to_json() for b in self.live_leaders],
        }

    @staticmethod
    def from_json(raw: Any) -> LeaderAndIsrRequest:
        obj = _obj(raw, "request")
        return LeaderAndIsrRequest(
            Header.from_json(obj),
            tuple(WirePartitionState.from_json(p) for p in _list(obj, "partition_states")),
            tuple(LiveBroker.from_json(b) for b in _list(obj, "live_leaders")),
        )


@dataclass(frozen=True, slots=True)
class UpdateMetadataRequest:
    header: Header
    partition_states: tuple[WirePartitionState, ...]
    live_brokers: tuple[LiveBroker, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            **self.header.to_json(),
            "partition_states": [p.to_json(with_is_new=False) for p in self.partition_states],
            "live_brokers": [b.to_json() for b in self.live_brokers],
        }

    @staticmethod
    def from_json(raw: Any) -> UpdateMetadataRequest:
        obj = _obj(raw, "request")
        return UpdateMetadataRequest(
            Header.from_json(obj),
            tuple(WirePartitionState.from_json(p) for p in _list(obj, "partition_states")),
            tuple(LiveBroker.from_json(b) for b in _list(obj, "live_brokers")),
        )


@dataclass(frozen=True, slots=True)
class StopReplicaPartition:
    topic: str
    partition: int
    leader_epoch: int
    delete_partition: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "leader_epoch": self.leader_epoch,
            "delete_partition": self.delete_partition,
        }

    @staticmethod
    def from_json(raw: Any) -> StopReplicaPartition:
        obj = _obj(raw, "partition")
        return StopReplicaPartition(
            _str(obj, "topic"),
            _int(obj, "partition"),
            _int(obj, "leader_epoch"),
            bool(obj.get("delete_partition", False)),
        )


@dataclass(frozen=True, slots=True)
class StopReplicaRequest:
    header: Header
    partitions: tuple[StopReplicaPartition, ...]

    def to_json(self) -> dict[str, Any]:
        return {**self.header.to_json(), "partitions": [p.to_json() for p in self.partitions]}

    @staticmethod
    def from_json(raw: Any) -> StopReplicaRequest:
        obj = _obj(raw, "request")
        return StopReplicaRequest(
            Header.from_json(obj), tuple(StopReplicaPartition.from_json(p) for p in _list(obj, "partitions"))
        )


ControlRequest = LeaderAndIsrRequest | UpdateMetadataRequest | StopReplicaRequest


def path_of(request: ControlRequest) -> str:
    match request:
        case LeaderAndIsrRequest():
            return LEADER_AND_ISR_PATH
        case UpdateMetadataRequest():
            return UPDATE_METADATA_PATH
        case StopReplicaRequest():
            return STOP_REPLICA_PATH


@dataclass(frozen=True, slots=True)
class PartitionError:
    topic: str
    partition: int
    error_code: int

    def to_json(self) -> dict[str, Any]:
        return {"topic": self.topic, "partition": self.partition, "error_code": self.error_code}


@dataclass(frozen=True, slots=True)
class ControlResponse:
    error_code: int
    partition_errors: tuple[PartitionError, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "error_code": self.error_code,
            "partition_errors": [e.to_json() for e in self.partition_errors],
        }

    @staticmethod
    def from_json(raw: Any) -> ControlResponse:
        obj = _obj(raw, "response")
        errors = []
        for e in _list(obj, "partition_errors"):
            eo = _obj(e, "partition error")
            errors.append(PartitionError(_str(eo, "topic"), _int(eo, "partition"), _int(eo, "error_code")))
        return ControlResponse(_int(obj, "error_code"), tuple(errors))


# --- replication between agents (follower → leader), and the agent's progress report ------------

NOT_LEADER_OR_FOLLOWER = 6
FETCH_SESSION_ID_NOT_FOUND = 70
INVALID_FETCH_SESSION_EPOCH = 71
FENCED_LEADER_EPOCH = 74
UNKNOWN_LEADER_EPOCH = 75


def _bool(obj: dict[str, Any], key: str) -> bool:
    value = obj.get(key)
    if not isinstance(value, bool):
        raise WireError(f"field '{key}' must be a boolean")
    return value


@dataclass(frozen=True, slots=True)
class FetchPartition:
    topic: str
    partition: int
    leader_epoch: int  # the leader epoch the follower knows
    fetch_offset: int  # the follower's log end offset
    max_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "leader_epoch": self.leader_epoch,
            "fetch_offset": self.fetch_offset,
            "max_bytes": self.max_bytes,
        }

    @staticmethod
    def from_json(raw: Any) -> FetchPartition:
        if type(raw) is dict:
            get = raw.get
            topic, partition, epoch = get("topic"), get("partition"), get("leader_epoch")
            offset, max_bytes = get("fetch_offset"), get("max_bytes")
            if (
                type(topic) is str
                and type(partition) is int
                and type(epoch) is int
                and type(offset) is int
                and type(max_bytes) is int
            ):
                return FetchPartition(topic, partition, epoch, offset, max_bytes)
        obj = _obj(raw, "fetch partition")
        return FetchPartition(
            _str(obj, "topic"),
            _int(obj, "partition"),
            _int(obj, "leader_epoch"),
            _int(obj, "fetch_offset"),
            _int(obj, "max_bytes"),
        )


@dataclass(frozen=True, slots=True)
class FetchRequest:
    """``POST /replication/fetch`` on the leader's agent: one request per (follower, leader) pair
    covers every partition the follower fetches from that leader, like Kafka's replica fetcher.

    Optional incremental fetch session (Kafka's KIP-227, sessions.py): with ``session_id``, epoch 0
    lists every partition and (re)starts the session; epochs 1, 2, ... list only the partitions
    that need it and name those leaving the session in ``forgotten``. Without it every listed
    partition is answered and nothing is remembered."""

    replica_id: int
    partitions: tuple[FetchPartition, ...]
    session_id: int | None = None
    session_epoch: int = 0
    forgotten: tuple[tuple[str, int], ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "replica_id": self.replica_id,
            "partitions": [p.to_json() for p in self.partitions],
        }
        if self.session_id is not None:
            out["session_id"] = self.session_id
            out["session_epoch"] = self.session_epoch
            out["forgotten"] = [{"topic": t, "partition": p} for t, p in self.forgotten]
        return out

    @staticmethod
    def from_json(raw: Any) -> FetchRequest:
        obj = _obj(raw, "request")
        session_id = None
        if obj.get("session_id") is not None:
            session_id = _int(obj, "session_id")
        forgotten = []
        for f in _list(obj, "forgotten"):
            fo = _obj(f, "forgotten partition")
            forgotten.append((_str(fo, "topic"), _int(fo, "partition")))
        return FetchRequest(
            _int(obj, "replica_id"),
            tuple(FetchPartition.from_json(p) for p in _list(obj, "partitions")),
            session_id,
            _int(obj, "session_epoch") if session_id is not None else 0,
            tuple(forgotten),
        )


@dataclass(frozen=True, slots=True)
class FetchedPartition:
    topic: str
    partition: int
    error_code: int
    bytes: int = 0  # bytes served from the fetch offset
    log_end_offset: int = 0  # the leader's
    high_watermark: int = 0
    in_isr: bool = False  # whether the fetching follower is in the ISR

    def to_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "error_code": self.error_code,
            "bytes": self.bytes,
            "log_end_offset": self.log_end_offset,
            "high_watermark": self.high_watermark,
            "in_isr": self.in_isr,
        }

    @staticmethod
    def from_json(raw: Any) -> FetchedPartition:
        if type(raw) is dict:
            get = raw.get
            topic, partition, code, n = get("topic"), get("partition"), get("error_code"), get("bytes")
            leo, hw, in_isr = get("log_end_offset"), get("high_watermark"), get("in_isr")
            if (
                type(topic) is str
                and type(partition) is int
                and type(code) is int
                and type(n) is int
                and type(leo) is int
                and type(hw) is int
                and type(in_isr) is bool
            ):
                return FetchedPartition(topic, partition, code, n, leo, hw, in_isr)
        obj = _obj(raw, "fetched partition")
        return FetchedPartition(
            _str(obj, "topic"),
            _int(obj, "partition"),
            _int(obj, "error_code"),
            _int(obj, "bytes"),
            _int(obj, "log_end_offset"),
            _int(obj, "high_watermark"),
            _bool(obj, "in_isr"),
        )


@dataclass(frozen=True, slots=True)
class FetchResponse:
    """In a fetch session, ``partitions`` also holds unlisted ones the follower must hear of."""

    error_code: int
    partitions: tuple[FetchedPartition, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"error_code": self.error_code, "partitions": [p.to_json() for p in self.partitions]}

    @staticmethod
    def from_json(raw: Any) -> FetchResponse:
        obj = _obj(raw, "response")
        return FetchResponse(
            _int(obj, "error_code"), tuple(FetchedPartition.from_json(p) for p in _list(obj, "partitions"))
        )


@dataclass(frozen=True, slots=True)
class ReplicaInfo:
    """One entry of ``GET /replicas``."""

    topic: str
    partition: int
    leader: bool
    log_end_offset: int
    lag_bytes: int
    fetch_bytes_per_s: float
    in_isr: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "leader": self.leader,
            "log_end_offset": self.log_end_offset,
            "lag_bytes": self.lag_bytes,
            "fetch_bytes_per_s": self.fetch_bytes_per_s,
            "in_isr": self.in_isr,
        }

    @staticmethod
    def from_json(raw: Any) -> ReplicaInfo:
        obj = _obj(raw, "replica")
        rate = obj.get("fetch_bytes_per_s")
        if not isinstance(rate, int | float) or isinstance(rate, bool):
            raise WireError("field 'fetch_bytes_per_s' must be a number")
        return ReplicaInfo(
            _str(obj, "topic"),
            _int(obj, "partition"),
            _bool(obj, "leader"),
            _int(obj, "log_end_offset"),
            _int(obj, "lag_bytes"),
            float(rate),
            _bool(obj, "in_isr"),
        )


@dataclass(frozen=True, slots=True)
class ReplicasReport:
    """``GET /replicas``: every replica the agent hosts (nothing it was told to delete)."""

    broker_id: int
    replicas: tuple[ReplicaInfo, ...]

    def to_json(self) -> dict[str, Any]:
        return {"broker_id": self.broker_id, "replicas": [r.to_json() for r in self.replicas]}

    @staticmethod
    def from_json(raw: Any) -> ReplicasReport:
        obj = _obj(raw, "report")
        return ReplicasReport(
            _int(obj, "broker_id"), tuple(ReplicaInfo.from_json(r) for r in _list(obj, "replicas"))
        )

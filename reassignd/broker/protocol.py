"""The control channel's wire format (BROKERS.md): controller → broker agent, HTTP/JSON.

Shared by the controller (which builds and sends these) and the agent (which parses them). Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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

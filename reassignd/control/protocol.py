"""The control channel's requests: controller → broker agent, HTTP/JSON (LeaderAndIsr,
UpdateMetadata, StopReplica, and the agent's response). Their encoding, sizes and splitting are
:mod:`.request_sizes`; what all the messages share, :mod:`.wire`.

Shared by the controller (which builds and sends these) and the agent (which parses them). Pure.

**Body size.** The agent accepts bodies up to :data:`MAX_CONTROL_BODY_BYTES` (its aiohttp
``client_max_size``; more is answered 413). The controller encodes with :func:`encode_request`
(compact JSON) and keeps every body below :data:`MAX_REQUEST_BYTES`, splitting by bytes as well as
by partition count; :func:`state_size` gives a partition state's exact encoded size (msgspec encodes it in
well under a microsecond) and its friends other items' sizes without encoding them, and :func:`split_request` halves a request the agent refused as too large.

**Full LeaderAndIsr (KIP-516's ``type``).** A LeaderAndIsr is ``"type": "incremental"`` (the
default when the field is absent: every request before KIP-516) or ``"type": "full"``. A full
request names *every* partition the broker should host; the agent applies its states as usual
and, once it holds the complete set, deletes every replica it hosts that the set does not name.
A set too big for one body is sent as several chunks, each an ordinary LeaderAndIsr with::

    "type": "full",
    "full": {"id": 17, "total_partitions": 5000, "kept_topics": []},
    "partition_states": [...],                       # named, with the state to apply
    "partitions_without_state": [{"topic": "t", "partition": 3}],   # named, nothing to apply

- ``id`` identifies the set; the agent keys a set by (controller epoch, broker epoch, id), so ``id``
  only needs to be unique (and increasing) within one controller epoch. Every chunk of a set
  carries the same ``full`` object.
- ``total_partitions`` is the number of distinct partitions the whole set names (states and
  ``partitions_without_state`` together). The set is complete when the agent has received that
  many distinct names under the set's key. Counting partitions rather than chunks lets the
  controller split any chunk again (HTTP 413) without renumbering, makes a resent chunk harmless,
  and means a chunk that is never delivered leaves the set incomplete: nothing is deleted.
- ``partitions_without_state`` names partitions whose replica set contains the broker but whose
  state znode the controller has not got (not created yet, or undecodable): kept, not applied.
- ``kept_topics`` are topics whose assignment the controller could not read (an undecodable topic
  znode): every replica of them is kept.
- Only chunks that pass the header checks count (current broker epoch, controller epoch not
  stale): a full request from a stale controller deletes nothing. A chunk of another set discards
  the incomplete one (a newer full request starts over); a set already complete is not completed
  again by a resent chunk.

The response to a full chunk also carries ``"full_complete": bool`` and ``"deleted_replicas":
[{"topic", "partition"}]`` (what the agent deleted when this chunk completed the set).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

import msgspec

from reassignd.control.wire import (
    FULL,
    INCREMENTAL,
    LEADER_AND_ISR_PATH,
    STOP_REPLICA_PATH,
    UPDATE_METADATA_PATH,
    WireError,
    convert,
    decode_body,
    read_int,
    read_list,
    read_obj,
    read_str,
    tp_from_json,
    tp_json,
)
from reassignd.topic_partition import TopicPartition


class WirePartitionState(msgspec.Struct, frozen=True, gc=False):
    """One partition's state in a LeaderAndIsr or UpdateMetadata request. A msgspec struct: the
    agents decode a request's states straight into these (typed, no intermediate dicts) and the
    controller encodes them in C, field order as declared."""

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

    def to_json(self) -> dict[str, Any]:
        return {
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
            "is_new": self.is_new,
        }

    @staticmethod
    def from_json(raw: Any) -> WirePartitionState:
        return convert(raw, WirePartitionState, "partition state")


_STATE_ENCODER = msgspec.json.Encoder()
_STATE_DECODER = msgspec.json.Decoder(WirePartitionState)
_STATES_DECODER = msgspec.json.Decoder(tuple[WirePartitionState, ...])


def encode_state(state: WirePartitionState) -> bytes:
    """One partition state as a request body carries it (compact JSON, fields as declared)."""
    return _STATE_ENCODER.encode(state)


class EncodedStates(Sequence[WirePartitionState]):
    """Partition states kept as their encoded JSON, one ``bytes`` per state, as the controller
    keeps them between events: a request body is their bytes joined, never encoded again, and a
    state is decoded only when someone reads it (a split, a test). Equal to any sequence of the
    same states."""

    __slots__ = ("_decoded", "items")

    def __init__(self, items: Sequence[bytes]) -> None:
        self.items = tuple(items)
        self._decoded: tuple[WirePartitionState, ...] | None = None

    def json(self) -> bytes:
        """The JSON array of the states."""
        return b"[" + b",".join(self.items) + b"]"

    def decoded(self) -> tuple[WirePartitionState, ...]:
        if self._decoded is None:
            self._decoded = _STATES_DECODER.decode(self.json())
        return self._decoded

    def __len__(self) -> int:
        return len(self.items)

    @overload
    def __getitem__(self, index: int) -> WirePartitionState: ...

    @overload
    def __getitem__(self, index: slice) -> EncodedStates: ...

    def __getitem__(self, index: int | slice) -> WirePartitionState | EncodedStates:
        if isinstance(index, slice):
            return EncodedStates(self.items[index])
        if self._decoded is not None:
            return self._decoded[index]
        return _STATE_DECODER.decode(self.items[index])

    def __iter__(self) -> Iterator[WirePartitionState]:
        return iter(self.decoded())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EncodedStates):
            return self.items == other.items
        if isinstance(other, Sequence):
            return self.decoded() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.decoded())

    def __repr__(self) -> str:
        return f"EncodedStates({len(self.items)} states)"


@dataclass(frozen=True, slots=True)
class LiveBroker:
    broker_id: int
    rack: str | None
    endpoints: tuple[str, ...]  # "LISTENER://host:port"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.broker_id, "rack": self.rack, "endpoints": list(self.endpoints)}

    @staticmethod
    def from_json(raw: Any) -> LiveBroker:
        obj = read_obj(raw, "live broker")
        if "id" not in obj and "broker_id" in obj:
            # Kafka's live_leaders shape: {"broker_id", "host", "port"}; reassignd's agents
            # serve PLAINTEXT and CONTROL on that one port
            host, port = read_str(obj, "host"), read_int(obj, "port")
            return LiveBroker(
                read_int(obj, "broker_id"), None, (f"PLAINTEXT://{host}:{port}", f"CONTROL://{host}:{port}")
            )
        rack = obj.get("rack")
        if rack is not None and not isinstance(rack, str):
            raise WireError("field 'rack' must be a string or null")
        endpoints = read_list(obj, "endpoints")
        if not all(isinstance(e, str) for e in endpoints):
            raise WireError("field 'endpoints' must be a list of strings")
        return LiveBroker(read_int(obj, "id"), rack, tuple(endpoints))


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
        return Header(
            read_int(obj, "controller_id"), read_int(obj, "controller_epoch"), read_int(obj, "broker_epoch")
        )


@dataclass(frozen=True, slots=True)
class FullSet:
    """The ``full`` object of every chunk of a full LeaderAndIsr (module docstring)."""

    id: int
    total_partitions: int  # distinct partitions named by the whole set
    kept_topics: tuple[str, ...] = ()  # topics whose assignment the controller could not read

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "total_partitions": self.total_partitions,
            "kept_topics": list(self.kept_topics),
        }

    @staticmethod
    def from_json(raw: Any) -> FullSet:
        obj = read_obj(raw, "field 'full'")
        total = read_int(obj, "total_partitions")
        if total < 0:
            raise WireError("field 'total_partitions' must not be negative")
        kept = read_list(obj, "kept_topics")
        if not all(isinstance(t, str) for t in kept):
            raise WireError("field 'kept_topics' must be a list of strings")
        return FullSet(read_int(obj, "id"), total, tuple(kept))


@dataclass(frozen=True, slots=True)
class LeaderAndIsrRequest:
    header: Header
    partition_states: Sequence[WirePartitionState]  # a tuple, or EncodedStates (the controller's)
    live_leaders: tuple[LiveBroker, ...] = ()
    full: FullSet | None = None  # None: an incremental request
    partitions_without_state: tuple[TopicPartition, ...] = ()  # full requests only

    @property
    def type(self) -> str:
        return INCREMENTAL if self.full is None else FULL

    def to_json(self) -> dict[str, Any]:
        return {
            **self.header.to_json(),
            "partition_states": [p.to_json() for p in self.partition_states],
            **self.to_json_without_states(),
        }

    def to_json_without_states(self) -> dict[str, Any]:
        """The fields after ``partition_states``, in order (never empty)."""
        out: dict[str, Any] = {"live_leaders": [b.to_json() for b in self.live_leaders]}
        if self.full is not None:
            out["type"] = FULL
            out["full"] = self.full.to_json()
            out["partitions_without_state"] = [tp_json(tp) for tp in self.partitions_without_state]
        return out

    @staticmethod
    def from_json(raw: Any) -> LeaderAndIsrRequest:
        return LeaderAndIsrRequest.from_body(convert(raw, _StatesBody, "request"))

    @staticmethod
    def decode(body: bytes) -> LeaderAndIsrRequest:
        """The agent's reader: the body's bytes straight into structs."""
        return LeaderAndIsrRequest.from_body(decode_body(body, _STATES_BODY))

    @staticmethod
    def from_body(body: _StatesBody) -> LeaderAndIsrRequest:
        full = None
        without: tuple[TopicPartition, ...] = ()
        if body.type == FULL:
            full = FullSet.from_json(body.full)
            without = tuple(tp_from_json(p, "partition without state") for p in body.partitions_without_state)
        elif body.type != INCREMENTAL:
            raise WireError(f"field 'type' must be '{INCREMENTAL}' or '{FULL}'")
        return LeaderAndIsrRequest(
            body.header,
            body.partition_states,
            tuple(LiveBroker.from_json(b) for b in body.live_leaders),
            full,
            without,
        )


@dataclass(frozen=True, slots=True)
class UpdateMetadataRequest:
    header: Header
    partition_states: Sequence[WirePartitionState]  # a tuple, or EncodedStates (the controller's)
    live_brokers: tuple[LiveBroker, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            **self.header.to_json(),
            "partition_states": [p.to_json() for p in self.partition_states],
            **self.to_json_without_states(),
        }

    def to_json_without_states(self) -> dict[str, Any]:
        """The fields after ``partition_states``, in order."""
        return {"live_brokers": [b.to_json() for b in self.live_brokers]}

    @staticmethod
    def from_json(raw: Any) -> UpdateMetadataRequest:
        return UpdateMetadataRequest.from_body(convert(raw, _StatesBody, "request"))

    @staticmethod
    def decode(body: bytes) -> UpdateMetadataRequest:
        """The agent's reader: the body's bytes straight into structs."""
        return UpdateMetadataRequest.from_body(decode_body(body, _STATES_BODY))

    @staticmethod
    def from_body(body: _StatesBody) -> UpdateMetadataRequest:
        return UpdateMetadataRequest(
            body.header, body.partition_states, tuple(LiveBroker.from_json(b) for b in body.live_brokers)
        )


class _StatesBody(msgspec.Struct, gc=False):
    """A LeaderAndIsr or UpdateMetadata body as decoded; unknown fields are ignored."""

    controller_id: int
    controller_epoch: int
    broker_epoch: int
    partition_states: tuple[WirePartitionState, ...] = ()
    live_leaders: list[Any] = msgspec.field(default_factory=list)
    live_brokers: list[Any] = msgspec.field(default_factory=list)
    type: str = INCREMENTAL
    full: Any = None
    partitions_without_state: list[Any] = msgspec.field(default_factory=list)

    @property
    def header(self) -> Header:
        return Header(self.controller_id, self.controller_epoch, self.broker_epoch)


_STATES_BODY = msgspec.json.Decoder(_StatesBody)


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
        obj = read_obj(raw, "partition")
        return StopReplicaPartition(
            read_str(obj, "topic"),
            read_int(obj, "partition"),
            read_int(obj, "leader_epoch"),
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
        obj = read_obj(raw, "request")
        return StopReplicaRequest(
            Header.from_json(obj),
            tuple(StopReplicaPartition.from_json(p) for p in read_list(obj, "partitions")),
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


class PartitionError(msgspec.Struct, frozen=True, gc=False):
    """One partition's error code in a control response (a msgspec struct: a response lists one
    per partition of its request, and the controller decodes thousands per second in a move)."""

    topic: str
    partition: int
    error_code: int

    def to_json(self) -> dict[str, Any]:
        return {"topic": self.topic, "partition": self.partition, "error_code": self.error_code}


class _WireTp(msgspec.Struct, frozen=True, gc=False):
    topic: str
    partition: int


class _ResponseBody(msgspec.Struct, gc=False):
    """A control response as the agents send it (unknown fields ignored, as ``from_json`` does)."""

    error_code: int
    partition_errors: tuple[PartitionError, ...] = ()
    full_complete: bool | None = None
    deleted_replicas: tuple[_WireTp, ...] = ()


_RESPONSE = msgspec.json.Decoder(_ResponseBody)


@dataclass(frozen=True, slots=True)
class ControlResponse:
    error_code: int
    partition_errors: tuple[PartitionError, ...] = ()
    # full LeaderAndIsr only: whether the set is complete, and what its completion deleted
    full_complete: bool | None = None
    deleted_replicas: tuple[TopicPartition, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "error_code": self.error_code,
            "partition_errors": [e.to_json() for e in self.partition_errors],
        }
        if self.full_complete is not None:
            out["full_complete"] = self.full_complete
        if self.full_complete is not None or self.deleted_replicas:
            out["deleted_replicas"] = [tp_json(tp) for tp in self.deleted_replicas]
        return out

    @staticmethod
    def decode(body: bytes) -> ControlResponse:
        """A response body decoded straight into structs (the controller's hot path); WireError
        for anything that is not the wire format."""
        return ControlResponse._of(decode_body(body, _RESPONSE))

    @staticmethod
    def from_json(raw: Any) -> ControlResponse:
        return ControlResponse._of(convert(raw, _ResponseBody, "response"))

    @staticmethod
    def _of(body: _ResponseBody) -> ControlResponse:
        return ControlResponse(
            body.error_code,
            body.partition_errors,
            body.full_complete,
            tuple((tp.topic, tp.partition) for tp in body.deleted_replicas),
        )

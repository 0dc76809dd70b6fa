"""The control channel's wire format: controller → broker agent, HTTP/JSON.

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

import json
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, TypeVar

import msgspec

from reassignd.strict_json import INT64_MAX, Reader
from reassignd.topic_partition import TopicPartition

LEADER_AND_ISR_PATH = "/control/leader_and_isr"
STOP_REPLICA_PATH = "/control/stop_replica"
UPDATE_METADATA_PATH = "/control/update_metadata"
REPLICAS_PATH = "/replicas"
FETCH_PATH = "/replication/fetch"

# The agent's body limit (aiohttp's client_max_size on its control listener), and the size the
# controller keeps every request below: a quarter of headroom for estimation slack.
MAX_CONTROL_BODY_BYTES = 1024 * 1024
MAX_REQUEST_BYTES = MAX_CONTROL_BODY_BYTES * 3 // 4

INCREMENTAL = "incremental"
FULL = "full"

NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
MESSAGE_TOO_LARGE = 10
STALE_CONTROLLER_EPOCH = 11
STALE_BROKER_EPOCH = 77
INVALID_REQUEST = 42


class WireError(ValueError):
    """A control request body that does not match the wire format."""


# strict_json's readers, refusing with WireError ("partition: expected an integer, got null")
_READ = Reader(WireError, "body")


def _int(obj: dict[str, Any], key: str) -> int:
    return _READ.integer(obj.get(key), key, -INT64_MAX - 1, INT64_MAX)


def _ints(obj: dict[str, Any], key: str, default: list[int] | None = None) -> tuple[int, ...]:
    return _READ.integers(obj.get(key, default), key)


def _str(obj: dict[str, Any], key: str) -> str:
    return _READ.text(obj.get(key), key)


def _obj(value: Any, what: str) -> dict[str, Any]:
    return _READ.obj(value, what, (), None)


def _list(obj: dict[str, Any], key: str) -> list[Any]:
    return _READ.array(obj.get(key, []), key)


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
        return _convert(raw, WirePartitionState, "partition state")


_S = TypeVar("_S")


def _convert(raw: Any, kind: type[_S], what: str) -> _S:
    """``raw`` (decoded JSON) as ``kind``, strictly typed; :class:`WireError` naming the field."""
    if not isinstance(raw, dict):
        raise WireError(f"{what} must be an object")
    try:
        return msgspec.convert(raw, kind)
    except msgspec.ValidationError as e:
        raise WireError(str(e)) from None


def _decode(body: bytes, decoder: msgspec.json.Decoder[_S]) -> _S:
    """A request body decoded straight into its struct; :class:`WireError` for anything else."""
    try:
        return decoder.decode(body)
    except msgspec.ValidationError as e:
        raise WireError(str(e)) from None
    except msgspec.DecodeError as e:
        raise WireError(f"invalid JSON: {e}") from None


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
            # Kafka's live_leaders shape: {"broker_id", "host", "port"}; reassignd's agents
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


def _tp_json(tp: TopicPartition) -> dict[str, Any]:
    return {"topic": tp[0], "partition": tp[1]}


def _tp_from_json(raw: Any, what: str) -> TopicPartition:
    obj = _obj(raw, what)
    return (_str(obj, "topic"), _int(obj, "partition"))


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
        obj = _obj(raw, "field 'full'")
        total = _int(obj, "total_partitions")
        if total < 0:
            raise WireError("field 'total_partitions' must not be negative")
        kept = _list(obj, "kept_topics")
        if not all(isinstance(t, str) for t in kept):
            raise WireError("field 'kept_topics' must be a list of strings")
        return FullSet(_int(obj, "id"), total, tuple(kept))


@dataclass(frozen=True, slots=True)
class LeaderAndIsrRequest:
    header: Header
    partition_states: tuple[WirePartitionState, ...]
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
            out["partitions_without_state"] = [_tp_json(tp) for tp in self.partitions_without_state]
        return out

    @staticmethod
    def from_json(raw: Any) -> LeaderAndIsrRequest:
        return LeaderAndIsrRequest.from_body(_convert(raw, _StatesBody, "request"))

    @staticmethod
    def decode(body: bytes) -> LeaderAndIsrRequest:
        """The agent's reader: the body's bytes straight into structs."""
        return LeaderAndIsrRequest.from_body(_decode(body, _STATES_BODY))

    @staticmethod
    def from_body(body: _StatesBody) -> LeaderAndIsrRequest:
        full = None
        without: tuple[TopicPartition, ...] = ()
        if body.type == FULL:
            full = FullSet.from_json(body.full)
            without = tuple(
                _tp_from_json(p, "partition without state") for p in body.partitions_without_state
            )
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
    partition_states: tuple[WirePartitionState, ...]
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
        return UpdateMetadataRequest.from_body(_convert(raw, _StatesBody, "request"))

    @staticmethod
    def decode(body: bytes) -> UpdateMetadataRequest:
        """The agent's reader: the body's bytes straight into structs."""
        return UpdateMetadataRequest.from_body(_decode(body, _STATES_BODY))

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
            out["deleted_replicas"] = [_tp_json(tp) for tp in self.deleted_replicas]
        return out

    @staticmethod
    def decode(body: bytes) -> ControlResponse:
        """A response body decoded straight into structs (the controller's hot path); WireError
        for anything that is not the wire format."""
        return ControlResponse._of(_decode(body, _RESPONSE))

    @staticmethod
    def from_json(raw: Any) -> ControlResponse:
        return ControlResponse._of(_convert(raw, _ResponseBody, "response"))

    @staticmethod
    def _of(body: _ResponseBody) -> ControlResponse:
        return ControlResponse(
            body.error_code,
            body.partition_errors,
            body.full_complete,
            tuple((tp.topic, tp.partition) for tp in body.deleted_replicas),
        )


# --- encoding, sizes and splitting (the controller keeps bodies below the agent's limit) -------

_COMPACT = (",", ":")


_STATES = msgspec.json.Encoder()


def encode_request(request: ControlRequest) -> bytes:
    """The body the controller sends: compact JSON, the same bytes as
    ``json.dumps(request.to_json())`` for Kafka's (ASCII) topic names; partition states are
    encoded by msgspec, in C (the sizes above count a name's JSON escapes, an upper bound)."""
    if isinstance(request, StopReplicaRequest):
        return json.dumps(request.to_json(), separators=_COMPACT).encode()
    header = json.dumps(request.header.to_json(), separators=_COMPACT).encode()
    tail = json.dumps(request.to_json_without_states(), separators=_COMPACT).encode()
    states = _STATES.encode(request.partition_states)
    return b"".join((header[:-1], b',"partition_states":', states, b",", tail[1:]))


def _encoded_len(obj: Any) -> int:
    return len(json.dumps(obj, separators=_COMPACT))


@lru_cache(maxsize=65536)
def str_size(s: str) -> int:
    """Encoded size of a JSON string (quotes and escapes included)."""
    return _encoded_len(s)


def _int_size(v: int) -> int:
    return 1 if 0 <= v < 10 else len(str(v))


# fixed parts of each item (keys, braces, separators), measured once from minimal items
_TP_FIXED = _encoded_len(_tp_json(("", 0))) - (2 + 1)
_STOP_FIXED = _encoded_len(StopReplicaPartition("", 0, 0, False).to_json()) - (2 + 1 + 1 + 5)


def state_size(ws: WirePartitionState) -> int:
    """Encoded size of ``ws`` in a request body: msgspec encodes one in well under a
    microsecond, faster than adding up its parts in Python, and exact."""
    return len(_STATES.encode(ws))


def tp_size(tp: TopicPartition) -> int:
    """Encoded size of ``{"topic": ..., "partition": ...}``."""
    return _TP_FIXED + str_size(tp[0]) + _int_size(tp[1])


def stop_partition_size(p: StopReplicaPartition) -> int:
    """Encoded size of ``p.to_json()``."""
    return (
        _STOP_FIXED
        + str_size(p.topic)
        + _int_size(p.partition)
        + _int_size(p.leader_epoch)
        + (4 if p.delete_partition else 5)
    )


def split_request(request: ControlRequest) -> tuple[ControlRequest, ControlRequest] | None:
    """``request`` as two requests of about half the partitions each (None if it names fewer than
    two). A full LeaderAndIsr chunk's halves keep its ``full`` object: the set still counts its
    partitions, so it completes once both halves are delivered."""
    match request:
        case LeaderAndIsrRequest():
            states, without = request.partition_states, request.partitions_without_state
            n = len(states) + len(without)
            if n < 2:
                return None
            mid = n // 2
            cut = max(0, mid - len(states))

            def half(
                ss: tuple[WirePartitionState, ...], ws: tuple[TopicPartition, ...]
            ) -> LeaderAndIsrRequest:
                leaders = {s.leader for s in ss}
                return replace(
                    request,
                    partition_states=ss,
                    partitions_without_state=ws,
                    live_leaders=tuple(b for b in request.live_leaders if b.broker_id in leaders),
                )

            return half(states[:mid], without[:cut]), half(states[mid:], without[cut:])
        case UpdateMetadataRequest():
            if len(request.partition_states) < 2:
                return None
            mid = len(request.partition_states) // 2
            return (
                replace(request, partition_states=request.partition_states[:mid]),
                replace(request, partition_states=request.partition_states[mid:]),
            )
        case StopReplicaRequest():
            if len(request.partitions) < 2:
                return None
            mid = len(request.partitions) // 2
            return (
                replace(request, partitions=request.partitions[:mid]),
                replace(request, partitions=request.partitions[mid:]),
            )


def partitions_of(request: ControlRequest) -> list[TopicPartition]:
    """Every partition a request names."""
    match request:
        case LeaderAndIsrRequest():
            return [(s.topic, s.partition) for s in request.partition_states] + list(
                request.partitions_without_state
            )
        case UpdateMetadataRequest():
            return [(s.topic, s.partition) for s in request.partition_states]
        case StopReplicaRequest():
            return [(p.topic, p.partition) for p in request.partitions]


# --- replication between agents (follower → leader), and the agent's progress report ------------

NOT_LEADER_OR_FOLLOWER = 6
FETCH_SESSION_ID_NOT_FOUND = 70
INVALID_FETCH_SESSION_EPOCH = 71
FENCED_LEADER_EPOCH = 74
UNKNOWN_LEADER_EPOCH = 75


def _bool(obj: dict[str, Any], key: str) -> bool:
    return _READ.boolean(obj.get(key), key)


class FetchPartition(msgspec.Struct, frozen=True, gc=False):
    """One partition of a fetch. The fetch protocol's values are msgspec structs: the agents
    build thousands per second in a large move (a frozen dataclass costs several times more)."""

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


class FetchRequest(msgspec.Struct, frozen=True, gc=False):
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


class FetchedPartition(msgspec.Struct, frozen=True, gc=False):
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


class FetchResponse(msgspec.Struct, frozen=True, gc=False):
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
    """``GET /replicas``: every replica the agent hosts (nothing it was told to delete), and how
    many full LeaderAndIsr sets it completed and stray replicas those deleted (since it started)."""

    broker_id: int
    replicas: tuple[ReplicaInfo, ...]
    full_requests_completed: int = 0
    stray_replicas_deleted: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "broker_id": self.broker_id,
            "replicas": [r.to_json() for r in self.replicas],
            "full_requests_completed": self.full_requests_completed,
            "stray_replicas_deleted": self.stray_replicas_deleted,
        }

    @staticmethod
    def from_json(raw: Any) -> ReplicasReport:
        obj = _obj(raw, "report")
        return ReplicasReport(
            _int(obj, "broker_id"),
            tuple(ReplicaInfo.from_json(r) for r in _list(obj, "replicas")),
            _int(obj, "full_requests_completed") if "full_requests_completed" in obj else 0,
            _int(obj, "stray_replicas_deleted") if "stray_replicas_deleted" in obj else 0,
        )

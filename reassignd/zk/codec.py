"""Strict JSON codecs for every znode of ZK_LAYOUT.md.

Each ``decode_*`` takes the raw bytes (``None`` for a znode with null data) and returns a typed
value or raises :class:`CodecError` with a one-line human reason ("invalid JSON at byte 1",
"field 'leader' must be an integer, got string"). Unknown keys are accepted; duplicate keys are
not. Each ``encode_*`` returns compact UTF-8 JSON bytes and raises ``ValueError`` rather than
write something its decoder would reject. Pure: no I/O.

Znodes that record state (topic, partition state, status, brokers) are checked fully: replica ids
are non-negative and unique. Intake znodes (``/admin/reassign_partitions``, reassignment requests)
are checked for shape and types only: as in Kafka, an entry whose replicas make no sense is the
controller's to refuse per entry, without dropping the rest of the znode.
"""

from __future__ import annotations

import base64
import json
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

TopicPartition = tuple[str, int]

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
PORT_MAX = 65535

_T = TypeVar("_T")


class CodecError(ValueError):
    """A znode's content could not be decoded; ``reason`` says why in one line."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --- reading and writing JSON --------------------------------------------------------------------

_DIGITS = re.compile(r"[0-9]+")
_CANONICAL_DIGITS = re.compile(r"0|[1-9][0-9]*")
_UUID = re.compile(r"[A-Za-z0-9_-]{22}")


def _quote(text: str, limit: int = 60) -> str:
    """``text`` as a one-line JSON string literal, shortened for error messages."""
    return json.dumps(text if len(text) <= limit else text[:limit] + "...")


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _text(data: bytes | None) -> str:
    if data is None:
        raise CodecError("znode data is null")
    if not data:
        raise CodecError("znode data is empty")
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        raise CodecError(f"not valid UTF-8 at byte {e.start + 1}") from None


def _check_unicode(text: str, what: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise CodecError(f"{what} contains a lone surrogate") from None


def _pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
    obj: dict[str, object] = {}
    for key, value in pairs:
        _check_unicode(key, f"key {_quote(key)}")
        if key in obj:
            raise CodecError(f"invalid JSON: duplicate key {_quote(key)}")
        obj[key] = value
    return obj


def _constant(name: str) -> object:
    raise CodecError(f"invalid JSON: {name} is not a JSON value")


def _load(data: bytes | None) -> dict[str, object]:
    """Parse ``data`` as one JSON object."""
    text = _text(data)
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
    except CodecError:
        raise
    except json.JSONDecodeError as e:
        raise CodecError(f"invalid JSON at byte {len(text[: e.pos].encode('utf-8')) + 1}") from None
    except RecursionError:
        raise CodecError("invalid JSON: nested too deeply") from None
    except ValueError:  # an integer beyond the interpreter's digit limit
        raise CodecError("invalid JSON: number too long") from None
    if not isinstance(value, dict):
        raise CodecError(f"expected a JSON object, got {_kind(value)}")
    return value


def _dump(what: str, obj: dict[str, object], parse: Callable[[dict[str, object]], object]) -> bytes:
    """Compact JSON of ``obj``, after checking that ``parse`` (the decoder) accepts it."""
    try:
        parse(obj)
    except CodecError as e:
        raise ValueError(f"cannot encode {what}: {e.reason}") from None
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


# --- typed fields --------------------------------------------------------------------------------


def _key(where: str, key: str) -> str:
    return f"{where}[{_quote(key)}]"


def _get(obj: Mapping[str, object], key: str, where: str = "") -> object:
    try:
        return obj[key]
    except KeyError:
        raise CodecError(f"missing field '{where}{key}'") from None


def _wrong(where: str, expected: str, value: object) -> CodecError:
    return CodecError(f"field '{where}' must be {expected}, got {_kind(value)}")


def _int(value: object, where: str, lo: int = 0, hi: int = INT32_MAX) -> int:
    if type(value) is not int:
        raise _wrong(where, "an integer", value)
    if value < lo:
        raise CodecError(f"field '{where}' must be at least {lo}, got {value}")
    if value > hi:
        raise CodecError(f"field '{where}' must be at most {hi}, got {value}")
    return value


def _str(value: object, where: str) -> str:
    if type(value) is not str:
        raise _wrong(where, "a string", value)
    _check_unicode(value, f"field '{where}'")
    return value


def _bool(value: object, where: str) -> bool:
    if type(value) is not bool:
        raise _wrong(where, "a boolean", value)
    return value


def _list(value: object, where: str) -> list[object]:
    if type(value) is not list:
        raise _wrong(where, "an array", value)
    return value


def _obj(value: object, where: str) -> dict[str, object]:
    if type(value) is not dict:
        raise _wrong(where, "an object", value)
    return value


def _version(obj: Mapping[str, object], supported: tuple[int, ...]) -> int:
    version = _get(obj, "version")
    if type(version) is not int:
        raise _wrong("version", "an integer", version)
    if version not in supported:
        expected = ", ".join(str(v) for v in supported)
        raise CodecError(f"unsupported version {version} (expected {expected})")
    return version


def _decimal(value: object, where: str, hi: int) -> int:
    """A non-negative integer written as a decimal string (Kafka's timestamps)."""
    text = _str(value, where)
    if not _DIGITS.fullmatch(text) or int(text) > hi:
        raise CodecError(f"field '{where}' must be a decimal string up to {hi}, got {_quote(text)}")
    return int(text)


def _partition_key(key: str, where: str) -> int:
    if not _CANONICAL_DIGITS.fullmatch(key) or int(key) > INT32_MAX:
        raise CodecError(f"field '{where}' has key {_quote(key)}, which is not a partition number")
    return int(key)


def _ints(value: object, where: str) -> tuple[int, ...]:
    """An array of 32-bit integers, nothing more (intake znodes)."""
    items = _list(value, where)
    return tuple(_int(item, f"{where}[{i}]", lo=-INT32_MAX - 1) for i, item in enumerate(items))


def _replicas(value: object, where: str, *, allow_empty: bool = False) -> tuple[int, ...]:
    """A replica list as the controller records it: broker ids, non-negative and unique."""
    replicas = _ints(value, where)
    if not replicas and not allow_empty:
        raise CodecError(f"field '{where}' must not be empty")
    seen: set[int] = set()
    for broker_id in replicas:
        if broker_id < 0:
            raise CodecError(f"field '{where}' has negative replica id {broker_id}")
        if broker_id in seen:
            raise CodecError(f"field '{where}' has duplicate replica id {broker_id}")
        seen.add(broker_id)
    return replicas


def _uuid(value: object, where: str) -> str:
    text = _str(value, where)
    if not (_UUID.fullmatch(text) and _uuid_text(base64.urlsafe_b64decode(text + "==")) == text):
        raise CodecError(f"field '{where}' must be a 22-character base64 UUID, got {_quote(text)}")
    return text


def _uuid_text(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _optional(obj: Mapping[str, object], key: str, read: Callable[[object, str], _T]) -> _T | None:
    """``read`` the field if present and not null."""
    value = obj.get(key)
    return None if value is None else read(value, key)


# --- /controller, /controller_epoch, /cluster/id -------------------------------------------------


@dataclass(frozen=True, slots=True)
class ControllerInfo:
    broker_id: int
    timestamp_ms: int
    http: str | None = None


def encode_controller(info: ControllerInfo) -> bytes:
    """``{"version":1,"brokerid":N,"timestamp":"<ms>"[,"http":url]}``."""
    obj: dict[str, object] = {"version": 1, "brokerid": info.broker_id, "timestamp": str(info.timestamp_ms)}
    if info.http is not None:
        obj["http"] = info.http
    return _dump("controller", obj, _controller)


def decode_controller(data: bytes | None) -> ControllerInfo:
    return _controller(_load(data))


def _controller(obj: dict[str, object]) -> ControllerInfo:
    _version(obj, (1,))
    return ControllerInfo(
        broker_id=_int(_get(obj, "brokerid"), "brokerid"),
        timestamp_ms=_decimal(_get(obj, "timestamp"), "timestamp", INT64_MAX),
        http=_optional(obj, "http", _str),
    )


def encode_controller_epoch(epoch: int) -> bytes:
    """The epoch as a decimal string: ``b"7"``."""
    if type(epoch) is not int or not 0 <= epoch <= INT32_MAX:
        raise ValueError(f"cannot encode controller epoch: {epoch!r} is not in 0..{INT32_MAX}")
    return str(epoch).encode("ascii")


def decode_controller_epoch(data: bytes | None) -> int:
    text = _text(data)
    if not _DIGITS.fullmatch(text) or int(text) > INT32_MAX:
        raise CodecError(f"controller epoch must be a decimal integer up to {INT32_MAX}, got {_quote(text)}")
    return int(text)


def encode_cluster_id(cluster_id: str) -> bytes:
    """``{"version":"1","id":"<22-char id>"}``."""
    return _dump("cluster id", {"version": "1", "id": cluster_id}, _cluster_id)


def decode_cluster_id(data: bytes | None) -> str:
    return _cluster_id(_load(data))


def _cluster_id(obj: dict[str, object]) -> str:
    # Kafka writes this version as a string.
    if _str(_get(obj, "version"), "version") != "1":
        raise CodecError(f'unsupported version {_quote(str(obj["version"]))} (expected "1")')
    return _uuid(_get(obj, "id"), "id")


def new_uuid_base64() -> str:
    """A random UUID as 22-char url-safe base64 without padding (Kafka's Uuid.toString).

    Like Kafka's ``Uuid.randomUuid``, never one starting with ``-`` (it reads as a CLI option).
    """
    while True:
        text = _uuid_text(uuid.uuid4().bytes)
        if not text.startswith("-"):
            return text


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


# Kafka's EndPoint.uriParseExp, with a non-negative port; an IPv6 host may be bracketed.
_ENDPOINT = re.compile(r"([A-Za-z0-9_.-]+)://\[?([0-9a-zA-Z%._:-]*)\]?:([0-9]{1,5})")
_SECURITY_PROTOCOLS = frozenset({"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"})


def encode_broker(reg: BrokerRegistration) -> bytes:
    """Kafka v5: version, host, port, jmx_port, timestamp (string), endpoints (strings),
    rack (only if set), listener_security_protocol_map (every listener -> "PLAINTEXT"),
    features ({})."""
    obj: dict[str, object] = {
        "version": 5,
        "host": reg.host,
        "port": reg.port,
        "jmx_port": reg.jmx_port,
        "timestamp": str(reg.timestamp_ms),
        "endpoints": [_endpoint_text(ep) for ep in reg.endpoints],
    }
    if reg.rack is not None:
        obj["rack"] = reg.rack
    obj["listener_security_protocol_map"] = {ep.listener: "PLAINTEXT" for ep in reg.endpoints}
    obj["features"] = {}
    return _dump("broker registration", obj, lambda o: _broker(reg.broker_id, o))


def _endpoint_text(ep: Endpoint) -> str:
    """Like ``str(ep)``, with an IPv6 host in brackets (Kafka's Utils.formatAddress)."""
    host = f"[{ep.host}]" if ":" in ep.host else ep.host
    return f"{ep.listener}://{host}:{ep.port}"


def decode_broker(broker_id: int, data: bytes | None) -> BrokerRegistration:
    """Accepts versions 1-5 (v1-3 without endpoints use host/port as PLAINTEXT)."""
    return _broker(broker_id, _load(data))


def _broker(broker_id: int, obj: dict[str, object]) -> BrokerRegistration:
    version = _version(obj, (1, 2, 3, 4, 5))
    # Kafka writes a null host and port -1 when the broker has no PLAINTEXT listener.
    host = _get(obj, "host")
    host = "" if host is None and version > 1 else _str(host, "host")
    port = _int(_get(obj, "port"), "port", lo=-1, hi=PORT_MAX)
    if "endpoints" in obj or version > 3:
        protocols = _optional(obj, "listener_security_protocol_map", _protocol_map)
        endpoints = _endpoints(_get(obj, "endpoints"), protocols)
    else:
        endpoints = (Endpoint("PLAINTEXT", host, _int(port, "port", hi=PORT_MAX)),)
    _optional(obj, "features", _obj)
    return BrokerRegistration(
        broker_id=broker_id,
        host=host,
        port=port,
        endpoints=endpoints,
        rack=_optional(obj, "rack", _str),
        timestamp_ms=_optional(obj, "timestamp", lambda v, w: _decimal(v, w, INT64_MAX)) or 0,
        jmx_port=_int(_get(obj, "jmx_port"), "jmx_port", lo=-1, hi=PORT_MAX),
    )


def _protocol_map(value: object, where: str) -> dict[str, str]:
    protocols: dict[str, str] = {}
    for listener, protocol in _obj(value, where).items():
        protocol = _str(protocol, _key(where, listener))
        if protocol not in _SECURITY_PROTOCOLS:
            raise CodecError(
                f"field '{_key(where, listener)}' is not a security protocol: {_quote(protocol)}"
            )
        protocols[listener.upper()] = protocol
    return protocols


def _endpoints(value: object, protocols: Mapping[str, str] | None) -> tuple[Endpoint, ...]:
    endpoints: list[Endpoint] = []
    for i, item in enumerate(_list(value, "endpoints")):
        where = f"endpoints[{i}]"
        text = _str(item, where)
        match = _ENDPOINT.fullmatch(text)
        if match is None or int(match[3]) > PORT_MAX:
            raise CodecError(f"field '{where}' is not an endpoint (LISTENER://host:port): {_quote(text)}")
        listener = match[1].upper()  # Kafka's ListenerName.normalised
        known = _SECURITY_PROTOCOLS if protocols is None else protocols
        if listener not in known:
            raise CodecError(f"field '{where}' has listener {listener} with no security protocol")
        if any(ep.listener == listener for ep in endpoints):
            raise CodecError(f"field 'endpoints' has listener {listener} twice")
        endpoints.append(Endpoint(listener, match[2], int(match[3])))
    return tuple(endpoints)


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
    """Version 3 when ``topic_id`` is set, else version 2; both maps always written.

    Empty AR/RR lists are left out, as Kafka does."""

    def replica_map(replicas: Mapping[int, tuple[int, ...]]) -> dict[str, list[int]]:
        return {str(p): list(replicas[p]) for p in sorted(replicas) if replicas[p]}

    obj: dict[str, object] = {
        "version": 2 if znode.topic_id is None else 3,
        "partitions": replica_map(znode.partitions),
        "adding_replicas": replica_map(znode.adding),
        "removing_replicas": replica_map(znode.removing),
    }
    if znode.topic_id is not None:
        obj["topic_id"] = znode.topic_id
    return _dump("topic znode", obj, _topic)


def decode_topic(data: bytes | None) -> TopicZnode:
    """Versions 1, 2 and 3. Partition keys must be non-negative decimal integers, replica lists
    lists of non-negative ints without duplicates; AR/RR keys must name existing partitions,
    AR and RR must be subsets of RS and disjoint. Empty AR/RR lists mean "not reassigning"."""
    return _topic(_load(data))


def _topic(obj: dict[str, object]) -> TopicZnode:
    version = _version(obj, (1, 2, 3))
    partitions = _replica_map(obj, "partitions", allow_empty=False)
    adding = _replica_map(obj, "adding_replicas", allow_empty=True, within=partitions)
    removing = _replica_map(obj, "removing_replicas", allow_empty=True, within=partitions)
    for p in adding.keys() & removing.keys():
        both = sorted(set(adding[p]) & set(removing[p]))
        if both:
            raise CodecError(
                f"partition {p} has replica {both[0]} in both adding_replicas and removing_replicas"
            )
    topic_id = _optional(obj, "topic_id", _uuid)
    if topic_id is None and version == 3:
        raise CodecError("missing field 'topic_id'")
    return TopicZnode(partitions, adding, removing, topic_id)


def _replica_map(
    obj: Mapping[str, object],
    name: str,
    *,
    allow_empty: bool,
    within: Mapping[int, tuple[int, ...]] | None = None,
) -> dict[int, tuple[int, ...]]:
    """``{"<partition>": [replicas]}``; with ``within``, optional, and lists must be subsets."""
    if within is not None and name not in obj:
        return {}
    result: dict[int, tuple[int, ...]] = {}
    for key, value in _obj(_get(obj, name), name).items():
        p = _partition_key(key, name)
        replicas = _replicas(value, _key(name, key), allow_empty=allow_empty)
        if within is not None and replicas:
            if p not in within:
                raise CodecError(f"field '{name}' names partition {p}, which is not in 'partitions'")
            for broker_id in replicas:
                if broker_id not in within[p]:
                    raise CodecError(
                        f"field '{_key(name, key)}' has replica {broker_id}, not in the partition's replicas"
                    )
        if replicas:
            result[p] = replicas
    return dict(sorted(result.items()))


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
    obj: dict[str, object] = {
        "version": 1,
        "leader": state.leader,
        "leader_epoch": state.leader_epoch,
        "controller_epoch": state.controller_epoch,
        "isr": list(state.isr),
    }
    return _dump("partition state", obj, _partition_state)


def decode_partition_state(data: bytes | None) -> PartitionState:
    """``leader`` is a broker id or -1; the ISR may be empty but holds no negative or repeated id."""
    return _partition_state(_load(data))


def _partition_state(obj: dict[str, object]) -> PartitionState:
    _version(obj, (1,))
    return PartitionState(
        leader=_int(_get(obj, "leader"), "leader", lo=-1),
        leader_epoch=_int(_get(obj, "leader_epoch"), "leader_epoch"),
        controller_epoch=_int(_get(obj, "controller_epoch"), "controller_epoch"),
        isr=_replicas(_get(obj, "isr"), "isr", allow_empty=True),
    )


# --- /admin/reassign_partitions (and _extra) -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class LegacyReassignmentEntry:
    topic: str
    partition: int
    replicas: tuple[int, ...]
    original_replicas: tuple[int, ...] | None = None


def encode_legacy_reassignment(entries: tuple[LegacyReassignmentEntry, ...]) -> bytes:
    """``{"version":1,"partitions":[{"topic","partition","replicas"[,"original_replicas"]}]}``."""
    items: list[dict[str, object]] = []
    for entry in entries:
        item: dict[str, object] = {
            "topic": entry.topic,
            "partition": entry.partition,
            "replicas": list(entry.replicas),
        }
        if entry.original_replicas is not None:
            item["original_replicas"] = list(entry.original_replicas)
        items.append(item)
    return _dump("legacy reassignment", {"version": 1, "partitions": items}, _legacy_reassignment)


def decode_legacy_reassignment(data: bytes | None) -> tuple[LegacyReassignmentEntry, ...]:
    """Entries in znode order. Only shape and types are checked: empty, negative or repeated
    replica ids, unknown topics and repeated partitions are the controller's to refuse per entry
    (as Kafka does), so one bad entry does not hide the others."""
    return _legacy_reassignment(_load(data))


def _legacy_reassignment(obj: dict[str, object]) -> tuple[LegacyReassignmentEntry, ...]:
    _version(obj, (1,))
    entries: list[LegacyReassignmentEntry] = []
    for i, item in enumerate(_list(_get(obj, "partitions"), "partitions")):
        where = f"partitions[{i}]"
        entry = _obj(item, where)
        entries.append(
            LegacyReassignmentEntry(
                topic=_str(_get(entry, "topic", f"{where}."), f"{where}.topic"),
                partition=_int(_get(entry, "partition", f"{where}."), f"{where}.partition"),
                replicas=_ints(_get(entry, "replicas", f"{where}."), f"{where}.replicas"),
                original_replicas=_optional(
                    entry, "original_replicas", lambda v, _: _ints(v, f"{where}.original_replicas")
                ),
            )
        )
    return tuple(entries)


# --- KIP-236 sequenced protocol ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReassignmentRequest:
    assignments: Mapping[TopicPartition, tuple[int, ...]]
    legacy: bool = False


def encode_reassignment_request(request: ReassignmentRequest) -> bytes:
    """``{"version":1,"assignments":{"t":{"0":[1,2,3]}},"legacy":false}``."""
    by_topic: dict[str, dict[str, list[int]]] = {}
    for (topic, p), replicas in sorted(request.assignments.items()):
        by_topic.setdefault(topic, {})[str(p)] = list(replicas)
    obj: dict[str, object] = {"version": 1, "assignments": by_topic, "legacy": request.legacy}
    return _dump("reassignment request", obj, _reassignment_request)


def decode_reassignment_request(data: bytes | None) -> ReassignmentRequest:
    """Partition keys must be partition numbers; replica lists are checked for types only (the
    controller refuses bad targets per partition). ``legacy`` defaults to false."""
    return _reassignment_request(_load(data))


def _reassignment_request(obj: dict[str, object]) -> ReassignmentRequest:
    _version(obj, (1,))
    assignments: dict[TopicPartition, tuple[int, ...]] = {}
    for topic, partitions in _obj(_get(obj, "assignments"), "assignments").items():
        where = _key("assignments", topic)
        for key, replicas in _obj(partitions, where).items():
            p = _partition_key(key, where)
            assignments[(topic, p)] = _ints(replicas, _key(where, key))
    legacy = _optional(obj, "legacy", _bool)
    return ReassignmentRequest(assignments, legacy=bool(legacy))


@dataclass(frozen=True, slots=True)
class ReassignmentStatus:
    target: tuple[int, ...]
    original: tuple[int, ...]
    top: int


def encode_reassignment_status(status: ReassignmentStatus) -> bytes:
    """``{"version":1,"target":[...],"original":[...],"top":N}``."""
    obj: dict[str, object] = {
        "version": 1,
        "target": list(status.target),
        "original": list(status.original),
        "top": status.top,
    }
    return _dump("reassignment status", obj, _reassignment_status)


def decode_reassignment_status(data: bytes | None) -> ReassignmentStatus:
    """``target`` and ``original`` are non-empty replica lists; ``top`` a non-negative integer."""
    return _reassignment_status(_load(data))


def _reassignment_status(obj: dict[str, object]) -> ReassignmentStatus:
    _version(obj, (1,))
    return ReassignmentStatus(
        target=_replicas(_get(obj, "target"), "target"),
        original=_replicas(_get(obj, "original"), "original"),
        top=_int(_get(obj, "top"), "top"),
    )


# --- /isr_change_notification --------------------------------------------------------------------


def encode_isr_change(partitions: tuple[TopicPartition, ...]) -> bytes:
    """``{"version":1,"partitions":[{"topic":"foo","partition":0}]}``."""
    items: list[object] = [{"topic": topic, "partition": p} for topic, p in partitions]
    return _dump("ISR change notification", {"version": 1, "partitions": items}, _isr_change)


def decode_isr_change(data: bytes | None) -> tuple[TopicPartition, ...]:
    return _isr_change(_load(data))


def _isr_change(obj: dict[str, object]) -> tuple[TopicPartition, ...]:
    _version(obj, (1,))
    result: list[TopicPartition] = []
    for i, item in enumerate(_list(_get(obj, "partitions"), "partitions")):
        where = f"partitions[{i}]"
        entry = _obj(item, where)
        topic = _str(_get(entry, "topic", f"{where}."), f"{where}.topic")
        result.append((topic, _int(_get(entry, "partition", f"{where}."), f"{where}.partition")))
    return tuple(result)


# --- /config -------------------------------------------------------------------------------------

_ENTITY_TYPES = frozenset({"topics", "clients", "users", "brokers", "ips"})


def encode_entity_config(config: Mapping[str, str]) -> bytes:
    """``{"version":1,"config":{"k":"v"}}``; values are strings."""
    obj: dict[str, object] = {"version": 1, "config": {k: config[k] for k in sorted(config)}}
    return _dump("entity config", obj, _entity_config)


def decode_entity_config(data: bytes | None) -> dict[str, str]:
    """Values must be strings (Kafka stores every config value as a string)."""
    return _entity_config(_load(data))


def _entity_config(obj: dict[str, object]) -> dict[str, str]:
    _version(obj, (1,))
    config = _obj(_get(obj, "config"), "config")
    return {key: _str(value, _key("config", key)) for key, value in config.items()}


def encode_config_change(entity_path: str) -> bytes:
    """``{"version":2,"entity_path":"users/alice/clients/app-1"}``."""
    return _dump("config change", {"version": 2, "entity_path": entity_path}, _config_change)


def decode_config_change(data: bytes | None) -> str:
    """Returns the entity path. Version 1 notifications (``entity_type``/``entity_name``) are
    turned into the same form (``topics/foo``). The path must be ``<type>/<name>`` or
    ``users/<user>/clients/<client>``."""
    return _config_change(_load(data))


def _config_change(obj: dict[str, object]) -> str:
    if _version(obj, (1, 2)) == 2:
        where = "entity_path"
        path = _str(_get(obj, "entity_path"), where)
    else:
        where = "entity_type"
        entity_type = _str(_get(obj, "entity_type"), "entity_type")
        path = f"{entity_type}/{_str(_get(obj, 'entity_name'), 'entity_name')}"
    parts = path.split("/")
    if not all(parts) or not (
        (len(parts) == 2 and parts[0] in _ENTITY_TYPES)
        or (len(parts) == 4 and parts[0] == "users" and parts[2] == "clients")
    ):
        raise CodecError(
            f"field '{where}' must give '<type>/<name>' or 'users/<user>/clients/<client>', got {_quote(path)}"
        )
    return path

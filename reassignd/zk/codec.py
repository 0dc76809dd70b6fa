"""Strict JSON codecs for every znode of ZK_LAYOUT.md.

Each ``decode_*`` takes the raw bytes (``None`` for a znode with null data) and returns a typed
value or raises :class:`CodecError` with a one-line human reason ("invalid JSON at byte 1",
"field 'leader' must be an integer, got string"). Unknown keys are accepted, duplicate keys are
not. Each ``encode_*`` returns compact UTF-8 JSON bytes, and raises ``ValueError`` rather than
write what its own decoder would reject. Pure: no I/O.

Recorded replica lists (RS/AR/RR, ISR, status nodes) hold unique non-negative ids. Intake znodes
(legacy reassignments, KIP-236 requests) are checked for shape and types only: as in Kafka, the
controller refuses a bad target entry by entry, without losing the rest of the znode.
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
Replicas = tuple[int, ...]

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

_DIGITS = re.compile(r"[0-9]{1,19}")
_PARTITION = re.compile(r"0|[1-9][0-9]{0,9}")
_UUID = re.compile(r"[A-Za-z0-9_-]{21}[AQgw]")  # 16 bytes: the last char holds 2 bits and 4 zeros
_KINDS: dict[type[object], str] = {type(None): "null", bool: "boolean", int: "number", float: "number"}
_KINDS.update({str: "string", list: "array", dict: "object"})


def _quote(text: str) -> str:
    """``text`` as a one-line JSON string literal, cut short for an error message."""
    return json.dumps(text if len(text) <= 60 else text[:60] + "...")


def _text(data: bytes | None) -> str:
    if data is None:
        raise CodecError("znode data is null")
    if not data:
        raise CodecError("znode data is empty")
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        raise CodecError(f"not valid UTF-8 at byte {e.start + 1}") from None


def _pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
    obj: dict[str, object] = {}
    for key, value in pairs:
        if key in obj:
            raise CodecError(f"invalid JSON: duplicate key {_quote(key)}")
        obj[key] = value
    return obj


def _constant(name: str) -> object:
    raise CodecError(f"invalid JSON: {name} is not a JSON value")


def _load(data: bytes | None) -> dict[str, object]:
    text = _text(data)
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
        if "\\u" in text:  # an escape like \ud800 makes a lone surrogate, which UTF-8 cannot carry
            json.dumps(value, ensure_ascii=False).encode()
    except CodecError:
        raise
    except json.JSONDecodeError as e:
        raise CodecError(f"invalid JSON at byte {len(text[: e.pos].encode()) + 1}") from None
    except UnicodeEncodeError:
        raise CodecError("invalid JSON: a \\u escape makes a lone surrogate") from None
    except RecursionError:
        raise CodecError("invalid JSON: nested too deeply") from None
    except ValueError:  # an integer beyond the interpreter's digit limit
        raise CodecError("invalid JSON: number too long") from None
    if type(value) is not dict:
        raise CodecError(f"expected a JSON object, got {_KINDS[type(value)]}")
    return value


def _dump(what: str, obj: dict[str, object], decode: Callable[[bytes], object]) -> bytes:
    """Compact JSON of ``obj``, once ``decode`` has accepted it."""
    try:
        data = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
        decode(data)
    except (CodecError, UnicodeEncodeError, TypeError) as e:
        raise ValueError(f"cannot encode {what}: {getattr(e, 'reason', e)}") from None
    return data


# --- typed fields (``where`` names the field in messages: ``partitions["0"]``) ---------------------


def _key(where: str, key: str) -> str:
    return f"{where}[{_quote(key)}]"


def _get(obj: Mapping[str, object], key: str, where: str = "") -> object:
    try:
        return obj[key]
    except KeyError:
        raise CodecError(f"missing field '{where}{key}'") from None


def _wrong(where: str, expected: str, value: object) -> CodecError:
    got = _KINDS.get(type(value), type(value).__name__)
    return CodecError(f"field '{where}' must be {expected}, got {got}")


def _int(value: object, where: str, lo: int = 0, hi: int = INT32_MAX) -> int:
    if type(value) is not int:
        raise _wrong(where, "an integer", value)
    if not lo <= value <= hi:
        raise CodecError(f"field '{where}' must be between {lo} and {hi}, got {value}")
    return value


def _str(value: object, where: str) -> str:
    if type(value) is not str:
        raise _wrong(where, "a string", value)
    return value


def _list(value: object, where: str) -> list[object]:
    if type(value) is not list:
        raise _wrong(where, "an array", value)
    return value


def _obj(value: object, where: str) -> dict[str, object]:
    if type(value) is not dict:
        raise _wrong(where, "an object", value)
    return value


def _optional(obj: Mapping[str, object], key: str, read: Callable[[object, str], _T]) -> _T | None:
    """``read`` the field if it is present and not null."""
    value = obj.get(key)
    return None if value is None else read(value, key)


def _version(obj: Mapping[str, object], supported: tuple[int, ...]) -> int:
    version = _get(obj, "version")
    if type(version) is not int:
        raise _wrong("version", "an integer", version)
    if version not in supported:
        raise CodecError(f"unsupported version {version} (expected {', '.join(map(str, supported))})")
    return version


def _decimal(value: object, where: str) -> int:
    """Milliseconds written as a decimal string, as Kafka writes timestamps."""
    text = _str(value, where)
    if not _DIGITS.fullmatch(text) or int(text) > INT64_MAX:
        raise CodecError(f"field '{where}' must be a decimal string of milliseconds, got {_quote(text)}")
    return int(text)


def _partition(key: str, where: str) -> int:
    if not _PARTITION.fullmatch(key) or int(key) > INT32_MAX:
        raise CodecError(f"field '{where}' has key {_quote(key)}, which is not a partition number")
    return int(key)


def _replicas(value: object, where: str, *, allow_empty: bool = False, recorded: bool = True) -> Replicas:
    """32-bit integers; a ``recorded`` replica list (not an intake's) is broker ids, each once."""
    items = _list(value, where)
    replicas = tuple(_int(item, f"{where}[{i}]", lo=-INT32_MAX - 1) for i, item in enumerate(items))
    if recorded and not (replicas or allow_empty):
        raise CodecError(f"field '{where}' must not be empty")
    seen: set[int] = set()
    for broker_id in replicas if recorded else ():
        if broker_id < 0:
            raise CodecError(f"field '{where}' has negative replica id {broker_id}")
        if broker_id in seen:
            raise CodecError(f"field '{where}' has duplicate replica id {broker_id}")
        seen.add(broker_id)
    return replicas


def _uuid(value: object, where: str) -> str:
    if not _UUID.fullmatch(text := _str(value, where)):
        raise CodecError(f"field '{where}' must be a 22-character base64 UUID, got {_quote(text)}")
    return text


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
    return _dump("controller", obj, decode_controller)


def decode_controller(data: bytes | None) -> ControllerInfo:
    obj = _load(data)
    _version(obj, (1,))
    return ControllerInfo(
        broker_id=_int(_get(obj, "brokerid"), "brokerid"),
        timestamp_ms=_decimal(_get(obj, "timestamp"), "timestamp"),
        http=_optional(obj, "http", _str),
    )


def encode_controller_epoch(epoch: int) -> bytes:
    """The epoch as a decimal string: ``b"7"``."""
    if type(epoch) is not int or not 0 <= epoch <= INT32_MAX:
        raise ValueError(f"cannot encode controller epoch {epoch!r}: not in 0..{INT32_MAX}")
    return str(epoch).encode()


def decode_controller_epoch(data: bytes | None) -> int:
    text = _text(data)
    if not _DIGITS.fullmatch(text) or int(text) > INT32_MAX:
        raise CodecError(f"controller epoch must be a decimal integer, got {_quote(text)}")
    return int(text)


def encode_cluster_id(cluster_id: str) -> bytes:
    """``{"version":"1","id":"<22-char id>"}``."""
    return _dump("cluster id", {"version": "1", "id": cluster_id}, decode_cluster_id)


def decode_cluster_id(data: bytes | None) -> str:
    obj = _load(data)
    version = _str(_get(obj, "version"), "version")  # a string here, as Kafka writes it
    if version != "1":
        raise CodecError(f'unsupported version {_quote(version)} (expected "1")')
    return _uuid(_get(obj, "id"), "id")


def new_uuid_base64() -> str:
    """A random UUID as 22-char url-safe base64 without padding (Kafka's Uuid.toString); like
    Kafka's ``Uuid.randomUuid``, never one that starts with ``-`` (it reads as an option)."""
    while (text := base64.urlsafe_b64encode(uuid.uuid4().bytes).decode()[:22]).startswith("-"):
        pass
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


# Kafka's EndPoint.uriParseExp (an IPv6 host may be in brackets), with a port of 0-65535.
_ENDPOINT = re.compile(r"([A-Za-z0-9_.-]+)://\[?([0-9a-zA-Z%._:-]*)\]?:([0-9]{1,5})")


def encode_broker(reg: BrokerRegistration) -> bytes:
    """Kafka v5: version, host, port, jmx_port, timestamp (string), endpoints (strings),
    rack (only if set), listener_security_protocol_map (every listener -> "PLAINTEXT"),
    features ({}). An IPv6 host is written in brackets."""
    endpoints = [
        str(Endpoint(e.listener, f"[{e.host}]", e.port) if ":" in e.host else e) for e in reg.endpoints
    ]
    obj: dict[str, object] = {"version": 5, "host": reg.host, "port": reg.port, "jmx_port": reg.jmx_port}
    obj.update({"timestamp": str(reg.timestamp_ms), "endpoints": endpoints})
    if reg.rack is not None:
        obj["rack"] = reg.rack
    obj["listener_security_protocol_map"] = {ep.listener: "PLAINTEXT" for ep in reg.endpoints}
    obj["features"] = {}
    return _dump("broker registration", obj, lambda data: decode_broker(reg.broker_id, data))


def decode_broker(broker_id: int, data: bytes | None) -> BrokerRegistration:
    """Accepts versions 1-5 (v1-3 without endpoints use host/port as PLAINTEXT). A null host
    (Kafka's, for a broker without a PLAINTEXT listener) reads as ``""``; listeners upper-cased."""
    obj = _load(data)
    version = _version(obj, (1, 2, 3, 4, 5))
    host = "" if obj.get("host", "") is None and version > 1 else _str(_get(obj, "host"), "host")
    port = _int(_get(obj, "port"), "port", lo=-1, hi=PORT_MAX)
    endpoints: dict[str, Endpoint] = {}
    if "endpoints" not in obj and version <= 3:
        endpoints["PLAINTEXT"] = Endpoint("PLAINTEXT", host, _int(port, "port", hi=PORT_MAX))
    else:
        for i, item in enumerate(_list(_get(obj, "endpoints"), "endpoints")):
            match = _ENDPOINT.fullmatch(text := _str(item, f"endpoints[{i}]"))
            if match is None or int(match[3]) > PORT_MAX:
                raise CodecError(f"field 'endpoints[{i}]' is not LISTENER://host:port, got {_quote(text)}")
            if (listener := match[1].upper()) in endpoints:
                raise CodecError(f"field 'endpoints' names listener {listener} twice")
            endpoints[listener] = Endpoint(listener, match[2], int(match[3]))
    _optional(obj, "listener_security_protocol_map", _obj)
    _optional(obj, "features", _obj)
    return BrokerRegistration(
        broker_id=broker_id,
        host=host,
        port=port,
        endpoints=tuple(endpoints.values()),
        rack=_optional(obj, "rack", _str),
        timestamp_ms=_optional(obj, "timestamp", _decimal) or 0,
        jmx_port=_int(_get(obj, "jmx_port"), "jmx_port", lo=-1, hi=PORT_MAX),
    )


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
    """Version 3 when ``topic_id`` is set, else version 2; both maps always written (an empty AR
    or RR list is left out, as Kafka does)."""

    def json_map(replicas: Mapping[int, tuple[int, ...]], keep_empty: bool = False) -> dict[str, list[int]]:
        return {str(p): list(replicas[p]) for p in sorted(replicas) if keep_empty or replicas[p]}

    obj: dict[str, object] = {"version": 2 if znode.topic_id is None else 3}
    obj["partitions"] = json_map(znode.partitions, keep_empty=True)
    obj["adding_replicas"] = json_map(znode.adding)
    obj["removing_replicas"] = json_map(znode.removing)
    if znode.topic_id is not None:
        obj["topic_id"] = znode.topic_id
    return _dump("topic znode", obj, decode_topic)


def decode_topic(data: bytes | None) -> TopicZnode:
    """Versions 1, 2 and 3. Partition keys must be non-negative decimal integers, replica lists
    lists of non-negative ints without duplicates; AR/RR keys must name existing partitions.
    RS is not empty; AR and RR are disjoint parts of RS; an empty AR/RR list reads as absent (as Kafka)."""
    obj = _load(data)
    version = _version(obj, (1, 2, 3))
    partitions = _replica_map(obj, "partitions", None)
    adding = _replica_map(obj, "adding_replicas", partitions)
    removing = _replica_map(obj, "removing_replicas", partitions)
    for p in sorted(adding.keys() & removing.keys()):
        if both := sorted(set(adding[p]) & set(removing[p])):
            raise CodecError(f"partition {p} has replica {both[0]} both adding and removing")
    topic_id = _optional(obj, "topic_id", _uuid)
    if topic_id is None and version == 3:
        raise CodecError("missing field 'topic_id'")
    return TopicZnode(partitions, adding, removing, topic_id)


def _replica_map(obj: dict[str, object], name: str, rs: dict[int, Replicas] | None) -> dict[int, Replicas]:
    """``{"<partition>": [replicas]}``: RS when ``rs`` is None, else an optional AR/RR map."""
    if rs is not None and name not in obj:
        return {}
    result: dict[int, Replicas] = {}
    for key, value in _obj(_get(obj, name), name).items():
        p = _partition(key, name)
        if not (replicas := _replicas(value, _key(name, key), allow_empty=rs is not None)):
            continue
        if rs is not None and p not in rs:
            raise CodecError(f"field '{name}' names partition {p}, which is not in 'partitions'")
        if rs is not None and (outside := [r for r in replicas if r not in rs[p]]):
            raise CodecError(f"field '{_key(name, key)}' has replica {outside[0]}, not in 'partitions'")
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
    obj: dict[str, object] = {"version": 1, "leader": state.leader, "leader_epoch": state.leader_epoch}
    obj.update({"controller_epoch": state.controller_epoch, "isr": list(state.isr)})
    return _dump("partition state", obj, decode_partition_state)


def decode_partition_state(data: bytes | None) -> PartitionState:
    """``leader`` is a broker id or -1; the ISR may be empty (no negative or repeated ids)."""
    obj = _load(data)
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
        items.append({"topic": entry.topic, "partition": entry.partition, "replicas": list(entry.replicas)})
        if entry.original_replicas is not None:
            items[-1]["original_replicas"] = list(entry.original_replicas)
    return _dump("legacy reassignment", {"version": 1, "partitions": items}, decode_legacy_reassignment)


def decode_legacy_reassignment(data: bytes | None) -> tuple[LegacyReassignmentEntry, ...]:
    """Entries in znode order, checked for shape and types only: empty, negative or repeated
    replica ids and repeated partitions are for the controller to refuse per entry (as Kafka)."""
    obj = _load(data)
    _version(obj, (1,))
    entries: list[LegacyReassignmentEntry] = []
    for i, item in enumerate(_list(_get(obj, "partitions"), "partitions")):
        entry, at = _obj(item, f"partitions[{i}]"), f"partitions[{i}]."
        topic = _str(_get(entry, "topic", at), at + "topic")
        partition = _int(_get(entry, "partition", at), at + "partition")
        replicas = _replicas(_get(entry, "replicas", at), at + "replicas", recorded=False)
        original = entry.get("original_replicas")
        original = None if original is None else _replicas(original, at + "original_replicas", recorded=False)
        entries.append(LegacyReassignmentEntry(topic, partition, replicas, original))
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
    return _dump("reassignment request", obj, decode_reassignment_request)


def decode_reassignment_request(data: bytes | None) -> ReassignmentRequest:
    """Keys must be partition numbers; replica lists are checked for types only (the controller
    refuses a bad target per partition). ``legacy`` defaults to false."""
    obj = _load(data)
    _version(obj, (1,))
    assignments: dict[TopicPartition, tuple[int, ...]] = {}
    for topic, partitions in _obj(_get(obj, "assignments"), "assignments").items():
        where = _key("assignments", topic)
        for key, replicas in _obj(partitions, where).items():
            target = _replicas(replicas, _key(where, key), recorded=False)
            assignments[(topic, _partition(key, where))] = target
    if type(legacy := obj.get("legacy", False)) is not bool:
        raise _wrong("legacy", "a boolean", legacy)
    return ReassignmentRequest(assignments, legacy)


@dataclass(frozen=True, slots=True)
class ReassignmentStatus:
    target: tuple[int, ...]
    original: tuple[int, ...]
    top: int


def encode_reassignment_status(status: ReassignmentStatus) -> bytes:
    """``{"version":1,"target":[...],"original":[...],"top":N}``."""
    obj: dict[str, object] = {"version": 1, "target": list(status.target), "original": list(status.original)}
    obj["top"] = status.top
    return _dump("reassignment status", obj, decode_reassignment_status)


def decode_reassignment_status(data: bytes | None) -> ReassignmentStatus:
    """``target`` and ``original`` are non-empty replica lists; ``top`` a non-negative integer."""
    obj = _load(data)
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
    return _dump("ISR change notification", {"version": 1, "partitions": items}, decode_isr_change)


def decode_isr_change(data: bytes | None) -> tuple[TopicPartition, ...]:
    obj = _load(data)
    _version(obj, (1,))
    result: list[TopicPartition] = []
    for i, item in enumerate(_list(_get(obj, "partitions"), "partitions")):
        entry, at = _obj(item, f"partitions[{i}]"), f"partitions[{i}]."
        topic = _str(_get(entry, "topic", at), at + "topic")
        result.append((topic, _int(_get(entry, "partition", at), at + "partition")))
    return tuple(result)


# --- /config -------------------------------------------------------------------------------------

_ENTITY_PATH = re.compile(r"(topics|clients|users|brokers|ips)/[^/]+|users/[^/]+/clients/[^/]+")


def encode_entity_config(config: Mapping[str, str]) -> bytes:
    """``{"version":1,"config":{"k":"v"}}``; values are strings."""
    obj: dict[str, object] = {"version": 1, "config": {key: config[key] for key in sorted(config)}}
    return _dump("entity config", obj, decode_entity_config)


def decode_entity_config(data: bytes | None) -> dict[str, str]:
    """Values must be strings (Kafka stores every config value as a string)."""
    obj = _load(data)
    _version(obj, (1,))
    config = _obj(_get(obj, "config"), "config")
    return {key: _str(value, _key("config", key)) for key, value in config.items()}


def encode_config_change(entity_path: str) -> bytes:
    """``{"version":2,"entity_path":"users/alice/clients/app-1"}``."""
    return _dump("config change", {"version": 2, "entity_path": entity_path}, decode_config_change)


def decode_config_change(data: bytes | None) -> str:
    """Returns the entity path. Version 1 notifications (``entity_type``/``entity_name``) are
    turned into the same form (``topics/foo``). Checked: ``<type>/<name>`` or ``users/u/clients/c``."""
    obj = _load(data)
    if _version(obj, (1, 2)) == 2:
        where, path = "entity_path", _str(_get(obj, "entity_path"), "entity_path")
    else:
        entity_type = _str(_get(obj, "entity_type"), "entity_type")
        where, path = "entity_name", f"{entity_type}/{_str(_get(obj, 'entity_name'), 'entity_name')}"
    if not _ENTITY_PATH.fullmatch(path):
        raise CodecError(f"field '{where}' does not name a config entity: {_quote(path)}")
    return path

"""Strict JSON codecs for the znodes of Kafka's ZooKeeper layout that hold the cluster: the
controller's (``/controller``, its epoch, ``/cluster/id``), brokers, topics, partition states. The
znodes of requests and notifications (``/admin/...``, ``/isr_change_notification``, ``/config``)
and reassignd's origins record are :mod:`reassignd.zk.admin_codec`'s.

Each ``decode_*`` takes the raw bytes (``None`` for a znode with null data) and returns a typed
value or raises :class:`CodecError` with a one-line human reason ("invalid JSON at byte 1",
"field 'leader' must be an integer, got string"). Unknown keys are accepted, duplicate keys are
not. Each ``encode_*`` returns compact UTF-8 JSON bytes, and raises ``ValueError`` rather than
write what its own decoder would reject. Pure: no I/O.

The hot znodes (topics, partition states; admin_codec's origins and legacy plan) are read in two
tiers: a typed msgspec decode, and only where it gives up, the strict path
(:mod:`reassignd.zk.json_fields`), which alone words a refusal. Their encoders check with the
same typed decode (:func:`typed_encoding`): bytes it reads back as the value given are written;
anything else goes to the strict decoder, whose reason the ``ValueError`` carries.

Recorded replica lists (RS/AR/RR, ISR, status nodes) hold unique non-negative ids. The legacy
reassignment znode is a plan, read by the one plan reader (:mod:`reassignd.plan_format`), whole or
not at all. KIP-236 requests are checked for shape and types only: as in Kafka, the controller
refuses a bad target entry by entry, without losing the rest of the znode.
"""

from __future__ import annotations

import base64
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated

import msgspec

from reassignd.int_limits import INT32_MAX, PORT_MAX
from reassignd.topic_partition import Replicas
from reassignd.zk.json_fields import (
    DIGITS,
    dump,
    fast_uuid,
    field_name,
    get_field,
    load_object,
    quote,
    read_decimal,
    read_int,
    read_list,
    read_object,
    read_optional,
    read_partition,
    read_replicas,
    read_str,
    read_uuid,
    read_version,
    utf8_text,
)
from reassignd.zk.json_fields import CodecError as CodecError  # noqa: PLC0414

# --- /controller, /controller_epoch, /cluster/id -------------------------------------------------


@dataclass(frozen=True, slots=True)
class ControllerInfo:
    broker_id: int
    timestamp_ms: int
    http: str | None = None
    kafka: str | None = None  # the instance's Kafka listener as clients reach it, "host:port"


def encode_controller(info: ControllerInfo) -> bytes:
    """``{"version":1,"brokerid":N,"timestamp":"<ms>"[,"http":url][,"kafka":"host:port"]}``."""
    obj: dict[str, object] = {"version": 1, "brokerid": info.broker_id, "timestamp": str(info.timestamp_ms)}
    if info.http is not None:
        obj["http"] = info.http
    if info.kafka is not None:
        obj["kafka"] = info.kafka
    return dump("controller", obj, decode_controller)


def decode_controller(data: bytes | None) -> ControllerInfo:
    obj = load_object(data)
    read_version(obj, (1,))
    return ControllerInfo(
        broker_id=read_int(get_field(obj, "brokerid"), "brokerid"),
        timestamp_ms=read_decimal(get_field(obj, "timestamp"), "timestamp"),
        http=read_optional(obj, "http", read_str),
        kafka=read_optional(obj, "kafka", read_str),
    )


def encode_controller_epoch(epoch: int) -> bytes:
    """The epoch as a decimal string: ``b"7"``."""
    if type(epoch) is not int or not 0 <= epoch <= INT32_MAX:
        raise ValueError(f"cannot encode controller epoch {epoch!r}: not in 0..{INT32_MAX}")
    return str(epoch).encode()


def decode_controller_epoch(data: bytes | None) -> int:
    text = utf8_text(data)
    if not DIGITS.fullmatch(text) or int(text) > INT32_MAX:
        raise CodecError(f"controller epoch must be a decimal integer, got {quote(text)}")
    return int(text)


def encode_cluster_id(cluster_id: str) -> bytes:
    """``{"version":"1","id":"<22-char id>"}``."""
    return dump("cluster id", {"version": "1", "id": cluster_id}, decode_cluster_id)


def decode_cluster_id(data: bytes | None) -> str:
    obj = load_object(data)
    version = read_str(get_field(obj, "version"), "version")  # a string here, as Kafka writes it
    if version != "1":
        raise CodecError(f'unsupported version {quote(version)} (expected "1")')
    return read_uuid(get_field(obj, "id"), "id")


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
    return dump("broker registration", obj, lambda data: decode_broker(reg.broker_id, data))


def decode_broker(broker_id: int, data: bytes | None) -> BrokerRegistration:
    """Accepts versions 1-5 (v1-3 without endpoints use host/port as PLAINTEXT). A null host
    (Kafka's, for a broker without a PLAINTEXT listener) reads as ``""``; listeners upper-cased."""
    return _read_broker(broker_id, load_object(data))


def _read_broker(broker_id: int, obj: dict[str, object]) -> BrokerRegistration:
    version = read_version(obj, (1, 2, 3, 4, 5))
    host = "" if obj.get("host", "") is None and version > 1 else read_str(get_field(obj, "host"), "host")
    port = read_int(get_field(obj, "port"), "port", lo=-1, hi=PORT_MAX)
    endpoints: dict[str, Endpoint] = {}
    if "endpoints" not in obj and version <= 3:
        endpoints["PLAINTEXT"] = Endpoint("PLAINTEXT", host, read_int(port, "port", hi=PORT_MAX))
    else:
        for i, item in enumerate(read_list(get_field(obj, "endpoints"), "endpoints")):
            match = _ENDPOINT.fullmatch(text := read_str(item, f"endpoints[{i}]"))
            if match is None or int(match[3]) > PORT_MAX:
                raise CodecError(f"field 'endpoints[{i}]' is not LISTENER://host:port, got {quote(text)}")
            if (listener := match[1].upper()) in endpoints:
                raise CodecError(f"field 'endpoints' names listener {listener} twice")
            endpoints[listener] = Endpoint(listener, match[2], int(match[3]))
    read_optional(obj, "listener_security_protocol_map", read_object)
    read_optional(obj, "features", read_object)
    return BrokerRegistration(
        broker_id=broker_id,
        host=host,
        port=port,
        endpoints=tuple(endpoints.values()),
        rack=read_optional(obj, "rack", read_str),
        timestamp_ms=read_optional(obj, "timestamp", read_decimal) or 0,
        jmx_port=read_int(get_field(obj, "jmx_port"), "jmx_port", lo=-1, hi=PORT_MAX),
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
    version = 2 if znode.topic_id is None else 3

    def typed() -> dict[str, object]:  # msgspec writes the int keys as JSON strings, in C
        obj: dict[str, object] = {"version": version, "partitions": dict(sorted(znode.partitions.items()))}
        obj["adding_replicas"] = {p: r for p, r in sorted(znode.adding.items()) if r}
        obj["removing_replicas"] = {p: r for p, r in sorted(znode.removing.items()) if r}
        return obj if znode.topic_id is None else {**obj, "topic_id": znode.topic_id}

    if (data := typed_encoding(typed, _topic_typed, znode)) is not None:
        return data

    def json_map(replicas: Mapping[int, tuple[int, ...]], keep_empty: bool = False) -> dict[str, list[int]]:
        return {str(p): list(replicas[p]) for p in sorted(replicas) if keep_empty or replicas[p]}

    obj: dict[str, object] = {"version": version, "partitions": json_map(znode.partitions, keep_empty=True)}
    obj["adding_replicas"] = json_map(znode.adding)
    obj["removing_replicas"] = json_map(znode.removing)
    if znode.topic_id is not None:
        obj["topic_id"] = znode.topic_id
    return dump("topic znode", obj, decode_topic)


JSON_ENCODER = msgspec.json.Encoder()


def typed_encoding(
    build: Callable[[], dict[str, object]], read_back: Callable[[bytes], object], value: object
) -> bytes | None:
    """The encoders' check, on the decoder's own rules: msgspec's encoding of ``build()`` (in C)
    when ``read_back``, the decoder's typed tier, reads it back as ``value``; else None, and the
    caller has the strict decoder judge (and word) the JSON."""
    try:
        data = JSON_ENCODER.encode(build())
    except (TypeError, ValueError, OverflowError, msgspec.EncodeError):
        return None
    return data if read_back(data) == value else None


# A broker id, partition, epoch: 0..INT32_MAX. As a dict key, msgspec reads it from a JSON string
# exactly as read_partition does (decimal, no sign, no leading zero), "-0" aside.
_UInt31 = Annotated[int, msgspec.Meta(ge=0, le=INT32_MAX)]
_ReplicaMap = dict[_UInt31, tuple[_UInt31, ...]]


class _TopicStruct(msgspec.Struct, gc=False):
    """The typed path's view of a topic znode; absent members are UNSET (so counted)."""

    version: Annotated[int, msgspec.Meta(ge=1, le=3)]
    partitions: _ReplicaMap
    adding_replicas: _ReplicaMap | msgspec.UnsetType = msgspec.UNSET
    removing_replicas: _ReplicaMap | msgspec.UnsetType = msgspec.UNSET
    topic_id: str | msgspec.UnsetType = msgspec.UNSET


_TOPIC_DECODER = msgspec.json.Decoder(_TopicStruct)


def _ascending(m: dict[int, tuple[int, ...]]) -> dict[int, tuple[int, ...]]:
    """``m`` in key order (as the encoder writes it, so mostly as it is)."""
    keys = list(m)
    return m if keys == sorted(keys) else dict(sorted(m.items()))


def _topic_typed(data: bytes) -> TopicZnode | None:
    """What :func:`_read_topic` returns, decoded by msgspec into typed values, or None where it
    might refuse (or where this path is unsure): 20 µs for 100 partitions where the JSON path
    takes 300 µs (a failover decodes a znode per topic, and every topic change one). The
    encoder's check too: bytes this reads back as the znode given are bytes the decoder takes."""
    if b"\\u" in data or b'"-0"' in data:  # an escape; the one key msgspec reads and we refuse
        return None
    try:
        t = _TOPIC_DECODER.decode(data)
    except (msgspec.MsgspecError, ValueError, RecursionError):  # invalid JSON, UTF-8 or types; too deep
        return None
    maps = [t.partitions]
    present = 2
    for m in (t.adding_replicas, t.removing_replicas):
        if m is not msgspec.UNSET:
            maps.append(m)
            present += 1
    topic_id = None
    if t.topic_id is not msgspec.UNSET:
        if not fast_uuid(t.topic_id):
            return None
        topic_id, present = t.topic_id, present + 1
    elif t.version == 3:
        return None
    # one colon per member, none in strings (ids and numbers only): no key repeated, none unknown
    if data.count(b":") != present + sum(map(len, maps)):
        return None
    rs = t.partitions
    if not all(r and len(set(r)) == len(r) for r in set(rs.values())):
        return None
    moving: list[dict[int, tuple[int, ...]]] = []
    for m in maps[1:]:
        part = {p: r for p, r in m.items() if r}
        for p, r in part.items():
            if len(set(r)) != len(r) or p not in rs or not set(r) <= set(rs[p]):
                return None
        moving.append(part)
    adding = _ascending(moving[0]) if t.adding_replicas is not msgspec.UNSET else {}
    removing = _ascending(moving[-1]) if t.removing_replicas is not msgspec.UNSET else {}
    if any(set(adding[p]) & set(removing[p]) for p in adding.keys() & removing.keys()):
        return None
    return TopicZnode(_ascending(rs), adding, removing, topic_id)


def decode_topic(data: bytes | None) -> TopicZnode:
    """Versions 1, 2 and 3. Partition keys must be non-negative decimal integers, replica lists
    lists of non-negative ints without duplicates; AR/RR keys must name existing partitions.
    RS is not empty; AR and RR are disjoint parts of RS; an empty AR/RR list reads as absent (as Kafka).
    Two tiers: the typed path, and where it is unsure the strict path, which words the refusal."""
    if type(data) is bytes and (typed := _topic_typed(data)) is not None:
        return typed
    return _read_topic(load_object(data))


def _read_topic(obj: dict[str, object]) -> TopicZnode:
    """The strict path: every check in turn, each with its own reason."""
    version = read_version(obj, (1, 2, 3))
    partitions = _replica_map(obj, "partitions", None)
    adding = _replica_map(obj, "adding_replicas", partitions)
    removing = _replica_map(obj, "removing_replicas", partitions)
    for p in sorted(adding.keys() & removing.keys()):
        if both := sorted(set(adding[p]) & set(removing[p])):
            raise CodecError(f"partition {p} has replica {both[0]} both adding and removing")
    topic_id = read_optional(obj, "topic_id", read_uuid)
    if topic_id is None and version == 3:
        raise CodecError("missing field 'topic_id'")
    return TopicZnode(partitions, adding, removing, topic_id)


def _replica_map(obj: dict[str, object], name: str, rs: dict[int, Replicas] | None) -> dict[int, Replicas]:
    """``{"<partition>": [replicas]}``: RS when ``rs`` is None, else an optional AR/RR map."""
    if rs is not None and name not in obj:
        return {}
    result: dict[int, Replicas] = {}
    for key, value in read_object(get_field(obj, name), name).items():
        p = read_partition(key, name)
        if not (replicas := read_replicas(value, field_name(name, key), allow_empty=rs is not None)):
            continue
        if rs is not None and p not in rs:
            raise CodecError(f"field '{name}' names partition {p}, which is not in 'partitions'")
        if rs is not None and (outside := [r for r in replicas if r not in rs[p]]):
            raise CodecError(f"field '{field_name(name, key)}' has replica {outside[0]}, not in 'partitions'")
        result[p] = replicas
    return dict(sorted(result.items()))


# --- /brokers/topics/<topic>/partitions/<p>/state ------------------------------------------------


class PartitionState(msgspec.Struct, frozen=True, gc=False):
    """LeaderIsrAndControllerEpoch; the partition epoch is the znode version, kept beside it. A
    msgspec struct: a failover builds 100,000 of them (0.1 µs each, a frozen dataclass 0.75 µs)."""

    leader: int
    leader_epoch: int
    controller_epoch: int
    isr: tuple[int, ...]


def encode_partition_state(state: PartitionState) -> bytes:
    """``{"version":1,"leader":1,"leader_epoch":3,"controller_epoch":5,"isr":[1,2,3]}``."""
    obj: dict[str, object] = {"version": 1, "leader": state.leader, "leader_epoch": state.leader_epoch}
    obj.update({"controller_epoch": state.controller_epoch, "isr": state.isr})
    if (data := typed_encoding(lambda: obj, _partition_state_typed, state)) is not None:
        return data
    obj["isr"] = list(state.isr)
    return dump("partition state", obj, decode_partition_state)


def decode_partition_state(data: bytes | None) -> PartitionState:
    """``leader`` is a broker id or -1; the ISR may be empty (no negative or repeated ids).
    Two tiers: the typed path, and where it is unsure the strict path, which words the refusal."""
    if type(data) is bytes and (typed := _partition_state_typed(data)) is not None:
        return typed
    return _read_partition_state(load_object(data))


class _StateStruct(msgspec.Struct, gc=False):
    """The typed path's view of a state znode: :func:`_read_partition_state`'s rules, as types."""

    version: Annotated[int, msgspec.Meta(ge=1, le=1)]
    leader: Annotated[int, msgspec.Meta(ge=-1, le=INT32_MAX)]
    leader_epoch: _UInt31
    controller_epoch: _UInt31
    isr: tuple[_UInt31, ...]


_STATE_DECODER = msgspec.json.Decoder(_StateStruct)


def _partition_state_typed(data: bytes) -> PartitionState | None:
    """What :func:`_read_partition_state` returns, decoded by msgspec in C (a failover reads
    100,000 of these), or None where it might refuse. Five colons and five required members
    mean no repeated and no unknown key; a repeated ISR id, or anything msgspec refuses, is left
    to the strict path, which words it."""
    if data.count(b":") != len(_StateStruct.__struct_fields__):
        return None
    try:
        s = _STATE_DECODER.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if len(set(s.isr)) != len(s.isr):
        return None
    return PartitionState(s.leader, s.leader_epoch, s.controller_epoch, s.isr)


def _read_partition_state(obj: dict[str, object]) -> PartitionState:
    """The strict path: every check in turn, each with its own reason."""
    read_version(obj, (1,))
    return PartitionState(
        leader=read_int(get_field(obj, "leader"), "leader", lo=-1),
        leader_epoch=read_int(get_field(obj, "leader_epoch"), "leader_epoch"),
        controller_epoch=read_int(get_field(obj, "controller_epoch"), "controller_epoch"),
        isr=read_replicas(get_field(obj, "isr"), "isr", allow_empty=True),
    )

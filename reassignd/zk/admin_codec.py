"""Strict JSON codecs for the znodes through which tools and brokers ask the controller for
something: ``/admin/reassign_partitions`` (and KIP-236's ``_extra``), KIP-236's sequenced requests
and status nodes, ``/isr_change_notification``, ``/admin/preferred_replica_election``, entity
configs and their change notifications; and reassignd's origins record (each moving partition's
replicas before its move). The rules are :mod:`reassignd.zk.codec`'s: each ``decode_*`` returns a
typed value or raises :class:`~reassignd.zk.codec.CodecError` with a one-line reason, each
``encode_*`` refuses what its own decoder would. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated

import msgspec

from reassignd.int_limits import INT32_MAX, INT32_MIN, INT64_MAX
from reassignd.plan_format import PlanError, read_plan
from reassignd.topic_partition import TopicPartition, topic_name_problem
from reassignd.zk.codec import typed_encoding
from reassignd.zk.json_fields import (
    FIELDS,
    dump,
    field_name,
    get_field,
    load_object,
    quote,
    read_int,
    read_list,
    read_object,
    read_partition,
    read_replicas,
    read_str,
    read_version,
)
from reassignd.zk.json_fields import CodecError as CodecError  # noqa: PLC0414

# --- /admin/reassign_partitions (and _extra) -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class LegacyReassignmentEntry:
    topic: str
    partition: int
    replicas: tuple[int, ...]
    original_replicas: tuple[int, ...] | None = None


class _LegacyItem(msgspec.Struct, omit_defaults=True):
    topic: str
    partition: int
    replicas: tuple[int, ...]
    original_replicas: tuple[int, ...] | None = None


_BrokerId = Annotated[int, msgspec.Meta(ge=0, le=INT32_MAX)]


class _LegacyTyped(msgspec.Struct, gc=False):
    """The typed tier's view of a plan entry; an absent member is UNSET (so counted)."""

    topic: str
    partition: _BrokerId
    replicas: tuple[_BrokerId, ...]
    original_replicas: tuple[_BrokerId, ...] | msgspec.UnsetType | None = msgspec.UNSET


class _LegacyPlan(msgspec.Struct, gc=False):
    partitions: list[_LegacyTyped]
    version: Annotated[int, msgspec.Meta(ge=1, le=1)] | msgspec.UnsetType = msgspec.UNSET  # 1 when absent


_LEGACY_DECODER = msgspec.json.Decoder(_LegacyPlan)


def _legacy_typed(data: bytes) -> tuple[LegacyReassignmentEntry, ...] | None:
    """What the plan reader returns for ``data``, decoded by msgspec, or None where it might
    refuse: an escape; a member unknown (``log_dirs`` too) or repeated (one colon per member,
    none in strings: a legal topic name has none); an illegal topic name, an empty or repeated
    replica list entry, a partition given twice, an empty plan."""
    if b"\\u" in data:
        return None
    try:
        plan = _LEGACY_DECODER.decode(data)
    except (msgspec.MsgspecError, ValueError, RecursionError):  # invalid JSON, UTF-8 or types; too deep
        return None
    if not plan.partitions:  # an empty plan: the plan reader words it
        return None
    members = 1 + (plan.version is not msgspec.UNSET) + 3 * len(plan.partitions)
    members += sum(e.original_replicas is not msgspec.UNSET for e in plan.partitions)
    if data.count(b":") != members:
        return None
    if any(topic_name_problem(t) is not None for t in {e.topic for e in plan.partitions}):
        return None
    if len({(e.topic, e.partition) for e in plan.partitions}) != len(plan.partitions):
        return None
    if not all(r and len(set(r)) == len(r) for r in {e.replicas for e in plan.partitions}):
        return None
    return tuple(
        LegacyReassignmentEntry(
            e.topic,
            e.partition,
            e.replicas,
            None if e.original_replicas is msgspec.UNSET else e.original_replicas,
        )
        for e in plan.partitions
    )


def encode_legacy_reassignment(entries: tuple[LegacyReassignmentEntry, ...]) -> bytes:
    """``{"version":1,"partitions":[{"topic","partition","replicas"[,"original_replicas"]}]}``."""

    def typed() -> dict[str, object]:
        items = [_LegacyItem(e.topic, e.partition, e.replicas, e.original_replicas) for e in entries]
        return {"version": 1, "partitions": items}

    if (data := typed_encoding(typed, _legacy_typed, entries)) is not None:
        return data
    items: list[dict[str, object]] = []
    for entry in entries:
        items.append({"topic": entry.topic, "partition": entry.partition, "replicas": list(entry.replicas)})
        if entry.original_replicas is not None:
            items[-1]["original_replicas"] = list(entry.original_replicas)
    return dump("legacy reassignment", {"version": 1, "partitions": items}, decode_legacy_reassignment)


def decode_legacy_reassignment(data: bytes | None) -> tuple[LegacyReassignmentEntry, ...]:
    """Entries in znode order, read by the one plan reader (:func:`reassignd.plan_format.parse_plan`,
    with ``original_replicas``): a plan the tool or the API would refuse is refused here whole.
    Two tiers: the typed one, and where it is unsure the plan reader, which words the refusal."""
    if type(data) is bytes and (typed := _legacy_typed(data)) is not None:
        return typed
    return _read_legacy(load_object(data))


def _read_legacy(obj: dict[str, object]) -> tuple[LegacyReassignmentEntry, ...]:
    """The strict path: the plan reader."""
    try:
        plan = read_plan(obj, origins=True)
    except PlanError as e:
        raise CodecError(str(e)) from None
    return tuple(
        LegacyReassignmentEntry(e.topic, e.partition, e.replicas, e.original_replicas) for e in plan.entries
    )


# --- reassignd's origins: each moving partition's replicas before its move, in their order ----------


class _OriginsStruct(msgspec.Struct, gc=False):
    """The typed tier's view of an origins record (and of a demotion's replica orders)."""

    version: Annotated[int, msgspec.Meta(ge=1, le=1)]
    partitions: dict[
        Annotated[int, msgspec.Meta(ge=0)],
        tuple[Annotated[int, msgspec.Meta(ge=INT32_MIN, le=INT32_MAX)], ...],
    ]


_ORIGINS_DECODER = msgspec.json.Decoder(_OriginsStruct)


def _origins_typed(data: bytes) -> dict[int, tuple[int, ...]] | None:
    """What :func:`_read_origins` returns, decoded by msgspec, or None where it might refuse: an
    escape, a member unknown or repeated (one colon per member, none in strings), "-0" (a key
    msgspec reads as 0, and ``str.isdigit`` refuses)."""
    if b"\\u" in data or b'"-0"' in data:
        return None
    try:
        record = _ORIGINS_DECODER.decode(data)
    except (msgspec.MsgspecError, ValueError, RecursionError):  # invalid JSON, UTF-8 or types; too deep
        return None
    return record.partitions if data.count(b":") == 2 + len(record.partitions) else None


def _encode_orders(what: str, orders: Mapping[int, tuple[int, ...]]) -> bytes:
    """``{"version":1,"partitions":{"0":[3,5,6]}}``: by msgspec when the typed tier reads it back
    as ``orders`` (a topic's write of 100 moving partitions, 1 ms -> 0.1 ms); else checked by the
    strict decoder, whose reason a refusal carries."""
    typed = typed_encoding(
        lambda: {"version": 1, "partitions": dict(sorted(orders.items()))}, _origins_typed, orders
    )
    if typed is not None:
        return typed
    obj = {"version": 1, "partitions": {str(p): list(r) for p, r in sorted(orders.items())}}
    return dump(what, obj, decode_origins)


def encode_origins(origins: Mapping[int, tuple[int, ...]]) -> bytes:
    """``/reassignd/origins/<topic>``: each moving partition's replicas before its move."""
    return _encode_orders("origins", origins)


def decode_origins(data: bytes | None) -> dict[int, tuple[int, ...]]:
    """Two tiers: the typed one, and where it is unsure the strict path, which words the refusal."""
    if type(data) is bytes and (typed := _origins_typed(data)) is not None:
        return typed
    return _read_origins(load_object(data))


def _read_origins(obj: dict[str, object]) -> dict[int, tuple[int, ...]]:
    """The strict path: partition ids as keys (decimal digits), lists of 32-bit integers."""
    read_version(obj, (1,))
    parts = read_object(get_field(obj, "partitions"), "partitions")
    out: dict[int, tuple[int, ...]] = {}
    for key, value in parts.items():
        if not key.isdigit():
            raise CodecError(f"field 'partitions' has a key that is not a partition id: {quote(key)}")
        out[int(key)] = read_replicas(value, field_name("partitions", key), recorded=False)
    return out


# --- reassignd's demotions and self-healing records -------------------------------------------------


def encode_demoted_orders(orders: Mapping[int, tuple[int, ...]]) -> bytes:
    """``/reassignd/demotions/<broker>/<topic>``: the replica orders before a demotion, by
    partition, in the origins record's shape."""
    return _encode_orders("demoted replica orders", orders)


def decode_demoted_orders(data: bytes | None) -> dict[int, tuple[int, ...]]:
    return decode_origins(data)


def encode_demotion(demoted_at_ms: int) -> bytes:
    """``/reassignd/demotions/<broker>``: ``{"version":1,"demoted_at_ms":N}``."""
    return dump("demotion", {"version": 1, "demoted_at_ms": demoted_at_ms}, decode_demotion)


def decode_demotion(data: bytes | None) -> int:
    obj = load_object(data)
    read_version(obj, (1,))
    return read_int(get_field(obj, "demoted_at_ms"), "demoted_at_ms", hi=INT64_MAX)


def encode_lost_broker(lost_at_ms: int) -> bytes:
    """``/reassignd/self_healing/<broker>``: ``{"version":1,"lost_at_ms":N}``, when the
    controller saw the broker go (self-healing's grace runs from it)."""
    return dump("lost broker", {"version": 1, "lost_at_ms": lost_at_ms}, decode_lost_broker)


def decode_lost_broker(data: bytes | None) -> int:
    obj = load_object(data)
    read_version(obj, (1,))
    return read_int(get_field(obj, "lost_at_ms"), "lost_at_ms", hi=INT64_MAX)


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
    return dump("reassignment request", obj, decode_reassignment_request)


def decode_reassignment_request(data: bytes | None) -> ReassignmentRequest:
    """Keys must be partition numbers; replica lists are checked for types only (the controller
    refuses a bad target per partition). ``legacy`` defaults to false."""
    obj = load_object(data)
    read_version(obj, (1,))
    assignments: dict[TopicPartition, tuple[int, ...]] = {}
    for topic, partitions in read_object(get_field(obj, "assignments"), "assignments").items():
        where = field_name("assignments", topic)
        for key, replicas in read_object(partitions, where).items():
            target = read_replicas(replicas, field_name(where, key), recorded=False)
            assignments[(topic, read_partition(key, where))] = target
    legacy = FIELDS.boolean(obj.get("legacy", False), "legacy")
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
    return dump("reassignment status", obj, decode_reassignment_status)


def decode_reassignment_status(data: bytes | None) -> ReassignmentStatus:
    """``target`` and ``original`` are non-empty replica lists; ``top`` a non-negative integer."""
    obj = load_object(data)
    read_version(obj, (1,))
    return ReassignmentStatus(
        target=read_replicas(get_field(obj, "target"), "target"),
        original=read_replicas(get_field(obj, "original"), "original"),
        top=read_int(get_field(obj, "top"), "top"),
    )


# --- /isr_change_notification --------------------------------------------------------------------


def encode_isr_change(partitions: tuple[TopicPartition, ...]) -> bytes:
    """``{"version":1,"partitions":[{"topic":"foo","partition":0}]}``."""
    items: list[object] = [{"topic": topic, "partition": p} for topic, p in partitions]
    return dump("ISR change notification", {"version": 1, "partitions": items}, decode_isr_change)


def decode_isr_change(data: bytes | None) -> tuple[TopicPartition, ...]:
    obj = load_object(data)
    read_version(obj, (1,))
    result: list[TopicPartition] = []
    for i, item in enumerate(read_list(get_field(obj, "partitions"), "partitions")):
        entry, at = read_object(item, f"partitions[{i}]"), f"partitions[{i}]."
        topic = read_str(get_field(entry, "topic", at), at + "topic")
        result.append((topic, read_int(get_field(entry, "partition", at), at + "partition")))
    return tuple(result)


# --- /admin/preferred_replica_election ----------------------------------------------------------


def encode_preferred_replica_election(partitions: tuple[TopicPartition, ...]) -> bytes:
    """``{"version":1,"partitions":[{"topic":"t","partition":0}]}``, as Kafka's
    ``kafka-preferred-replica-election`` tool writes it."""
    items: list[object] = [{"topic": topic, "partition": p} for topic, p in partitions]
    return dump(
        "preferred replica election", {"version": 1, "partitions": items}, decode_preferred_replica_election
    )


def decode_preferred_replica_election(data: bytes | None) -> tuple[TopicPartition, ...]:
    """The partitions named, in znode order, each once (Kafka's controller reads them as a set)."""
    obj = load_object(data)
    read_version(obj, (1,))
    result: dict[TopicPartition, None] = {}
    for i, item in enumerate(read_list(get_field(obj, "partitions"), "partitions")):
        entry, at = read_object(item, f"partitions[{i}]"), f"partitions[{i}]."
        topic = read_str(get_field(entry, "topic", at), at + "topic")
        result[(topic, read_int(get_field(entry, "partition", at), at + "partition"))] = None
    return tuple(result)


# --- /config -------------------------------------------------------------------------------------

_ENTITY_PATH = re.compile(r"(topics|clients|users|brokers|ips)/[^/]+|users/[^/]+/clients/[^/]+")


def encode_entity_config(config: Mapping[str, str]) -> bytes:
    """``{"version":1,"config":{"k":"v"}}``; values are strings."""
    obj: dict[str, object] = {"version": 1, "config": {key: config[key] for key in sorted(config)}}
    return dump("entity config", obj, decode_entity_config)


def decode_entity_config(data: bytes | None) -> dict[str, str]:
    """Values must be strings (Kafka stores every config value as a string)."""
    obj = load_object(data)
    read_version(obj, (1,))
    config = read_object(get_field(obj, "config"), "config")
    return {key: read_str(value, field_name("config", key)) for key, value in config.items()}


def encode_config_change(entity_path: str) -> bytes:
    """``{"version":2,"entity_path":"users/alice/clients/app-1"}``."""
    return dump("config change", {"version": 2, "entity_path": entity_path}, decode_config_change)


def decode_config_change(data: bytes | None) -> str:
    """Returns the entity path. Version 1 notifications (``entity_type``/``entity_name``) are
    turned into the same form (``topics/foo``). Checked: ``<type>/<name>`` or ``users/u/clients/c``."""
    obj = load_object(data)
    if read_version(obj, (1, 2)) == 2:
        where, path = "entity_path", read_str(get_field(obj, "entity_path"), "entity_path")
    else:
        entity_type = read_str(get_field(obj, "entity_type"), "entity_type")
        where, path = "entity_name", f"{entity_type}/{read_str(get_field(obj, 'entity_name'), 'entity_name')}"
    if not _ENTITY_PATH.fullmatch(path):
        raise CodecError(f"field '{where}' does not name a config entity: {quote(path)}")
    return path

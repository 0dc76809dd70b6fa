"""``kafka-reassign-partitions`` plans: parsing, validation and Kafka's JSON rendering. Pure.

A plan is ``{"version":1,"partitions":[{"topic","partition","replicas"[,"log_dirs"]}]}``.
:func:`parse_plan` reads one as Kafka's tool does (``version`` defaults to 1, unknown keys are
ignored, ``log_dirs`` must match ``replicas`` in length) and refuses, with a one-line reason
naming the offending field, what Kafka refuses before sending anything: an empty plan, an empty
replica list, repeated partitions or replicas. reassignd also refuses here what its HTTP API
would refuse for the whole request (negative ids, out-of-range numbers, duplicate JSON keys,
illegal topic names), so one bad entry never costs the others a round trip.

:func:`plan_json` renders an assignment the way Kafka's ``formatAsReassignmentJson`` does:
compact JSON, ``"version":1``, partitions sorted by topic then partition, each with ``topic``,
``partition``, ``replicas`` and ``log_dirs`` (``"any"`` per replica).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from reassignd.controller.topic_validation import topic_name_error
from reassignd.http.json_input import is_int, json_type, loads_strict
from reassignd.topic_partition import TopicPartition
from reassignd.zk.codec import LegacyReassignmentEntry

PLAN_VERSION = 1  # the only version kafka-reassign-partitions knows
ANY_LOG_DIR = "any"
INT32_MAX = 2**31 - 1

Replicas = tuple[int, ...]


class PlanError(ValueError):
    """A plan that cannot be used; ``str(error)`` is a one-line reason."""


@dataclass(frozen=True, slots=True)
class PlanEntry:
    topic: str
    partition: int
    replicas: Replicas
    log_dirs: tuple[str, ...]  # one per replica; "any" unless the plan says otherwise

    @property
    def tp(self) -> TopicPartition:
        return (self.topic, self.partition)


@dataclass(frozen=True, slots=True)
class Plan:
    entries: tuple[PlanEntry, ...]  # in the file's order, each partition once

    @property
    def partitions(self) -> list[TopicPartition]:
        """The plan's partitions, sorted by topic then partition."""
        return sorted(e.tp for e in self.entries)

    @property
    def targets(self) -> dict[TopicPartition, Replicas]:
        return {e.tp: e.replicas for e in self.entries}

    @property
    def topics(self) -> list[str]:
        return sorted({e.topic for e in self.entries})

    @property
    def pins_log_dirs(self) -> bool:
        """True when some replica names a log directory other than "any"."""
        return any(d != ANY_LOG_DIR for e in self.entries for d in e.log_dirs)


def tp_text(tp: TopicPartition) -> str:
    """Kafka's ``TopicPartition.toString``: ``orders-0``."""
    return f"{tp[0]}-{tp[1]}"


def ids_text(ids: Iterable[int]) -> str:
    """Broker ids as Kafka's tool joins them: ``4,5,6``."""
    return ",".join(str(i) for i in ids)


# --- parsing ---------------------------------------------------------------------------------------


def _fail(path: str, message: str) -> NoReturn:
    raise PlanError(f"{path}: {message}" if path else message)


def _object(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        _fail(path, f"expected an object, got {json_type(value)}")
    for key in getattr(value, "duplicates", ()):
        _fail(f"{path}.{key}" if path else key, "duplicate field")
    return value


def _field(obj: Mapping[str, Any], key: str, path: str) -> Any:
    if key not in obj:
        _fail(path, f"missing required field {key!r}")
    return obj[key]


def _non_negative_int32(value: Any, path: str) -> int:
    if not is_int(value):
        _fail(path, f"expected a non-negative integer, got {json_type(value)}")
    if not 0 <= value <= INT32_MAX:
        _fail(path, f"expected a non-negative integer up to {INT32_MAX}, got {value}")
    return int(value)


def _broker_ids(value: Any, path: str) -> Replicas:
    if not isinstance(value, list):
        _fail(path, f"expected a list of broker ids, got {json_type(value)}")
    return tuple(_non_negative_int32(item, f"{path}[{i}]") for i, item in enumerate(value))


def _log_dirs(value: Any, path: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        _fail(path, f"expected a list of strings, got {json_type(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            _fail(f"{path}[{i}]", f"expected a string, got {json_type(item)}")
    return tuple(value)


def _entry(raw: Any, path: str) -> PlanEntry:
    obj = _object(raw, path)
    topic = _field(obj, "topic", path)
    if not isinstance(topic, str):
        _fail(f"{path}.topic", f"expected a string, got {json_type(topic)}")
    if (error := topic_name_error(topic)) is not None:
        _fail(f"{path}.topic", error.message or "illegal topic name")
    partition = _non_negative_int32(_field(obj, "partition", path), f"{path}.partition")
    replicas = _broker_ids(_field(obj, "replicas", path), f"{path}.replicas")
    tp = tp_text((topic, partition))
    if not replicas:
        _fail(f"{path}.replicas", f"Partition replica list cannot be empty (partition {tp})")
    if repeated := sorted(r for r, n in Counter(replicas).items() if n > 1):
        _fail(
            f"{path}.replicas",
            f"Partition replica lists may not contain duplicate entries: {tp} contains multiple "
            f"entries for {ids_text(repeated)}",
        )
    log_dirs = (ANY_LOG_DIR,) * len(replicas)
    if "log_dirs" in obj:
        log_dirs = _log_dirs(obj["log_dirs"], f"{path}.log_dirs")
        if len(log_dirs) != len(replicas):
            _fail(
                f"{path}.log_dirs",
                f"Size of replicas list {list(replicas)} is different from size of log dirs list "
                f"{list(log_dirs)} for partition {tp}",
            )
    return PlanEntry(topic, partition, replicas, log_dirs)


def parse_plan(data: bytes | str) -> Plan:
    """A validated plan, or :class:`PlanError` with a one-line reason."""
    try:
        doc = loads_strict(data.encode() if isinstance(data, str) else data)
    except RecursionError:
        _fail("", "invalid JSON: nested too deeply")
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError, NaN/Infinity
        _fail("", f"invalid JSON: {e}")
    if not isinstance(doc, dict):
        _fail("", f'expected a JSON object {{"version": 1, "partitions": [...]}}, got {json_type(doc)}')
    _object(doc, "")
    version = doc.get("version", PLAN_VERSION)  # Kafka's EarliestVersion when absent
    if not is_int(version):
        _fail("version", f"expected an integer, got {json_type(version)}")
    if version != PLAN_VERSION:
        _fail("version", f"Not supported version field value {version} (only {PLAN_VERSION} exists)")
    raw = _field(doc, "partitions", "")
    if not isinstance(raw, list):
        _fail("partitions", f"expected an array, got {json_type(raw)}")
    if not raw:
        _fail("partitions", "Partition reassignment list cannot be empty")
    entries = tuple(_entry(item, f"partitions[{i}]") for i, item in enumerate(raw))
    if repeated := sorted(tp for tp, n in Counter(e.tp for e in entries).items() if n > 1):
        _fail(
            "",
            "Partition reassignment contains duplicate topic partitions: "
            + ",".join(tp_text(tp) for tp in repeated),
        )
    return Plan(entries)


# --- rendering -------------------------------------------------------------------------------------


def plan_document(
    assignment: Mapping[TopicPartition, Sequence[int]],
    log_dirs: Mapping[TopicPartition, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """Kafka's plan document for ``assignment``, partitions sorted by topic then partition."""
    partitions: list[dict[str, Any]] = []
    for tp in sorted(assignment):
        replicas = list(assignment[tp])
        dirs = list(log_dirs[tp]) if log_dirs and tp in log_dirs else [ANY_LOG_DIR] * len(replicas)
        partitions.append({"topic": tp[0], "partition": tp[1], "replicas": replicas, "log_dirs": dirs})
    return {"version": PLAN_VERSION, "partitions": partitions}


def plan_json(
    assignment: Mapping[TopicPartition, Sequence[int]],
    log_dirs: Mapping[TopicPartition, Sequence[str]] | None = None,
) -> str:
    """Compact JSON, as Kafka's ``Json.encodeAsString`` writes it."""
    return json.dumps(plan_document(assignment, log_dirs), separators=(",", ":"), ensure_ascii=False)


def plan_request(plan: Plan) -> dict[str, Any]:
    """The body of ``POST /v1/reassignments`` for a plan: the plan format, normalised."""
    return plan_document(plan.targets, {e.tp: e.log_dirs for e in plan.entries})


# --- the legacy znode (KIP-236 --additional) -------------------------------------------------------


def legacy_entries(
    plan: Plan, original: Mapping[TopicPartition, Replicas]
) -> tuple[LegacyReassignmentEntry, ...]:
    """The plan as ``/admin/reassign_partitions`` entries, sorted, each with the partition's
    replicas before the move as ``original_replicas`` (KIP-236: recorded by the client so a
    rollback knows where to go back to)."""
    return tuple(
        LegacyReassignmentEntry(tp[0], tp[1], plan.targets[tp], original.get(tp)) for tp in plan.partitions
    )

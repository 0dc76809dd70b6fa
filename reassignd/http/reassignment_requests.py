"""Strict parsing of the reassignment endpoints' input into the controller's request values.

Pure: bytes and query pairs in, :mod:`reassignd.controller.requests` values out. Anything that is
not the documented JSON shape raises :class:`InvalidRequest` (HTTP 400, error 42) with a message
that starts with the offending field's path (``topics[0].partitions[1].replicas: ...``), so nothing
malformed reaches the controller. What the controller judges against the cluster (empty, duplicate
or negative replica ids, unknown partitions) is left to it: those are per-partition Kafka errors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from reassignd.controller.requests import (
    AlterReassignments,
    CancelMode,
    CancelReassignments,
    TopicPartition,
)
from reassignd.controller.snapshot import ReassignmentView
from reassignd.errors import InvalidRequest

INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)
PLAN_VERSION = 1  # the only kafka-reassign-partitions plan version there is

_BODY = "request body"
_DECIMAL = re.compile(r"[0-9]{1,10}")

Target = tuple[TopicPartition, tuple[int, ...] | None]


class _Object(dict[str, Any]):
    """A decoded JSON object that remembers the keys it saw more than once (``json`` keeps the
    last silently; a strict parser refuses them)."""

    __slots__ = ("duplicates",)

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__()
        duplicates: list[str] = []
        for key, value in pairs:
            if key in self:
                duplicates.append(key)
            self[key] = value
        self.duplicates = tuple(duplicates)


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


def loads_strict(body: bytes) -> Any:
    """Standard JSON only (no NaN/Infinity), objects as :class:`_Object`."""
    return json.loads(body, object_pairs_hook=_Object, parse_constant=_reject_constant)


# --- helpers that name the offending path ------------------------------------------------------


def _fail(path: str, message: str) -> NoReturn:
    raise InvalidRequest(f"{path or _BODY}: {message}")


def _key(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def json_type(value: Any) -> str:
    """A JSON value's type, with its article, for messages: ``got a string``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # JSON true is not 1


def _object(
    value: Any, path: str, required: tuple[str, ...], optional: tuple[str, ...] = ()
) -> dict[str, Any]:
    if not isinstance(value, dict):
        _fail(path, f"expected an object, got {json_type(value)}")
    for key in getattr(value, "duplicates", ()):
        _fail(_key(path, key), "duplicate field")
    for key in value:
        if key not in required and key not in optional:
            _fail(_key(path, key), "unknown field")
    for key in required:
        if key not in value:
            _fail(_key(path, key), "missing required field")
    return value


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        _fail(path, f"expected an array, got {json_type(value)}")
    return value


def _string(value: Any, path: str) -> str:
    if not isinstance(value, str):
        _fail(path, f"expected a string, got {json_type(value)}")
    return value


def _int32(value: Any, path: str) -> int:
    if not _is_int(value):
        _fail(path, f"expected an integer, got {json_type(value)}")
    if not INT32_MIN <= value <= INT32_MAX:
        _fail(path, f"{value} is out of range ({INT32_MIN}..{INT32_MAX})")
    return int(value)


def _partition_id(value: Any, path: str) -> int:
    if not _is_int(value):
        _fail(path, f"expected a non-negative integer, got {json_type(value)}")
    if value < 0:
        _fail(path, f"expected a non-negative integer, got {value}")
    if value > INT32_MAX:
        _fail(path, f"{value} is out of range (0..{INT32_MAX})")
    return int(value)


def _replicas(value: Any, path: str, *, nullable: bool) -> tuple[int, ...] | None:
    """Broker ids as given: empty, duplicate or negative lists are the controller's to refuse
    (error 39 for that partition); only the JSON shape (and the int32 range) is checked here."""
    expected = "expected a list of integers or null" if nullable else "expected a list of integers"
    if value is None and nullable:
        return None
    if not isinstance(value, list):
        _fail(path, f"{expected}, got {json_type(value)}")
    for i, item in enumerate(value):
        if not _is_int(item):
            _fail(path, f"{expected}; item {i} is {json_type(item)}")
        if not INT32_MIN <= item <= INT32_MAX:
            _fail(path, f"{expected}; item {i} ({item}) is out of range for a broker id")
    return tuple(value)


def _mode(value: Any, path: str) -> CancelMode:
    if value not in ("cancel", "stop"):
        shown = json.dumps(value) if isinstance(value, str) else json_type(value)
        _fail(path, f'expected "cancel" or "stop", got {shown}')
    return CancelMode(value)


# --- POST /v1/reassignments --------------------------------------------------------------------


def parse_alter_body(body: bytes) -> AlterReassignments:
    """AlterPartitionReassignments in Kafka's shape, or a ``kafka-reassign-partitions`` plan.

    Targets keep the request's order, duplicates included (the controller lets the last win).
    ``timeout_ms`` is checked (an int32) but not carried: the controller answers once each
    accepted partition's new assignment is persisted and its replicas were told to start.
    """
    try:
        doc = loads_strict(body)
    except RecursionError:
        _fail("", "invalid JSON: nested too deeply")
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError, NaN/Infinity, huge ints
        _fail("", f"invalid JSON: {e}")
    if not isinstance(doc, dict):
        _fail("", f"expected a JSON object, got {json_type(doc)}")
    if "topics" in doc:
        return _kafka_request(doc)
    if "partitions" in doc or "version" in doc:
        return _plan(doc)
    _fail(
        "",
        'expected AlterPartitionReassignments ({"topics": [...]}) '
        'or a kafka-reassign-partitions plan ({"version": 1, "partitions": [...]})',
    )


def _kafka_request(doc: dict[str, Any]) -> AlterReassignments:
    _object(doc, "", ("topics",), ("timeout_ms", "mode"))
    if "timeout_ms" in doc:
        _int32(doc["timeout_ms"], "timeout_ms")
    mode = _mode(doc["mode"], "mode") if "mode" in doc else CancelMode.CANCEL
    targets: list[Target] = []
    for t, raw_topic in enumerate(_list(doc["topics"], "topics")):
        tpath = f"topics[{t}]"
        topic = _object(raw_topic, tpath, ("name", "partitions"))
        name = _string(topic["name"], f"{tpath}.name")
        for p, raw_partition in enumerate(_list(topic["partitions"], f"{tpath}.partitions")):
            ppath = f"{tpath}.partitions[{p}]"
            partition = _object(raw_partition, ppath, ("partition", "replicas"))
            pid = _partition_id(partition["partition"], f"{ppath}.partition")
            replicas = _replicas(partition["replicas"], f"{ppath}.replicas", nullable=True)
            targets.append(((name, pid), replicas))
    return AlterReassignments(tuple(targets), mode)


def _plan(doc: dict[str, Any]) -> AlterReassignments:
    _object(doc, "", ("version", "partitions"))
    version = doc["version"]
    if not _is_int(version):
        _fail("version", f"expected an integer, got {json_type(version)}")
    if version != PLAN_VERSION:
        _fail("version", f"unsupported plan version {version} (expected {PLAN_VERSION})")
    targets: list[Target] = []
    for i, raw in enumerate(_list(doc["partitions"], "partitions")):
        path = f"partitions[{i}]"
        entry = _object(raw, path, ("topic", "partition", "replicas"), ("log_dirs",))
        name = _string(entry["topic"], f"{path}.topic")
        pid = _partition_id(entry["partition"], f"{path}.partition")
        replicas = _replicas(entry["replicas"], f"{path}.replicas", nullable=False)
        if "log_dirs" in entry:  # accepted for compatibility, ignored (no log directories here)
            for j, log_dir in enumerate(_list(entry["log_dirs"], f"{path}.log_dirs")):
                _string(log_dir, f"{path}.log_dirs[{j}]")
        targets.append(((name, pid), replicas))
    return AlterReassignments(tuple(targets))


# --- query strings and path parameters ---------------------------------------------------------


def parse_partition_text(text: str, path: str = "partition") -> int:
    """A partition id from a URL: plain decimal digits, 0..2^31−1."""
    if _DECIMAL.fullmatch(text) is None or int(text) > INT32_MAX:
        _fail(path, f"expected a non-negative integer, got {json.dumps(text)}")
    return int(text)


def _only(pairs: Iterable[tuple[str, str]], allowed: tuple[str, ...]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for key, value in pairs:
        if key not in allowed:
            _fail(key, f"unknown query parameter (allowed: {', '.join(allowed)})")
        found.setdefault(key, []).append(value)
    return found


@dataclass(frozen=True, slots=True)
class ReassignmentFilter:
    """ListPartitionReassignments' filter: ``None`` means every topic / every partition; a
    partition filter applies to the given topics (to every topic when none is given)."""

    topics: frozenset[str] | None = None
    partitions: frozenset[int] | None = None

    def matches(self, topic: str, partition: int) -> bool:
        return (self.topics is None or topic in self.topics) and (
            self.partitions is None or partition in self.partitions
        )

    def select(self, reassignments: Mapping[TopicPartition, ReassignmentView]) -> list[ReassignmentView]:
        """The matching reassignments, sorted by topic name, then partition id."""
        chosen = [r for r in reassignments.values() if self.matches(r.topic, r.partition)]
        return sorted(chosen, key=lambda r: (r.topic, r.partition))


def parse_list_query(pairs: Iterable[tuple[str, str]]) -> ReassignmentFilter:
    """``?topic=T&partition=P``, both optional and repeatable."""
    found = _only(pairs, ("topic", "partition"))
    topics = found.get("topic")
    for topic in topics or ():
        if not topic:
            _fail("topic", "expected a topic name, got an empty string")
    partitions = found.get("partition")
    return ReassignmentFilter(
        None if topics is None else frozenset(topics),
        None if partitions is None else frozenset(parse_partition_text(p) for p in partitions),
    )


def parse_cancel(
    topic: str | None, partition: str | None, query: Iterable[tuple[str, str]]
) -> CancelReassignments:
    """``DELETE /v1/reassignments[/{topic}[/{partition}]]?mode=cancel|stop`` (default cancel)."""
    found = _only(query, ("mode",))
    modes = found.get("mode", ["cancel"])
    if len(modes) > 1:
        _fail("mode", "given more than once")
    return CancelReassignments(
        topic=topic,
        partition=None if partition is None else parse_partition_text(partition),
        mode=_mode(modes[0], "mode"),
    )

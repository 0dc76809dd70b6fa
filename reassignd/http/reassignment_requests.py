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
from typing import Any

from reassignd.controller.requests import (
    AlterReassignments,
    CancelMode,
    CancelReassignments,
)
from reassignd.controller.snapshot import ReassignmentView
from reassignd.http.json_input import (
    INT32_MAX,
    decode_body,
    expect_broker_ids,
    expect_list,
    expect_object,
    expect_string,
    expect_timeout_ms,
    fail,
    is_int,
    json_type,
    query_params,
)
from reassignd.topic_partition import TopicPartition

PLAN_VERSION = 1  # the only kafka-reassign-partitions plan version there is

_DECIMAL = re.compile(r"[0-9]{1,10}")

Target = tuple[TopicPartition, tuple[int, ...] | None]


def _partition_id(value: Any, path: str) -> int:
    if not is_int(value):
        fail(path, f"expected a non-negative integer, got {json_type(value)}")
    if value < 0:
        fail(path, f"expected a non-negative integer, got {value}")
    if value > INT32_MAX:
        fail(path, f"{value} is out of range (0..{INT32_MAX})")
    return int(value)


def _mode(value: Any, path: str) -> CancelMode:
    if value not in ("cancel", "stop"):
        shown = json.dumps(value) if isinstance(value, str) else json_type(value)
        fail(path, f'expected "cancel" or "stop", got {shown}')
    return CancelMode(value)


# --- POST /v1/reassignments --------------------------------------------------------------------


def parse_alter_body(body: bytes) -> AlterReassignments:
    """AlterPartitionReassignments in Kafka's shape, or a ``kafka-reassign-partitions`` plan.

    Targets keep the request's order, duplicates included (the controller lets the last win).
    ``timeout_ms`` is checked (0..2^31−1) but not carried: the controller answers once each
    accepted partition's new assignment is persisted and its replicas were told to start.
    """
    doc = decode_body(body)
    if not isinstance(doc, dict):
        fail("", f"expected a JSON object, got {json_type(doc)}")
    if "topics" in doc:
        return _kafka_request(doc)
    if "partitions" in doc or "version" in doc:
        return _plan(doc)
    fail(
        "",
        'expected AlterPartitionReassignments ({"topics": [...]}) '
        'or a kafka-reassign-partitions plan ({"version": 1, "partitions": [...]})',
    )


def _kafka_request(doc: dict[str, Any]) -> AlterReassignments:
    expect_object(doc, "", ("topics",), ("timeout_ms", "mode"))
    expect_timeout_ms(doc, 0)
    mode = _mode(doc["mode"], "mode") if "mode" in doc else CancelMode.CANCEL
    targets: list[Target] = []
    for t, raw_topic in enumerate(expect_list(doc["topics"], "topics")):
        tpath = f"topics[{t}]"
        topic = expect_object(raw_topic, tpath, ("name", "partitions"))
        name = expect_string(topic["name"], f"{tpath}.name")
        for p, raw_partition in enumerate(expect_list(topic["partitions"], f"{tpath}.partitions")):
            ppath = f"{tpath}.partitions[{p}]"
            partition = expect_object(raw_partition, ppath, ("partition", "replicas"))
            pid = _partition_id(partition["partition"], f"{ppath}.partition")
            replicas = expect_broker_ids(partition["replicas"], f"{ppath}.replicas", nullable=True)
            targets.append(((name, pid), replicas))
    return AlterReassignments(tuple(targets), mode)


def _plan(doc: dict[str, Any]) -> AlterReassignments:
    expect_object(doc, "", ("partitions",), ("version",))
    version = doc.get("version", PLAN_VERSION)  # absent: Kafka's EarliestVersion, as admin reassign reads it
    if not is_int(version):
        fail("version", f"expected an integer, got {json_type(version)}")
    if version != PLAN_VERSION:
        fail("version", f"unsupported plan version {version} (expected {PLAN_VERSION})")
    targets: list[Target] = []
    for i, raw in enumerate(expect_list(doc["partitions"], "partitions")):
        path = f"partitions[{i}]"
        entry = expect_object(raw, path, ("topic", "partition", "replicas"), ("log_dirs",))
        name = expect_string(entry["topic"], f"{path}.topic")
        pid = _partition_id(entry["partition"], f"{path}.partition")
        replicas = expect_broker_ids(entry["replicas"], f"{path}.replicas", nullable=False)
        if "log_dirs" in entry:  # accepted for compatibility, ignored (no log directories here)
            for j, log_dir in enumerate(expect_list(entry["log_dirs"], f"{path}.log_dirs")):
                expect_string(log_dir, f"{path}.log_dirs[{j}]")
        targets.append(((name, pid), replicas))
    return AlterReassignments(tuple(targets))


# --- query strings and path parameters ---------------------------------------------------------


def parse_partition_text(text: str, path: str = "partition") -> int:
    """A partition id from a URL: plain decimal digits, 0..2^31−1."""
    if _DECIMAL.fullmatch(text) is None or int(text) > INT32_MAX:
        fail(path, f"expected a non-negative integer, got {json.dumps(text)}")
    return int(text)


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
    found = query_params(pairs, ("topic", "partition"))
    topics = found.get("topic")
    for topic in topics or ():
        if not topic:
            fail("topic", "expected a topic name, got an empty string")
    partitions = found.get("partition")
    return ReassignmentFilter(
        None if topics is None else frozenset(topics),
        None if partitions is None else frozenset(parse_partition_text(p) for p in partitions),
    )


def parse_cancel(
    topic: str | None, partition: str | None, query: Iterable[tuple[str, str]]
) -> CancelReassignments:
    """``DELETE /v1/reassignments[/{topic}[/{partition}]]?mode=cancel|stop`` (default cancel)."""
    found = query_params(query, ("mode",))
    modes = found.get("mode", ["cancel"])
    if len(modes) > 1:
        fail("mode", "given more than once")
    return CancelReassignments(
        topic=topic,
        partition=None if partition is None else parse_partition_text(partition),
        mode=_mode(modes[0], "mode"),
    )

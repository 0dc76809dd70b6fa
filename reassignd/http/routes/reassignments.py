"""Partition reassignments: AlterPartitionReassignments, ListPartitionReassignments, cancel.

- ``POST /v1/reassignments``: Kafka's request shape or a ``kafka-reassign-partitions`` plan,
  decoded at the door (400/42 naming the field before anything reaches the controller), then
  handed to the controller.
- ``GET /v1/reassignments?topic=T&partition=P``: the last published snapshot's reassignments,
  with byte-level progress asked from the broker agents (only when there is something to show);
  a standby answers 503 NOT_CONTROLLER (it knows no reassignment). The answer is kept encoded
  (:mod:`reassignd.http.answers`) while the reassignments and the agents' answers are the same.
- ``DELETE /v1/reassignments[/{topic}[/{partition}]]?mode=cancel|stop``: cancel every, one
  topic's or one partition's reassignment; answered in AlterPartitionReassignments' shape.

Errors the controller raises (NOT_CONTROLLER on a standby, …) go through the error middleware.

The route, its strict input parsing and its JSON shapes live here together (one module per
resource).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import msgspec
from aiohttp import web

from reassignd.agent_reports.fetch import agent_urls
from reassignd.agent_reports.progress import (
    CopyProgress,
    index_reports,
    involved_brokers,
    reassignment_progress,
)
from reassignd.contracts import reassignments as contracts
from reassignd.contracts import requests
from reassignd.contracts.queries import CancelQuery, ListReassignmentsQuery
from reassignd.control.replicas_report import ReplicasReport
from reassignd.controller.model.from_contracts import alter_of, alter_of_plan
from reassignd.controller.model.requests import (
    AlterPartitionResult,
    AlterReassignments,
    AlterResult,
    CancelMode,
    CancelReassignments,
)
from reassignd.controller.model.snapshot import ReassignmentView
from reassignd.errors import error_name
from reassignd.http.active import active_snapshot
from reassignd.http.agent_session import AGENT_SESSION
from reassignd.http.answers import encoded_response
from reassignd.http.audit import note
from reassignd.http.door import decode_request
from reassignd.http.json_input import (
    decode_body,
    expect_broker_ids,
    expect_list,
    expect_object,
    expect_string,
    expect_timeout_ms,
    fail,
)
from reassignd.http.keys import ANSWERS, REASSIGNMENT_PARTS, REPORTS, VIEW
from reassignd.http.query_door import DECIMAL, query_of
from reassignd.http.responses import item_message, json_response
from reassignd.int_limits import INT32_MAX
from reassignd.plan_format import PlanError, strict_plan, typed_plan
from reassignd.strict_json import is_int, json_type
from reassignd.topic_partition import TopicPartition

# --- input parsing (pure: bytes and query pairs in, request values out) ---------------------------


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

    Kafka's shape is decoded once, into its contract struct (:mod:`reassignd.http.door`); a
    body that is not in Kafka's shape is decoded as a plan, into its contract struct
    (:func:`~reassignd.plan_format.typed_plan`); a body neither typed tier takes is read again
    by :func:`strict_alter_body`, which words the refusal or reads a plan. Kafka's shape is built
    into the controller's request by :func:`~reassignd.controller.model.from_contracts.alter_of`,
    the Kafka listener's builder too, a plan by
    :func:`~reassignd.controller.model.from_contracts.alter_of_plan`. ``timeout_ms`` is checked
    (0..2^31−1) but not carried.
    """
    return decode_request(body, requests.KafkaAlterReassignments, alter_of, _plan_or_strict)


def _plan_or_strict(body: bytes) -> AlterReassignments | None:
    """Not Kafka's shape: a plan on the typed tier, or the strict reader of both shapes."""
    plan = typed_plan(body)
    return alter_of_plan(plan) if plan is not None else strict_alter_body(body)


def strict_alter_body(body: bytes) -> AlterReassignments | None:
    """The strict reader of both shapes (the door's second tier): our refusals in Kafka's shape
    (None when it finds nothing to refuse), and a plan, read by the one plan reader,
    :mod:`reassignd.plan_format`."""
    doc = decode_body(body)
    if not isinstance(doc, dict):
        fail("", f"expected a JSON object, got {json_type(doc)}")
    if "partitions" in doc or "version" in doc:  # Kafka's shape has neither; a plan may hold anything
        return _plan(body)
    if "topics" in doc:
        _check_kafka_request(doc)
        return None
    fail(
        "",
        'expected AlterPartitionReassignments ({"topics": [...]}) '
        'or a kafka-reassign-partitions plan ({"version": 1, "partitions": [...]})',
    )


def _check_kafka_request(doc: dict[str, Any]) -> None:
    expect_object(doc, "", ("topics",), ("timeout_ms", "mode"))
    expect_timeout_ms(doc, 0)
    if "mode" in doc:
        _mode(doc["mode"], "mode")
    for t, raw_topic in enumerate(expect_list(doc["topics"], "topics")):
        tpath = f"topics[{t}]"
        topic = expect_object(raw_topic, tpath, ("name", "partitions"))
        expect_string(topic["name"], f"{tpath}.name")
        for p, raw_partition in enumerate(expect_list(topic["partitions"], f"{tpath}.partitions")):
            ppath = f"{tpath}.partitions[{p}]"
            partition = expect_object(raw_partition, ppath, ("partition", "replicas"))
            _partition_id(partition["partition"], f"{ppath}.partition")
            expect_broker_ids(partition["replicas"], f"{ppath}.replicas", nullable=True)


def _plan(body: bytes) -> AlterReassignments:
    """A plan, read by the one plan reader, so the API accepts and refuses exactly what
    ``admin reassign`` and the legacy znode do (``log_dirs`` checked, then left to the client as
    AlterPartitionReassignments leaves them: ``admin reassign`` moves the dirs itself)."""
    try:
        plan = strict_plan(body)
    except PlanError as e:
        fail(e.path, e.message)
    return alter_of_plan(plan)


# --- query strings and path parameters ---------------------------------------------------------


def parse_partition_text(text: str, path: str = "partition") -> int:
    """A partition id from a URL's path: decimal digits as in a query (:mod:`reassignd.http.query_door`),
    0..2^31−1."""
    if DECIMAL.fullmatch(text) is None or int(text) > INT32_MAX:
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


def parse_list_query(query: ListReassignmentsQuery) -> ReassignmentFilter:
    """``?topic=T&partition=P``, both optional and repeatable (decoded at the door)."""
    return ReassignmentFilter(
        None if query.topic is None else frozenset(query.topic),
        None if query.partition is None else frozenset(query.partition),
    )


def parse_cancel(topic: str | None, partition: str | None, query: CancelQuery) -> CancelReassignments:
    """``DELETE /v1/reassignments[/{topic}[/{partition}]]?mode=cancel|stop`` (default cancel)."""
    return CancelReassignments(
        topic=topic,
        partition=None if partition is None else parse_partition_text(partition),
        mode=CancelMode(query.mode),
    )


# --- answers (pure: values in, the contract's structs out) ----------------------------------------


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def iso_utc(ms: int | None) -> str | None:
    """``2026-11-21T10:00:00Z`` (whole seconds, UTC) from milliseconds since the epoch; None when
    unknown or not representable."""
    if ms is None:
        return None
    try:
        at = _EPOCH + timedelta(milliseconds=ms)
    except OverflowError:
        return None
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


# --- AlterPartitionReassignments (also the answer to DELETE /v1/reassignments...) --------------


def partition_result_json(result: AlterPartitionResult) -> contracts.PartitionResult:
    code = result.error_code
    return contracts.PartitionResult(
        result.partition, code, error_name(code), item_message(code, result.error_message)
    )


def alter_response_json(result: AlterResult) -> contracts.AlterReassignmentsResponse:
    """Results grouped by topic, topics in order of first appearance, partitions in the
    controller's order."""
    by_topic: dict[str, list[contracts.PartitionResult]] = {}
    for r in result.results:
        by_topic.setdefault(r.topic, []).append(partition_result_json(r))
    return contracts.AlterReassignmentsResponse(
        0,
        0,
        error_name(0),
        None,
        tuple(contracts.TopicResults(topic, tuple(parts)) for topic, parts in by_topic.items()),
    )


# --- ListPartitionReassignments ----------------------------------------------------------------


def progress_json(progress: CopyProgress | None) -> contracts.Progress | None:
    if progress is None:
        return None
    return contracts.Progress(progress.bytes_total, progress.bytes_done, progress.bytes_per_s, progress.eta_s)


def reassignment_json(r: ReassignmentView, progress: CopyProgress | None) -> contracts.Reassignment:
    return contracts.Reassignment(
        partition=r.partition,
        replicas=r.replicas,
        adding_replicas=r.adding_replicas,
        removing_replicas=r.removing_replicas,
        target_replicas=r.target_replicas,
        original_replicas=r.original_replicas,
        source=r.source,
        started_at=iso_utc(r.started_at_ms),
        progress=progress_json(progress),
    )


def list_response_json(
    shown: Sequence[tuple[ReassignmentView, CopyProgress | None]],
) -> contracts.ListReassignmentsResponse:
    """Topics sorted by name, partitions by id."""
    topics: dict[str, list[contracts.Reassignment]] = {}
    for r, progress in sorted(shown, key=lambda item: (item[0].topic, item[0].partition)):
        topics.setdefault(r.topic, []).append(reassignment_json(r, progress))
    return _listed(topics)


def list_response_parts(
    shown: Sequence[ReassignmentView], part: Callable[[ReassignmentView], msgspec.Raw]
) -> contracts.ListReassignmentsResponse:
    """``list_response_json`` without progress, from each reassignment's JSON kept encoded
    (``shown`` sorted by topic name, then partition id): msgspec writes a ``msgspec.Raw`` as it
    is, where the contract types a reassignment (a cast, for the encoder only)."""
    topics: dict[str, list[contracts.Reassignment]] = {}
    for r in shown:
        topics.setdefault(r.topic, []).append(cast(contracts.Reassignment, part(r)))
    return _listed(topics)


def _listed(topics: Mapping[str, list[contracts.Reassignment]]) -> contracts.ListReassignmentsResponse:
    return contracts.ListReassignmentsResponse(
        0,
        error_name(0),
        None,
        tuple(contracts.TopicReassignments(name, tuple(parts)) for name, parts in topics.items()),
    )


# --- routes ----------------------------------------------------------------------------------------


async def alter_reassignments(request: web.Request) -> web.Response:
    alter = parse_alter_body(await request.read())  # over the body limit: 413
    note(request, alter)
    result = await request.app[VIEW].alter_reassignments(alter)
    return json_response(alter_response_json(result))


@dataclass(frozen=True, slots=True)
class _Selection:
    """What a filter selects of one snapshot's reassignments, and the brokers its progress asks."""

    shown: list[ReassignmentView]
    involved: frozenset[int]


def _select(
    wanted: ReassignmentFilter, reassignments: Mapping[TopicPartition, ReassignmentView]
) -> _Selection:
    shown = wanted.select(reassignments)
    return _Selection(shown, frozenset(involved_brokers(shown)))


async def list_reassignments(request: web.Request) -> web.Response:
    """Answered from bytes kept per (reassignments, filter, agents' answers): the reassignments
    are shared by snapshots until one changes, so while nothing moves on, a read costs no
    selection and no encoding (the agents are asked each time, concurrent reads sharing a round).
    Without progress, a rebuild encodes only the reassignments whose view changed."""
    wanted = parse_list_query(query_of(request, ListReassignmentsQuery))  # 400 on every instance
    snapshot = active_snapshot(request)
    answers = request.app[ANSWERS]
    moving = snapshot.reassignments
    selection = answers.value(
        ("reassignments: selection", wanted), (moving,), lambda: _select(wanted, moving)
    )
    reports: dict[int, ReplicasReport] = {}
    if selection.shown:
        urls = agent_urls(snapshot.brokers, selection.involved)
        if urls:
            reports = await request.app[REPORTS].fetch(request.app[AGENT_SESSION], urls)
    # moved on meanwhile: answer, but keep the newer reads' entry
    keep = request.app[VIEW].snapshot().reassignments is moving

    def build() -> contracts.ListReassignmentsResponse:
        if not reports:  # no progress: each reassignment's JSON depends on its view alone
            parts = request.app[REASSIGNMENT_PARTS]
            shown = list_response_parts(
                selection.shown, lambda r: parts.part(_tp(r), r, lambda: reassignment_json(r, None))
            )
            parts.prune(moving, 2 * len(moving) + 1024)
            return shown
        replicas = index_reports(reports)
        return list_response_json([(r, reassignment_progress(r, replicas)) for r in selection.shown])

    # no report: no progress, whoever did not answer (an empty dict is a new object each time)
    encoded = answers.get(("reassignments", wanted), (selection, reports or None), build, keep=keep)
    return encoded_response(request, encoded)


def _tp(r: ReassignmentView) -> TopicPartition:
    return (r.topic, r.partition)


async def cancel_reassignments(request: web.Request) -> web.Response:
    cancel = parse_cancel(
        request.match_info.get("topic"), request.match_info.get("partition"), query_of(request, CancelQuery)
    )
    note(request, cancel)
    result = await request.app[VIEW].cancel_reassignments(cancel)
    return json_response(alter_response_json(result))

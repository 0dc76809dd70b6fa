"""The JSON shapes of AlterPartitionReassignments' response and ListPartitionReassignments.

Pure: values in, JSON-ready dicts out.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from reassignd.controller.requests import AlterResult, PartitionResult
from reassignd.controller.snapshot import ReassignmentView
from reassignd.errors import DEFAULT_MESSAGES
from reassignd.http.progress import Progress
from reassignd.http.responses import error_body

Json = dict[str, Any]

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


def partition_result_json(result: PartitionResult) -> Json:
    message = result.error_message
    if message is None and result.error_code != 0:
        message = DEFAULT_MESSAGES.get(result.error_code)
    return {"partition": result.partition, **error_body(result.error_code, message)}


def alter_response_json(result: AlterResult) -> Json:
    """Results grouped by topic, topics in order of first appearance, partitions in the
    controller's order."""
    by_topic: dict[str, list[Json]] = {}
    for r in result.results:
        by_topic.setdefault(r.topic, []).append(partition_result_json(r))
    return {
        "throttle_time_ms": 0,
        **error_body(0, None),
        "responses": [{"name": topic, "partitions": parts} for topic, parts in by_topic.items()],
    }


# --- ListPartitionReassignments ----------------------------------------------------------------


def progress_json(progress: Progress | None) -> Json | None:
    if progress is None:
        return None
    return {
        "bytes_total": progress.bytes_total,
        "bytes_done": progress.bytes_done,
        "bytes_per_s": progress.bytes_per_s,
        "eta_s": progress.eta_s,
    }


def reassignment_json(r: ReassignmentView, progress: Progress | None) -> Json:
    return {
        "partition": r.partition,
        "replicas": list(r.replicas),
        "adding_replicas": list(r.adding_replicas),
        "removing_replicas": list(r.removing_replicas),
        "target_replicas": list(r.target_replicas),
        "original_replicas": list(r.original_replicas),
        "source": r.source,
        "started_at": iso_utc(r.started_at_ms),
        "progress": progress_json(progress),
    }


def list_response_json(shown: Sequence[tuple[ReassignmentView, Progress | None]]) -> Json:
    """Topics sorted by name, partitions by id."""
    topics: dict[str, list[Json]] = {}
    for r, progress in sorted(shown, key=lambda item: (item[0].topic, item[0].partition)):
        topics.setdefault(r.topic, []).append(reassignment_json(r, progress))
    return {
        **error_body(0, None),
        "topics": [{"name": name, "partitions": parts} for name, parts in topics.items()],
    }

"""The JSON shapes of the batch endpoints (the README's "Batches"). Pure: values in, JSON-ready
dicts out.

- A batch's status (``GET /v1/batches/{id}``, and the answer to every control request): what
  :func:`reassignd.executor.progress.batch_status` computed, timestamps as ISO 8601 UTC like
  ``started_at`` elsewhere, rates rounded to whole bytes per second, plus ``rollback_of`` and
  ``rollback_batch_id`` (null unless the batch reverses, or was reversed by, another).
- ``GET /v1/batches``: every status without ``running``.
- ``POST /v1/batches``: ``{"batch": <status>, "partitions": [<per-partition result>],
  "created": <false when the same id and body were submitted before>}``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reassignd.errors import DEFAULT_MESSAGES
from reassignd.executor.model import Limits, MoveState
from reassignd.executor.progress import BatchStatus, RunningMove
from reassignd.executor.submit import PartitionOutcome
from reassignd.http.reassignment_shapes import iso_utc
from reassignd.http.responses import error_body

Json = dict[str, Any]


def limits_json(limits: Limits) -> Json:
    return {
        "moves_per_broker": limits.moves_per_broker,
        "moves_in_cluster": limits.moves_in_cluster,
        "leader_moves_per_broker": limits.leader_moves_per_broker,
    }


def running_json(move: RunningMove) -> Json:
    return {
        "topic": move.topic,
        "partition": move.partition,
        "original_replicas": list(move.original_replicas),
        "target_replicas": list(move.target_replicas),
        "started_at": iso_utc(move.started_ms),
        "bytes_done": move.bytes_done,
        "bytes_total": move.bytes_total,
        "bytes_per_s": round(move.bytes_per_s),
        "stuck": move.stuck,
    }


def status_json(status: BatchStatus, *, running: bool = True) -> Json:
    body: Json = {
        "batch_id": status.batch_id,
        "plan_id": status.plan_id,
        "state": status.state.value,
        "priority": status.priority,
        "created_at": iso_utc(status.created_ms),
        "updated_at": iso_utc(status.updated_ms),
        "counts": {state.value: status.counts.get(state, 0) for state in MoveState},
        "bytes_total": status.bytes_total,
        "bytes_done": status.bytes_done,
        "bytes_per_s": round(status.bytes_per_s),
        "eta_s": status.eta_s,
        "limits": limits_json(status.limits),
        "throttle_bytes_per_s": status.throttle_bytes_per_s,
    }
    if running:
        body["running"] = [running_json(m) for m in status.running]
    body["stuck"] = [{"topic": t, "partition": p} for t, p in status.stuck]
    body["throttles"] = {"brokers": list(status.throttled_brokers), "topics": list(status.throttled_topics)}
    body["rollback_of"] = status.rollback_of
    body["rollback_batch_id"] = status.rollback_batch_id
    return body


def outcome_json(outcome: PartitionOutcome) -> Json:
    message = outcome.error_message
    if message is None and outcome.error_code != 0:
        message = DEFAULT_MESSAGES.get(outcome.error_code)
    return {"topic": outcome.topic, "partition": outcome.partition, **error_body(outcome.error_code, message)}


def submit_json(status: BatchStatus, outcomes: Iterable[PartitionOutcome], *, created: bool) -> Json:
    return {
        "batch": status_json(status),
        "partitions": [outcome_json(o) for o in outcomes],
        "created": created,
    }


def list_json(statuses: Iterable[BatchStatus]) -> Json:
    """Oldest first (then by id)."""
    ordered = sorted(statuses, key=lambda s: (s.created_ms, s.batch_id))
    return {"batches": [status_json(s, running=False) for s in ordered]}

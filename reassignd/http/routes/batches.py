"""The batch executor's endpoints (the README's "Batches").

- ``POST /v1/batches`` (admin): the body decoded at the door and checked whole
  (:func:`~reassignd.executor.model.spec_error`) before the controller sees it (400/42 naming the
  field, nothing submitted), defaults from the controller's settings, a missing ``batch_id``
  generated (``b-<32 hex digits>``). The same id with another body is 409, error 10004.
- ``GET /v1/batches``, ``GET /v1/batches/{batch_id}`` (viewer): the active controller's batches
  with byte-level progress from the broker agents; a standby answers 503 NOT_CONTROLLER (it knows
  no batch), an unknown id 404.
- ``GET /v1/batches/{batch_id}/picture.svg`` (viewer): every broker's bytes, replicas and
  preferred leaders before the batch and once its moves land, as an SVG image
  (:mod:`reassignd.http.batch_picture`); sizes from every agent's report.
- ``POST /v1/batches/{batch_id}/pause|resume|stop|rollback`` (admin): the batch's status after the
  action; a rollback's names the reverse batch in ``rollback_batch_id``. An unknown id is 404, an
  action the batch's state does not allow 400 (error 42).

Errors the controller raises go through the error middleware.

The route, its strict input parsing and its JSON shapes live here together (one module per
resource).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec
from aiohttp import web

from reassignd.agent_reports.batch_inputs import batch_inputs, brokers_to_ask, leader_sizes, leaders_of
from reassignd.agent_reports.fetch import agent_urls
from reassignd.agent_reports.progress import index_reports
from reassignd.contracts import batches as c
from reassignd.contracts.reassignments import TopicPartitionResult
from reassignd.control.replicas_report import ReplicasReport
from reassignd.controller.model.snapshot import BatchAction, ClusterSnapshot
from reassignd.errors import InvalidRequest, error_name
from reassignd.executor.dir_moves import places_of
from reassignd.executor.errors import UnknownBatch
from reassignd.executor.model import Batch, BatchMoveState, BatchSpec, Limits, Strategy, spec_error
from reassignd.executor.progress import BatchProgress, RunningProgress, StuckRule, batch_status
from reassignd.executor.submit import PartitionOutcome, partition_outcomes
from reassignd.http.active import active_snapshot
from reassignd.http.agent_session import AGENT_SESSION
from reassignd.http.audit import note
from reassignd.http.batch_picture import batch_loads, batch_svg
from reassignd.http.batch_requests import BatchDefaults, parse_submit_body
from reassignd.http.keys import BATCH_STATUSES, REPORTS, SETTINGS, VIEW
from reassignd.http.responses import item_message, json_response
from reassignd.http.routes.reassignments import iso_utc
from reassignd.topic_partition import TopicPartition

# --- batch answers (pure: values in, the contract's structs out) ------------------------------------


def limits_json(limits: Limits) -> c.BatchLimits:
    adaptive = limits.adaptive
    return c.BatchLimits(
        moves_per_broker=limits.moves_per_broker,
        moves_in_cluster=limits.moves_in_cluster,
        leader_moves_per_broker=limits.leader_moves_per_broker,
        adaptive=None if adaptive is None else c.AdaptiveBounds(adaptive.min, adaptive.max),
    )


def running_json(move: RunningProgress) -> c.RunningMove:
    return c.RunningMove(
        topic=move.topic,
        partition=move.partition,
        original_replicas=tuple(move.original_replicas),
        target_replicas=tuple(move.target_replicas),
        started_at=iso_utc(move.started_at_ms),
        bytes_done=move.bytes_done,
        bytes_total=move.bytes_total,
        bytes_per_s=round(move.bytes_per_s),
        stuck=move.stuck,
    )


def _status_fields(status: BatchProgress) -> dict[str, Any]:
    """The fields a batch's summary and its full status share, the moves in flight aside."""
    counts = {state.value: status.counts.get(state, 0) for state in BatchMoveState}
    return {
        "batch_id": status.batch_id,
        "plan_id": status.plan_id,
        "owner": status.owner,
        "state": status.state.value,
        "priority": status.priority,
        "created_at": iso_utc(status.created_ms),
        "updated_at": iso_utc(status.updated_ms),
        "counts": c.MoveCounts(**counts),
        "bytes_total": status.bytes_total,
        "bytes_done": status.bytes_done,
        "bytes_per_s": round(status.bytes_per_s),
        "eta_s": status.eta_s,
        "limits": limits_json(status.limits),
        # adaptive concurrency: each broker's cap now, where an adjustment moved it
        "broker_caps": {str(b): cap for b, cap in sorted(status.broker_caps.items())},
        "throttle_bytes_per_s": status.throttle_bytes_per_s,
        "stuck": tuple(c.StuckPartition(t, p) for t, p in status.stuck),
        "throttles": c.Throttles(tuple(status.throttled_brokers), tuple(status.throttled_topics)),
        "rollback_of": status.rollback_of,
        "rollback_batch_id": status.rollback_batch_id,
    }


def status_json(status: BatchProgress) -> c.BatchStatus:
    """The full status (describe, the controls, a submission): with the moves in flight."""
    return c.BatchStatus(**_status_fields(status), running=tuple(running_json(m) for m in status.running))


def summary_json(status: BatchProgress) -> c.BatchSummary:
    """A batch as the list shows it: without the moves in flight."""
    return c.BatchSummary(**_status_fields(status))


def outcome_json(outcome: PartitionOutcome) -> TopicPartitionResult:
    code = outcome.error_code
    return TopicPartitionResult(
        outcome.topic, outcome.partition, code, error_name(code), item_message(code, outcome.error_message)
    )


def submit_json(
    status: BatchProgress, outcomes: Iterable[PartitionOutcome], *, created: bool
) -> c.SubmitBatchResponse:
    return c.SubmitBatchResponse(status_json(status), tuple(outcome_json(o) for o in outcomes), created)


def list_json(statuses: Iterable[BatchProgress]) -> c.Batches:
    """Oldest first (then by id)."""
    ordered = sorted(statuses, key=lambda s: (s.created_ms, s.batch_id))
    return c.Batches(tuple(summary_json(s) for s in ordered))


# --- routes ----------------------------------------------------------------------------------------

SIZE_STRATEGIES = frozenset({Strategy.SMALL_FIRST, Strategy.LARGE_FIRST})


def new_batch_id() -> str:
    return f"b-{uuid.uuid4().hex}"


async def batch_statuses(
    request: web.Request, snapshot: ClusterSnapshot, batches: Sequence[Batch]
) -> list[BatchProgress]:
    """Each batch's status, with what the agents report now (one request per agent involved);
    kept for ``/metrics``."""
    reports: dict[int, ReplicasReport] = {}
    wanted = brokers_to_ask(batches, snapshot)
    if wanted:
        reports = await request.app[REPORTS].fetch(
            request.app[AGENT_SESSION], agent_urls(snapshot.brokers, wanted)
        )
    replicas = index_reports(reports)
    places = places_of(reports)
    settings = request.app[SETTINGS]
    rule = StuckRule.of(settings.batch_stuck_after_s, settings.batch_stuck_below_bytes_per_s)
    now_ms = int(time.time() * 1000)
    statuses = []
    for batch in batches:
        inputs = batch_inputs(batch, snapshot, replicas, places)
        statuses.append(batch_status(batch, inputs.progress, inputs.sizes, now_ms, rule))
    request.app[BATCH_STATUSES].store(snapshot.controller_epoch, statuses)  # what /metrics shows
    return statuses


async def submitted_sizes(
    request: web.Request, snapshot: ClusterSnapshot, spec: BatchSpec
) -> dict[TopicPartition, int]:
    """The partitions' sizes, from their leaders' agents, when the strategy orders by size (the
    controller keeps them on the moves; a leader that does not answer leaves its partitions at 0)."""
    if not SIZE_STRATEGIES.intersection(spec.strategy):
        return {}
    leaders = leaders_of(snapshot, (p.tp for p in spec.partitions))
    urls = agent_urls(snapshot.brokers, set(leaders.values()))
    reports = await request.app[REPORTS].fetch(request.app[AGENT_SESSION], urls) if urls else {}
    return leader_sizes(leaders, index_reports(reports))


async def submit_batch(request: web.Request) -> web.Response:
    defaults = BatchDefaults.of(request.app[SETTINGS])
    spec = parse_submit_body(await request.read(), defaults, new_batch_id)  # over the limit: 413
    note(request, spec)
    if (reason := spec_error(spec)) is not None:
        raise InvalidRequest(reason)
    view = request.app[VIEW]
    result = await view.submit_batch(spec, await submitted_sizes(request, view.snapshot(), spec))
    snapshot = view.snapshot()
    # the batch as the controller published it once the submission's event ended (its first moves
    # may have started), unless the snapshot is behind the answer
    published = snapshot.batches.get(spec.batch_id)
    batch = result.batch
    if (
        published is not None
        and published.created_ms == batch.created_ms
        and published.updated_ms >= batch.updated_ms
    ):
        batch = published
    [status] = await batch_statuses(request, snapshot, [batch])
    return json_response(submit_json(status, partition_outcomes(batch), created=result.created))


async def list_batches(request: web.Request) -> web.Response:
    snapshot = active_snapshot(request)
    return json_response(list_json(await batch_statuses(request, snapshot, list(snapshot.batches.values()))))


async def describe_batch(request: web.Request) -> web.Response:
    snapshot = active_snapshot(request)
    batch_id = request.match_info["batch_id"]
    batch = snapshot.batches.get(batch_id)
    if batch is None:
        raise UnknownBatch(f"no batch {batch_id!r}")
    [status] = await batch_statuses(request, snapshot, [batch])
    return json_response(status_json(status))


# the picture holds no script; the policy keeps it so even if it is opened on its own
PICTURE_HEADERS = {
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
}


async def batch_picture(request: web.Request) -> web.Response:
    snapshot = active_snapshot(request)
    batch_id = request.match_info["batch_id"]
    batch = snapshot.batches.get(batch_id)
    if batch is None:
        raise UnknownBatch(f"no batch {batch_id!r}")
    urls = agent_urls(snapshot.brokers, set(snapshot.brokers))
    reports = await request.app[REPORTS].fetch(request.app[AGENT_SESSION], urls) if urls else {}

    def draw() -> str:  # every partition of the cluster: off the loop (the snapshot is immutable)
        tps = [(t.name, p.partition) for t in snapshot.topics.values() for p in t.partitions]
        sizes = leader_sizes(leaders_of(snapshot, tps), index_reports(reports))
        dirs = {b: [d.path for d in r.log_dirs] for b, r in reports.items() if r.log_dirs}
        loads = batch_loads(batch, snapshot.topics, sizes, snapshot.brokers, dirs, places_of(reports))
        return batch_svg(batch, loads)

    svg = await asyncio.to_thread(draw)
    return web.Response(text=svg, content_type="image/svg+xml", charset="utf-8", headers=PICTURE_HEADERS)


async def _control(request: web.Request, action: BatchAction) -> web.Response:
    view = request.app[VIEW]
    result = await view.control_batch(request.match_info["batch_id"], action)
    [status] = await batch_statuses(request, view.snapshot(), [result.batch])
    body = status_json(status)
    if result.rollback_batch_id is not None:
        body = msgspec.structs.replace(body, rollback_batch_id=result.rollback_batch_id)
    return json_response(body)


async def pause_batch(request: web.Request) -> web.Response:
    return await _control(request, BatchAction.PAUSE)


async def resume_batch(request: web.Request) -> web.Response:
    return await _control(request, BatchAction.RESUME)


async def stop_batch(request: web.Request) -> web.Response:
    return await _control(request, BatchAction.STOP)


async def rollback_batch(request: web.Request) -> web.Response:
    return await _control(request, BatchAction.ROLLBACK)

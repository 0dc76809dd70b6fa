"""Periodic records from the agents' reports: every ``interval_s`` the active controller's moving
partitions' byte-level progress (the figures ``GET /v1/reassignments`` shows) as
``reassignment_progress``, one per partition whose adding replicas reported, and a
``move_stuck`` record the first time a batch's move meets the stuck rule (running longer than
``--batch-stuck-after-s`` and slower than ``--batch-stuck-below-bytes-per-s``). The batches'
statuses computed on the way are kept in the :class:`BatchStatusCache` ``/metrics`` reads."""

from __future__ import annotations

import asyncio
import logging
import time

import aiohttp

from reassignd.agent_reports.batch_inputs import batch_inputs, brokers_to_ask
from reassignd.agent_reports.fetch import agent_urls, fetch_reports
from reassignd.agent_reports.progress import (
    ReplicaKey,
    index_reports,
    involved_brokers,
    reassignment_progress,
)
from reassignd.agent_reports.status_cache import BatchStatusCache
from reassignd.contracts.records import MoveStuck, ReassignmentProgress
from reassignd.control.replicas_report import ReplicaInfo
from reassignd.controller.api.port import ControllerView
from reassignd.controller.model.snapshot import ClusterSnapshot, ReassignmentView
from reassignd.executor.dir_moves import Places, places_of
from reassignd.executor.model import Batch
from reassignd.executor.progress import BatchProgress, StuckRule, batch_status
from reassignd.stream.record_log import RecordLog
from reassignd.topic_partition import TopicPartition

log = logging.getLogger(__name__)


async def report_progress(
    view: ControllerView,
    records: RecordLog,
    interval_s: float,
    rule: StuckRule,
    cache: BatchStatusCache | None = None,
    *,
    agents: aiohttp.ClientSession,
) -> None:
    """Runs until cancelled, asking the agents through ``agents`` (the process's one session)."""
    stuck_reported: set[tuple[str, TopicPartition]] = set()
    while True:
        await asyncio.sleep(interval_s)
        snapshot = view.snapshot()
        batches = [b for b in snapshot.batches.values() if b.state.unfinished] if snapshot.active else []
        moving = sorted(snapshot.reassignments.values(), key=_topic_partition) if snapshot.active else []
        if not moving and not batches:
            continue
        wanted = involved_brokers(moving) | brokers_to_ask(batches, snapshot)
        try:
            reports = await fetch_reports(agents, agent_urls(snapshot.brokers, wanted))
        except (aiohttp.ClientError, OSError) as e:  # fetch_reports already tolerates one agent
            log.debug("no progress this round: %r", e)
            continue
        if view.snapshot().controller_epoch != snapshot.controller_epoch:
            continue  # resigned or re-elected meanwhile: these figures belong to no one
        replicas = index_reports(reports)
        _progress(records, moving, replicas)
        statuses = _stuck(records, snapshot, batches, replicas, rule, stuck_reported, places_of(reports))
        if cache is not None:
            cache.store(snapshot.controller_epoch, statuses)


def _progress(
    records: RecordLog, moving: list[ReassignmentView], replicas: dict[ReplicaKey, ReplicaInfo]
) -> None:
    for r in moving:
        p = reassignment_progress(r, replicas)
        if p is not None:
            records.emit(
                ReassignmentProgress(
                    topic=r.topic,
                    partition=r.partition,
                    target_replicas=tuple(r.target_replicas),
                    bytes_done=p.bytes_done,
                    bytes_total=p.bytes_total,
                    bytes_per_s=p.bytes_per_s,
                    eta_s=p.eta_s,
                )
            )


def _stuck(
    records: RecordLog,
    snapshot: ClusterSnapshot,
    batches: list[Batch],
    replicas: dict[ReplicaKey, ReplicaInfo],
    rule: StuckRule,
    reported: set[tuple[str, TopicPartition]],
    places: Places | None = None,
) -> list[BatchProgress]:
    now_ms = int(time.time() * 1000)
    statuses = []
    for batch in batches:
        inputs = batch_inputs(batch, snapshot, replicas, places)
        status = batch_status(batch, inputs.progress, inputs.sizes, now_ms, rule)
        statuses.append(status)
        for tp in status.stuck:
            if (batch.batch_id, tp) in reported:
                continue
            reported.add((batch.batch_id, tp))
            progress = inputs.progress.get(tp)
            records.emit(
                MoveStuck(
                    batch_id=batch.batch_id,
                    topic=tp[0],
                    partition=tp[1],
                    bytes_done=None if progress is None else progress.bytes_done,
                    bytes_per_s=None if progress is None else round(progress.bytes_per_s),
                )
            )
    return statuses


def _topic_partition(r: ReassignmentView) -> TopicPartition:
    return (r.topic, r.partition)

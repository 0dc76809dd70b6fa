"""Periodic ``reassignment_progress`` records: every ``interval_s`` the active controller's moving
partitions' byte-level progress (the same figures ``GET /v1/reassignments`` shows, asked from the
agents) goes on the event stream, one record per partition whose adding replicas reported."""

from __future__ import annotations

import asyncio
import logging

import aiohttp

from reassignd.controller.snapshot import ControllerView
from reassignd.events.history import EventLog
from reassignd.http.agent_reports import agent_urls, fetch_reports
from reassignd.http.progress import index_reports, involved_brokers, reassignment_progress

log = logging.getLogger(__name__)


async def report_progress(view: ControllerView, events: EventLog, interval_s: float) -> None:
    async with aiohttp.ClientSession() as session:
        while True:
            await asyncio.sleep(interval_s)
            snapshot = view.snapshot()
            if not snapshot.active or not snapshot.reassignments:
                continue
            moving = list(snapshot.reassignments.values())
            try:
                reports = await fetch_reports(session, agent_urls(snapshot.brokers, involved_brokers(moving)))
            except (aiohttp.ClientError, OSError) as e:  # fetch_reports already tolerates one agent
                log.debug("no progress this round: %r", e)
                continue
            replicas = index_reports(reports)
            if view.snapshot().controller_epoch != snapshot.controller_epoch:
                continue  # resigned or re-elected meanwhile: these figures belong to no one
            for r in moving:
                p = reassignment_progress(r, replicas)
                if p is not None:
                    events.emit(
                        "reassignment_progress",
                        topic=r.topic,
                        partition=r.partition,
                        target_replicas=list(r.target_replicas),
                        bytes_done=p.bytes_done,
                        bytes_total=p.bytes_total,
                        bytes_per_s=p.bytes_per_s,
                        eta_s=p.eta_s,
                    )

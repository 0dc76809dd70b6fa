"""Byte-level progress of an in-flight reassignment, from the broker agents' ``GET /replicas``.

Pure: the agents' reports in, numbers out; fetching the reports is :mod:`reassignd.agent_reports.fetch`.

For a partition moving onto its adding replicas (AR), each adding replica that reported counts:

- its total is the leader's log end offset (from the leader's own report), or, when the leader's
  report is missing, the replica's log end offset plus its lag;
- its done is its log end offset, capped at its total (reports are taken at slightly different
  moments, so a follower may look ahead of the leader);
- its rate is its ``fetch_bytes_per_s``.

``bytes_total``/``bytes_done``/``bytes_per_s`` sum those over the adding replicas that reported;
``eta_s = ceil((total − done) / bytes_per_s)``: 0 when nothing remains, ``None`` when the rate is
0. No adding replica reported: no progress (``None``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from reassignd.control.replicas_report import ReplicaInfo, ReplicasReport
from reassignd.controller.model.snapshot import ReassignmentView

ReplicaKey = tuple[int, str, int]  # (broker id, topic, partition)


@dataclass(frozen=True, slots=True)
class CopyProgress:
    bytes_total: int
    bytes_done: int
    bytes_per_s: int
    eta_s: int | None


def index_reports(reports: Mapping[int, ReplicasReport]) -> dict[ReplicaKey, ReplicaInfo]:
    """Every reported replica by (broker id, topic, partition); the key's broker is the one whose
    agent was asked (a duplicate entry in one report: the last one)."""
    return {
        (broker_id, r.topic, r.partition): r for broker_id, report in reports.items() for r in report.replicas
    }


def involved_brokers(reassignments: Iterable[ReassignmentView]) -> set[int]:
    """The brokers whose reports the progress of these reassignments reads: leaders and adding
    replicas."""
    brokers: set[int] = set()
    for r in reassignments:
        brokers.update(r.adding_replicas)
        if r.leader >= 0:
            brokers.add(r.leader)
    return brokers


def _rate(replica: ReplicaInfo) -> float:
    rate = replica.fetch_bytes_per_s
    return rate if math.isfinite(rate) and rate > 0 else 0.0


def reassignment_progress(
    reassignment: ReassignmentView, replicas: Mapping[ReplicaKey, ReplicaInfo]
) -> CopyProgress | None:
    topic, partition = reassignment.topic, reassignment.partition
    leader = replicas.get((reassignment.leader, topic, partition))
    leader_end = None if leader is None else max(0, leader.log_end_offset)
    total = done = 0
    rate = 0.0
    reported = False
    for broker_id in reassignment.adding_replicas:
        replica = replicas.get((broker_id, topic, partition))
        if replica is None:
            continue
        reported = True
        end = max(0, replica.log_end_offset)
        replica_total = leader_end if leader_end is not None else end + max(0, replica.lag_bytes)
        total += replica_total
        done += min(end, replica_total)
        rate += _rate(replica)
    if not reported:
        return None
    bytes_per_s = round(rate)
    remaining = total - done
    if remaining == 0:
        eta_s: int | None = 0
    elif bytes_per_s == 0:
        eta_s = None
    else:
        eta_s = -(-remaining // bytes_per_s)  # ceil, exact on integers
    return CopyProgress(total, done, bytes_per_s, eta_s)

"""Plans rendered as Kafka's tool renders them, and as legacy znode entries. Pure.

:func:`plan_json` renders an assignment the way Kafka's ``formatAsReassignmentJson`` does:
compact JSON, ``"version":1``, partitions sorted by topic then partition, each with ``topic``,
``partition``, ``replicas`` and ``log_dirs`` (``"any"`` per replica). Plans are read by the one
plan reader, :mod:`reassignd.plan_format`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from reassignd.contracts.requests import PlanPartition, ReassignmentPlan
from reassignd.plan_format import ANY_LOG_DIR, PLAN_VERSION, Plan
from reassignd.topic_partition import Replicas, TopicPartition
from reassignd.zk.admin_codec import LegacyReassignmentEntry

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


def plan_request(plan: Plan) -> ReassignmentPlan:
    """The body of ``POST /v1/reassignments`` for a plan: the plan format, normalised (sorted by
    topic then partition, ``log_dirs`` as the plan gave them: ``"any"`` per replica by default)."""
    return ReassignmentPlan(  # version 1, the only one
        partitions=tuple(
            PlanPartition(topic=e.topic, partition=e.partition, replicas=e.replicas, log_dirs=e.log_dirs)
            for e in sorted(plan.entries, key=lambda e: e.tp)
        ),
    )


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

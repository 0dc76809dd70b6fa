"""The controller's requests built from the contract structs (:mod:`reassignd.contracts.requests`),
one function per request kind, for both doors: the HTTP API decodes a body into its struct
(``reassignd.http.door``), the Kafka listener converts kafka-python's decoded request into the same
struct (``reassignd.kafka_listener.door``), and each calls the function here. Pure.

A rule checked here is checked once for both doors. Where the doors answer a rule differently, the
function returns the refusal as a value and each door words it: an AlterClientQuotas entry
refused here is that entry's answer on both; a log-dir move request's problem (a ``.`` or ``..``
topic, a replica named twice) is a 400 over HTTP, while the listener forwards the moves as
Kafka's broker takes them.

What a struct's annotations state (ranges, patterns, closed objects) msgspec checks at the HTTP
door; the Kafka wire's own types hold those of a Kafka request, and the controller's admission
(``admission.py``) checks what matters whatever the door.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from msgspec import UnsetType

from reassignd.contracts import requests as contract
from reassignd.control.log_dir_moves import LogDirMove
from reassignd.controller.model.admin_requests import ElectionType, ElectLeaders
from reassignd.controller.model.requests import (
    AlterReassignments,
    CancelMode,
    CreatePartitions,
    CreateTopics,
    DeleteTopics,
    PartitionsToAdd,
    QuotaAlterationResult,
    QuotaChange,
    Requester,
    TopicToCreate,
)
from reassignd.errors import InvalidRequest
from reassignd.plan_format import Plan
from reassignd.quotas.config_store import QUOTA_KEY, entity_znode
from reassignd.topic_partition import TopicPartition, topic_name_problem

DEFAULT_TIMEOUT_MS = 30_000  # a topic mutation's, when the request gives none

ELECTION_TYPES = {"preferred": ElectionType.PREFERRED, "unclean": ElectionType.UNCLEAN}


def _timeout_ms(value: int | UnsetType) -> int:
    return DEFAULT_TIMEOUT_MS if isinstance(value, UnsetType) else value


# --- AlterPartitionReassignments -------------------------------------------------------------------


def alter_of(request: contract.KafkaAlterReassignments) -> AlterReassignments:
    """The request's order is kept, duplicates included (the controller lets the last win);
    ``timeout_ms`` is not carried (the controller answers once each accepted partition's new
    assignment is persisted and its replicas were told to start)."""
    targets = tuple(
        ((topic.name, p.partition), p.replicas) for topic in request.topics for p in topic.partitions
    )
    mode = CancelMode.CANCEL if isinstance(request.mode, UnsetType) else CancelMode(request.mode)
    return AlterReassignments(targets, mode)


def alter_of_plan(plan: Plan) -> AlterReassignments:
    """A ``kafka-reassign-partitions`` plan's moves, in the plan's order (each partition once);
    its ``log_dirs`` are checked by the plan reader, then left to the client, as
    AlterPartitionReassignments leaves them (``admin reassign`` moves the dirs itself)."""
    return AlterReassignments(tuple((e.tp, e.replicas) for e in plan.entries))


# --- topics ----------------------------------------------------------------------------------------


def create_topics_of(
    request: contract.CreateTopicsRequest, caller: Requester, strict_quota: bool = True
) -> CreateTopics:
    """``strict_quota`` False: KIP-599's permissive quota (Kafka's older request versions)."""
    return CreateTopics(
        topics=tuple(
            TopicToCreate(
                name=t.name,
                num_partitions=t.num_partitions,
                replication_factor=t.replication_factor,
                assignments=None if t.assignments is None else {int(k): v for k, v in t.assignments.items()},
                configs={} if isinstance(t.configs, UnsetType) else t.configs,
            )
            for t in request.topics
        ),
        caller=caller,
        validate_only=request.validate_only,
        timeout_ms=_timeout_ms(request.timeout_ms),
        strict_quota=strict_quota,
    )


def delete_topics_of(
    request: contract.DeleteTopicsRequest, caller: Requester, strict_quota: bool = True
) -> DeleteTopics:
    return DeleteTopics(request.topics, caller, _timeout_ms(request.timeout_ms), strict_quota)


def create_partitions_of(
    request: contract.CreatePartitionsRequest, caller: Requester, strict_quota: bool = True
) -> CreatePartitions:
    return CreatePartitions(
        topics=tuple(PartitionsToAdd(t.name, t.count, t.assignments) for t in request.topics),
        caller=caller,
        validate_only=request.validate_only,
        timeout_ms=_timeout_ms(request.timeout_ms),
        strict_quota=strict_quota,
    )


# --- ElectLeaders ----------------------------------------------------------------------------------


def elect_of(request: contract.ElectLeadersRequest) -> ElectLeaders:
    partitions = None
    if request.partitions is not None:
        partitions = tuple((p.topic, p.partition) for p in request.partitions)
    return ElectLeaders(ELECTION_TYPES[request.election_type], partitions)


# --- AlterClientQuotas -----------------------------------------------------------------------------


def quota_entry_of(entry: contract.QuotaAlteration) -> QuotaChange | QuotaAlterationResult:
    """What to send the controller for one entry, or the entry's answer when it is decided here:
    the entity first (names, the length of its znode path), then the keys, as Kafka checks them.
    The value is the controller's to check (``admission.quota_entry_error``), as it checks every
    entry it is sent."""
    user = None if isinstance(entry.entity.user, UnsetType) else entry.entity.user
    client_id = None if isinstance(entry.entity.client_id, UnsetType) else entry.entity.client_id
    try:
        entity_znode(user, client_id)
    except InvalidRequest as e:
        return QuotaAlterationResult(user, client_id, e.error_code, e.message)
    keys = [op.key for op in entry.ops]
    for key in keys:
        if key != QUOTA_KEY:
            message = f"Unsupported quota key {json.dumps(key)}: only {QUOTA_KEY} can be altered"
            return QuotaAlterationResult(user, client_id, InvalidRequest.error_code, message)
        if keys.count(key) > 1:
            message = f"Duplicate quota key {key} in the entry's ops"
            return QuotaAlterationResult(user, client_id, InvalidRequest.error_code, message)
    if not entry.ops:
        return QuotaAlterationResult(user, client_id)  # nothing to change
    return QuotaChange(user, client_id, entry.ops[0].value)


def merge_quota_results(
    plans: Sequence[QuotaChange | QuotaAlterationResult], sent: Sequence[QuotaAlterationResult]
) -> list[QuotaAlterationResult]:
    """Every entry's answer in request order: the ones decided here, and the controller's for the
    ones sent (one each, in the order sent)."""
    expected = sum(1 for p in plans if isinstance(p, QuotaChange))
    if len(sent) != expected:
        raise RuntimeError(f"the controller answered {len(sent)} quota entries for {expected} sent")
    answers = iter(sent)
    return [next(answers) if isinstance(p, QuotaChange) else p for p in plans]


# --- AlterReplicaLogDirs ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LogDirMoves:
    """One broker's log-dir moves, in the request's order, and the first problem found, if any:
    ``(path, message)`` for a topic that cannot be one (``.``, ``..``, illegal characters) or a
    replica named twice. The HTTP API refuses such a request (400 naming the path); the Kafka
    listener forwards it, as Kafka's broker takes it."""

    broker: int
    moves: tuple[LogDirMove, ...]
    problem: tuple[str, str] | None = None


def log_dir_moves_of(request: contract.MoveLogDirsRequest) -> LogDirMoves:
    problem: tuple[str, str] | None = None
    seen: set[TopicPartition] = set()
    for i, move in enumerate(request.moves):
        tp = (move.topic, move.partition)
        if (name_problem := topic_name_problem(move.topic)) is not None:
            problem = (f"moves[{i}].topic", name_problem)
        elif tp in seen:
            problem = (
                f"moves[{i}]",
                f"duplicate replica {move.topic}-{move.partition}: a replica is moved to one dir",
            )
        if problem is not None:
            break
        seen.add(tp)
    moves = tuple(LogDirMove(m.topic, m.partition, m.dir) for m in request.moves)
    return LogDirMoves(request.broker, moves, problem)

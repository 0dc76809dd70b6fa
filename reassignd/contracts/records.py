"""The event stream's records, typed once: one msgspec struct per record type, in one closed
union (:data:`Record`). The controller builds them, the record log numbers them, and the SSE
stream, the Kafka topic and ``reassignd events tail`` carry them as JSON objects: ``{"type",
"time", "controller_epoch", "sequence", ...fields}``, the fields in the order declared here.

A partition's record carries ``topic`` and ``partition``, a batch's ``batch_id``; a value that
is not known is ``null``. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

Ids = tuple[int, ...]


class _Record(msgspec.Struct, frozen=True, tag_field="type"):
    pass


# --- the controller --------------------------------------------------------------------------------


class ControllerElected(_Record, frozen=True, tag="controller_elected"):
    controller_id: int
    epoch: int


class ControllerResigned(_Record, frozen=True, tag="controller_resigned"):
    controller_id: int
    epoch: int
    reason: str


class ControllerReloaded(_Record, frozen=True, tag="controller_reloaded"):
    """A deterministic failure refused an input; the same term reloaded the cluster."""

    controller_id: int
    epoch: int
    reason: str


class ProblemReported(_Record, frozen=True, tag="problem_reported"):
    """A znode or an input that cannot be used (``GET /v1/status`` lists it too)."""

    path: str
    reason: str
    kind: str


# --- brokers ---------------------------------------------------------------------------------------


class BrokerRegistered(_Record, frozen=True, tag="broker_registered"):
    broker_id: int
    rack: str | None
    broker_epoch: int


class BrokerLost(_Record, frozen=True, tag="broker_lost"):
    broker_id: int
    bounced: bool  # it registered again at once (a new broker epoch)


# --- partitions ------------------------------------------------------------------------------------


class LeaderChanged(_Record, frozen=True, tag="leader_changed", omit_defaults=True):
    topic: str
    partition: int
    leader: int
    previous_leader: int | None
    leader_epoch: int
    by: str | None = None  # "broker": a broker's own change, which the controller read


class IsrChanged(_Record, frozen=True, tag="isr_changed", omit_defaults=True):
    topic: str
    partition: int
    isr: Ids
    previous_isr: Ids | None
    by: str | None = None  # "broker": a broker's own change, which the controller read


class ReassignmentStarted(_Record, frozen=True, tag="reassignment_started"):
    topic: str
    partition: int
    original_replicas: Ids
    target_replicas: Ids


class ReassignmentRetargeted(_Record, frozen=True, tag="reassignment_retargeted"):
    topic: str
    partition: int
    original_replicas: Ids
    previous_target_replicas: Ids
    target_replicas: Ids


class ReassignmentCompleted(_Record, frozen=True, tag="reassignment_completed"):
    topic: str
    partition: int
    original_replicas: Ids
    target_replicas: Ids
    replicas: Ids


class ReassignmentCancelled(_Record, frozen=True, tag="reassignment_cancelled"):
    topic: str
    partition: int
    original_replicas: Ids
    target_replicas: Ids
    replicas: Ids


class ReassignmentStopped(_Record, frozen=True, tag="reassignment_stopped"):
    """Ended with the adding replicas already in sync kept (a cancel in STOP mode)."""

    topic: str
    partition: int
    original_replicas: Ids
    target_replicas: Ids
    replicas: Ids


class ReassignmentProgress(_Record, frozen=True, tag="reassignment_progress"):
    topic: str
    partition: int
    target_replicas: Ids
    bytes_done: int
    bytes_total: int
    bytes_per_s: int
    eta_s: int | None


# --- batches ---------------------------------------------------------------------------------------


class BatchSubmitted(_Record, frozen=True, tag="batch_submitted"):
    batch_id: str
    plan_id: str | None
    state: str
    moves: int
    refused: int


class BatchStateChanged(_Record, frozen=True, tag="batch_state_changed"):
    batch_id: str
    state: str
    previous_state: str


class CapStep(msgspec.Struct, frozen=True):
    """One broker's cap of a batch's moves, changed."""

    broker_id: int
    cap: int
    previous: int


class BatchCapsChanged(_Record, frozen=True, tag="batch_caps_changed"):
    """Adaptive concurrency moved brokers' caps (journaled before this record)."""

    batch_id: str
    reason: str  # healthy (raised), under_replicated or stuck (halved)
    caps: tuple[CapStep, ...]


class MoveStuck(_Record, frozen=True, tag="move_stuck"):
    batch_id: str
    topic: str
    partition: int
    bytes_done: int | None
    bytes_per_s: int | None


# --- self-healing and demotion --------------------------------------------------------------------


class SelfHealingBrokerLost(_Record, frozen=True, tag="self_healing_broker_lost"):
    """A broker hosting replicas is gone; its loss is recorded and its replicas move at
    ``heal_at_ms`` unless it returns first."""

    broker_id: int
    lost_at_ms: int
    heal_at_ms: int


class SelfHealingPlanned(_Record, frozen=True, tag="self_healing_planned"):
    """The grace is over: the lost broker's replicas planned elsewhere and submitted as a batch."""

    broker_id: int
    batch_id: str
    moves: int  # partitions the batch moves
    bytes: int  # what the moves copy, as the leaders last reported the sizes
    refused: int  # partitions the batch refused (moved meanwhile, in another batch...)
    left: int  # replicas on the broker no move takes this round (moving already, or nowhere to go)


class SelfHealingEnded(_Record, frozen=True, tag="self_healing_ended"):
    """The healing of a lost broker ended: ``completed`` (it hosts nothing any more),
    ``returned`` (it came back: its batch, if any, stopped), ``incomplete`` (replicas no round
    could move), ``failed``."""

    broker_id: int
    batch_id: str | None
    outcome: str
    reason: str


class BrokerDemoted(_Record, frozen=True, tag="broker_demoted"):
    """A broker moved to the end of its partitions' replica lists and out of their leadership."""

    broker_id: int
    reordered: int
    leaders_moved: int
    refused: int


class BrokerPromoted(_Record, frozen=True, tag="broker_promoted"):
    """A demoted broker's partitions back in their recorded replica orders."""

    broker_id: int
    restored: int
    leaders_moved: int
    refused: int


# --- topics and quotas -----------------------------------------------------------------------------


class TopicCreated(_Record, frozen=True, tag="topic_created"):
    topic: str
    partitions: int
    replication_factor: int


class TopicDeleted(_Record, frozen=True, tag="topic_deleted"):
    topic: str


class PartitionsAdded(_Record, frozen=True, tag="partitions_added"):
    topic: str
    partitions: Ids


class QuotaThrottled(_Record, frozen=True, tag="quota_throttled"):
    user: str | None
    client_id: str | None
    throttle_time_ms: int
    refused: int


# --- the audit trail -------------------------------------------------------------------------------


class Audit(_Record, frozen=True, tag="audit"):
    """A mutating request (HTTP or the Kafka listener): who, from where, what, the result. What it
    named (partitions, topics, entities) stands beside the other fields, under its own keys."""

    controller_id: int | None
    via: str
    action: str
    user: str | None
    client_id: str
    source: str
    named: Mapping[str, Any] = msgspec.field(default_factory=dict)
    result: Mapping[str, Any] = msgspec.field(default_factory=dict)


Record = (
    ControllerElected
    | ControllerResigned
    | ControllerReloaded
    | ProblemReported
    | BrokerRegistered
    | BrokerLost
    | LeaderChanged
    | IsrChanged
    | ReassignmentStarted
    | ReassignmentRetargeted
    | ReassignmentCompleted
    | ReassignmentCancelled
    | ReassignmentStopped
    | ReassignmentProgress
    | BatchSubmitted
    | BatchStateChanged
    | BatchCapsChanged
    | MoveStuck
    | SelfHealingBrokerLost
    | SelfHealingPlanned
    | SelfHealingEnded
    | BrokerDemoted
    | BrokerPromoted
    | TopicCreated
    | TopicDeleted
    | PartitionsAdded
    | QuotaThrottled
    | Audit
)
RECORD_CLASSES: tuple[type[_Record], ...] = Record.__args__
TYPES = frozenset(cls.__struct_config__.tag for cls in RECORD_CLASSES)


def record_type(record: Record) -> str:
    tag = type(record).__struct_config__.tag
    assert isinstance(tag, str)
    return tag


def record_fields(record: Record) -> dict[str, Any]:
    """The record's fields as JSON values (without ``type``), in their declared order; an audit
    record's ``named`` entries stand at the top level, before ``result``."""
    fields: dict[str, Any] = msgspec.to_builtins(record)
    del fields["type"]
    if isinstance(record, Audit):
        named, result = fields.pop("named", {}), fields.pop("result", {})
        fields |= named
        fields["result"] = result
    return fields

"""The controller's events: immutable values in one closed union.

Watch callbacks and HTTP handlers only build one of these and put it on the event queue; the
single consumer handles it with an exhaustive ``match``. Watch events carry no data: the handler
re-reads ZooKeeper, so duplicate or coalesced notifications are harmless.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field

from reassignd.control.protocol import ControlResponse, StopReplicaRequest
from reassignd.controller.model.admin_requests import (
    AlterConfigs,
    ConfigResult,
    DemotionResult,
    ElectionResult,
    ElectLeaders,
)
from reassignd.controller.model.requests import (
    AlterQuotas,
    AlterReassignments,
    AlterResult,
    CancelReassignments,
    CreatePartitions,
    CreateTopics,
    DeleteTopics,
    QuotaAlterationResult,
    TopicsResult,
)
from reassignd.controller.model.samples import AgentSample, DirMovesSeen
from reassignd.controller.model.snapshot import ActiveControllerAddress, BatchAction, BatchControlResult
from reassignd.executor.model import BatchSpec
from reassignd.executor.submit import SubmitResult
from reassignd.topic_partition import TopicPartition


@dataclass(frozen=True, slots=True)
class Startup:
    """Process start: run for election."""


@dataclass(frozen=True, slots=True)
class ControllerChanged:
    """``/controller`` was created, changed or deleted."""


@dataclass(frozen=True, slots=True)
class SessionExpired:
    """The ZooKeeper session was lost: resign, then run for election on the new session."""


@dataclass(frozen=True, slots=True)
class HandOverRequested:
    """Give the active role up on purpose (SIGTERM, ``POST /v1/controller/resign``), after the
    event in hand and before any queued one: ``/controller`` is deleted so a standby wins at once,
    and the queued requests are answered NOT_CONTROLLER naming it. ``leaving``: the process stops,
    so this instance never runs for election again. The reply is the successor, if one won."""

    leaving: bool
    reply: asyncio.Future[ActiveControllerAddress | None] = field(compare=False)


@dataclass(frozen=True, slots=True)
class Reelect:
    """Run for election again: an earlier attempt, or an event of the active controller, failed
    on a ZooKeeper error (enqueued after a backoff, until this instance wins or follows)."""


@dataclass(frozen=True, slots=True)
class ReloadDue:
    """A reload deferred by the reload budget is due (``runtime/reload_budget.py``)."""


@dataclass(frozen=True, slots=True)
class BrokersChanged:
    """Children of ``/brokers/ids`` changed."""


@dataclass(frozen=True, slots=True)
class BrokerModified:
    """Data of ``/brokers/ids/<id>`` changed."""

    broker_id: int


@dataclass(frozen=True, slots=True)
class TopicsChanged:
    """Children of ``/brokers/topics`` changed."""


@dataclass(frozen=True, slots=True)
class PartitionsModified:
    """Data of ``/brokers/topics/<topic>`` changed. A watch raises one per topic; the consumer
    takes every queued one with it and re-reads those topics together."""

    topics: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class IsrChangeNotified:
    """Children of ``/isr_change_notification`` changed."""


@dataclass(frozen=True, slots=True)
class PartitionStateChanged:
    """Data of watched partition state znodes changed (PartitionReassignmentIsrChange). A watch
    raises one per partition; the consumer takes every queued one into one event."""

    partitions: tuple[TopicPartition, ...]


@dataclass(frozen=True, slots=True)
class ZkPartitionReassignment:
    """``/admin/reassign_partitions`` was created (or changed, or deleted: the handler re-reads)."""


@dataclass(frozen=True, slots=True)
class ExtraReassignment:
    """KIP-236: ``/admin/reassign_partitions_extra`` was created (or changed/deleted)."""


@dataclass(frozen=True, slots=True)
class ReassignCancel:
    """KIP-236: ``/admin/reassign_cancel`` was created or deleted."""


@dataclass(frozen=True, slots=True)
class ReassignmentRequests:
    """KIP-236: children of ``/admin/reassignment_requests`` changed."""


@dataclass(frozen=True, slots=True)
class PreferredReplicaElection:
    """Kafka's legacy ``/admin/preferred_replica_election`` was created (or changed, or deleted:
    the handler re-reads)."""


@dataclass(frozen=True, slots=True)
class TopicDeletionsChanged:
    """Children of ``/admin/delete_topics`` changed."""


@dataclass(frozen=True, slots=True)
class ApiPartitionReassignment:
    """AlterPartitionReassignments from the HTTP API. ``joined``: later requests the consumer
    handles together with this one (a group commit; see ``Controller._coalesce``), each still
    answered on its own."""

    request: AlterReassignments
    reply: asyncio.Future[AlterResult] = field(compare=False, repr=False)
    joined: tuple[ApiPartitionReassignment, ...] = field(default=(), compare=False, repr=False)

    @property
    def group(self) -> tuple[ApiPartitionReassignment, ...]:
        return (self, *self.joined)


@dataclass(frozen=True, slots=True)
class CancelReassignmentsRequested:
    """DELETE /v1/reassignments[...]."""

    request: CancelReassignments
    reply: asyncio.Future[AlterResult] = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class CreateTopicsRequested:
    request: CreateTopics
    reply: asyncio.Future[TopicsResult] = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class DeleteTopicsRequested:
    request: DeleteTopics
    reply: asyncio.Future[TopicsResult] = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class CreatePartitionsRequested:
    request: CreatePartitions
    reply: asyncio.Future[TopicsResult] = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class AlterQuotasRequested:
    request: AlterQuotas
    reply: asyncio.Future[tuple[QuotaAlterationResult, ...]] = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class AlterConfigsRequested:
    """AlterConfigs or IncrementalAlterConfigs of topic and broker configs (the Kafka listener)."""

    request: AlterConfigs
    reply: asyncio.Future[tuple[ConfigResult, ...]] = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ElectLeadersRequested:
    """ElectLeaders: preferred or unclean elections on demand."""

    request: ElectLeaders
    reply: asyncio.Future[list[ElectionResult]] = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class BatchSubmitRequested:
    """POST /v1/batches."""

    spec: BatchSpec
    reply: asyncio.Future[SubmitResult] = field(compare=False, repr=False)
    sizes: Mapping[TopicPartition, int] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class BatchControlRequested:
    """POST /v1/batches/{id}/pause|resume|stop|rollback."""

    batch_id: str
    action: BatchAction
    reply: asyncio.Future[BatchControlResult] = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class DemotionRequested:
    """POST /v1/brokers/{id}/demote (or /promote: ``promote``)."""

    broker_id: int
    promote: bool
    reply: asyncio.Future[DemotionResult] = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ExecutorTick:
    """The batch executor's timer: start what the caps allow, follow what runs."""


@dataclass(frozen=True, slots=True)
class AgentsSampled:
    """A sample of the agents' reports (rates, sizes, stuck moves): adaptive concurrency adjusts
    the caps of running batches, self-healing keeps the sizes it plans with."""

    sample: AgentSample = field(compare=False)


@dataclass(frozen=True, slots=True)
class DirMovesObserved:
    """A round of the batches' moves between log dirs: journal the asked ones, end the others."""

    seen: DirMovesSeen = field(compare=False)


@dataclass(frozen=True, slots=True)
class SelfHealingTick:
    """Self-healing's timer: a lost broker's grace may be over."""


@dataclass(frozen=True, slots=True)
class AutoLeaderRebalanceTick:
    """The auto leader rebalance's timer (Kafka's AutoPreferredReplicaLeaderElection): check the
    leader imbalance of every broker, elect preferred replicas where it is too high."""


@dataclass(frozen=True, slots=True)
class QuotaConfigChanged:
    """Children of ``/config/changes`` changed."""


@dataclass(frozen=True, slots=True)
class StopReplicaConfirmed:
    """A broker answered StopReplica (topic deletion waits for these)."""

    broker_id: int
    request: StopReplicaRequest = field(compare=False)
    response: ControlResponse = field(compare=False)


RequestEvent = (
    ApiPartitionReassignment
    | BatchSubmitRequested
    | BatchControlRequested
    | CancelReassignmentsRequested
    | CreateTopicsRequested
    | DeleteTopicsRequested
    | CreatePartitionsRequested
    | AlterQuotasRequested
    | AlterConfigsRequested
    | ElectLeadersRequested
    | DemotionRequested
)

ControllerEvent = (
    Startup
    | ControllerChanged
    | SessionExpired
    | HandOverRequested
    | Reelect
    | ReloadDue
    | BrokersChanged
    | BrokerModified
    | TopicsChanged
    | PartitionsModified
    | IsrChangeNotified
    | PartitionStateChanged
    | ZkPartitionReassignment
    | ExtraReassignment
    | ReassignCancel
    | ReassignmentRequests
    | TopicDeletionsChanged
    | ApiPartitionReassignment
    | CancelReassignmentsRequested
    | CreateTopicsRequested
    | DeleteTopicsRequested
    | CreatePartitionsRequested
    | AlterQuotasRequested
    | QuotaConfigChanged
    | StopReplicaConfirmed
    | BatchSubmitRequested
    | BatchControlRequested
    | ExecutorTick
    | AgentsSampled
    | DirMovesObserved
    | SelfHealingTick
    | AlterConfigsRequested
    | ElectLeadersRequested
    | DemotionRequested
    | PreferredReplicaElection
    | AutoLeaderRebalanceTick
)


def event_name(event: ControllerEvent) -> str:
    """Kafka's ControllerState-like name used in metrics (``<State>RateAndTimeMs``)."""
    return type(event).__name__

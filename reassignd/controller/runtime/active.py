"""One active term: every part that exists only while this instance is the active controller,
built when it wins an election and dropped whole when it resigns.

The parts are composed, each holding only what it uses: the context (the cluster as last
written), the writer (the one place that writes ZooKeeper, fenced), the reassignment algorithm,
the KIP-236 intakes, the batch executor, topic mutations and deletion, quotas, leader elections on
demand and the auto leader rebalance, and the event handlers of each domain (brokers, topics,
quotas) over them.
"""

from __future__ import annotations

from dataclasses import dataclass

from reassignd.controller.batches.runner import BatchRunner
from reassignd.controller.brokers.handlers import BrokerEvents
from reassignd.controller.effects.broker_requests import BrokerRequestBatch
from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.effects.writer import FencedMulti, ZkWriter
from reassignd.controller.healing.healer import SelfHealer
from reassignd.controller.instance.events import (
    ExtraReassignment,
    PartitionStateChanged,
    PreferredReplicaElection,
    ReassignCancel,
    ReassignmentRequests,
    ZkPartitionReassignment,
)
from reassignd.controller.instance.shared import Shared
from reassignd.controller.leadership.demotions import Demotions
from reassignd.controller.leadership.preferred_leaders import PreferredLeaders
from reassignd.controller.model.placement import PlaceLostReplicas
from reassignd.controller.partitions.partition_state_machine import PartitionStateMachine
from reassignd.controller.quotas.handlers import QuotaEvents
from reassignd.controller.reassignment.algorithm import Reassigner
from reassignd.controller.reassignment.intake import Intake
from reassignd.controller.reassignment.sequenced import SequencedRequests
from reassignd.controller.runtime.controller_election import Won
from reassignd.controller.runtime.finish import Finisher
from reassignd.controller.state.context import ControllerContext
from reassignd.controller.state.wire_states import WireStates
from reassignd.controller.topics.deletion import TopicDeleter
from reassignd.controller.topics.handlers import TopicEvents
from reassignd.controller.topics.mutations import TopicMutations
from reassignd.quotas.manager import QuotaManager
from reassignd.quotas.metrics import QuotaMetrics
from reassignd.zk import paths


@dataclass(frozen=True, slots=True)
class ActiveParts:
    ctx: ControllerContext
    writer: ZkWriter
    reassigner: Reassigner
    intake: Intake
    sequenced: SequencedRequests
    runner: BatchRunner
    topics: TopicMutations
    deleter: TopicDeleter
    elections: PartitionStateMachine
    leaders: PreferredLeaders  # ElectLeaders, the legacy election znode, the auto leader rebalance
    demotions: Demotions  # brokers demoted out of leadership, and promoted back
    finisher: Finisher
    brokers: BrokerEvents
    topic_events: TopicEvents
    quotas: QuotaEvents
    controller_id: int
    wire: WireStates  # the partition states on the wire, kept across this term's batches
    healing: SelfHealer  # lost brokers' replicas moved once their grace is over

    def broker_requests(self) -> BrokerRequestBatch:
        """An empty set of control requests for one event."""
        return BrokerRequestBatch(self.ctx, self.controller_id, wire=self.wire)

    def event_outputs(self) -> EventOutputs:
        """The outputs of one event, empty: its control requests, what it ended."""
        return EventOutputs(self.broker_requests(), self.writer)


def build(
    shared: Shared,
    won: Won,
    sender: FencedMulti,
    quota_metrics: QuotaMetrics,
    place: PlaceLostReplicas | None = None,
) -> ActiveParts:
    """The term's parts: each reads through ``shared.reads`` (the ZkReads port), the writer
    alone sends, through ``sender`` (the session's fenced multi), fenced by ``won``."""
    settings, reads, report, watch = shared.settings, shared.reads, shared.report, shared.watch
    ctx = ControllerContext(won.epoch, won.fence.version)
    writer = ZkWriter(reads, sender, won.fence, ctx, report, shared.records, shared.refuse)
    reassigner = Reassigner(
        reads,
        ctx,
        shared.records,
        lambda tp: watch(paths.partition_state(*tp), PartitionStateChanged((tp,))),
        report,
        shared.refuse,
    )
    intake = Intake(
        reads,
        ctx,
        reassigner,
        lambda: watch(paths.REASSIGN_PARTITIONS, ZkPartitionReassignment()),
        lambda: watch(paths.REASSIGN_PARTITIONS_EXTRA, ExtraReassignment()),
        lambda: watch(paths.REASSIGN_CANCEL, ReassignCancel()),
        report,
        now_ms=shared.wall_ms,
    )
    sequenced = SequencedRequests(
        reads,
        ctx,
        reassigner,
        intake,
        lambda: watch(paths.REASSIGNMENT_REQUESTS, ReassignmentRequests()),
        report,
        shared.refuse,
        settings.max_partitions_per_request,
    )
    quota_manager = QuotaManager(settings.quota_window_num, settings.quota_window_size_s)
    topics = TopicMutations(reads, ctx, shared.records, quota_manager, shared.clock, refuse=shared.refuse)
    deleter = TopicDeleter(reads, ctx, shared.records)
    runner = BatchRunner(
        reads,
        ctx,
        shared.records,
        reassigner,
        intake,
        settings,
        report,
        shared.wall_ms,
        refuse=shared.refuse,
        metrics=shared.metrics,
    )
    wire = WireStates(ctx)
    elections = PartitionStateMachine(shared, ctx, wire)
    finisher = Finisher(ctx, elections, intake, sequenced, runner, deleter)
    leaders = PreferredLeaders(
        shared,
        ctx,
        elections,
        lambda: watch(paths.PREFERRED_REPLICA_ELECTION, PreferredReplicaElection()),
    )
    return ActiveParts(
        ctx=ctx,
        writer=writer,
        reassigner=reassigner,
        intake=intake,
        sequenced=sequenced,
        runner=runner,
        topics=topics,
        deleter=deleter,
        elections=elections,
        leaders=leaders,
        demotions=Demotions(shared, ctx, reassigner, leaders.leaders),
        finisher=finisher,
        brokers=BrokerEvents(shared, ctx, elections, reassigner, deleter),
        topic_events=TopicEvents(shared, ctx, elections, reassigner),
        quotas=QuotaEvents(shared, elections, quota_manager, quota_metrics),
        controller_id=settings.controller_id,
        wire=wire,
        healing=SelfHealer(shared, ctx, runner, place),
    )

"""The dispatch of one event on the active controller to the part it belongs to: brokers,
topics, quotas and configs, leadership, the intakes and the reassignment algorithm, the batch
runner. Each event gets one :class:`EventOutputs` (``parts.event_outputs()``), filled by the
handlers it runs; an event that may have run the reassignment algorithm hands it to
``Finisher.after_reassignments``, which acts on what ended. The dispatch returns it; the applier
(``runtime.apply``, called by ``Controller._handle``) sends its requests and gives its replies.

An exhaustive ``match`` over the closed union of events: mypy's ``assert_never`` fails until a new
event is dispatched here (or taken by ``Controller._handle`` as an instance event).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never

from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.instance.events import (
    AgentsSampled,
    AlterConfigsRequested,
    AlterQuotasRequested,
    ApiPartitionReassignment,
    AutoLeaderRebalanceTick,
    BatchControlRequested,
    BatchSubmitRequested,
    BrokerModified,
    BrokersChanged,
    CancelReassignmentsRequested,
    ControllerChanged,
    ControllerEvent,
    CreatePartitionsRequested,
    CreateTopicsRequested,
    DeleteTopicsRequested,
    DemotionRequested,
    DirMovesObserved,
    ElectLeadersRequested,
    ExecutorTick,
    ExtraReassignment,
    HandOverRequested,
    IsrChangeNotified,
    PartitionsModified,
    PartitionStateChanged,
    PreferredReplicaElection,
    QuotaConfigChanged,
    ReassignCancel,
    ReassignmentRequests,
    Reelect,
    ReloadDue,
    SelfHealingTick,
    SessionExpired,
    Startup,
    StopReplicaConfirmed,
    TopicDeletionsChanged,
    TopicsChanged,
    ZkPartitionReassignment,
)
from reassignd.controller.instance.shared import Shared
from reassignd.controller.leadership.rebalance_timer import RebalanceTimer
from reassignd.controller.model.requests import AlterReassignments, AlterResult
from reassignd.controller.quotas.entity_configs import ConfigWrites
from reassignd.controller.runtime.active import ActiveParts


async def dispatch(  # noqa: PLR0912, PLR0915 (one arm per event of the closed union)
    parts: ActiveParts, event: ControllerEvent, shared: Shared, rebalance: RebalanceTimer
) -> EventOutputs:
    """Hand an event to the part it belongs to, on the active controller, and return its outputs
    for the applier (``runtime.apply``): nothing here sends or answers. The instance events
    (election, session, hand-over) never come here: ``Controller._handle`` takes them in any role."""
    out = parts.event_outputs()
    match event:
        case BrokersChanged():
            if await parts.brokers.on_brokers_changed(out):  # some started: reassignments resumed
                await parts.finisher.after_reassignments(out)
            await parts.healing.evaluate(out)
            await parts.finisher.after_reassignments(out)
        case BrokerModified(broker_id=broker_id):
            await parts.brokers.on_broker_modified(broker_id, out)
        case TopicsChanged():
            await parts.topic_events.on_topics_changed(out)
        case PartitionsModified(topics=topics):
            await parts.topic_events.on_partitions_modified(topics, out)
        case IsrChangeNotified():
            if await parts.topic_events.on_isr_change_notified(out):
                await parts.finisher.after_reassignments(out)
        case PartitionStateChanged(partitions=tps):
            await parts.reassigner.check(tps, out)
            await parts.finisher.after_reassignments(out)
        case ZkPartitionReassignment():
            await parts.intake.on_legacy_znode(out)
            await parts.finisher.after_reassignments(out)
        case ExtraReassignment():
            await parts.intake.on_extra_znode(out)
            await parts.finisher.after_reassignments(out)
        case ReassignCancel():
            await parts.intake.on_cancel_znode(out)
            if not parts.intake.cancel_in_place:
                await parts.sequenced.on_requests(out)
            await parts.finisher.after_reassignments(out)
        case ReassignmentRequests():
            await parts.sequenced.on_requests(out)
            await parts.finisher.after_reassignments(out)
        case TopicDeletionsChanged():
            await parts.topic_events.load_topic_deletions(out)
            await parts.finisher.resume_deletions(out)
        case StopReplicaConfirmed(broker_id=broker_id, request=stop, response=response):
            if parts.deleter.confirmed(broker_id, stop, response):
                await parts.finisher.resume_deletions(out)
        case QuotaConfigChanged():
            await parts.quotas.on_config_changed(out)
        case ExecutorTick():
            await parts.runner.tick(out)
            await parts.finisher.after_reassignments(out)
        case AgentsSampled(sample=sample):
            if sample.epoch == parts.ctx.epoch:  # taken against this term's snapshot
                parts.healing.sampled(sample.sizes)
                await parts.runner.adapt(sample, out)
                # what raised caps allow starts now
                await parts.finisher.after_reassignments(out)
        case DirMovesObserved(seen=seen):
            if seen.epoch == parts.ctx.epoch:  # taken against this term's snapshot
                await parts.runner.dirs_seen(seen, out)
                await parts.runner.tick(out)  # what the ended moves freed starts now
                await parts.finisher.after_reassignments(out)
        case SelfHealingTick():
            await parts.healing.evaluate(out)
            await parts.finisher.after_reassignments(out)
        case ApiPartitionReassignment(group=group):
            answers = await _api_alter(parts, [e.request for e in group], out)
            accepted = [(r.topic, r.partition) for a in answers for r in a.results if r.error_code == 0]
            await parts.sequenced.after_completions(accepted, out)  # the API supersedes them
            await parts.finisher.after_reassignments(out)
            for member, result in zip(group, answers, strict=True):
                out.answer(member.reply, result)
        case CancelReassignmentsRequested(request=cancel, reply=reply):
            (result,) = await _api_alter(parts, [parts.intake.cancel_request(cancel)], out)
            accepted = [(r.topic, r.partition) for r in result.results if r.error_code == 0]
            await parts.sequenced.after_completions(accepted, out)
            await parts.finisher.after_reassignments(out)
            out.answer(reply, result)
        case CreateTopicsRequested(request=create, reply=topics_reply):
            created_result, created = await parts.topics.create_topics(create, out)
            if created:
                await parts.topic_events.add_topics(created, out)
            parts.quotas.update_metrics()
            out.answer(topics_reply, created_result)
        case CreatePartitionsRequested(request=expand, reply=topics_reply):
            expanded_result, added = await parts.topics.create_partitions(expand, out)
            await parts.elections.online_partitions([(t, p) for t, ps in added.items() for p in ps], out)
            parts.quotas.update_metrics()
            out.answer(topics_reply, expanded_result)
        case DeleteTopicsRequested(request=delete, reply=topics_reply):
            deleted_result, queued = await parts.topics.delete_topics(delete, out)
            parts.ctx.topics_to_delete.update(queued)
            await parts.finisher.resume_deletions(out)
            parts.quotas.update_metrics()
            out.answer(topics_reply, deleted_result)
        case AlterQuotasRequested(request=alter, reply=quotas_reply):
            out.answer(quotas_reply, await parts.quotas.alter(alter, out))
        case AlterConfigsRequested(request=alter_configs, reply=configs_reply):
            topic_exists = parts.ctx.assignments.__contains__
            altered = await ConfigWrites(shared.reads, topic_exists).alter(alter_configs, out)
            await parts.quotas.on_config_changed(out)  # apply them now (e.g. unclean elections)
            out.answer(configs_reply, altered)
        case ElectLeadersRequested(request=elect, reply=elect_reply):
            out.answer(elect_reply, await parts.leaders.on_request(elect, out))
        case DemotionRequested(broker_id=broker_id, promote=promote, reply=demotion_reply):
            demotions = parts.demotions
            change = demotions.promote if promote else demotions.demote
            demoted = await change(broker_id, out)
            await parts.finisher.after_reassignments(out)
            out.answer(demotion_reply, demoted)
        case PreferredReplicaElection():
            await parts.leaders.on_znode(out)
        case AutoLeaderRebalanceTick():
            if rebalance.take():
                await parts.leaders.rebalance(out)
        case BatchSubmitRequested(spec=spec, reply=submit_reply, sizes=sizes):
            submitted = await parts.runner.submit(spec, out, sizes)
            await parts.finisher.after_reassignments(out)
            out.answer(submit_reply, submitted)
        case BatchControlRequested(batch_id=batch_id, action=action, reply=control_reply):
            controlled = await parts.runner.control(batch_id, action, out)
            await parts.finisher.after_reassignments(out)
            out.answer(control_reply, controlled)
        case (
            Startup() | ControllerChanged() | SessionExpired() | Reelect() | ReloadDue() | HandOverRequested()
        ):
            pass  # instance events: handled in any role by Controller._handle
        case _:
            assert_never(event)
    return out


async def _api_alter(
    parts: ActiveParts, requests: Sequence[AlterReassignments], out: EventOutputs
) -> list[AlterResult]:
    """API reassignments and cancels (one cancel mode, disjoint partitions), in three steps: the
    intake decides; the batch runner journals cancelled the moves its batches run that the
    requests cancel, before their topic znodes are written (a failover in between leaves them
    cancelled instead of starting them again); the intake writes and answers."""
    decision = await parts.intake.decide(requests)
    await parts.runner.cancelled_through_api(decision.cancelled, out)
    return await parts.intake.carry_out(decision, out)

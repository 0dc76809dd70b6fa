"""The dispatch of one event on the active controller to the part it belongs to: brokers,
topics, quotas and configs, leadership, the intakes and the reassignment algorithm, the batch
runner; an event that ran the reassignment algorithm ends with ``Finisher.after_reassignments``.

An exhaustive ``match`` over the closed union of events: mypy's ``assert_never`` fails until a new
event is dispatched here (or taken by ``Controller._handle`` as an instance event).
"""

from __future__ import annotations

from typing import assert_never

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
from reassignd.controller.quotas.entity_configs import ConfigWrites
from reassignd.controller.runtime.active import ActiveParts


async def dispatch(  # noqa: PLR0912, PLR0915 (one arm per event of the closed union)
    parts: ActiveParts, event: ControllerEvent, shared: Shared, rebalance: RebalanceTimer
) -> None:
    """Hand an event to the part it belongs to, on the active controller. The instance events
    (election, session, hand-over) never come here: ``Controller._handle`` takes them in any role."""
    match event:
        case BrokersChanged():
            if (started := await parts.brokers.on_brokers_changed()) is not None:
                await parts.finisher.after_reassignments(started)
            broker_requests = parts.broker_requests()
            await parts.healing.evaluate(broker_requests)
            await parts.finisher.after_reassignments(broker_requests)
        case BrokerModified(broker_id=broker_id):
            await parts.brokers.on_broker_modified(broker_id)
        case TopicsChanged():
            await parts.topic_events.on_topics_changed()
        case PartitionsModified(topics=topics):
            await parts.topic_events.on_partitions_modified(topics)
        case IsrChangeNotified():
            if (checked := await parts.topic_events.on_isr_change_notified()) is not None:
                await parts.finisher.after_reassignments(checked)
        case PartitionStateChanged(partitions=tps):
            broker_requests = parts.broker_requests()
            await parts.reassigner.check(tps, broker_requests)
            await parts.finisher.after_reassignments(broker_requests)
        case ZkPartitionReassignment():
            broker_requests = parts.broker_requests()
            await parts.intake.on_legacy_znode(broker_requests)
            await parts.finisher.after_reassignments(broker_requests)
        case ExtraReassignment():
            broker_requests = parts.broker_requests()
            await parts.intake.on_extra_znode(broker_requests)
            await parts.finisher.after_reassignments(broker_requests)
        case ReassignCancel():
            broker_requests = parts.broker_requests()
            await parts.intake.on_cancel_znode(broker_requests)
            if not parts.intake.cancel_in_place:
                await parts.sequenced.on_requests(broker_requests)
            await parts.finisher.after_reassignments(broker_requests)
        case ReassignmentRequests():
            broker_requests = parts.broker_requests()
            await parts.sequenced.on_requests(broker_requests)
            await parts.finisher.after_reassignments(broker_requests)
        case TopicDeletionsChanged():
            await parts.topic_events.load_topic_deletions()
            await parts.finisher.resume_deletions()
        case StopReplicaConfirmed(broker_id=broker_id, request=stop, response=response):
            if parts.deleter.confirmed(broker_id, stop, response):
                await parts.finisher.resume_deletions()
        case QuotaConfigChanged():
            await parts.quotas.on_config_changed()
        case ExecutorTick():
            broker_requests = parts.broker_requests()
            await parts.runner.tick(broker_requests)
            await parts.finisher.after_reassignments(broker_requests)
        case AgentsSampled(sample=sample):
            if sample.epoch == parts.ctx.epoch:  # taken against this term's snapshot
                parts.healing.sampled(sample.sizes)
                await parts.runner.adapt(sample)
                # what raised caps allow starts now
                await parts.finisher.after_reassignments(parts.broker_requests())
        case SelfHealingTick():
            broker_requests = parts.broker_requests()
            await parts.healing.evaluate(broker_requests)
            await parts.finisher.after_reassignments(broker_requests)
        case ApiPartitionReassignment(group=group):
            broker_requests = parts.broker_requests()
            answers = await parts.intake.alter_group([e.request for e in group], broker_requests)
            accepted = [(r.topic, r.partition) for a in answers for r in a.results if r.error_code == 0]
            await parts.sequenced.after_completions(accepted)  # the API supersedes them
            await parts.finisher.after_reassignments(broker_requests)
            for member, result in zip(group, answers, strict=True):
                if not member.reply.done():
                    member.reply.set_result(result)
        case CancelReassignmentsRequested(request=cancel, reply=reply):
            broker_requests = parts.broker_requests()
            result = await parts.intake.cancel(cancel, broker_requests)
            accepted = [(r.topic, r.partition) for r in result.results if r.error_code == 0]
            await parts.sequenced.after_completions(accepted)
            await parts.finisher.after_reassignments(broker_requests)
            if not reply.done():
                reply.set_result(result)
        case CreateTopicsRequested(request=create, reply=topics_reply):
            created_result, created = await parts.topics.create_topics(create)
            if created:
                await parts.topic_events.add_topics(created)
            parts.quotas.update_metrics()
            if not topics_reply.done():
                topics_reply.set_result(created_result)
        case CreatePartitionsRequested(request=expand, reply=topics_reply):
            expanded_result, added = await parts.topics.create_partitions(expand)
            broker_requests = parts.broker_requests()
            await parts.elections.online_partitions(
                [(t, p) for t, ps in added.items() for p in ps], broker_requests
            )
            shared.send(broker_requests)
            parts.quotas.update_metrics()
            if not topics_reply.done():
                topics_reply.set_result(expanded_result)
        case DeleteTopicsRequested(request=delete, reply=topics_reply):
            deleted_result, queued = await parts.topics.delete_topics(delete)
            parts.ctx.topics_to_delete.update(queued)
            await parts.finisher.resume_deletions()
            parts.quotas.update_metrics()
            if not topics_reply.done():
                topics_reply.set_result(deleted_result)
        case AlterQuotasRequested(request=alter, reply=quotas_reply):
            results = await parts.quotas.alter(alter)
            if not quotas_reply.done():
                quotas_reply.set_result(results)
        case AlterConfigsRequested(request=alter_configs, reply=configs_reply):
            topic_exists = parts.ctx.assignments.__contains__
            altered = await ConfigWrites(shared.zk, parts.writer, topic_exists).alter(alter_configs)
            await parts.quotas.on_config_changed()  # apply them now (e.g. unclean elections)
            if not configs_reply.done():
                configs_reply.set_result(altered)
        case ElectLeadersRequested(request=elect, reply=elect_reply):
            broker_requests = parts.broker_requests()
            elected = await parts.leaders.on_request(elect, broker_requests)
            shared.send(broker_requests)
            if not elect_reply.done():
                elect_reply.set_result(elected)
        case DemotionRequested(broker_id=broker_id, promote=promote, reply=demotion_reply):
            broker_requests = parts.broker_requests()
            demotions = parts.demotions
            change = demotions.promote if promote else demotions.demote
            demoted = await change(broker_id, broker_requests)
            await parts.finisher.after_reassignments(broker_requests)
            if not demotion_reply.done():
                demotion_reply.set_result(demoted)
        case PreferredReplicaElection():
            broker_requests = parts.broker_requests()
            await parts.leaders.on_znode(broker_requests)
            shared.send(broker_requests)
        case AutoLeaderRebalanceTick():
            if rebalance.take():
                broker_requests = parts.broker_requests()
                await parts.leaders.rebalance(broker_requests)
                shared.send(broker_requests)
        case BatchSubmitRequested(spec=spec, reply=submit_reply, sizes=sizes):
            broker_requests = parts.broker_requests()
            submitted = await parts.runner.submit(spec, broker_requests, sizes)
            await parts.finisher.after_reassignments(broker_requests)
            if not submit_reply.done():
                submit_reply.set_result(submitted)
        case BatchControlRequested(batch_id=batch_id, action=action, reply=control_reply):
            broker_requests = parts.broker_requests()
            controlled = await parts.runner.control(batch_id, action, broker_requests)
            await parts.finisher.after_reassignments(broker_requests)
            if not control_reply.done():
                control_reply.set_result(controlled)
        case Startup() | ControllerChanged() | SessionExpired() | Reelect() | HandOverRequested():
            pass  # instance events: handled in any role by Controller._handle
        case _:
            assert_never(event)

"""The controller: election, failover, and the single consumer of the event queue.

Kafka's ZooKeeper-mode controller (KafkaController.scala) is the reference: one event at a time,
ZooKeeper written (fenced) before memory, watches re-armed by the handlers that re-read.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from typing import assert_never

from reassignd.controller import election, loader
from reassignd.controller.batches import BatchRunner
from reassignd.controller.client_requests import ClientRequests
from reassignd.controller.context import ControllerContext
from reassignd.controller.deletion import TopicDeleter
from reassignd.controller.events import (
    AlterQuotasRequested,
    ApiPartitionReassignment,
    BatchControlRequested,
    BatchSubmitRequested,
    BrokerModified,
    BrokersChanged,
    CancelReassignmentsRequested,
    ControllerChanged,
    ControllerEvent,
    ControlRequestFailed,
    CreatePartitionsRequested,
    CreateTopicsRequested,
    DeleteTopicsRequested,
    ExecutorTick,
    ExtraReassignment,
    IsrChangeNotified,
    PartitionsModified,
    PartitionStateChanged,
    QuotaConfigChanged,
    ReassignCancel,
    ReassignmentRequests,
    Reelect,
    RequestEvent,
    SessionExpired,
    Startup,
    StopReplicaConfirmed,
    TopicDeletionsChanged,
    TopicsChanged,
    ZkPartitionReassignment,
    event_name,
)
from reassignd.controller.intake import Intake
from reassignd.controller.reassignment import Reassigner
from reassignd.controller.request_batch import ControlBatch
from reassignd.controller.sequenced import SequencedRequests
from reassignd.controller.snapshot import (
    ActiveController,
)
from reassignd.controller.topics import TopicMutations
from reassignd.controller.writer import ZkWriter
from reassignd.errors import NotController, ReassigndError
from reassignd.quotas.config_changes import ConfigChangeReader
from reassignd.quotas.manager import QuotaManager
from reassignd.zk import codec, paths
from reassignd.zk.client import (
    NotControllerError,
    SessionState,
    ZkError,
)

log = logging.getLogger(__name__)


REELECT_BACKOFF_MIN_S = 0.1
REELECT_BACKOFF_MAX_S = 2.0


class Controller(ClientRequests):
    """One controller instance (active or standby). Implements the HTTP layer's ControllerView."""

    async def run(self) -> None:
        """The single consumer. Runs until cancelled."""
        self.zk.on_session_state(self._on_session_state)
        await self.channel.start()
        self.queue.put(Startup())
        try:
            while True:
                event, queue_time_ms = await self.queue.get()
                self.metrics.event_queue_time_ms.observe(queue_time_ms)
                await self._process(self._coalesce(event))
        finally:
            if self._reelect_timer is not None:
                self._reelect_timer.cancel()
            if self._executor_timer is not None:
                self._executor_timer.cancel()
            for dropped in self.queue.clear():
                if isinstance(dropped, RequestEvent):
                    self._fail(dropped, NotController("the controller is shutting down"))
            await self.channel.close()

    def _coalesce(self, event: ControllerEvent) -> ControllerEvent:
        """Watch notifications carry no data, so a burst of them is handled as one: consecutive
        state-znode changes become one event over all their partitions, and consecutive ISR
        change notifications one re-read."""
        if isinstance(event, PartitionStateChanged):
            more = self.queue.take_while(lambda e: isinstance(e, PartitionStateChanged))
            tps = dict.fromkeys(event.partitions)
            for e in more:
                assert isinstance(e, PartitionStateChanged)
                tps.update(dict.fromkeys(e.partitions))
            return PartitionStateChanged(tuple(tps))
        if isinstance(event, IsrChangeNotified):
            self.queue.take_while(lambda e: isinstance(e, IsrChangeNotified))
        return event

    async def _process(self, event: ControllerEvent) -> None:
        """Handle one event. No event is abandoned with the instance still active: a failed
        fencing check resigns; any other failure (a ZooKeeper error whose outcome is unknown, a
        failure while loading, a bug) resigns too, gives ``/controller`` up and runs for election
        again, so the next active controller — this one or another — rebuilds everything from
        ZooKeeper (Kafka's triggerControllerMove). A failed election is retried with backoff."""
        started = self._clock()
        try:
            await self._handle(event)
        except NotControllerError:
            if isinstance(event, RequestEvent):
                self._fail(event, NotController())
            log.warning(
                "fencing check failed while handling %s: another controller was elected", event_name(event)
            )
            await self._resign("fenced")
            self.queue.put(ControllerChanged())
        except ReassigndError as e:
            if isinstance(event, RequestEvent):
                self._fail(event, e)
        except Exception as e:
            if isinstance(e, ZkError):
                log.error("ZooKeeper error while handling %s: %s", event_name(event), e)
            else:
                log.exception("unexpected error while handling %s", event_name(event))
            if isinstance(event, RequestEvent):
                self._fail(
                    event,
                    NotController(f"the controller gave up this request on an error ({e}); retry it"),
                )
            await self._move_controller(f"{type(e).__name__} while handling {event_name(event)}")
            self._schedule_reelect()
        finally:
            self.metrics.event_time_ms.labels(event_name(event)).observe((self._clock() - started) * 1000)
            self._publish()
            self._schedule_executor_tick()

    def _schedule_executor_tick(self) -> None:
        """While some batch has work, an ExecutorTick every ``batch_tick_s``."""
        if self._executor_timer is not None or self.runner is None or not self.runner.has_work:
            return

        def fire() -> None:
            self._executor_timer = None
            self.queue.put(ExecutorTick())

        self._executor_timer = asyncio.get_running_loop().call_later(self.settings.batch_tick_s, fire)

    async def _move_controller(self, reason: str) -> None:
        """Resign and, if ``/controller`` is still this session's, delete it (fenced) so any
        instance can win and load the cluster afresh. Best effort: when ZooKeeper cannot be
        reached the session expires and takes the ephemeral znode with it."""
        was_active = self.active
        fence = self.writer.fence if self.writer is not None else None
        await self._resign(reason)
        if not was_active:
            return
        with contextlib.suppress(ZkError):
            await election.give_up(self.zk, fence)

    def _schedule_reelect(self) -> None:
        if self._reelect_timer is not None:
            return
        delay = self._reelect_backoff_s
        self._reelect_backoff_s = min(delay * 2, REELECT_BACKOFF_MAX_S)

        def fire() -> None:
            self._reelect_timer = None
            self.queue.put(Reelect())

        log.info("running for election again in %.1f s", delay)
        self._reelect_timer = asyncio.get_running_loop().call_later(delay, fire)

    async def _handle(self, event: ControllerEvent) -> None:
        match event:
            case Startup():
                for path in paths.PERSISTENT_PATHS:
                    await self.zk.ensure_path(path)
                await self._elect_or_follow()
            case ControllerChanged():
                await self._elect_or_follow()
            case SessionExpired():
                self._armed.clear()
                self._active_controller = None  # unknown until /controller is read again
                if self.active:
                    await self._resign("session expired")
                await self._elect_or_follow()
            case Reelect():
                if not self.active:
                    await self._elect_or_follow()
            case BrokersChanged():
                if self.active:
                    await self._on_brokers_changed()
            case BrokerModified(broker_id=broker_id):
                if self.active:
                    await self._on_broker_modified(broker_id)
            case TopicsChanged():
                if self.active:
                    await self._on_topics_changed()
            case PartitionsModified(topic=topic):
                if self.active:
                    await self._on_partitions_modified(topic)
            case IsrChangeNotified():
                if self.active:
                    await self._on_isr_change_notified()
            case PartitionStateChanged(partitions=tps):
                if self.active:
                    batch = self._batch()
                    await self._reassigner().check(tps, batch)
                    await self._after_reassignments(batch)
            case ControlRequestFailed():
                pass
            case ZkPartitionReassignment():
                if self.active:
                    batch = self._batch()
                    await self._intake().on_legacy_znode(batch)
                    await self._after_reassignments(batch)
            case ExtraReassignment():
                if self.active:
                    batch = self._batch()
                    await self._intake().on_extra_znode(batch)
                    await self._after_reassignments(batch)
            case ReassignCancel():
                if self.active:
                    batch = self._batch()
                    await self._intake().on_cancel_znode(batch)
                    if not self._intake().cancel_in_place:
                        await self._sequenced().on_requests(batch)
                    await self._after_reassignments(batch)
            case ReassignmentRequests():
                if self.active:
                    batch = self._batch()
                    await self._sequenced().on_requests(batch)
                    await self._after_reassignments(batch)
            case TopicDeletionsChanged():
                if self.active:
                    await self._load_topic_deletions()
                    await self._resume_deletions()
            case ApiPartitionReassignment(request=request, reply=reply):
                batch = self._batch()
                result = await self._intake().alter(request, batch)
                accepted = [(r.topic, r.partition) for r in result.results if r.error_code == 0]
                await self._sequenced().after_completions(accepted)  # the API supersedes them
                await self._after_reassignments(batch)
                if not reply.done():
                    reply.set_result(result)
            case CancelReassignmentsRequested(request=cancel, reply=reply):
                batch = self._batch()
                result = await self._intake().cancel(cancel, batch)
                accepted = [(r.topic, r.partition) for r in result.results if r.error_code == 0]
                await self._sequenced().after_completions(accepted)
                await self._after_reassignments(batch)
                if not reply.done():
                    reply.set_result(result)
            case CreateTopicsRequested(request=create, reply=topics_reply):
                created_result, created = await self._topics().create_topics(create)
                if created:
                    await self._add_topics(created)
                self._update_quota_metrics()
                if not topics_reply.done():
                    topics_reply.set_result(created_result)
            case CreatePartitionsRequested(request=expand, reply=topics_reply):
                expanded_result, added = await self._topics().create_partitions(expand)
                batch = self._batch()
                await self._online_partitions([(t, p) for t, ps in added.items() for p in ps], batch)
                self._send(batch)
                self._update_quota_metrics()
                if not topics_reply.done():
                    topics_reply.set_result(expanded_result)
            case DeleteTopicsRequested(request=delete, reply=topics_reply):
                deleted_result, queued = await self._topics().delete_topics(delete)
                self._require_ctx().topics_to_delete.update(queued)
                await self._resume_deletions()
                self._update_quota_metrics()
                if not topics_reply.done():
                    topics_reply.set_result(deleted_result)
            case AlterQuotasRequested(request=alter, reply=quotas_reply):
                results = await self._alter_quotas(alter)
                if not quotas_reply.done():
                    quotas_reply.set_result(results)
            case QuotaConfigChanged():
                if self.active:
                    await self._on_quota_config_changed()
            case StopReplicaConfirmed(broker_id=broker_id, request=stop, response=response):
                if self.active and self._deleter().confirmed(broker_id, stop, response):
                    await self._resume_deletions()
            case BatchSubmitRequested(spec=spec, reply=submit_reply, sizes=sizes):
                batch = self._batch()
                submitted = await self._runner().submit(spec, batch, sizes)
                await self._after_reassignments(batch)
                if not submit_reply.done():
                    submit_reply.set_result(submitted)
            case BatchControlRequested(batch_id=batch_id, action=action, reply=control_reply):
                batch = self._batch()
                controlled = await self._runner().control(batch_id, action, batch)
                await self._after_reassignments(batch)
                if not control_reply.done():
                    control_reply.set_result(controlled)
            case ExecutorTick():
                if self.active:
                    batch = self._batch()
                    await self._runner().tick(batch)
                    await self._after_reassignments(batch)
            case _:
                assert_never(event)

    def _on_session_state(self, state: SessionState) -> None:
        log.info("ZooKeeper session %s", state.value)
        if state is SessionState.EXPIRED:
            self.queue.put_first(SessionExpired())

    async def _elect_or_follow(self) -> None:
        """Win the election or follow the winner, with a watch on ``/controller`` either way.
        A ``/controller`` owned by this very session while this instance is not active (an
        election whose reply was lost, or a resignation whose delete did not reach ZooKeeper) is
        deleted and the election run again."""
        me = self.settings.controller_id
        while True:
            znode = await self.zk.get_or_none(
                paths.CONTROLLER, watch=self._watch(paths.CONTROLLER, ControllerChanged())
            )
            if znode is not None:
                info = self._decode_controller(znode.data)
                mine = znode.stat.ephemeral_owner == self.zk.session_id
                if self.active and mine and info is not None and info.broker_id == me:
                    break
                if self.active:
                    await self._resign("another controller was elected")
                    continue  # the resignation dropped the watch just armed: read again
                if mine:
                    log.warning(
                        "/controller is this session's own but the instance is not active: deleting it"
                    )
                    await election.delete_own(self.zk, znode.stat.version)
                    continue
                self._active_controller = (
                    None if info is None else ActiveController(info.broker_id, info.http)
                )
                self._epoch_seen, _ = await election.read_epoch(self.zk)
                break
            if self.active:
                await self._resign("/controller disappeared")
                continue
            won = await election.try_elect(self.zk, me, self.http_url)
            if won is not None:
                await self._become_active(won)
                break
        self._reelect_backoff_s = REELECT_BACKOFF_MIN_S

    async def _become_active(self, won: election.Won) -> None:
        log.info("elected as the active controller with epoch %d", won.epoch)
        self._epoch_seen = won.epoch
        self.events.start_epoch(won.epoch)
        self.events.emit("controller_elected", controller_id=self.settings.controller_id, epoch=won.epoch)
        self.ctx = ControllerContext(won.epoch, won.fence.version)
        self.writer = ZkWriter(self.zk, won.fence, self.ctx, self._report, self.events)
        self.reassigner = Reassigner(
            self.zk,
            self.ctx,
            self.writer,
            lambda tp: self._watch(paths.partition_state(*tp), PartitionStateChanged((tp,))),
            self._report,
        )
        self.intake = Intake(
            self.zk,
            self.ctx,
            self.writer,
            self.reassigner,
            lambda: self._watch(paths.REASSIGN_PARTITIONS, ZkPartitionReassignment()),
            lambda: self._watch(paths.REASSIGN_PARTITIONS_EXTRA, ExtraReassignment()),
            lambda: self._watch(paths.REASSIGN_CANCEL, ReassignCancel()),
            self._report,
        )
        self.sequenced = SequencedRequests(
            self.zk,
            self.ctx,
            self.writer,
            self.reassigner,
            self.intake,
            lambda: self._watch(paths.REASSIGNMENT_REQUESTS, ReassignmentRequests()),
            self._report,
        )
        self.quotas = QuotaManager(self.settings.quota_window_num, self.settings.quota_window_size_s)
        self.topics = TopicMutations(self.zk, self.ctx, self.writer, self.quotas, self._clock)
        self.deleter = TopicDeleter(self.zk, self.ctx, self.writer)
        self.runner = BatchRunner(
            self.zk,
            self.ctx,
            self.writer,
            self.reassigner,
            self.intake,
            self.settings,
            self._report,
            lambda: int(time.time() * 1000),
        )
        self._config_changes = ConfigChangeReader(self._report)
        self._active_controller = ActiveController(self.settings.controller_id, self.http_url)
        self.metrics.active.set(1)
        self.metrics.controller_epoch.set(won.epoch)
        self.metrics.elections.inc()
        started = self._clock()
        # Loading a large cluster allocates millions of long-lived objects; generational GC
        # passes over them again and again would dominate the failover. Pause it meanwhile.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            await self._on_controller_failover()
            self._publish()
        finally:
            if gc_was_enabled:
                gc.enable()
        self.last_failover_s = self._clock() - started

    async def _resign(self, reason: str) -> None:
        if self.ctx is None:
            return
        log.warning("resigning as the active controller: %s", reason)
        self.events.emit(
            "controller_resigned",
            controller_id=self.settings.controller_id,
            epoch=self.ctx.epoch,
            reason=reason,
        )
        self.ctx = None
        self.writer = None
        self.reassigner = None
        self.intake = None
        self.sequenced = None
        self.topics = None
        self.deleter = None
        self.runner = None
        self.quotas = None
        self._config_changes = None
        self._active_controller = None
        # watches armed for the active role would keep enqueuing its events: drop them all (the
        # next load arms what it needs) and re-arm the one a standby needs
        self.zk.drop_watches()
        self._armed.clear()
        self._topic_views.clear()
        self._reassignments.clear()
        self._offline_by_topic.clear()
        self.metrics.active.set(0)
        self.metrics.resignations.labels(reason).inc()
        for dropped in self.queue.clear():
            if isinstance(dropped, RequestEvent):
                self._fail(dropped, NotController())
        await self.channel.remove_all()

    async def _load_origins(self, ctx: ControllerContext) -> None:
        """The recorded replica order before each move (for the topics with moves in flight); a
        record that does not match a partition's ORS as a set is ignored."""
        moving = sorted({t for t, _ in ctx.reassigning})
        for topic, znode in zip(
            moving, await self.zk.get_many([paths.topic_origins(t) for t in moving]), strict=True
        ):
            if znode is None:
                continue
            ctx.origin_znodes.add(topic)
            try:
                recorded = codec.decode_origins(znode.data)
            except codec.CodecError as e:
                self._report(paths.topic_origins(topic), e.reason, "origins")
                continue
            ctx.origins[topic] = {
                p: r
                for p, r in recorded.items()
                if (a := ctx.assignment((topic, p))) is not None
                and a.is_being_reassigned
                and set(r) == set(a.original_replicas)
            }

    async def _on_controller_failover(self) -> None:
        """Kafka's onControllerFailover, in the order of Kafka's KafkaController."""
        ctx = self._require_ctx()
        phases: list[tuple[str, float]] = []
        mark = self._clock()

        def phase(name: str) -> None:
            nonlocal mark
            now = self._clock()
            phases.append((name, now - mark))
            mark = now

        await self._writer().ensure_cluster_id()
        stale = await self._children(paths.ISR_CHANGE_NOTIFICATION, IsrChangeNotified())
        if stale:
            await self._writer().delete_all([paths.isr_change(c) for c in stale])
        await self._load_brokers()
        phase("brokers")
        names = await self._children(paths.BROKER_TOPICS, TopicsChanged())
        znodes = await loader.read_topics(
            self.zk, names, lambda p: self._watch(p, PartitionsModified(paths.basename(p))), self._report
        )
        ctx.malformed_topics.update(set(names) - set(znodes))
        for topic, znode in znodes.items():
            ctx.put_topic(topic, znode.topic_id, loader.assignment_of(znode))
        phase("topics")
        all_tps = list(ctx.all_partitions())
        states, malformed = await loader.read_states(self.zk, all_tps, self._report)
        ctx.states.update(states)
        ctx.malformed_states.update(malformed)
        ctx.dirty_topics.update(znodes)
        await self._load_origins(ctx)
        phase("states")
        batch = ControlBatch(ctx, self.settings.controller_id)
        await self._online_partitions(all_tps, batch)
        for b in ctx.brokers:  # full LeaderAndIsr (KIP-516): each broker deletes its stray replicas
            batch.add_full_leader_and_isr(b)
        batch.add_update_metadata(ctx.states)
        phase("online")
        await self._load_topic_deletions()
        await self._load_quotas()
        # resume reassignments: the legacy znode first (it takes precedence, as in Kafka), then
        # pending KIP-236 requests in order, then every other partition with non-empty AR/RR
        intake, sequenced = self._intake(), self._sequenced()
        await sequenced.load_status()
        await intake.load_pending()
        await intake.on_cancel_znode(batch)
        await intake.on_legacy_znode(batch)
        await intake.on_extra_znode(batch)
        await sequenced.on_requests(batch)
        handled = intake.legacy_partitions() | set(sequenced.status)
        await self._reassigner().resume(sorted(ctx.reassigning - handled), batch)
        await self._reassigner().resume(sorted(set(sequenced.status) & ctx.reassigning), batch)
        await self._runner().load(batch)
        phase("reassignments")
        await self._after_reassignments(batch)
        phase("requests")
        await self._resume_deletions()
        log.info(
            "controller ready: %d brokers, %d topics, %d partitions (%d reassigning); %s",
            len(ctx.brokers),
            len(ctx.assignments),
            len(ctx.states),
            len(ctx.reassigning),
            ", ".join(f"{name} {took:.2f}s" for name, took in phases),
        )

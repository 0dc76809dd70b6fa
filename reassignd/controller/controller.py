"""The controller: election, failover, and the single consumer of the event queue.

Kafka's ZooKeeper-mode controller (KafkaController.scala) is the reference: one event at a time,
ZooKeeper written (fenced) before memory, watches re-armed by the handlers that re-read.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import logging
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import assert_never

from prometheus_client import CollectorRegistry

from reassignd.broker.protocol import ControlRequest, ControlResponse, StopReplicaRequest
from reassignd.controller import election, loader
from reassignd.controller.channel import ControlChannel
from reassignd.controller.context import ControllerContext, LeaderIsr
from reassignd.controller.deletion import TopicDeleter
from reassignd.controller.event_queue import EventQueue
from reassignd.controller.events import (
    AlterQuotasRequested,
    ApiPartitionReassignment,
    BrokerModified,
    BrokersChanged,
    CancelReassignmentsRequested,
    ControllerChanged,
    ControllerEvent,
    ControlRequestFailed,
    CreatePartitionsRequested,
    CreateTopicsRequested,
    DeleteTopicsRequested,
    ExtraReassignment,
    IsrChangeNotified,
    PartitionsModified,
    PartitionStateChanged,
    QuotaConfigChanged,
    ReassignCancel,
    ReassignmentRequests,
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
from reassignd.controller.metrics import ControllerMetrics
from reassignd.controller.partition_logic import after_broker_failure, initial_state, offline_election
from reassignd.controller.reassignment import Reassigner
from reassignd.controller.request_batch import ControlBatch
from reassignd.controller.requests import (
    AlterQuotas,
    AlterReassignments,
    AlterResult,
    CancelReassignments,
    CreatePartitions,
    CreateTopics,
    DeleteTopics,
    QuotaAlterationResult,
    QuotaDescription,
    TopicResult,
    TopicsResult,
)
from reassignd.controller.sequenced import SequencedRequests
from reassignd.controller.settings import ControllerSettings
from reassignd.controller.snapshot import (
    ActiveController,
    ClusterSnapshot,
    Problem,
    ReassignmentView,
    TopicView,
)
from reassignd.controller.topics import TopicMutations
from reassignd.controller.writer import ZkWriter
from reassignd.errors import NotController, ReassigndError, RequestTimedOut
from reassignd.quotas.config_changes import ConfigChangeReader, reread_quota_entities
from reassignd.quotas.config_store import alter_quota, describe_quotas, load_quota_configs
from reassignd.quotas.entities import ConfigKey
from reassignd.quotas.manager import QuotaManager
from reassignd.quotas.metrics import QuotaMetrics
from reassignd.zk import codec, paths
from reassignd.zk.client import (
    NotControllerError,
    SessionState,
    WatchCallback,
    ZkClient,
    ZkError,
)

log = logging.getLogger(__name__)

TopicPartition = codec.TopicPartition
Decide = Callable[[TopicPartition, LeaderIsr], codec.PartitionState | None]

MAX_PROBLEMS = 100
STATE_WRITE_CONCURRENCY = 1024


class Controller:
    """One controller instance (active or standby). Implements the HTTP layer's ControllerView."""

    def __init__(
        self,
        settings: ControllerSettings,
        zk: ZkClient,
        metrics: ControllerMetrics | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.zk = zk
        self.metrics = metrics or ControllerMetrics()
        self.http_url: str | None = None
        self._clock = clock
        self._started_at = clock()
        self.queue: EventQueue[ControllerEvent] = EventQueue(clock, on_size=self.metrics.event_queue_size.set)
        self.ctx: ControllerContext | None = None
        self.writer: ZkWriter | None = None
        self.reassigner: Reassigner | None = None
        self.intake: Intake | None = None
        self.sequenced: SequencedRequests | None = None
        self.topics: TopicMutations | None = None
        self.deleter: TopicDeleter | None = None
        self.quotas: QuotaManager | None = None
        self._quota_configs: dict[ConfigKey, float] = {}
        self._config_changes: ConfigChangeReader | None = None
        self.quota_metrics = QuotaMetrics(self.metrics.registry)
        self._active_controller: ActiveController | None = None
        self._epoch_seen = 0
        self._armed: set[tuple[str, str]] = set()
        self._problems: collections.deque[Problem] = collections.deque(maxlen=MAX_PROBLEMS)
        self._reported: dict[str, str] = {}  # path -> reason, so a re-read is not a new problem
        self._topic_views: dict[str, TopicView] = {}
        self._reassignments: dict[TopicPartition, ReassignmentView] = {}
        self._snapshot = ClusterSnapshot(settings.controller_id, False, 0, None)
        self.last_failover_s: float | None = None  # election won -> ready, for the benchmark
        self.channel = ControlChannel(
            request_timeout_s=settings.control_request_timeout_s,
            backoff_ms=settings.control_retry_backoff_ms,
            backoff_max_ms=settings.control_retry_backoff_max_ms,
            metrics=self.metrics,
            on_response=self._on_control_response,
        )

    # --- ControllerView -------------------------------------------------------------------------

    def snapshot(self) -> ClusterSnapshot:
        return self._snapshot

    @property
    def zk_connected(self) -> bool:
        return self.zk.connected

    @property
    def zk_session_id(self) -> int | None:
        return self.zk.session_id

    def queue_size(self) -> int:
        return len(self.queue)

    def queue_time_percentiles_ms(self) -> Mapping[str, float]:
        return self.queue.queue_time_percentiles_ms()

    @property
    def metrics_registry(self) -> CollectorRegistry:
        return self.metrics.registry

    @property
    def started_at_s(self) -> float:
        return self._started_at

    @property
    def active(self) -> bool:
        return self.ctx is not None

    # --- the event loop -------------------------------------------------------------------------

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
        except ZkError as e:
            log.error("ZooKeeper error while handling %s (event abandoned): %s", event_name(event), e)
            if isinstance(event, RequestEvent):
                self._fail(event, ReassigndError(f"ZooKeeper error: {e}"))
        except Exception as e:
            log.exception("unexpected error while handling %s (event abandoned)", event_name(event))
            if isinstance(event, RequestEvent):
                self._fail(event, ReassigndError(f"unexpected error: {e}"))
        finally:
            self.metrics.event_time_ms.labels(event_name(event)).observe((self._clock() - started) * 1000)
            self._publish()

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
                if self.active:
                    await self._resign("session expired")
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
            case _:
                assert_never(event)

    def _on_session_state(self, state: SessionState) -> None:
        log.info("ZooKeeper session %s", state.value)
        if state is SessionState.EXPIRED:
            self.queue.put_first(SessionExpired())

    def _on_control_response(
        self, broker_id: int, request: ControlRequest, response: ControlResponse
    ) -> None:
        if isinstance(request, StopReplicaRequest) and any(p.delete_partition for p in request.partitions):
            self.queue.put(StopReplicaConfirmed(broker_id, request, response))
        for err in response.partition_errors:
            if err.error_code != 0:
                log.debug("broker %d: %s-%d error %d", broker_id, err.topic, err.partition, err.error_code)

    # --- watches and problems -------------------------------------------------------------------

    def _watch(self, path: str, event: ControllerEvent) -> WatchCallback | None:
        """A one-shot callback enqueuing ``event``, or None when one is armed on ``path`` already."""
        key = (event_name(event), path)
        if key in self._armed:
            return None
        self._armed.add(key)

        def fire(_: str) -> None:
            self._armed.discard(key)
            self.queue.put(event)

        return fire

    async def _children(self, path: str, event: ControllerEvent) -> list[str]:
        cb = self._watch(path, event)
        try:
            return await self.zk.children(path, watch=cb)
        except BaseException:
            self._armed.discard((event_name(event), path))
            raise

    def _report(self, path: str, reason: str, kind: str) -> None:
        if self._reported.get(path) == reason:
            log.debug("malformed znode %s still skipped: %s", path, reason)
            return
        self._reported[path] = reason
        log.error("malformed znode %s skipped: %s", path, reason)
        self.metrics.decode_errors.labels(kind).inc()
        self._problems.appendleft(Problem(path, reason, int(time.time() * 1000)))

    # --- election -------------------------------------------------------------------------------

    async def _elect_or_follow(self) -> None:
        me = self.settings.controller_id
        while True:
            cb = self._watch(paths.CONTROLLER, ControllerChanged())
            try:
                znode = await self.zk.get_or_none(paths.CONTROLLER, watch=cb)
            except BaseException:
                self._armed.discard((event_name(ControllerChanged()), paths.CONTROLLER))
                raise
            if znode is not None:
                info = self._decode_controller(znode.data)
                mine = (
                    znode.stat.ephemeral_owner == self.zk.session_id
                    and info is not None
                    and info.broker_id == me
                )
                if self.active and mine:
                    return
                if self.active:
                    await self._resign("another controller was elected")
                self._active_controller = (
                    None if info is None else ActiveController(info.broker_id, info.http)
                )
                self._epoch_seen, _ = await election.read_epoch(self.zk)
                return
            if self.active:
                await self._resign("/controller disappeared")
            won = await election.try_elect(self.zk, me, self.http_url)
            if won is not None:
                await self._become_active(won)
                return

    def _decode_controller(self, data: bytes | None) -> codec.ControllerInfo | None:
        try:
            return codec.decode_controller(data)
        except codec.CodecError as e:
            self._report(paths.CONTROLLER, e.reason, "controller")
            return None

    async def _become_active(self, won: election.Won) -> None:
        log.info("elected as the active controller with epoch %d", won.epoch)
        self._epoch_seen = won.epoch
        self.ctx = ControllerContext(won.epoch, won.fence.version)
        self.writer = ZkWriter(self.zk, won.fence, self.ctx, self._report)
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
        self.ctx = None
        self.writer = None
        self.reassigner = None
        self.intake = None
        self.sequenced = None
        self.topics = None
        self.deleter = None
        self.quotas = None
        self._config_changes = None
        self._active_controller = None
        self._topic_views.clear()
        self._reassignments.clear()
        self.metrics.active.set(0)
        self.metrics.resignations.labels(reason).inc()
        for dropped in self.queue.clear():
            if isinstance(dropped, RequestEvent):
                self._fail(dropped, NotController())
        await self.channel.remove_all()

    # --- ZooKeeper writes (fenced) ----------------------------------------------------------------

    def _require_ctx(self) -> ControllerContext:
        if self.ctx is None:
            raise NotControllerError("not the active controller")
        return self.ctx

    def _writer(self) -> ZkWriter:
        if self.writer is None:
            raise NotControllerError("not the active controller")
        return self.writer

    def _reassigner(self) -> Reassigner:
        if self.reassigner is None:
            raise NotControllerError("not the active controller")
        return self.reassigner

    def _intake(self) -> Intake:
        if self.intake is None:
            raise NotControllerError("not the active controller")
        return self.intake

    def _sequenced(self) -> SequencedRequests:
        if self.sequenced is None:
            raise NotControllerError("not the active controller")
        return self.sequenced

    def _topics(self) -> TopicMutations:
        if self.topics is None:
            raise NotControllerError("not the active controller")
        return self.topics

    def _deleter(self) -> TopicDeleter:
        if self.deleter is None:
            raise NotControllerError("not the active controller")
        return self.deleter

    def _batch(self) -> ControlBatch:
        return ControlBatch(self._require_ctx(), self.settings.controller_id)

    async def _after_reassignments(self, batch: ControlBatch) -> None:
        """End of an event that ran the reassignment algorithm: completed partitions leave the
        legacy znode, and every request of the event goes out."""
        completed = bool(self._reassigner().completed)
        await self._sequenced().after_completions(list(self._reassigner().completed))
        await self._intake().after_completions()
        self._send(batch)
        if completed and self._require_ctx().topics_to_delete:
            await self._resume_deletions()

    @staticmethod
    def _fail(event: RequestEvent, error: ReassigndError) -> None:
        if not event.reply.done():
            event.reply.set_exception(error)

    async def _request(self, make: Callable[[asyncio.Future[AlterResult]], RequestEvent]) -> AlterResult:
        if not self.active:
            raise NotController()
        reply: asyncio.Future[AlterResult] = asyncio.get_running_loop().create_future()
        self.queue.put(make(reply))
        return await reply

    async def alter_reassignments(self, request: AlterReassignments) -> AlterResult:
        return await self._request(lambda reply: ApiPartitionReassignment(request, reply))

    async def _topics_request(
        self, make: Callable[[asyncio.Future[TopicsResult]], RequestEvent]
    ) -> TopicsResult:
        if not self.active:
            raise NotController()
        reply: asyncio.Future[TopicsResult] = asyncio.get_running_loop().create_future()
        self.queue.put(make(reply))
        return await reply

    async def create_topics(self, request: CreateTopics) -> TopicsResult:
        result = await self._topics_request(lambda reply: CreateTopicsRequested(request, reply))
        if request.validate_only:
            return result
        return await self._await_done(result, request.timeout_ms, self._topic_online)

    async def create_partitions(self, request: CreatePartitions) -> TopicsResult:
        result = await self._topics_request(lambda reply: CreatePartitionsRequested(request, reply))
        if request.validate_only:
            return result
        return await self._await_done(result, request.timeout_ms, self._topic_online)

    async def delete_topics(self, request: DeleteTopics) -> TopicsResult:
        result = await self._topics_request(lambda reply: DeleteTopicsRequested(request, reply))
        return await self._await_done(result, request.timeout_ms, lambda t: t not in self._snapshot.topics)

    def _topic_online(self, topic: str) -> bool:
        view = self._snapshot.topics.get(topic)
        return view is not None and all(p.leader >= 0 for p in view.partitions)

    async def _await_done(
        self, result: TopicsResult, timeout_ms: int, done: Callable[[str], bool]
    ) -> TopicsResult:
        """Wait (outside the event loop's consumer) until each accepted topic is done; the ones
        that are not by ``timeout_ms`` answer 7 REQUEST_TIMED_OUT (the operation continues)."""
        deadline = self._clock() + timeout_ms / 1000
        waiting = {r.name for r in result.results if r.error_code == 0}
        while waiting and self._clock() < deadline:
            waiting = {t for t in waiting if not done(t)}
            if waiting:
                await asyncio.sleep(0.02)
        waiting = {t for t in waiting if not done(t)}
        if not waiting:
            return result
        timed_out = RequestTimedOut()
        return TopicsResult(
            tuple(
                TopicResult(r.name, timed_out.error_code, timed_out.message) if r.name in waiting else r
                for r in result.results
            ),
            result.throttle_time_ms,
        )

    async def alter_quotas(self, request: AlterQuotas) -> tuple[QuotaAlterationResult, ...]:
        if not self.active:
            raise NotController()
        reply: asyncio.Future[tuple[QuotaAlterationResult, ...]] = asyncio.get_running_loop().create_future()
        self.queue.put(AlterQuotasRequested(request, reply))
        return await reply

    async def describe_quotas(self, user: str | None, client_id: str | None) -> tuple[QuotaDescription, ...]:
        entries = await describe_quotas(self.zk, user, client_id, self._report)
        return tuple(QuotaDescription(e.user, e.client_id, tuple(sorted(e.values.items()))) for e in entries)

    async def cancel_reassignments(self, request: CancelReassignments) -> AlterResult:
        return await self._request(lambda reply: CancelReassignmentsRequested(request, reply))

    def _send(self, batch: ControlBatch) -> None:
        for broker_id, requests in batch.build().items():
            for request in requests:
                self.channel.send(broker_id, request)

    # --- failover ---------------------------------------------------------------------------------

    async def _on_controller_failover(self) -> None:
        """Kafka's onControllerFailover, in the order of CONTROLLER.md."""
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
        phase("states")
        batch = ControlBatch(ctx, self.settings.controller_id)
        await self._online_partitions(all_tps, batch)
        for topic, parts in ctx.assignments.items():
            for p, a in parts.items():
                if (topic, p) in ctx.states:
                    batch.add_leader_and_isr(a.replicas, (topic, p))
        batch.add_update_metadata(ctx.states)
        phase("online")
        await self._load_topic_deletions()
        await self._load_quotas()
        # resume reassignments: the legacy znode first (it takes precedence, as in Kafka), then
        # pending KIP-236 requests in order, then every other partition with non-empty AR/RR
        intake, sequenced = self._intake(), self._sequenced()
        await sequenced.load_status()
        await intake.on_cancel_znode(batch)
        await intake.on_legacy_znode(batch)
        await intake.on_extra_znode(batch)
        await sequenced.on_requests(batch)
        handled = intake.legacy_partitions() | set(sequenced.status)
        await self._reassigner().resume(sorted(ctx.reassigning - handled), batch)
        await self._reassigner().resume(sorted(set(sequenced.status) & ctx.reassigning), batch)
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

    async def _online_partitions(self, tps: Iterable[TopicPartition], batch: ControlBatch) -> None:
        """Kafka's triggerOnlinePartitionStateChange for ``tps``: create the state of new
        partitions (leader = first live replica), elect a leader for offline ones."""
        ctx = self._require_ctx()
        live = ctx.live_broker_ids
        new_by_topic: dict[str, dict[int, codec.PartitionState]] = collections.defaultdict(dict)
        offline: list[TopicPartition] = []
        for tp in tps:
            a = ctx.assignment(tp)
            if a is None or tp in ctx.malformed_states:
                continue
            li = ctx.states.get(tp)
            if li is None:
                state = initial_state(a.replicas, live, ctx.epoch)
                if state is None:
                    log.warning("partition %s-%d has no live replica; it stays offline", *tp)
                else:
                    new_by_topic[tp[0]][tp[1]] = state
            elif li.state.leader not in live:
                offline.append(tp)
        for topic, new_states in new_by_topic.items():
            for p in await self._writer().create_states(topic, new_states):
                a = ctx.assignment((topic, p))
                assert a is not None
                batch.add_leader_and_isr(a.replicas, (topic, p), is_new=True)
                batch.add_update_metadata([(topic, p)])
        elected = await self._writer().update_states(
            offline, lambda tp, li: offline_election(self._replicas(tp), li.state, live, ctx.epoch)
        )
        for tp in elected:
            batch.add_leader_and_isr(self._replicas(tp), tp)
            batch.add_update_metadata([tp])

    def _replicas(self, tp: TopicPartition) -> tuple[int, ...]:
        a = self._require_ctx().assignment(tp)
        return () if a is None else a.replicas

    # --- brokers ------------------------------------------------------------------------------------

    async def _read_brokers(self, ids: Iterable[int]) -> dict[int, tuple[codec.BrokerRegistration, int]]:
        async def one(b: int) -> tuple[int, tuple[codec.BrokerRegistration, int] | None]:
            path = paths.broker(b)
            cb = self._watch(path, BrokerModified(b))
            try:
                return b, await loader.read_broker(self.zk, b, cb, self._report)
            except BaseException:
                self._armed.discard((event_name(BrokerModified(b)), path))
                raise

        results = await asyncio.gather(*(one(b) for b in ids))
        return {b: r for b, r in results if r is not None}

    async def _load_brokers(self) -> None:
        ctx = self._require_ctx()
        ids = loader.parse_ids(
            await self._children(paths.BROKER_IDS, BrokersChanged()), paths.BROKER_IDS, self._report
        )
        for reg, epoch in (await self._read_brokers(ids)).values():
            self._add_live_broker(ctx, reg, epoch)

    def _add_live_broker(self, ctx: ControllerContext, reg: codec.BrokerRegistration, epoch: int) -> None:
        ctx.add_broker(reg, epoch)
        url = reg.control_url
        if url is None:
            log.warning(
                "broker %d registered no CONTROL endpoint; it cannot receive control requests", reg.broker_id
            )
        else:
            self.channel.add_broker(reg.broker_id, url)

    async def _on_brokers_changed(self) -> None:
        ctx = self._require_ctx()
        ids = loader.parse_ids(
            await self._children(paths.BROKER_IDS, BrokersChanged()), paths.BROKER_IDS, self._report
        )
        current = await self._read_brokers(ids)
        known = dict(ctx.broker_epochs)
        dead = set(known) - set(current)
        new = set(current) - set(known)
        bounced = {b for b in set(current) & set(known) if current[b][1] > known[b]}
        if not (dead or new or bounced):
            return
        log.info("brokers changed: new %s, dead %s, bounced %s", sorted(new), sorted(dead), sorted(bounced))
        for b in dead | bounced:
            ctx.remove_broker(b)
            await self.channel.remove_broker(b)
        if dead | bounced:
            await self._on_broker_failure(dead | bounced)
        for b in new | bounced:
            reg, epoch = current[b]
            self._add_live_broker(ctx, reg, epoch)
        if new | bounced:
            await self._on_broker_startup(new | bounced)

    async def _on_broker_modified(self, broker_id: int) -> None:
        ctx = self._require_ctx()
        found = await self._read_brokers([broker_id])
        if broker_id not in found or broker_id not in ctx.brokers:
            return  # gone or new: BrokersChanged handles it
        reg, epoch = found[broker_id]
        if epoch != ctx.broker_epochs[broker_id]:
            return  # bounced: BrokersChanged handles it
        if reg != ctx.brokers[broker_id]:
            self._add_live_broker(ctx, reg, epoch)
            batch = ControlBatch(ctx, self.settings.controller_id)
            batch.add_update_metadata([])
            self._send(batch)

    async def _on_broker_failure(self, dead: Collection[int]) -> None:
        """Kafka's onBrokerFailure: replicas on dead brokers go offline; partitions they led
        elect a new leader; dead replicas leave the ISR (never emptying it)."""
        ctx = self._require_ctx()
        live = ctx.live_broker_ids
        affected = [
            tp
            for tp, li in ctx.states.items()
            if li.state.leader in dead or any(r in dead for r in li.state.isr)
        ]
        changed = await self._writer().update_states(
            affected, lambda tp, li: after_broker_failure(self._replicas(tp), li.state, live, ctx.epoch)
        )
        batch = ControlBatch(ctx, self.settings.controller_id)
        for tp in changed:
            batch.add_leader_and_isr(self._replicas(tp), tp)
        batch.add_update_metadata(changed)
        self._send(batch)

    async def _on_broker_startup(self, started: Collection[int]) -> None:
        """Kafka's onBrokerStartup: full metadata to the new brokers, the new live-broker list to
        the others, LeaderAndIsr for the new brokers' replicas, then offline partitions online."""
        ctx = self._require_ctx()
        batch = ControlBatch(ctx, self.settings.controller_id)
        batch.add_update_metadata(ctx.states, brokers=started)
        batch.add_update_metadata([], brokers=set(ctx.brokers) - set(started))
        for b in started:
            for tp in ctx.partitions_on_broker(b):
                batch.add_leader_and_isr([b], tp)
        live = ctx.live_broker_ids
        needs_online = [
            tp
            for tp in ctx.all_partitions()
            if (li := ctx.states.get(tp)) is None or li.state.leader not in live
        ]
        await self._online_partitions(needs_online, batch)
        reassigner = self._reassigner()
        await reassigner.resume(reassigner.partitions_targeting(started), batch)
        self._deleter().on_broker_started(set(started), batch)
        await self._after_reassignments(batch)

    # --- topics ---------------------------------------------------------------------------------------

    async def _on_topics_changed(self) -> None:
        ctx = self._require_ctx()
        names = set(await self._children(paths.BROKER_TOPICS, TopicsChanged()))
        known = set(ctx.assignments)
        for gone in known - names:
            log.info("topic %s was removed", gone)
            ctx.remove_topic(gone)
        ctx.malformed_topics &= names
        new = sorted(names - known - ctx.malformed_topics)
        if new:
            await self._add_topics(new)

    async def _add_topics(self, names: list[str]) -> None:
        """Topics that appeared (or whose malformed znode was fixed): load and bring online."""
        ctx = self._require_ctx()
        znodes = await loader.read_topics(
            self.zk, names, lambda p: self._watch(p, PartitionsModified(paths.basename(p))), self._report
        )
        ctx.malformed_topics.update(set(names) - set(znodes))
        for topic, znode in znodes.items():
            ctx.put_topic(topic, znode.topic_id, loader.assignment_of(znode))
        tps = [(t, p) for t in znodes for p in ctx.assignments[t]]
        states, malformed = await loader.read_states(self.zk, tps, self._report)
        for tp, li in states.items():
            ctx.set_state(tp, li)
        ctx.malformed_states.update(malformed)
        batch = ControlBatch(ctx, self.settings.controller_id)
        for tp in states:
            batch.add_leader_and_isr(self._replicas(tp), tp)
            batch.add_update_metadata([tp])
        await self._online_partitions(tps, batch)
        self._send(batch)
        if znodes:
            log.info("new topics %s: %d partitions", sorted(znodes), len(tps))

    async def _on_partitions_modified(self, topic: str) -> None:
        ctx = self._require_ctx()
        if topic in ctx.malformed_topics:
            ctx.malformed_topics.discard(topic)
            await self._add_topics([topic])
            return
        znode = await loader.read_topic(
            self.zk, topic, self._watch(paths.topic(topic), PartitionsModified(topic)), self._report
        )
        if znode is None or topic not in ctx.assignments:
            return
        current = ctx.assignments[topic]
        incoming = loader.assignment_of(znode)
        added = sorted(set(incoming) - set(current))
        for p, a in incoming.items():
            if p in current and a != current[p]:
                log.warning(
                    "topic znode %s changed partition %d outside the controller (%s -> %s); ignored, as Kafka does",
                    topic,
                    p,
                    current[p],
                    a,
                )
        if not added:
            return
        for p in added:
            ctx.set_assignment((topic, p), incoming[p])
        tps = [(topic, p) for p in added]
        states, malformed = await loader.read_states(self.zk, tps, self._report)
        for tp, li in states.items():
            ctx.set_state(tp, li)
        ctx.malformed_states.update(malformed)
        batch = ControlBatch(ctx, self.settings.controller_id)
        await self._online_partitions(tps, batch)
        self._send(batch)
        log.info("topic %s: new partitions %s", topic, added)

    # --- ISR changes ----------------------------------------------------------------------------------

    async def _on_isr_change_notified(self) -> None:
        ctx = self._require_ctx()
        children = await self._children(paths.ISR_CHANGE_NOTIFICATION, IsrChangeNotified())
        if not children:
            return
        notification_paths = [paths.isr_change(c) for c in children]
        znodes = await self.zk.get_many(notification_paths)
        tps: set[TopicPartition] = set()
        for path, znode in zip(notification_paths, znodes, strict=True):
            if znode is None:
                continue
            try:
                tps.update(codec.decode_isr_change(znode.data))
            except codec.CodecError as e:
                self._report(path, e.reason, "isr_change_notification")
        await self._writer().delete_all(
            [p for p, z in zip(notification_paths, znodes, strict=True) if z is not None]
        )
        known = [tp for tp in tps if ctx.assignment(tp) is not None]
        states, _ = await loader.read_states(self.zk, known, self._report)
        for tp, li in states.items():
            ctx.set_state(tp, li)
        batch = ControlBatch(ctx, self.settings.controller_id)
        batch.add_update_metadata(states)
        await self._reassigner().check(states, batch)
        await self._after_reassignments(batch)

    async def _resume_deletions(self) -> None:
        batch = self._batch()
        await self._deleter().resume(batch)
        self._send(batch)

    async def _load_quotas(self) -> None:
        reader = self._config_changes
        assert reader is not None and self.quotas is not None
        await reader.skip_existing(
            self.zk, time.time(), self._watch(paths.CONFIG_CHANGES, QuotaConfigChanged())
        )
        self._quota_configs = await load_quota_configs(self.zk, self._report)
        self.quotas.set_quotas(self._quota_configs)
        self._update_quota_metrics()

    async def _on_quota_config_changed(self) -> None:
        reader = self._config_changes
        assert reader is not None and self.quotas is not None
        changes = await reader.read(
            self.zk, time.time(), self._watch(paths.CONFIG_CHANGES, QuotaConfigChanged())
        )
        if changes.quota_entities:
            self._quota_configs = await reread_quota_entities(
                self.zk, changes, self._quota_configs, self._report
            )
            self.quotas.set_quotas(self._quota_configs)
            log.info("quota configs changed: %s", list(changes.quota_entities))
        self._update_quota_metrics()

    async def _alter_quotas(self, request: AlterQuotas) -> tuple[QuotaAlterationResult, ...]:
        """AlterClientQuotas: each entity's znode and a change notification (fenced); the
        change applies through the notification, as for any Kafka-compatible tool."""
        writer = self._writer()
        results = []
        for entry in request.entries:
            try:
                await alter_quota(
                    self.zk, entry.user, entry.client_id, entry.controller_mutation_rate, fence=writer.fence
                )
                results.append(QuotaAlterationResult(entry.user, entry.client_id))
            except NotControllerError:
                raise
            except ReassigndError as e:
                results.append(QuotaAlterationResult(entry.user, entry.client_id, e.error_code, e.message))
        await self._on_quota_config_changed()
        return tuple(results)

    def _update_quota_metrics(self) -> None:
        if self.quotas is not None:
            self.quota_metrics.update(self.quotas.snapshot(self._clock()))

    async def _load_topic_deletions(self) -> None:
        """The topics queued in /admin/delete_topics: they take no new reassignment (error 3)."""
        ctx = self._require_ctx()
        ctx.topics_to_delete = set(await self._children(paths.DELETE_TOPICS, TopicDeletionsChanged()))

    # --- the snapshot the HTTP layer reads -------------------------------------------------------------

    def _reassignment_views(self, ctx: ControllerContext, topics: Iterable[str]) -> None:
        """Refresh the ListPartitionReassignments views of ``topics`` (the dirty ones)."""
        meta = self.reassigner.meta if self.reassigner is not None else {}
        views = self._reassignments
        for topic in topics:
            for p, a in ctx.assignments.get(topic, {}).items():
                tp = (topic, p)
                if tp not in ctx.reassigning:
                    views.pop(tp, None)
                    continue
                m = meta.get(tp)
                li = ctx.states.get(tp)
                views[tp] = ReassignmentView(
                    topic=topic,
                    partition=p,
                    replicas=a.replicas,
                    adding_replicas=a.adding,
                    removing_replicas=a.removing,
                    target_replicas=a.target_replicas,
                    original_replicas=a.original_replicas,
                    source=m.source.value if m else "api",
                    started_at_ms=m.started_at_ms if m else None,
                    leader=li.state.leader if li else -1,
                )
            if topic not in ctx.assignments:
                for tp in [tp for tp in views if tp[0] == topic]:
                    del views[tp]

    def _publish(self) -> None:
        ctx = self.ctx
        if ctx is None:
            self._snapshot = ClusterSnapshot(
                self.settings.controller_id,
                False,
                self._epoch_seen,
                self._active_controller,
                problems=tuple(self._problems),
            )
            self.metrics.partitions.set(0)
            self.metrics.reassigning_partitions.set(0)
            return
        self._reassignment_views(ctx, ctx.dirty_topics)
        for topic in ctx.dirty_topics:
            view = ctx.topic_view(topic)
            if view is None:
                self._topic_views.pop(topic, None)
            else:
                self._topic_views[topic] = view
        ctx.dirty_topics.clear()
        self._snapshot = ClusterSnapshot(
            self.settings.controller_id,
            True,
            ctx.epoch,
            self._active_controller,
            brokers={b: ctx.broker_view(b) for b in sorted(ctx.brokers)},
            topics=dict(self._topic_views),
            problems=tuple(self._problems),
            reassignments=dict(sorted(self._reassignments.items())),
        )
        self.metrics.partitions.set(len(ctx.states))
        self.metrics.reassigning_partitions.set(len(ctx.reassigning))
        self.metrics.live_brokers.set(len(ctx.brokers))
        self.metrics.offline_partitions.set(ctx.offline_partition_count())

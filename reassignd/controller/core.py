"""The controller's state, its helpers and the snapshot it publishes (the base of ``Controller``).

Everything here is shared by the event handlers layered on top: watch arming, problem reports,
the active controller's parts (context, writer, reassigner, intakes), request batching and the
immutable snapshot HTTP handlers read.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable, Iterable, Mapping

from prometheus_client import CollectorRegistry

from reassignd.control.protocol import ControlRequest, ControlResponse, StopReplicaRequest
from reassignd.controller.batches import BatchRunner
from reassignd.controller.channel import ControlChannel
from reassignd.controller.context import ControllerContext
from reassignd.controller.deletion import TopicDeleter
from reassignd.controller.event_queue import EventQueue
from reassignd.controller.events import (
    ControllerEvent,
    RequestEvent,
    StopReplicaConfirmed,
    event_name,
)
from reassignd.controller.intake import Intake
from reassignd.controller.metrics import ControllerMetrics
from reassignd.controller.reassignment import Reassigner
from reassignd.controller.request_batch import ControlBatch
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
from reassignd.errors import ReassigndError
from reassignd.events.history import EventLog
from reassignd.executor.model import BatchState, MoveState
from reassignd.quotas.config_changes import ConfigChangeReader
from reassignd.quotas.entities import ConfigKey
from reassignd.quotas.manager import QuotaManager
from reassignd.quotas.metrics import QuotaMetrics
from reassignd.topic_partition import TopicPartition
from reassignd.zk import codec, paths
from reassignd.zk.client import (
    NotControllerError,
    WatchCallback,
    ZkClient,
)

log = logging.getLogger(__name__)


MAX_PROBLEMS = 100


class ControllerCore:
    """One controller instance's state and shared helpers."""

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
        self.runner: BatchRunner | None = None
        self.quotas: QuotaManager | None = None
        self._quota_configs: dict[ConfigKey, float] = {}
        self._config_changes: ConfigChangeReader | None = None
        self.quota_metrics = QuotaMetrics(self.metrics.registry)
        self._active_controller: ActiveController | None = None
        self._epoch_seen = 0
        self._armed: dict[tuple[str, str], WatchCallback] = {}
        self._reelect_timer: asyncio.TimerHandle | None = None
        self._reelect_backoff_s = 0.1
        self._executor_timer: asyncio.TimerHandle | None = None
        self._problems: collections.deque[Problem] = collections.deque(maxlen=MAX_PROBLEMS)
        # what this instance decided, as event records (GET /v1/events, the Kafka stream)
        self.events = EventLog()
        self._reported: dict[str, str] = {}  # path -> reason, so a re-read is not a new problem
        self._topic_views: dict[str, TopicView] = {}
        self._reassignments: dict[TopicPartition, ReassignmentView] = {}
        self._offline_by_topic: dict[str, int] = {}
        self._live_counted: frozenset[int] = frozenset()
        self._snapshot = ClusterSnapshot(settings.controller_id, False, 0, None)
        self.last_failover_s: float | None = None  # election won -> ready, for the benchmark
        self.channel = ControlChannel(
            request_timeout_s=settings.control_request_timeout_s,
            backoff_ms=settings.control_retry_backoff_ms,
            backoff_max_ms=settings.control_retry_backoff_max_ms,
            metrics=self.metrics,
            on_response=self._on_control_response,
        )

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

    def _on_control_response(
        self, broker_id: int, request: ControlRequest, response: ControlResponse
    ) -> None:
        if isinstance(request, StopReplicaRequest) and any(p.delete_partition for p in request.partitions):
            self.queue.put(StopReplicaConfirmed(broker_id, request, response))
        for err in response.partition_errors:
            if err.error_code != 0:
                log.debug("broker %d: %s-%d error %d", broker_id, err.topic, err.partition, err.error_code)

    def _watch(self, path: str, event: ControllerEvent) -> WatchCallback | None:
        """A one-shot callback enqueuing ``event``, or None when one is armed on ``path`` already.

        "Armed" is what the ZooKeeper client says: a callback whose read failed, found no znode
        (data and children reads) or was dropped at a resignation no longer counts, so the next
        read arms a fresh one instead of leaving the path unwatched."""
        key = (event_name(event), path)
        previous = self._armed.get(key)
        if previous is not None and self.zk.watching(previous):
            return None

        def fire(_: str) -> None:
            if self._armed.get(key) is fire:
                del self._armed[key]
            self.queue.put(event)

        self._armed[key] = fire
        return fire

    async def _children(self, path: str, event: ControllerEvent) -> list[str]:
        return await self.zk.children(path, watch=self._watch(path, event))

    def _report(self, path: str, reason: str, kind: str) -> None:
        if self._reported.get(path) == reason:
            log.debug("malformed znode %s still skipped: %s", path, reason)
            return
        self._reported[path] = reason
        log.error("malformed znode %s skipped: %s", path, reason)
        self.metrics.decode_errors.labels(kind).inc()
        self._problems.appendleft(Problem(path, reason, int(time.time() * 1000)))
        self.events.emit("problem_reported", path=path, reason=reason, kind=kind)

    def _decode_controller(self, data: bytes | None) -> codec.ControllerInfo | None:
        try:
            return codec.decode_controller(data)
        except codec.CodecError as e:
            self._report(paths.CONTROLLER, e.reason, "controller")
            return None

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

    def _runner(self) -> BatchRunner:
        if self.runner is None:
            raise NotControllerError("not the active controller")
        return self.runner

    def _batch(self) -> ControlBatch:
        return ControlBatch(self._require_ctx(), self.settings.controller_id)

    @staticmethod
    def _fail(event: RequestEvent, error: ReassigndError) -> None:
        if not event.reply.done():
            event.reply.set_exception(error)

    def _send(self, batch: ControlBatch) -> None:
        for broker_id, requests in batch.build().items():
            for request in requests:
                self.channel.send(broker_id, request)

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
                    # the exact order recorded before the move (Kafka's RS − AR may reorder it)
                    original_replicas=ctx.origins.get(topic, {}).get(p) or a.original_replicas,
                    source=m.source.value if m else "api",
                    started_at_ms=m.started_at_ms if m else None,
                    leader=li.state.leader if li else -1,
                )
            if topic not in ctx.assignments:
                for tp in [tp for tp in views if tp[0] == topic]:
                    del views[tp]

    def _count_offline(self, ctx: ControllerContext, dirty: set[str]) -> None:
        """Partitions without a live leader, recounted for the topics an event touched (all of
        them when the live brokers changed), so a small event stays cheap on a big cluster."""
        live = frozenset(ctx.brokers)
        topics = set(self._topic_views) | set(self._offline_by_topic) if live != self._live_counted else dirty
        self._live_counted = live
        for topic in topics:
            view = self._topic_views.get(topic)
            if view is None:
                self._offline_by_topic.pop(topic, None)
            else:
                self._offline_by_topic[topic] = sum(1 for p in view.partitions if p.leader not in live)

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
            self._batch_metrics()
            return
        self._reassignment_views(ctx, ctx.dirty_topics)
        for topic in ctx.dirty_topics:
            view = ctx.topic_view(topic)
            if view is None:
                self._topic_views.pop(topic, None)
            else:
                self._topic_views[topic] = view
        self._count_offline(ctx, ctx.dirty_topics)
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
            batches=self.runner.snapshot() if self.runner is not None else {},
        )
        self.metrics.partitions.set(len(ctx.states))
        self.metrics.reassigning_partitions.set(len(ctx.reassigning))
        self.metrics.live_brokers.set(len(ctx.brokers))
        self._batch_metrics()

    def _batch_metrics(self) -> None:
        batches = self.runner.batches.values() if self.runner is not None else ()
        for state in BatchState:
            self.metrics.batches.labels(state.value).set(sum(1 for b in batches if b.state is state))
        for move_state in MoveState:
            count = sum(1 for b in batches for _ in b.in_state(move_state))
            self.metrics.batch_moves.labels(move_state.value).set(count)
        self.metrics.batch_throttles.labels("broker").set(sum(len(b.broker_throttles) for b in batches))
        self.metrics.batch_throttles.labels("topic").set(sum(len(b.topic_throttles) for b in batches))
        self.metrics.offline_partitions.set(sum(self._offline_by_topic.values()))

    def _update_quota_metrics(self) -> None:
        if self.quotas is not None:
            self.quota_metrics.update(self.quotas.snapshot(self._clock()))

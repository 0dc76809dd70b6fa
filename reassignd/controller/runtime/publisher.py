"""The immutable snapshot HTTP handlers read, published after every event, and the gauges that
go with it. Views are rebuilt only for the topics an event touched, so a small event stays cheap
on a big cluster.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from reassignd.concurrency import pace
from reassignd.controller.instance.changes import Changes
from reassignd.controller.instance.metrics import ControllerMetrics
from reassignd.controller.model.snapshot import (
    ActiveControllerAddress,
    ClusterSnapshot,
    Problem,
    ReassignmentView,
    TopicView,
)
from reassignd.controller.runtime.active import ActiveParts
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.controller.state.context import ControllerContext
from reassignd.executor.model import BatchMoveState, BatchState
from reassignd.topic_partition import TopicPartition


class Publisher:
    def __init__(self, controller_id: int, metrics: ControllerMetrics) -> None:
        self.controller_id = controller_id
        self.metrics = metrics
        self.snapshot = ClusterSnapshot(controller_id, False, 0, None)
        self.published = Changes()  # notified at each snapshot published: waiters look again
        self._topic_views: dict[str, TopicView] = {}
        self._reassignments: dict[TopicPartition, ReassignmentView] = {}
        self._shown: dict[str, set[int]] = {}  # the partitions of each topic in _reassignments
        self._offline = 0
        # the published copies, shared by snapshots until a view changes (copying 10,000 moving
        # partitions after every event was most of a publish during a big move)
        self._published_topics: dict[str, TopicView] = {}
        self._published_reassignments: dict[TopicPartition, ReassignmentView] = {}
        self._partitions = 0  # over _topic_views
        self._reassigning = 0

    def reset(self) -> None:
        """The active term ended: the next one starts from an empty view."""
        self._topic_views.clear()
        self._reassignments.clear()
        self._shown.clear()
        self._offline = 0
        self._published_topics = {}
        self._published_reassignments = {}
        self._partitions = self._reassigning = 0
        self.metrics.leader_imbalanced_brokers.set(0)  # the next term's first check sets it

    async def publish(
        self,
        parts: ActiveParts | None,
        epoch_seen: int,
        active_controller: ActiveControllerAddress | None,
        problems: Iterable[Problem],
    ) -> None:
        if parts is None:
            self.snapshot = ClusterSnapshot(
                self.controller_id, False, epoch_seen, active_controller, problems=tuple(problems)
            )
            self.metrics.partitions.set(0)
            self.metrics.reassigning_partitions.set(0)
            self._batch_metrics(None)
            self.published.notify()
            return
        ctx = parts.ctx
        if ctx.dirty_topics or not self._published_topics:
            if self._reassignment_views(ctx, ctx.dirty_topics):
                self._published_reassignments = dict(self._reassignments)
            for topic in ctx.dirty_topics:
                await pace()  # a topic's view at a time: no other event runs meanwhile
                view = ctx.topic_view(topic)
                old = self._topic_views.pop(topic, None) if view is None else self._topic_views.get(topic)
                if old is not None:
                    self._partitions -= len(old.partitions)
                    self._reassigning -= old.reassigning_partitions
                if view is not None:
                    self._topic_views[topic] = view
                    self._partitions += len(view.partitions)
                    self._reassigning += view.reassigning_partitions
            self._published_topics = dict(self._topic_views)
        # partitions without a live leader, from the per-broker index (no partition scanned)
        self._offline = ctx.index.count_without_live_leader(ctx.brokers)
        ctx.dirty_topics.clear()
        self.snapshot = ClusterSnapshot(
            self.controller_id,
            True,
            ctx.epoch,
            active_controller,
            brokers={b: ctx.broker_view(b) for b in sorted(ctx.brokers)},
            topics=self._published_topics,
            problems=tuple(problems),
            reassignments=self._published_reassignments,
            batches=parts.runner.snapshot(),
            demoted=parts.demotions.counts(),
            self_healing=parts.healing.view(),
            counts=(self._partitions, self._reassigning),
        )
        self.metrics.partitions.set(len(ctx.states))
        self.metrics.reassigning_partitions.set(len(ctx.reassigning))
        self.metrics.live_brokers.set(len(ctx.brokers))
        self._batch_metrics(parts)
        self.published.notify()

    def _reassignment_views(
        self,
        ctx: ControllerContext,
        topics: Iterable[str],
    ) -> bool:
        """Refresh the ListPartitionReassignments views of ``topics`` (the dirty ones); whether
        any view came, went or changed (only then are they copied for a new snapshot, and the
        HTTP answers kept encoded for the old copy built again)."""
        views = self._reassignments
        changed = False
        for topic in topics:
            shown = self._shown.get(topic)
            if not shown and topic not in ctx.reassigning_topics:
                continue  # nothing moves in it and nothing was shown: no partition looked at
            assignments = ctx.assignments.get(topic, {})
            if shown is None:
                shown = self._shown[topic] = set()
            for p in [p for p in shown if (topic, p) not in ctx.moves or p not in assignments]:
                del views[(topic, p)]
                shown.discard(p)
                changed = True
            if topic in ctx.reassigning_topics:
                changed = self._moving_views(ctx, topic, assignments, shown) or changed
            if not shown:
                del self._shown[topic]
        return changed

    def _moving_views(
        self,
        ctx: ControllerContext,
        topic: str,
        assignments: Mapping[int, ReplicaAssignment],
        shown: set[int],
    ) -> bool:
        """Refresh the views of one topic's moving partitions; whether any came or changed."""
        views = self._reassignments
        changed = False
        moves = ctx.moves
        for p, a in assignments.items():
            tp = (topic, p)
            m = moves.get(tp)
            if m is None:
                continue
            li = ctx.states.get(tp)
            view = ReassignmentView(
                topic=topic,
                partition=p,
                replicas=a.replicas,
                adding_replicas=a.adding,
                removing_replicas=a.removing,
                target_replicas=a.target_replicas,
                # the exact order recorded before the move (Kafka's RS − AR may reorder it)
                original_replicas=m.origins,
                source=m.source.value if m.source is not None else "api",
                started_at_ms=m.started_at_ms,
                leader=li.state.leader if li else -1,
            )
            if views.get(tp) != view:  # an ISR change of a moving partition changes no view
                views[tp] = view  # an unchanged view stays the same object (answers kept per view)
                shown.add(p)
                changed = True
        return changed

    def _batch_metrics(self, parts: ActiveParts | None) -> None:
        metrics = self.metrics
        batches = parts.runner.batches.values() if parts is not None else ()
        for state in BatchState:
            metrics.batches.labels(state.value).set(sum(1 for b in batches if b.state is state))
        for move_state in BatchMoveState:
            count = sum(1 for b in batches for _ in b.in_state(move_state))
            metrics.batch_moves.labels(move_state.value).set(count)
        metrics.batch_throttles.labels("broker").set(sum(len(b.broker_throttles) for b in batches))
        metrics.batch_throttles.labels("topic").set(sum(len(b.topic_throttles) for b in batches))
        metrics.offline_partitions.set(self._offline if parts is not None else 0)

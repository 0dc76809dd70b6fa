"""Event handlers for topics, partitions and ISR changes (TopicChange, PartitionModifications,
IsrChangeNotification, TopicDeletion), Kafka's partition state machine transitions.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Callable, Collection, Iterable

from reassignd.controller import loader
from reassignd.controller.context import LeaderIsr
from reassignd.controller.core import ControllerCore
from reassignd.controller.events import (
    IsrChangeNotified,
    PartitionsModified,
    TopicDeletionsChanged,
    TopicsChanged,
)
from reassignd.controller.partition_logic import (
    initial_state,
    is_unclean_election,
    needs_unclean_election,
    offline_election,
)
from reassignd.controller.request_batch import ControlBatch
from reassignd.controller.topic_configs import TopicConfigs, read_topic_configs, topics_of_entities
from reassignd.events.changes import state_changes
from reassignd.topic_partition import TopicPartition
from reassignd.zk import codec, paths

log = logging.getLogger(__name__)

# (replicas, state, live brokers, controller epoch, unclean allowed) -> the new state, or None
Election = Callable[
    [tuple[int, ...], codec.PartitionState, Collection[int], int, bool], codec.PartitionState | None
]


class PartitionEvents(ControllerCore):
    """Event handlers for topics, partitions and ISR changes (TopicChange, PartitionModifications,"""

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
        elected = await self._elect(
            offline,
            lambda replicas, state, live, epoch, unclean: offline_election(
                replicas, state, live, epoch, unclean=unclean
            ),
        )
        for tp in elected:
            batch.add_leader_and_isr(self._replicas(tp), tp)
            batch.add_update_metadata([tp])

    async def _elect(self, tps: Collection[TopicPartition], election: Election) -> list[TopicPartition]:
        """Write the states ``election`` decides for ``tps`` (pipelined, fenced) and return the
        partitions that changed. Unclean elections follow each topic's
        ``unclean.leader.election.enable`` (or the broker default), read from ZooKeeper only for
        the topics of partitions that no clean election can help; each one is logged and counted."""
        ctx = self._require_ctx()
        live = ctx.live_broker_ids
        needy = {
            tp[0]
            for tp in tps
            if (li := ctx.states.get(tp)) is not None
            and needs_unclean_election(self._replicas(tp), li.state, live)
        }
        configs = await read_topic_configs(self.zk, needy, self._report) if needy else TopicConfigs()
        unclean: dict[TopicPartition, tuple[codec.PartitionState, codec.PartitionState]] = {}

        def decide(tp: TopicPartition, li: LeaderIsr) -> codec.PartitionState | None:
            # a topic read above allows it or not; one whose partition needs it only after a
            # re-read (an agent's write raced ours) waits for the next trigger, as Kafka's retry
            allowed = tp[0] in needy and configs.unclean_leader_election(tp[0])
            new = election(self._replicas(tp), li.state, live, ctx.epoch, allowed)
            if new is not None and is_unclean_election(li.state, new):
                unclean[tp] = (li.state, new)
            else:
                unclean.pop(tp, None)
            return new

        changed = await self._writer().update_states(tps, decide)
        for tp in changed:
            if tp in unclean:
                before, after = unclean[tp]
                self.metrics.unclean_leader_elections.inc()
                log.warning(
                    "unclean leader election for %s-%d: broker %d leads although it was not in the ISR %s "
                    "(no in-sync replica is alive); data not replicated to it may be lost",
                    tp[0],
                    tp[1],
                    after.leader,
                    list(before.isr),
                )
        return changed

    async def _on_configs_changed(self, entity_paths: Iterable[str]) -> None:
        """Config change notifications: when a topic's config or the broker default changed, its
        partitions without a leader get an election, which is unclean if now allowed (Kafka's
        TopicUncleanLeaderElectionEnable and UncleanLeaderElectionEnable events)."""
        ctx = self._require_ctx()
        topics, default_changed = topics_of_entities(entity_paths)
        live = ctx.live_broker_ids
        offline = [
            tp
            for tp, li in ctx.states.items()
            if (default_changed or tp[0] in topics) and li.state.leader not in live
        ]
        if not offline:
            return
        batch = ControlBatch(ctx, self.settings.controller_id)
        await self._online_partitions(offline, batch)
        self._send(batch)

    def _replicas(self, tp: TopicPartition) -> tuple[int, ...]:
        a = self._require_ctx().assignment(tp)
        return () if a is None else a.replicas

    async def _on_topics_changed(self) -> None:
        ctx = self._require_ctx()
        names = set(await self._children(paths.BROKER_TOPICS, TopicsChanged()))
        known = set(ctx.assignments)
        stray = ControlBatch(ctx, self.settings.controller_id)
        for gone in sorted(known - names):
            # removed behind the controller's back (not through /admin/delete_topics): its
            # replicas would stay on the brokers forever (Kafka leaks them); delete them
            log.info("topic %s was removed: deleting its replicas", gone)
            for p, a in ctx.assignments[gone].items():
                for b in a.replicas:
                    stray.add_stop_replica(b, (gone, p), delete=True)
            ctx.remove_topic(gone)
        self._send(stray)
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
        for topic in sorted(znodes):
            parts = ctx.assignments[topic]
            rf = len(next(iter(parts.values())).replicas) if parts else 0
            self.events.emit("topic_created", topic=topic, partitions=len(parts), replication_factor=rf)

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
        self.events.emit("partitions_added", topic=topic, partitions=added)

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
            before = ctx.states.get(tp)
            ctx.set_state(tp, li)
            # the brokers' own ISR changes (the controller learns them from the notification)
            for kind, fields in state_changes(tp, None if before is None else before.state, li.state):
                self.events.emit(kind, **fields, by="broker")
        batch = ControlBatch(ctx, self.settings.controller_id)
        batch.add_update_metadata(states)
        await self._reassigner().check(states, batch)
        await self._after_reassignments(batch)

    async def _resume_deletions(self) -> None:
        batch = self._batch()
        await self._deleter().resume(batch)
        self._send(batch)

    async def _load_topic_deletions(self) -> None:
        """The topics queued in /admin/delete_topics: they take no new reassignment (error 3)."""
        ctx = self._require_ctx()
        ctx.topics_to_delete = set(await self._children(paths.DELETE_TOPICS, TopicDeletionsChanged()))

    async def _after_reassignments(self, batch: ControlBatch) -> None:
        """End of an event that ran the reassignment algorithm: completed (or cancelled)
        partitions left without a live leader get an offline election (a cancel allowed to need an
        unclean one gets it here), completed partitions leave the legacy znode, and every request
        of the event goes out."""
        ctx = self._require_ctx()
        live = ctx.live_broker_ids
        reassigner = self._reassigner()
        leaderless = [
            tp
            for tp in dict.fromkeys([*reassigner.completed, *sorted(reassigner.leaderless)])
            if (li := ctx.states.get(tp)) and li.state.leader not in live
        ]
        reassigner.leaderless.clear()
        if leaderless:
            await self._online_partitions(leaderless, batch)
        if self.runner is not None:  # batch moves that ended free their slots for others at once
            await self.runner.sync(batch)
            await self.runner.tick(batch)
            await self.runner.throttles()
        completed = bool(self._reassigner().completed)
        await self._sequenced().after_completions(list(self._reassigner().completed))
        await self._intake().after_completions()
        self._send(batch)
        if completed and ctx.topics_to_delete:
            await self._resume_deletions()

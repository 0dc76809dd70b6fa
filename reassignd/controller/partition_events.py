"""Event handlers for topics, partitions and ISR changes (TopicChange, PartitionModifications,
IsrChangeNotification, TopicDeletion), Kafka's partition state machine transitions.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Iterable

from reassignd.controller import loader
from reassignd.controller.core import ControllerCore
from reassignd.controller.events import (
    IsrChangeNotified,
    PartitionsModified,
    TopicDeletionsChanged,
    TopicsChanged,
)
from reassignd.controller.partition_logic import initial_state, offline_election
from reassignd.controller.request_batch import ControlBatch
from reassignd.zk import codec, paths

log = logging.getLogger(__name__)

TopicPartition = codec.TopicPartition


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
        elected = await self._writer().update_states(
            offline, lambda tp, li: offline_election(self._replicas(tp), li.state, live, ctx.epoch)
        )
        for tp in elected:
            batch.add_leader_and_isr(self._replicas(tp), tp)
            batch.add_update_metadata([tp])

    def _replicas(self, tp: TopicPartition) -> tuple[int, ...]:
        a = self._require_ctx().assignment(tp)
        return () if a is None else a.replicas

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

    async def _load_topic_deletions(self) -> None:
        """The topics queued in /admin/delete_topics: they take no new reassignment (error 3)."""
        ctx = self._require_ctx()
        ctx.topics_to_delete = set(await self._children(paths.DELETE_TOPICS, TopicDeletionsChanged()))

    async def _after_reassignments(self, batch: ControlBatch) -> None:
        """End of an event that ran the reassignment algorithm: completed partitions leave the
        legacy znode, and every request of the event goes out."""
        completed = bool(self._reassigner().completed)
        await self._sequenced().after_completions(list(self._reassigner().completed))
        await self._intake().after_completions()
        self._send(batch)
        if completed and self._require_ctx().topics_to_delete:
            await self._resume_deletions()

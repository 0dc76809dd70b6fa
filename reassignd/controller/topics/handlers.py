"""Topics and partitions appearing or disappearing, and the brokers' own ISR changes (Kafka's
TopicChange, PartitionModifications, IsrChangeNotification and TopicDeletion events).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from reassignd.contracts.records import PartitionsAdded, TopicCreated
from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.effects.record_changes import state_changes
from reassignd.controller.instance.events import (
    IsrChangeNotified,
    PartitionsModified,
    TopicDeletionsChanged,
    TopicsChanged,
)
from reassignd.controller.instance.shared import Shared
from reassignd.controller.partitions.partition_state_machine import PartitionStateMachine
from reassignd.controller.reads import loader
from reassignd.controller.reassignment.algorithm import Reassigner
from reassignd.controller.state.context import ControllerContext
from reassignd.topic_partition import TopicPartition
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.values import WatchCallback

log = logging.getLogger(__name__)


class TopicEvents:
    def __init__(
        self,
        shared: Shared,
        ctx: ControllerContext,
        elections: PartitionStateMachine,
        reassigner: Reassigner,
    ) -> None:
        self.shared = shared
        self.ctx = ctx
        self.elections = elections
        self.reassigner = reassigner

    def watch_topic(self, path: str) -> WatchCallback | None:
        return self.shared.watch(path, PartitionsModified((paths.basename(path),)))

    async def on_topics_changed(self, out: EventOutputs) -> None:
        ctx = self.ctx
        names = set(
            await out.writes.children(
                paths.BROKER_TOPICS, self.shared.watch(paths.BROKER_TOPICS, TopicsChanged())
            )
        )
        known = set(ctx.assignments)
        stray = out.requests
        for gone in sorted(known - names):
            # removed behind the controller's back (not through /admin/delete_topics): its
            # replicas would stay on the brokers forever (Kafka leaks them); delete them
            log.info("topic %s was removed: deleting its replicas", gone)
            for p, a in ctx.assignments[gone].items():
                for b in a.replicas:
                    stray.add_stop_replica(b, (gone, p), delete=True)
            ctx.remove_topic(gone)
        out.seal()  # built before the new topics join the context
        ctx.malformed_topics &= names
        new = sorted(names - known - ctx.malformed_topics)
        if new:
            await self.add_topics(new, out)

    async def add_topics(self, names: list[str], out: EventOutputs) -> None:
        """Topics that appeared (or whose malformed znode was fixed): load and bring online."""
        ctx, shared = self.ctx, self.shared
        znodes = await loader.read_topics(shared.reads, names, self.watch_topic, shared.report)
        ctx.malformed_topics.update(set(names) - set(znodes))
        for topic, znode in znodes.items():
            ctx.put_topic(topic, znode.topic_id, loader.assignment_of(znode))
        tps = [(t, p) for t in znodes for p in ctx.assignments[t]]
        states, malformed = await loader.read_states(shared.reads, tps, shared.report)
        for tp, li in states.items():
            ctx.set_state(tp, li)
        ctx.malformed_states.update(malformed)
        broker_requests = out.requests
        for tp in states:
            broker_requests.add_leader_and_isr(self.elections.replicas(tp), tp)
            broker_requests.add_update_metadata([tp])
        await self.elections.online_partitions(tps, out, broker_requests)
        out.seal()
        if znodes:
            log.info("new topics %s: %d partitions", sorted(znodes), len(tps))
        for topic in sorted(znodes):
            parts = ctx.assignments[topic]
            rf = len(next(iter(parts.values())).replicas) if parts else 0
            shared.records.emit(TopicCreated(topic=topic, partitions=len(parts), replication_factor=rf))

    async def on_partitions_modified(self, topics: Sequence[str], out: EventOutputs) -> None:
        """Topic znodes changed: re-read them (re-arming their watches); partitions they gained
        are brought online. A change to an existing partition's replicas made outside the
        controller is logged and ignored, as Kafka does."""
        ctx, shared = self.ctx, self.shared
        fixed = [t for t in topics if t in ctx.malformed_topics]
        if fixed:
            ctx.malformed_topics.difference_update(fixed)
            await self.add_topics(fixed, out)
        known = [t for t in topics if t not in fixed]
        znodes = await loader.read_changed_topics(
            shared.reads, known, self.watch_topic, shared.report, ctx.topic_mzxids
        )
        added: dict[str, list[int]] = {}
        for topic, (znode, mzxid) in znodes.items():
            if topic not in ctx.assignments:
                continue
            ctx.topic_mzxids[topic] = mzxid
            current = ctx.assignments[topic]
            incoming = loader.assignment_of(znode)
            for p, a in incoming.items():
                if p in current and a != current[p]:
                    log.warning(
                        "topic znode %s changed partition %d outside the controller (%s -> %s); ignored, "
                        "as Kafka does",
                        topic,
                        p,
                        current[p],
                        a,
                    )
            new = sorted(set(incoming) - set(current))
            if new:
                added[topic] = new
                for p in new:
                    ctx.set_assignment((topic, p), incoming[p])
        if not added:
            return
        await self.online_new_partitions(added, out)
        for topic, new in added.items():
            log.info("topic %s: new partitions %s", topic, new)
            shared.records.emit(PartitionsAdded(topic=topic, partitions=tuple(new)))

    async def online_new_partitions(self, added: dict[str, list[int]], out: EventOutputs) -> None:
        """Partitions just added to the context (a topic's znode grew, or CreatePartitions): their
        states, where some exist already, then online."""
        tps = [(t, p) for t, ps in added.items() for p in ps]
        states, malformed = await loader.read_states(self.shared.reads, tps, self.shared.report)
        for tp, li in states.items():
            self.ctx.set_state(tp, li)
        self.ctx.malformed_states.update(malformed)
        await self.elections.online_partitions(tps, out)
        out.seal()

    async def on_isr_change_notified(self, out: EventOutputs) -> bool:
        """The brokers' own ISR changes: read, taken into memory, and checked for completed
        reassignments, into ``out`` (the caller finishes it: ``runtime.finish``). False when
        there was no notification."""
        ctx, shared = self.ctx, self.shared
        children = await out.writes.children(
            paths.ISR_CHANGE_NOTIFICATION, shared.watch(paths.ISR_CHANGE_NOTIFICATION, IsrChangeNotified())
        )
        if not children:
            return False
        notification_paths = [paths.isr_change(c) for c in children]
        znodes = await shared.reads.get_many(notification_paths)
        tps: set[TopicPartition] = set()
        for path, znode in zip(notification_paths, znodes, strict=True):
            if znode is None:
                continue
            try:
                tps.update(admin_codec.decode_isr_change(znode.data))
            except codec.CodecError as e:
                shared.report(path, e.reason, "isr_change_notification")
        known = [tp for tp in tps if ctx.assignment(tp) is not None]
        # the notifications' delete and the states' read in flight together (one round trip);
        # either failing fails the event (the controller then moves, and its successor reads
        # every state)
        _, (states, _) = await asyncio.gather(
            out.writes.delete_all(
                [p for p, z in zip(notification_paths, znodes, strict=True) if z is not None]
            ),
            loader.read_states(shared.reads, known, shared.report),
        )
        for tp, li in states.items():
            before = ctx.states.get(tp)
            ctx.set_state(tp, li)
            # the brokers' own ISR changes (the controller learns them from the notification)
            for change in state_changes(tp, None if before is None else before.state, li.state, by="broker"):
                shared.records.emit(change)
        out.requests.add_update_metadata(states)
        await self.reassigner.check(states, out)
        return True

    async def load_topic_deletions(self, out: EventOutputs) -> None:
        """The topics queued in /admin/delete_topics: they take no new reassignment (error 3)."""
        self.ctx.topics_to_delete = set(
            await out.writes.children(
                paths.DELETE_TOPICS, self.shared.watch(paths.DELETE_TOPICS, TopicDeletionsChanged())
            )
        )

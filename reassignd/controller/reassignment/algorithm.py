"""Kafka's partition reassignment (KIP-455, ``KafkaController.onPartitionReassignment``), batched.

One call handles many partitions: phase U (new assignment; replicas no longer in RS stopped and
deleted at once), the completion test (TRS ⊆ ISR, ISR read from ZooKeeper), phase A (leader
epoch bump, LeaderAndIsr to ORS and AR, AR started) and phase B (leader moved into TRS, RR out of
the ISR, stopped and deleted, topic znode written last). ZooKeeper writes are grouped: each topic
znode once per phase, partition state writes pipelined.

reassignd goes further than Kafka in one place, and says so: the phase-B leader move and the
removal of RR from the ISR are one state write per partition (the end state is Kafka's: leader in
TRS, ISR ∩ RR = ∅, leader epoch strictly increased) instead of one write per removed replica.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Mapping

from reassignd.concurrency import pace
from reassignd.controller.effects import topic_write
from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.effects.record_changes import state_changes
from reassignd.controller.model.moves import MoveState, check_transition, next_phase
from reassignd.controller.model.requests import Source
from reassignd.controller.partitions.partition_logic import NO_LEADER
from reassignd.controller.reads import loader
from reassignd.controller.reads.pipeline import for_each
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.controller.state.context import ControllerContext, LeaderIsr
from reassignd.stream.record_log import RecordLog
from reassignd.topic_partition import TopicPartition
from reassignd.zk import codec, paths
from reassignd.zk.errors import NoNodeError
from reassignd.zk.reads import ZkReads
from reassignd.zk.values import WatchCallback

log = logging.getLogger(__name__)

_SLICE = 500  # partitions between two looks at the loop's pace

_PLACEHOLDER_TOPIC_ID = "A" * 22  # the size of the topic id a topic without one gets when written

# More partitions than this are read in bulk and their watches armed with SetWatches (two round
# trips); fewer, one read each with its watch (one round trip, pipelined).
_READ_ONE_BY_ONE = 16


class Reassigner:
    """The reassignment algorithm over one active controller's context; it writes through the
    event's fenced write gateway (``out.writes``)."""

    def __init__(
        self,
        reads: ZkReads,
        ctx: ControllerContext,
        records: RecordLog,
        watch_state: Callable[[TopicPartition], WatchCallback | None],
        report: loader.Report,
        refuse: loader.Report | None = None,
    ) -> None:
        self.reads = reads
        self.ctx = ctx
        self.records = records  # the stream's record log: the state changes brokers made
        self._watch_state = watch_state
        self._report = report
        self._refuse = refuse if refuse is not None else report
        # during the failover load: the zxid before the bulk read of every state (see refresh_states)
        self.states_read_since: int | None = None

    # --- entry points -----------------------------------------------------------------------------

    async def reassign(
        self,
        updates: Mapping[TopicPartition, ReplicaAssignment],
        source: Source,
        now_ms: int | None,
        out: EventOutputs,
        *,
        sized: bool = False,
    ) -> dict[TopicPartition, str]:
        """Kafka's onPartitionReassignment for every partition of ``updates`` (new full
        assignments, already validated), its requests and completions added to ``out``. Returns
        the partitions refused, with the reason: those whose move would make their topic's
        write larger than ZooKeeper takes (the others of the topic proceed). With ``sized`` the
        caller took :meth:`oversized`'s refusals out of ``updates`` earlier in the same event,
        nothing written to a topic since, so they are not sized again (an API request of 10,000
        partitions in 100 topics: about 40 ms of the loop)."""
        ctx = self.ctx
        changed = {tp: new for tp, new in updates.items() if ctx.assignment(tp) != new}
        refused = {} if sized else self._too_large(changed)
        if refused:
            changed = {tp: a for tp, a in changed.items() if tp not in refused}
            updates = {tp: a for tp, a in updates.items() if tp not in refused}
        dropped: dict[TopicPartition, tuple[int, ...]] = {}
        for tp, new in changed.items():
            old = ctx.assignment(tp)
            if old is not None:
                gone = tuple(r for r in old.replicas if r not in new.replicas)
                if gone:
                    dropped[tp] = gone
        # Phase U: the topic znodes (one write per topic), then memory.
        await out.writes.write_assignments(changed)
        await self._remove_replicas(dropped, out)
        for tp in updates:  # the moves these updates started or re-targeted are the source's
            ctx.claim_move(tp, source, now_ms, restart=tp in changed)
        await self._advance(list(updates), out)
        # a partition without a live leader may have a live in-sync replica again under its new
        # assignment (an ISR's last member, kept when its replica was removed, added back): the
        # event's end tries an election for each (Finisher), not some later broker change
        live = ctx.brokers
        out.leaderless.update(
            tp for tp in changed if (li := ctx.states.get(tp)) is not None and li.state.leader not in live
        )
        return refused

    def oversized(self, updates: Mapping[TopicPartition, ReplicaAssignment]) -> dict[TopicPartition, str]:
        """What :meth:`reassign` would refuse of ``updates`` for its size, before anything is
        written (for callers that write something of their own first)."""
        return self._too_large({tp: a for tp, a in updates.items() if self.ctx.assignment(tp) != a})

    def _too_large(self, changed: Mapping[TopicPartition, ReplicaAssignment]) -> dict[TopicPartition, str]:
        """The moves of ``changed`` that do not fit in their topic's write (topic_write.fit),
        each with the reason; reported once per topic."""
        ctx = self.ctx
        by_topic: dict[str, dict[int, ReplicaAssignment]] = {}
        for (topic, p), a in changed.items():
            by_topic.setdefault(topic, {})[p] = a
        refused: dict[TopicPartition, str] = {}
        for topic, parts in by_topic.items():
            before = ctx.assignments.get(topic, {})
            topic_id = ctx.topic_ids.get(topic) or _PLACEHOLDER_TOPIC_ID
            fitted = topic_write.fit(before, ctx.topic_origins(topic), parts, topic_id)
            if not fitted.refused:
                continue
            reason = (
                f"moving these {len(parts)} partitions of {topic} at once would make its topic znode "
                f"and its origins znode (their original replicas) {fitted.size} bytes, over the {topic_write.WRITE_BUDGET_BYTES} "
                f"ZooKeeper takes in one request; {len(fitted.refused)} of them refused (move fewer at once)"
            )
            self._refuse(paths.topic(topic), reason, "topic_znode_size")
            for p in fitted.refused:
                refused[(topic, p)] = reason
        return refused

    async def check(self, tps: Iterable[TopicPartition], out: EventOutputs) -> None:
        """Completion check for reassigning partitions whose ISR may have changed."""
        reassigning = [tp for tp in tps if tp in self.ctx.moves]
        if reassigning:
            await self._advance(reassigning, out, phase_a=False)

    async def resume(self, tps: Iterable[TopicPartition], out: EventOutputs) -> None:
        """Failover, or a target broker came back: run the algorithm again on the current
        assignment (phase A resends LeaderAndIsr; adding replicas keep the bytes they have)."""
        todo = [tp for tp in tps if tp in self.ctx.moves]
        for tp in todo:
            self.ctx.claim_move(tp, Source.API, None, restart=False)
        if todo:
            await self._advance(todo, out)

    # --- the algorithm ------------------------------------------------------------------------------

    async def _advance(self, tps: list[TopicPartition], out: EventOutputs, *, phase_a: bool = True) -> None:
        """Each partition to its next phase (``moves.next_phase``): phase B for those with nothing
        moving or whose move has TRS ⊆ ISR, phase A (unless ``phase_a`` is off: an ISR change only
        finishes) for moves still catching up. A move takes its phase only if its state allows
        the step (a live one): one whose end was decided refuses the event before anything of
        it is written (IllegalMoveTransition)."""
        ctx = self.ctx
        await self.refresh_states(tps)
        complete: list[TopicPartition] = []
        incomplete: list[TopicPartition] = []
        known = ctx.moves
        for i, tp in enumerate(tps):
            if i % _SLICE == _SLICE - 1:
                await pace()  # thousands of moves: the loop is not held meanwhile
            li = ctx.states.get(tp)
            if ctx.assignment(tp) is None:
                continue
            if li is None:
                log.warning("partition %s-%d has no state; its reassignment waits for it to come online", *tp)
                continue
            move = known.get(tp)
            phase = next_phase(move, li.state.isr)
            if phase is MoveState.FINISHING:
                complete.append(tp)
            elif phase_a:
                incomplete.append(tp)
            else:
                continue  # an ISR change that completes nothing
            if move is not None:
                check_transition(tp, move.state, phase)
        if incomplete and phase_a:
            await self._phase_a(incomplete, out)
        if complete:
            await self._phase_b(complete, out)

    async def refresh_states(self, tps: list[TopicPartition]) -> None:
        """Read the state znodes (the ISR from ZooKeeper, not the cache), arming a data watch on
        each reassigning partition (PartitionReassignmentIsrChange).

        A few partitions are read one by one, each with its watch. Many are read in bulk
        (multiRead, which arms no watch) and their watches armed afterwards with SetWatches,
        relative to the zxid seen before the read: ZooKeeper fires at once for any state changed
        since, exactly as if each had been read with a watch then. During the failover load every
        state was just read that way (``states_read_since``), so only the watches are armed. A
        fired watch's event re-reads the state; a write that meets a newer version re-reads and
        decides again (``FencedWrites.write_states``)."""
        if self.states_read_since is not None:
            await self._watch_states(tps, self.states_read_since)
        elif len(tps) > _READ_ONE_BY_ONE:
            since = self.reads.last_zxid
            states, malformed = await loader.read_states(self.reads, tps, self._report)
            for tp, li in states.items():
                self._update_state(tp, li)
            await self._watch_states([tp for tp in tps if tp in states or tp in malformed], since)
        else:
            await for_each(tps, self._read_state)

    async def _watch_states(self, tps: list[TopicPartition], since: int) -> None:
        reassigning = self.ctx.reassigning
        watches = {
            paths.partition_state(*tp): callback
            for tp in tps
            if tp in reassigning and (callback := self._watch_state(tp)) is not None
        }
        if watches:
            await self.reads.watch_data_since(watches, since)

    async def _read_state(self, tp: TopicPartition) -> None:
        watch = self._watch_state(tp) if tp in self.ctx.reassigning else None
        path = paths.partition_state(*tp)
        try:
            znode = await self.reads.get(path, watch=watch)
        except NoNodeError:
            return
        li = loader.decode_state(path, znode.data, znode.stat.version, self._report)
        if li is not None:
            self._update_state(tp, li)

    def _update_state(self, tp: TopicPartition, li: LeaderIsr) -> None:
        before = self.ctx.states.get(tp)
        self.ctx.set_state(tp, li)
        if before is not None and before.version != li.version:  # a broker changed it
            for change in state_changes(tp, before.state, li.state, by="broker"):
                self.records.emit(change)

    async def _phase_a(self, tps: list[TopicPartition], out: EventOutputs) -> None:
        """Not complete yet: bump the leader epoch (same leader and ISR), send LeaderAndIsr with
        RS/AR/RR to ORS and to AR (``is_new``), UpdateMetadata to every live broker."""
        epoch = self.ctx.epoch
        broker_requests = out.requests
        written = await out.writes.write_states(
            tps,
            lambda tp, li: codec.PartitionState(
                li.state.leader, li.state.leader_epoch + 1, epoch, li.state.isr
            ),
        )
        # a partition whose state write was given up (reported) gets no LeaderAndIsr: the
        # brokers would be told a leader epoch ZooKeeper does not hold
        landed = set(written)
        tps = [tp for tp in tps if tp in landed or tp not in self.ctx.states]
        for tp in tps:
            a = self.ctx.assignment(tp)
            assert a is not None
            broker_requests.add_leader_and_isr(a.origins, tp)
            broker_requests.add_leader_and_isr(a.adding, tp, is_new=True)
            self.ctx.move_catching_up(tp)
        broker_requests.add_update_metadata(tps)

    async def _phase_b(self, tps: list[TopicPartition], out: EventOutputs) -> None:
        """Complete: leader into TRS (first live ISR member of TRS when it must move), RR out of
        the ISR in the same write, RR stopped and deleted, topic znode with RS = TRS last. The
        partitions completed are added to ``out.completed`` (the event's end acts on them)."""
        ctx = self.ctx
        live = ctx.live_broker_ids
        before = {tp: a for tp in tps if (a := ctx.assignment(tp)) is not None}

        def decide(tp: TopicPartition, li: LeaderIsr) -> codec.PartitionState | None:
            a = before[tp]
            s = li.state
            if not a.is_complete(s.isr):
                return None  # re-read after a conflict: the ISR no longer holds TRS; not yet
            trs, rr = a.target_replicas, set(a.removing)
            isr = tuple(r for r in s.isr if r not in rr) or s.isr
            leader = s.leader
            if leader not in trs or leader not in live:
                candidates = [r for r in trs if r in live and r in s.isr]
                if candidates:
                    leader = candidates[0]
                else:
                    log.error("no live in-sync replica of %s-%d in its target %s to lead it", *tp, list(trs))
                    leader = NO_LEADER if leader in rr or leader not in live else leader
            return codec.PartitionState(leader, s.leader_epoch + 1, ctx.epoch, isr)

        # only partitions whose final state was written complete: one whose write was given up
        # (it kept changing under us) or that is no longer complete stays moving, and a later
        # ISR change checks it again
        written = set(await out.writes.write_states(list(before), decide))
        before = {tp: a for tp, a in before.items() if tp in written}
        if not before:
            return
        for tp in before:
            ctx.move_finishing(tp)
        broker_requests = out.requests
        for tp, a in before.items():
            for r in a.removing:
                broker_requests.add_stop_replica(r, tp, delete=True)
        await out.writes.write_assignments({tp: a.completed() for tp, a in before.items()})
        for i, (tp, a) in enumerate(before.items()):
            if i % _SLICE == _SLICE - 1:
                await pace()
            broker_requests.add_leader_and_isr(a.target_replicas, tp)
            out.completed.append(tp)
            log.info("reassignment of %s-%d completed: %s", tp[0], tp[1], list(a.target_replicas))
        broker_requests.add_update_metadata(before)

    async def _remove_replicas(
        self, dropped: Mapping[TopicPartition, tuple[int, ...]], out: EventOutputs
    ) -> None:
        """Replicas leaving RS outside phase B (a re-target or a cancel): Offline (out of the
        ISR, which never empties), then StopReplica with delete. When the leader is one of them
        the first live ISR member of the new RS leads at once (Kafka would leave the partition
        without a leader until some later election); with none, the leader is −1 and the event's
        end elects (unclean if the topic allows it)."""
        if not dropped:
            return
        ctx = self.ctx
        epoch = ctx.epoch
        live = ctx.live_broker_ids

        def decide(tp: TopicPartition, li: LeaderIsr) -> codec.PartitionState | None:
            gone = set(dropped[tp])
            s = li.state
            if s.leader not in gone and not gone & set(s.isr):
                return None
            isr = tuple(r for r in s.isr if r not in gone) or s.isr
            leader = s.leader
            if leader in gone:
                a = ctx.assignment(tp)
                rs = a.replicas if a is not None else ()
                candidates = [r for r in rs if r in live and r in isr and r not in gone]
                leader = candidates[0] if candidates else NO_LEADER
            return codec.PartitionState(leader, s.leader_epoch + 1, epoch, isr)

        await self.refresh_states(list(dropped))
        written = await out.writes.write_states(list(dropped), decide)
        # decided, written, then collected (the decision mutates nothing): those written without
        # a leader are the event's to elect at its end
        states = ctx.states
        out.leaderless.update(
            tp for tp in written if (li := states.get(tp)) is not None and li.state.leader == NO_LEADER
        )
        # StopReplica(delete) only where the state no longer needs the removed replicas: written
        # now, or needing no write; a replica whose state write was given up (reported: NOAUTH,
        # say) is still in the ISR or leads in ZooKeeper, and is not deleted under it
        landed = set(written)
        for tp, replicas in dropped.items():
            li = states.get(tp)
            if tp not in landed and li is not None and decide(tp, li) is not None:
                log.warning(
                    "%s-%d: replicas %s not deleted: the state write was given up", *tp, list(replicas)
                )
                continue
            for r in replicas:
                out.requests.add_stop_replica(r, tp, delete=True)

    # --- views --------------------------------------------------------------------------------------

    def partitions_targeting(self, brokers: Collection[int]) -> list[TopicPartition]:
        """The moving partitions whose target replicas hold one of ``brokers`` (from the
        per-broker index: what those brokers host that moves)."""
        ctx = self.ctx
        out = set()
        for b in brokers:
            for tp in ctx.index.hosted_by(b) & ctx.reassigning:  # the smaller set is iterated
                a = ctx.assignment(tp)
                if a is not None and a.is_being_reassigned and b in a.target_replicas:
                    out.add(tp)
        return sorted(out)

"""The active controller's in-memory view of the cluster (Kafka's ControllerContext).

Mutated only by the event loop's single consumer, always after ZooKeeper was written.
"""

from __future__ import annotations

from collections.abc import Iterator, KeysView, Mapping
from dataclasses import dataclass, field

import msgspec

from reassignd.controller.model.moves import Move, MoveState, advance, check_transition, ended_state
from reassignd.controller.model.requests import Source
from reassignd.controller.model.snapshot import BrokerView, PartitionView, TopicView
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.controller.state.partition_index import PartitionIndex
from reassignd.topic_partition import TopicPartition
from reassignd.zk.codec import BrokerRegistration, PartitionState

_NO_PARTITIONS: dict[int, ReplicaAssignment] = {}


class LeaderIsr(msgspec.Struct, frozen=True, gc=False):
    """A partition state znode as last read or written: its content and its version (the
    partition epoch). A msgspec struct, as its state is: a failover builds one per partition."""

    state: PartitionState
    version: int


@dataclass(slots=True)
class ControllerContext:
    epoch: int
    epoch_zk_version: int
    brokers: dict[int, BrokerRegistration] = field(default_factory=dict)
    broker_epochs: dict[int, int] = field(default_factory=dict)
    topic_ids: dict[str, str | None] = field(default_factory=dict)
    assignments: dict[str, dict[int, ReplicaAssignment]] = field(default_factory=dict)
    # the zxid of the topic znode's last change that this controller wrote or that a change
    # event read (its mzxid, unique to that content): a change event finding the znode still at
    # it has nothing to decode (mostly it reads back this controller's own writes)
    topic_mzxids: dict[str, int] = field(default_factory=dict)
    # mutated only through the methods below, which keep ``index``, ``moves`` and the change
    # sets in step with them
    states: dict[TopicPartition, LeaderIsr] = field(default_factory=dict)
    # one record per moving partition (adding or removing replicas in its assignment): its
    # source, original replicas, target, start, batch and lifecycle state (model/moves.py); created and
    # dropped by the assignment's changes, claimed and advanced through the methods below
    moves: dict[TopicPartition, Move] = field(default_factory=dict)
    # moving partitions per topic (the topics of ``moves``, counted)
    reassigning_topics: dict[str, int] = field(default_factory=dict)
    # which partitions each broker replicates or leads (and the stateless and
    # under-replicated ones): a broker's change touches only its own partitions
    index: PartitionIndex = field(default_factory=PartitionIndex)
    # partitions whose assignment or state changed since the control channel's encodings were
    # last brought up to date (WireStates takes them)
    wire_changed: set[TopicPartition] = field(default_factory=set)
    # partitions whose state znode exists but cannot be decoded: reported, never overwritten
    malformed_states: set[TopicPartition] = field(default_factory=set)
    malformed_topics: set[str] = field(default_factory=set)
    topics_to_delete: set[str] = field(default_factory=set)
    dirty_topics: set[str] = field(default_factory=set)
    # the topics whose origins znode (/reassignd/origins/<t>, the moves' original replicas)
    # exists, or may: a stale one is overwritten
    origin_znodes: set[str] = field(default_factory=set)

    @property
    def reassigning(self) -> KeysView[TopicPartition]:
        """The moving partitions (a read-only view of ``moves``)."""
        return self.moves.keys()

    def topic_origins(self, topic: str) -> dict[int, tuple[int, ...]]:
        """The original replicas of ``topic``'s moves, by partition: what its origins znode
        records once the topic is written (the topic write sizes and writes this map)."""
        if topic not in self.reassigning_topics:
            return {}
        moves = self.moves
        return {
            p: m.origins
            for p in self.assignments.get(topic, _NO_PARTITIONS)
            if (m := moves.get((topic, p))) is not None
        }

    def load_origins(self, topic: str, recorded: Mapping[int, tuple[int, ...]]) -> None:
        """The original replicas ``topic``'s origins znode records (the failover load): each
        moving partition takes its own, in their order; a record that does not match the
        partition's ORS as a set is ignored (the move keeps RS − AR)."""
        if topic not in self.reassigning_topics:
            return
        moves, parts = self.moves, self.assignments.get(topic, _NO_PARTITIONS)
        for p, replicas in recorded.items():
            m = moves.get((topic, p))
            a = parts.get(p)
            if m is None or a is None or m.origins == replicas:
                continue
            if set(replicas) == set(a.origins):
                moves[(topic, p)] = msgspec.structs.replace(m, origins=replicas)
                self.dirty_topics.add(topic)  # its reassignment views show them

    # --- moves ---
    def claim_move(
        self, tp: TopicPartition, source: Source, started_at_ms: int | None, *, restart: bool = True
    ) -> None:
        """``source`` started (``restart``: or re-targeted) ``tp``'s move at ``started_at_ms``;
        without ``restart`` only a move no intake claimed yet takes them. A batch's move
        re-targeted by another source is no longer the batch's."""
        m = self.moves.get(tp)
        if m is not None and (restart or m.source is None):
            batch = m.batch if source is Source.BATCH else None
            self.moves[tp] = msgspec.structs.replace(
                m, source=source, started_at_ms=started_at_ms, batch=batch
            )

    def set_move_request_status(self, tp: TopicPartition, status: bool) -> None:
        """Whether a KIP-236 status node follows ``tp``'s move."""
        m = self.moves.get(tp)
        if m is not None and m.request_status != status:
            self.moves[tp] = msgspec.structs.replace(m, request_status=status)

    def set_move_batch(self, tp: TopicPartition, batch: str | None) -> None:
        """The executor batch that runs ``tp``'s move (None: none does)."""
        m = self.moves.get(tp)
        if m is not None and m.batch != batch:
            self.moves[tp] = msgspec.structs.replace(m, batch=batch)

    def move_catching_up(self, tp: TopicPartition) -> None:
        """Phase A sent ``tp``'s LeaderAndIsr: its adding replicas catch up."""
        self._step(tp, MoveState.CATCHING_UP)

    def move_finishing(self, tp: TopicPartition) -> None:
        """Phase B wrote ``tp``'s final state; its topic znode comes next."""
        self._step(tp, MoveState.FINISHING)

    def move_reverting(self, tp: TopicPartition) -> None:
        """A cancel or stop of ``tp``'s move was decided; its topic znode comes next."""
        self._step(tp, MoveState.REVERTING)

    def _step(self, tp: TopicPartition, state: MoveState) -> None:
        """``tp``'s move (if it moves) to ``state``; IllegalMoveTransition when the table has no
        such step."""
        m = self.moves.get(tp)
        if m is not None:
            check_transition(tp, m.state, state)
            if m.state is not state:
                self.moves[tp] = msgspec.structs.replace(m, state=state)

    # --- brokers ---
    @property
    def live_broker_ids(self) -> set[int]:
        return set(self.brokers)

    def add_broker(self, reg: BrokerRegistration, epoch: int) -> None:
        self.brokers[reg.broker_id] = reg
        self.broker_epochs[reg.broker_id] = epoch

    def remove_broker(self, broker_id: int) -> None:
        self.brokers.pop(broker_id, None)
        self.broker_epochs.pop(broker_id, None)

    # --- topics and partitions ---
    def put_topic(self, topic: str, topic_id: str | None, partitions: dict[int, ReplicaAssignment]) -> None:
        before = self.assignments.get(topic, _NO_PARTITIONS)
        self.topic_ids[topic] = topic_id
        self.assignments[topic] = partitions
        self.topic_mzxids.pop(topic, None)
        states, index, changed = self.states, self.index, self.wire_changed
        if not before:  # a new topic (every topic at failover): the index in one pass
            tps = [(topic, p) for p in partitions]
            index.partitions_added(
                (tp, a.replicas, None if (li := states.get(tp)) is None else li.state)
                for tp, a in zip(tps, partitions.values(), strict=True)
            )
            for tp, a in zip(tps, partitions.values(), strict=True):
                if a.adding or a.removing:  # is_being_reassigned, inlined
                    self._track_reassigning(tp, a)
            changed.update(tps)
            self.dirty_topics.add(topic)
            return
        for p, a in partitions.items():
            tp = (topic, p)
            old = before.get(p)
            li = states.get(tp)
            index.assignment_changed(
                tp, None if old is None else old.replicas, a.replicas, None if li is None else li.state
            )
            if old != a:  # an unchanged assignment leaves its move (or none) as it is
                self._track_reassigning(tp, a)
            changed.add(tp)
        for p, old in before.items():
            if p not in partitions:
                tp = (topic, p)
                li = states.get(tp)
                index.assignment_changed(tp, old.replicas, None, None if li is None else li.state)
                self._track_reassigning(tp, None)
                changed.add(tp)
        self.dirty_topics.add(topic)

    def remove_topic(self, topic: str) -> None:
        for p, a in self.assignments.pop(topic, {}).items():
            tp = (topic, p)
            li = self.states.pop(tp, None)
            self.index.assignment_changed(tp, a.replicas, None, None if li is None else li.state)
            if li is not None:
                self.index.state_changed(tp, li.state, None, None)
            self.malformed_states.discard(tp)
            self._track_reassigning(tp, None)
            self.wire_changed.add(tp)
        self.topic_ids.pop(topic, None)
        self.topic_mzxids.pop(topic, None)
        self.dirty_topics.add(topic)

    def assignment(self, tp: TopicPartition) -> ReplicaAssignment | None:
        return self.assignments.get(tp[0], {}).get(tp[1])

    def set_assignment(
        self,
        tp: TopicPartition,
        assignment: ReplicaAssignment,
        origins: tuple[int, ...] | None = None,
    ) -> None:
        """``tp``'s assignment as written; a move it starts takes ``origins`` (the
        replicas before it, in their order) when given, else RS − AR."""
        parts = self.assignments.setdefault(tp[0], {})
        before = parts.get(tp[1])
        parts[tp[1]] = assignment
        if before is None or before.replicas != assignment.replicas:
            li = self.states.get(tp)
            self.index.assignment_changed(
                tp,
                None if before is None else before.replicas,
                assignment.replicas,
                None if li is None else li.state,
            )
        self._track_reassigning(tp, assignment, origins)
        self.wire_changed.add(tp)
        self.dirty_topics.add(tp[0])

    def set_state(self, tp: TopicPartition, leader_isr: LeaderIsr) -> None:
        before = self.states.get(tp)
        self.states[tp] = leader_isr
        a = self.assignment(tp)
        self.index.state_changed(
            tp, None if before is None else before.state, leader_isr.state, None if a is None else a.replicas
        )
        self.malformed_states.discard(tp)
        self.wire_changed.add(tp)
        self.dirty_topics.add(tp[0])

    def load_states(self, states: Mapping[TopicPartition, LeaderIsr]) -> None:
        """Many states at once (the failover load): :meth:`set_state` for each; those of
        partitions without a state yet (all of them at failover) in one pass."""
        known = self.states
        again = [tp for tp in states if tp in known] if known else []
        for tp in again:
            self.set_state(tp, states[tp])
        fresh = {tp: li for tp, li in states.items() if tp not in known} if again else states
        assignments = self.assignments
        self.index.states_loaded(
            (
                tp,
                li.state,
                None if (a := assignments.get(tp[0], _NO_PARTITIONS).get(tp[1])) is None else a.replicas,
            )
            for tp, li in fresh.items()
        )
        known.update(fresh)
        if self.malformed_states:
            self.malformed_states.difference_update(fresh)
        self.wire_changed.update(fresh)
        self.dirty_topics.update({tp[0] for tp in fresh})

    def all_partitions(self) -> Iterator[TopicPartition]:
        for topic, parts in self.assignments.items():
            for p in parts:
                yield (topic, p)

    def _track_reassigning(
        self,
        tp: TopicPartition,
        a: ReplicaAssignment | None,
        origins: tuple[int, ...] | None = None,
    ) -> None:
        """``tp``'s move, in step with its assignment ``a``: created when it starts moving (with
        ``origins``, else RS − AR), re-targeted, dropped (completed or cancelled) when it
        stops. A move keeps its original replicas while they match its ORS as a set (a re-target
        is relative to the same original replicas)."""
        moves = self.moves
        m = moves.get(tp)
        if a is not None and (a.adding or a.removing):  # is_being_reassigned, inlined
            if m is None:
                moves[tp] = Move(tp, a.target_replicas, origins or a.origins)
                self.reassigning_topics[tp[0]] = self.reassigning_topics.get(tp[0], 0) + 1
            else:  # the assignment changed while moving: a re-target, or RS reordered
                target = a.target_replicas
                ors = origins or m.origins
                if set(ors) != set(a.origins):
                    ors = a.origins
                if target != m.target:
                    moves[tp] = msgspec.structs.replace(
                        advance(m, MoveState.ADDING), target=target, origins=ors
                    )
                elif ors != m.origins:
                    moves[tp] = msgspec.structs.replace(m, origins=ors)
        elif m is not None:
            check_transition(tp, m.state, ended_state(m, None if a is None else a.replicas))
            del moves[tp]
            left = self.reassigning_topics[tp[0]] - 1
            if left:
                self.reassigning_topics[tp[0]] = left
            else:
                del self.reassigning_topics[tp[0]]

    # --- views for the HTTP layer ---
    def broker_view(self, broker_id: int) -> BrokerView:
        reg = self.brokers[broker_id]
        return BrokerView(
            broker_id, reg.rack, tuple(str(e) for e in reg.endpoints), self.broker_epochs[broker_id]
        )

    def topic_view(self, topic: str) -> TopicView | None:
        parts = self.assignments.get(topic)
        if parts is None:
            return None
        views = []
        for p in sorted(parts):
            a = parts[p]
            li = self.states.get((topic, p))
            views.append(
                PartitionView(
                    partition=p,
                    replicas=a.replicas,
                    leader=li.state.leader if li else -1,
                    leader_epoch=li.state.leader_epoch if li else -1,
                    isr=li.state.isr if li else (),
                    adding_replicas=a.adding,
                    removing_replicas=a.removing,
                )
            )
        return TopicView(topic, self.topic_ids.get(topic), tuple(views))

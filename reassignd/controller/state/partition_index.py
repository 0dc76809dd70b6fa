"""Which partitions each broker has a part in, kept as the context changes. Pure.

A broker's failure or return, a new broker's full LeaderAndIsr, the offline count and the
executor's under-replicated set then cost what the broker (or the change) touches, never a scan
of every partition (Kafka's onBrokerFailure and onBrokerStartup scan them all).

The context (:mod:`.context`) tells the index of every change of an assignment or a state, with
the value before and after; :func:`recount` builds the same index from scratch, which the tests
compare it with after random sequences of events.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from reassignd.topic_partition import TopicPartition
from reassignd.zk.codec import PartitionState

# a partition state's leader when it has none (partition_logic.NO_LEADER)
_NO_LEADER = -1


def _add(index: dict[int, set[TopicPartition]], keys: Iterable[int], tp: TopicPartition) -> None:
    for k in keys:
        found = index.get(k)
        if found is None:
            index[k] = {tp}
        else:
            found.add(tp)


def _discard(index: dict[int, set[TopicPartition]], keys: Iterable[int], tp: TopicPartition) -> None:
    for k in keys:
        found = index.get(k)
        if found is not None:
            found.discard(tp)
            if not found:
                del index[k]


@dataclass(slots=True)
class PartitionIndex:
    """The partitions of each broker, by the part it has in them."""

    # broker -> partitions whose replica set (adding and removing replicas included) holds it
    replicas: dict[int, set[TopicPartition]] = field(default_factory=dict)
    # leader -> partitions (with an assignment) it leads; -1 (no leader) is a key like any other
    leaders: dict[int, set[TopicPartition]] = field(default_factory=dict)
    # No index of ISR members: an ISR is a subset of the replica set, so ``replicas`` names
    # every partition whose ISR may hold a broker (a failure reads those states anyway), and a
    # third index would cost ~35 bytes per ISR member (10 MiB at 100,000 partitions, RF 3).
    # partitions with an assignment but no state (not created yet, or undecodable)
    stateless: set[TopicPartition] = field(default_factory=set)
    # partitions with a state whose ISR is smaller than their replica set
    under_replicated: set[TopicPartition] = field(default_factory=set)

    def assignment_changed(
        self,
        tp: TopicPartition,
        before: tuple[int, ...] | None,
        after: tuple[int, ...] | None,
        state: PartitionState | None,
    ) -> None:
        """The partition's replica set went from ``before`` to ``after`` (None: no assignment);
        ``state`` is its state now."""
        old = before or ()
        new = after or ()
        if old != new:
            _discard(self.replicas, [r for r in old if r not in new], tp)
            _add(self.replicas, [r for r in new if r not in old], tp)
        if (before is None) != (after is None):  # the state counts only with an assignment
            self._members(tp, state if before is not None else None, state if after is not None else None)
        if after is None:
            self.stateless.discard(tp)
        elif state is None:
            self.stateless.add(tp)
        self._replication(tp, after, state)

    def state_changed(
        self,
        tp: TopicPartition,
        before: PartitionState | None,
        after: PartitionState | None,
        replicas: tuple[int, ...] | None,
    ) -> None:
        """The partition's state went from ``before`` to ``after`` (None: no state); ``replicas``
        is its replica set now (None: no assignment)."""
        if replicas is not None:
            self._members(tp, before, after)
        if after is None and replicas is not None:
            self.stateless.add(tp)
        else:
            self.stateless.discard(tp)
        self._replication(tp, replicas, after)

    def partitions_added(
        self, items: Iterable[tuple[TopicPartition, tuple[int, ...], PartitionState | None]]
    ) -> None:
        """Partitions that had no assignment get one (``(tp, replica set, state now or None)``):
        what :meth:`assignment_changed` from no assignment does for each, in one pass (a new
        topic, and every topic at failover), grouped by replica set and leader so that the sets
        grow by whole lists. A partition without an assignment is neither stateless nor
        under-replicated, so nothing is removed."""
        by_replicas: dict[tuple[int, ...], list[TopicPartition]] = {}
        by_leader: dict[int, list[TopicPartition]] = {}
        stateless: list[TopicPartition] = []
        under: list[TopicPartition] = []
        for tp, replicas, state in items:
            group = by_replicas.get(replicas)
            if group is None:
                by_replicas[replicas] = [tp]
            else:
                group.append(tp)
            if state is None:
                stateless.append(tp)
                continue
            led = by_leader.get(state.leader)
            if led is None:
                by_leader[state.leader] = [tp]
            else:
                led.append(tp)
            if len(state.isr) < len(replicas):
                under.append(tp)
        for replicas, tps in by_replicas.items():
            for r in replicas:
                self.replicas.setdefault(r, set()).update(tps)
        self._grow(by_leader, stateless, under)

    def states_loaded(
        self, items: Iterable[tuple[TopicPartition, PartitionState, tuple[int, ...] | None]]
    ) -> None:
        """Partitions that had no state get one (``(tp, state, replica set or None)``): what
        :meth:`state_changed` from no state does for each, in one pass (the failover load). A
        partition without a state is not under-replicated, so nothing is removed from that set."""
        by_leader: dict[int, list[TopicPartition]] = {}
        loaded: list[TopicPartition] = []
        under: list[TopicPartition] = []
        for tp, state, replicas in items:
            if replicas is None:
                continue
            loaded.append(tp)
            led = by_leader.get(state.leader)
            if led is None:
                by_leader[state.leader] = [tp]
            else:
                led.append(tp)
            if len(state.isr) < len(replicas):
                under.append(tp)
        self.stateless.difference_update(loaded)
        self._grow(by_leader, [], under)

    def _grow(
        self,
        by_leader: dict[int, list[TopicPartition]],
        stateless: list[TopicPartition],
        under: list[TopicPartition],
    ) -> None:
        for leader, tps in by_leader.items():
            self.leaders.setdefault(leader, set()).update(tps)
        self.stateless.update(stateless)
        self.under_replicated.update(under)

    def _members(
        self, tp: TopicPartition, before: PartitionState | None, after: PartitionState | None
    ) -> None:
        """The partition's leader went from that of ``before`` to that of ``after``."""
        if before is not None and (after is None or after.leader != before.leader):
            _discard(self.leaders, (before.leader,), tp)
        if after is not None and (before is None or after.leader != before.leader):
            _add(self.leaders, (after.leader,), tp)

    def _replication(
        self, tp: TopicPartition, replicas: tuple[int, ...] | None, state: PartitionState | None
    ) -> None:
        if replicas is not None and state is not None and len(state.isr) < len(replicas):
            self.under_replicated.add(tp)
        else:
            self.under_replicated.discard(tp)

    # --- what the handlers ask ----------------------------------------------------------------------

    def hosted_by(self, broker_id: int) -> set[TopicPartition]:
        """The partitions whose replica set holds ``broker_id`` (the index's own set: read it,
        do not change it)."""
        return self.replicas.get(broker_id, _EMPTY)

    def led_by(self, broker_id: int) -> set[TopicPartition]:
        """The partitions (with an assignment) whose leader is ``broker_id`` (the index's own
        set: read it, do not change it)."""
        return self.leaders.get(broker_id, _EMPTY)

    def without_live_leader(self, live: Iterable[int]) -> set[TopicPartition]:
        """Partitions with an assignment whose leader is not live: no state, leader −1, or a
        leader that is not in ``live``."""
        alive = set(live)
        out = set(self.stateless)
        for leader, led in self.leaders.items():
            if leader == _NO_LEADER or leader not in alive:
                out |= led
        return out

    def count_without_live_leader(self, live: Iterable[int]) -> int:
        alive = set(live)
        return len(self.stateless) + sum(
            len(led) for leader, led in self.leaders.items() if leader == _NO_LEADER or leader not in alive
        )


_EMPTY: set[TopicPartition] = set()


def recount(
    assignments: Mapping[str, Mapping[int, tuple[int, ...]]], states: Mapping[TopicPartition, PartitionState]
) -> PartitionIndex:
    """The index of ``assignments`` (each partition's replica set) and ``states`` built from
    scratch: what the kept one must equal. Leaders are those of the partitions
    with an assignment (a state left without one, its partition gone from the topic znode, counts
    nowhere)."""
    index = PartitionIndex()
    for topic, parts in assignments.items():
        for p, replicas in parts.items():
            tp = (topic, p)
            _add(index.replicas, replicas, tp)
            state = states.get(tp)
            if state is None:
                index.stateless.add(tp)
                continue
            _add(index.leaders, (state.leader,), tp)
            if len(state.isr) < len(replicas):
                index.under_replicated.add(tp)
    return index

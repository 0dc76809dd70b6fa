"""ISR changes as the partition leader, the pure part: which partitions get which ISR (the rules
are isr_decision.py's), when each must be looked at again, and what a write's outcome does to
memory. isr.py does the ZooKeeper writes and notifications.

Nothing scans every led partition periodically: a partition is reviewed when something happened
to it (``ReplicaManager.isr_candidates``: a follower's fetch reached the high watermark, a control
request changed it, the live brokers changed) or when its ISR could next shrink for lag (:class:`IsrSchedule`). A follower
that stays caught up in a live fetch session pushes that deadline forward each time it comes.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field

from reassignd.broker import replica as rm
from reassignd.broker.isr_decision import decide_isr, lag_deadline_s
from reassignd.broker.replica import ReplicaRole
from reassignd.broker.state import ReplicaManager
from reassignd.topic_partition import TopicPartition
from reassignd.zk.codec import PartitionState


@dataclass(frozen=True, slots=True)
class IsrUpdate:
    """Set the state znode of ``tp`` to ``isr`` at version ``partition_epoch``."""

    tp: TopicPartition
    leader: int
    leader_epoch: int
    partition_epoch: int
    controller_epoch: int  # kept from the state the leader learned
    isr: tuple[int, ...]

    @property
    def state(self) -> PartitionState:
        return PartitionState(self.leader, self.leader_epoch, self.controller_epoch, self.isr)


DEADLINE_SLACK_S = 0.001  # a follower lags once *more* than the lag time has passed


@dataclass(slots=True)
class IsrReview:
    updates: list[IsrUpdate] = field(default_factory=list)
    deadlines: dict[TopicPartition, float | None] = field(default_factory=dict)  # not updated: next look


def review_isr(
    mgr: ReplicaManager,
    tps: Iterable[TopicPartition],
    now: float,
    lag_max_s: float,
    in_flight: frozenset[TopicPartition] = frozenset(),
) -> IsrReview:
    """The ISR writes the leader wants for ``tps``, and when to look again at the others."""
    review = IsrReview()
    for tp in sorted(set(tps) - in_flight):
        r = mgr.replicas.get(tp)
        if r is None or r.role is not ReplicaRole.LEADER or r.isr_fenced:
            continue
        r = mgr.grown(r, now)
        view = rm.isr_view(r, mgr.broker_id, mgr.live_brokers, mgr.seen(r))
        change = decide_isr(view, now, lag_max_s)
        if change is not None:
            review.updates.append(
                IsrUpdate(
                    tp, mgr.broker_id, r.leader_epoch, change.expected_version, r.controller_epoch, change.isr
                )
            )
            continue
        deadline = lag_deadline_s(view, now, lag_max_s)
        if deadline is not None and deadline <= now:
            deadline = now + lag_max_s  # lagging, yet nothing to change (the ISR never empties)
        review.deadlines[tp] = None if deadline is None else deadline + DEADLINE_SLACK_S
    return review


def plan_isr_updates(
    mgr: ReplicaManager,
    now: float,
    lag_max_s: float,
    tps: Iterable[TopicPartition] | None = None,
    in_flight: frozenset[TopicPartition] = frozenset(),
) -> list[IsrUpdate]:
    """The ISR writes the leader wants for ``tps`` (default: every partition it leads)."""
    return review_isr(mgr, mgr.led if tps is None else tps, now, lag_max_s, in_flight).updates


class IsrSchedule:
    """When to review which led partition next (one pending time per partition)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, TopicPartition]] = []
        self._due: dict[TopicPartition, float] = {}

    def __len__(self) -> int:
        return len(self._due)

    def at(self, tp: TopicPartition, when: float | None) -> None:
        """Review ``tp`` at ``when`` (None: only when something happens to it)."""
        if when is None:
            self._due.pop(tp, None)
            return
        if self._due.get(tp) == when:
            return
        self._due[tp] = when
        heapq.heappush(self._heap, (when, tp))

    def pop_due(self, now: float) -> list[TopicPartition]:
        out = []
        while self._heap and self._heap[0][0] <= now:
            when, tp = heapq.heappop(self._heap)
            if self._due.get(tp) == when:
                del self._due[tp]
                out.append(tp)
        return out

    def next_s(self) -> float | None:
        while self._heap and self._due.get(self._heap[0][1]) != self._heap[0][0]:
            heapq.heappop(self._heap)  # superseded
        return self._heap[0][0] if self._heap else None


def _current(mgr: ReplicaManager, update: IsrUpdate) -> rm.Replica | None:
    r = mgr.replicas.get(update.tp)
    if r is None or r.role is not ReplicaRole.LEADER or r.leader_epoch != update.leader_epoch:
        return None
    return r


def isr_written(mgr: ReplicaManager, update: IsrUpdate, version: int) -> None:
    """The write succeeded (new znode version ``version``): commit it to memory, unless a newer
    LeaderAndIsr arrived meanwhile (the controller then already knows better)."""
    r = _current(mgr, update)
    if r is not None and r.partition_epoch == update.partition_epoch:
        mgr.put(rm.with_isr(r, update.isr, version, mgr.broker_id))


def isr_conflicted(
    mgr: ReplicaManager, update: IsrUpdate, zk_state: PartitionState | None, version: int
) -> bool:
    """The write hit a version conflict and the znode was re-read (``None``: gone). Adopt it if this
    agent still leads the same epoch (True: retry), else stop changing this ISR (False)."""
    r = _current(mgr, update)
    if r is None:
        return False
    if zk_state is None:
        fenced = rm.with_zk_state(
            r,
            mgr.broker_id,
            leader=-1,
            leader_epoch=-1,
            controller_epoch=r.controller_epoch,
            isr=r.isr,
            version=-1,
        )
        mgr.put(fenced)
        return False
    adopted = rm.with_zk_state(
        r,
        mgr.broker_id,
        leader=zk_state.leader,
        leader_epoch=zk_state.leader_epoch,
        controller_epoch=zk_state.controller_epoch,
        isr=zk_state.isr,
        version=version,
    )
    mgr.put(adopted)
    return not adopted.isr_fenced

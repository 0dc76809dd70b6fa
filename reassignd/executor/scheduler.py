"""Which pending moves start now. Pure and deterministic.

Every move in flight, from a batch or not (an API or legacy reassignment), loads the brokers it
touches: one **incoming** move on each adding replica's broker (AR), one **outgoing** move on each
removing replica's broker (RR), one **leader** move on the old and the new leader when leadership
changes, and one move in the cluster. A pending move of batch B starts only if, with it, every
broker it touches stays within B's cap for that broker (``moves_per_broker``, or the cap adaptive
concurrency gave it; incoming and outgoing counted apart) and ``leader_moves_per_broker``, and the
cluster within B's ``moves_in_cluster`` and the controller's cluster cap. A batch's limits are thus
the load it accepts on the cluster while it adds to it. A replica leaving a broker that is not
live loads nothing: a dead broker does no work, so a batch healing it is capped by the brokers
that receive and serve the copies.

Batches go by priority (higher first), then age (older first), then id; each batch's moves in
its strategy order: ``postpone_under_replicated`` (partitions under-replicated now go last),
``small_first`` / ``large_first`` (partition size), chained in the order the batch lists them,
ties in the batch's own order. With ``spread_brokers`` (wherever it is listed) moves are taken
round-robin across destination brokers, each broker's queue in that order, so the first slots go
to as many brokers as possible rather than to the head of one list.

A move between the log dirs of a broker (JBOD, :func:`dir_shape`) loads each broker whose
replica it moves with one incoming and one outgoing move: the disks copy.

Loads only grow while one call decides, so a move that does not fit is dropped for the rest of
the call: a call costs O(moves × brokers per move), not a scan per start.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field

from reassignd.executor.model import (
    Batch,
    BatchMove,
    BatchMoveState,
    BatchState,
    Limits,
    Strategy,
)
from reassignd.topic_partition import Replicas, TopicPartition

NO_DESTINATION = -1  # the round-robin queue of moves that add no replica (reorders, shrinks)


@dataclass(frozen=True, slots=True)
class MoveShape:
    """A move as the scheduler sees it."""

    tp: TopicPartition
    sources: frozenset[int]  # RR: brokers a replica leaves
    destinations: frozenset[int]  # AR: brokers a replica joins
    leader: int | None = None  # the leader now: it serves the copies
    leader_after: int | None = None  # the leader once the move completes

    @property
    def leader_brokers(self) -> frozenset[int]:
        """The brokers whose leadership the move changes (none if it keeps its leader)."""
        if self.leader is None or self.leader_after is None or self.leader == self.leader_after:
            return frozenset()
        return frozenset((self.leader, self.leader_after))


def move_shape(
    tp: TopicPartition,
    current: Replicas,
    target: Replicas,
    leader: int | None,
    live: Collection[int] | None = None,
) -> MoveShape:
    """The shape of moving ``current`` (ORS) to ``target`` (TRS): AR = TRS − ORS, RR = ORS − TRS
    (only its ``live`` brokers, when given: a dead one does no work); a leader outside TRS hands
    over to TRS's preferred (first) replica."""
    leader_after = leader if leader is None or leader in target else (target[0] if target else None)
    sources = frozenset(current) - set(target)
    if live is not None:
        sources = frozenset(b for b in sources if b in live)
    return MoveShape(tp, sources, frozenset(target) - set(current), leader, leader_after)


def dir_shape(tp: TopicPartition, move: BatchMove) -> MoveShape:
    """A move between the log dirs of its brokers (JBOD): each pinned replica's broker copies
    within itself, so it counts as one incoming and one outgoing move there (the same caps)."""
    brokers = frozenset(move.pinned)
    return MoveShape(tp, brokers, brokers)


@dataclass(frozen=True, slots=True)
class BatchQueue:
    """A runnable batch: its pending moves (in the spec's order) and how to start them."""

    batch_id: str
    priority: int
    created_ms: int
    limits: Limits
    strategy: tuple[Strategy, ...]
    pending: tuple[MoveShape, ...]
    broker_caps: Mapping[int, int] = field(default_factory=dict)  # adaptive concurrency's caps

    def cap(self, broker: int) -> int:
        return self.broker_caps.get(broker, self.limits.initial_cap)


def queue_of(
    batch: Batch, shape: Callable[[TopicPartition, BatchMove], MoveShape | None]
) -> BatchQueue | None:
    """``batch`` as the scheduler takes it, if it may start moves (pending or running); ``shape``
    gives each pending move's shape from the cluster now (None: leave it out this time)."""
    if batch.state not in (BatchState.PENDING, BatchState.RUNNING):
        return None
    pending = tuple(s for tp, m in batch.in_state(BatchMoveState.PENDING) if (s := shape(tp, m)) is not None)
    spec = batch.spec
    return BatchQueue(
        batch.batch_id,
        spec.priority,
        batch.created_ms,
        spec.limits,
        spec.strategy,
        pending,
        batch.broker_caps,
    )


@dataclass(frozen=True, slots=True)
class Start:
    batch_id: str
    tp: TopicPartition


class _Load:
    """Moves in flight per broker (incoming, outgoing, leader) and in the cluster."""

    def __init__(self, running: Iterable[MoveShape]) -> None:
        self.incoming: Counter[int] = Counter()
        self.outgoing: Counter[int] = Counter()
        self.leaders: Counter[int] = Counter()
        self.total = 0
        self.busy: set[TopicPartition] = set()
        for move in running:
            self.add(move)

    def copy(self) -> _Load:
        other = _Load(())
        other.incoming, other.outgoing = self.incoming.copy(), self.outgoing.copy()
        other.leaders, other.total, other.busy = self.leaders.copy(), self.total, set(self.busy)
        return other

    def add(self, move: MoveShape) -> None:
        self.incoming.update(move.destinations)
        self.outgoing.update(move.sources)
        self.leaders.update(move.leader_brokers)
        self.total += 1
        self.busy.add(move.tp)

    def fits(self, move: MoveShape, queue: BatchQueue, cluster_cap: int) -> bool:
        limits = queue.limits
        per_leader = limits.leader_moves_per_broker
        return (
            self.total < min(cluster_cap, limits.moves_in_cluster)
            and all(self.incoming[b] < queue.cap(b) for b in move.destinations)
            and all(self.outgoing[b] < queue.cap(b) for b in move.sources)
            and all(self.leaders[b] < per_leader for b in move.leader_brokers)
        )


def choose_moves(
    running: Iterable[MoveShape],
    batches: Iterable[BatchQueue],
    cluster_cap: int,
    sizes: Mapping[TopicPartition, int],
    under_replicated: Collection[TopicPartition],
) -> tuple[Start, ...]:
    """The moves to start now, in the order chosen. ``running`` is every move in flight (batch or
    not); ``sizes`` the partitions' sizes in bytes (absent: 0); ``under_replicated`` the
    partitions whose ISR is smaller than their replica set now."""
    load = _Load(running)
    chosen: list[Start] = []
    for queue in sorted(batches, key=lambda q: (-q.priority, q.created_ms, q.batch_id)):
        order = _ordered(queue, sizes, under_replicated)
        if Strategy.SPREAD_BROKERS in queue.strategy:
            order = _round_robin(order, load, queue, cluster_cap)
        for move in order:
            if load.total >= min(cluster_cap, queue.limits.moves_in_cluster):
                break
            if move.tp not in load.busy and load.fits(move, queue, cluster_cap):
                load.add(move)
                chosen.append(Start(queue.batch_id, move.tp))
    return tuple(chosen)


def _ordered(
    queue: BatchQueue, sizes: Mapping[TopicPartition, int], under_replicated: Collection[TopicPartition]
) -> list[MoveShape]:
    keys: list[Callable[[MoveShape], int]] = []
    for strategy in queue.strategy:
        match strategy:
            case Strategy.SMALL_FIRST:
                keys.append(lambda m: sizes.get(m.tp, 0))
            case Strategy.LARGE_FIRST:
                keys.append(lambda m: -sizes.get(m.tp, 0))
            case Strategy.POSTPONE_UNDER_REPLICATED:
                keys.append(lambda m: m.tp in under_replicated)
            case Strategy.SPREAD_BROKERS:
                pass
    indexed = sorted(enumerate(queue.pending), key=lambda im: (*(key(im[1]) for key in keys), im[0]))
    return [m for _, m in indexed]


def _round_robin(order: list[MoveShape], load: _Load, batch: BatchQueue, cluster_cap: int) -> list[MoveShape]:
    """``order`` re-sequenced round-robin over destination brokers (ascending ids): each turn a
    broker offers the first move of its queue that fits once the moves offered before it have
    started. A move that does not fit then never will in this call, and is left out."""
    queues: dict[int, list[MoveShape]] = {}
    for move in order:
        for broker in sorted(move.destinations) or (NO_DESTINATION,):
            queues.setdefault(broker, []).append(move)
    heads = dict.fromkeys(queues, 0)
    trial = load.copy()
    offered: list[MoveShape] = []
    dropped: set[TopicPartition] = set()
    brokers = sorted(queues)
    while brokers:
        still: list[int] = []
        for broker in brokers:
            queue, i = queues[broker], heads[broker]
            while i < len(queue):
                move, i = queue[i], i + 1
                if move.tp in trial.busy or move.tp in dropped:
                    continue
                if trial.fits(move, batch, cluster_cap):
                    trial.add(move)
                    offered.append(move)
                    break
                dropped.add(move.tp)
            heads[broker] = i
            if i < len(queue):
                still.append(broker)
        brokers = still
    return offered

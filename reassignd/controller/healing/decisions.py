"""Self-healing's decisions: which lost brokers to record, forget, stop healing or heal now, from
the cluster as the controller holds it. Pure (docs/design.md, "Self-healing").

A broker is *lost* when replicas name it and it is not registered. Its loss is recorded in
ZooKeeper (``/reassignd/self_healing/<id>``, ``lost_at_ms``) so the grace survives a failover.
Once the grace is over, each *round* plans the replicas still on it elsewhere and submits them as
one batch, ``self-healing-broker-<id>-<lost_at_ms>`` (then ``...-r2``, ``...-r3`` when a round
left some behind): the id is a function of the record, so a controller that took over after an
unknown outcome finds the batch by its id instead of submitting a second one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass

from reassignd.executor.model import Adaptive, Batch, BatchMoveState, BatchState, Limits
from reassignd.topic_partition import Replicas, TopicPartition

OWNER = "self-healing"
_BATCH_ID = re.compile(r"self-healing-broker-(\d+)-(\d+)(?:-r(\d+))?")


# a heal's batch without the controller's adaptive default: its caps may rise to this many times
# the default cap (a lost broker's partitions are under-replicated until it ends; the caps still
# halve when the moves hurt the cluster)
HEAL_MAX_CAP_FACTOR = 8


def heal_limits(
    moves_per_broker: int,
    moves_in_cluster: int,
    leader_moves_per_broker: int,
    adaptive: tuple[int, int] | None,
) -> Limits:
    """A heal's batch: the controller's batch defaults, always with adaptive concurrency — its
    default bounds, or from the default cap up to ``HEAL_MAX_CAP_FACTOR`` times it."""
    bounds = adaptive if adaptive is not None else (moves_per_broker, HEAL_MAX_CAP_FACTOR * moves_per_broker)
    return Limits(
        moves_per_broker=moves_per_broker,
        moves_in_cluster=moves_in_cluster,
        leader_moves_per_broker=leader_moves_per_broker,
        adaptive=Adaptive(*bounds),
    )


def batch_id(broker_id: int, lost_at_ms: int, round_: int) -> str:
    base = f"self-healing-broker-{broker_id}-{lost_at_ms}"
    return base if round_ == 1 else f"{base}-r{round_}"


def batch_round(batch: Batch, broker_id: int, lost_at_ms: int) -> int | None:
    """The round of ``broker_id``'s loss at ``lost_at_ms`` that ``batch`` is, or None."""
    if batch.spec.owner != OWNER:
        return None
    m = _BATCH_ID.fullmatch(batch.batch_id)
    if m is None or int(m[1]) != broker_id or int(m[2]) != lost_at_ms:
        return None
    return int(m[3] or 1)


def hosted_by_offline(
    assignments: Iterable[tuple[TopicPartition, Replicas]], live: Collection[int]
) -> dict[int, list[TopicPartition]]:
    """Each broker that is not live and that replicas name: its partitions."""
    out: dict[int, list[TopicPartition]] = {}
    for tp, replicas in assignments:
        for b in replicas:
            if b not in live:
                out.setdefault(b, []).append(tp)
    return out


@dataclass(frozen=True, slots=True)
class Rounds:
    """One lost broker's batches (of its current loss), oldest round first."""

    batches: tuple[Batch, ...]

    @property
    def next_round(self) -> int:
        return len(self.batches) + 1

    @property
    def unfinished(self) -> Batch | None:
        return next((b for b in self.batches if b.state.unfinished), None)

    @property
    def last(self) -> Batch | None:
        return self.batches[-1] if self.batches else None


def rounds_of(batches: Iterable[Batch], broker_id: int, lost_at_ms: int) -> Rounds:
    found = [(r, b) for b in batches if (r := batch_round(b, broker_id, lost_at_ms)) is not None]
    return Rounds(tuple(b for _r, b in sorted(found, key=lambda x: x[0])))


def moved_nothing(batch: Batch) -> bool:
    """A round that ended without completing a move: another round would plan the same."""
    return not batch.state.unfinished and not any(True for _ in batch.in_state(BatchMoveState.COMPLETED))


@dataclass(frozen=True, slots=True)
class Decision:
    """What one evaluation does, in this order: record the new losses, end the healing of the
    brokers that returned (their unfinished batch stopped) or that host nothing any more, then
    heal the brokers whose grace is over."""

    record: tuple[int, ...] = ()
    returned: tuple[int, ...] = ()
    emptied: tuple[int, ...] = ()
    heal: tuple[int, ...] = ()


def decide(
    lost: Mapping[int, int],
    hosted: Mapping[int, Collection[TopicPartition]],
    live: Collection[int],
    batches: Iterable[Batch],
    grace_ms: int,
    now_ms: int,
    stalled: Collection[int] = (),
) -> Decision:
    """``lost``: the recorded losses (broker -> lost_at_ms); ``hosted``: what the brokers that are
    not live host; ``stalled``: brokers whose last round moved nothing (no new round for them
    until the brokers change)."""
    all_batches = list(batches)
    record = tuple(sorted(b for b in hosted if b not in lost))
    returned: list[int] = []
    emptied: list[int] = []
    heal: list[int] = []
    for broker, lost_at in sorted(lost.items()):
        rounds = rounds_of(all_batches, broker, lost_at)
        if broker in live:
            returned.append(broker)
        elif not hosted.get(broker):
            if rounds.unfinished is None:
                emptied.append(broker)
        elif now_ms >= lost_at + grace_ms and rounds.unfinished is None and broker not in stalled:
            last = rounds.last
            if last is None or not moved_nothing(last):
                heal.append(broker)
    return Decision(tuple(record), tuple(returned), tuple(emptied), tuple(heal))


def busy_partitions(batches: Iterable[Batch], reassigning: Collection[TopicPartition]) -> set[TopicPartition]:
    """Partitions a heal must not move now: moving already, or waiting in an unfinished batch."""
    busy = set(reassigning)
    for batch in batches:
        if batch.state.unfinished:
            busy.update(
                tp
                for tp, m in batch.moves.items()
                if m.state in (BatchMoveState.PENDING, BatchMoveState.RUNNING)
            )
    return busy


@dataclass(frozen=True, slots=True)
class Heal:
    """What one round of a broker's heal moves: ``partitions``, and every lost broker whose
    replicas in them move with its own (``leaving``)."""

    partitions: frozenset[TopicPartition]
    leaving: frozenset[int]
    waiting: int  # partitions left for later: moving already, or on another lost broker still in its grace


def healable(
    broker: int,
    hosted: Iterable[TopicPartition],
    replicas: Callable[[TopicPartition], Replicas | None],
    live: Collection[int],
    due: Collection[int],
    busy: Collection[TopicPartition],
) -> Heal:
    """The partitions of ``broker`` a round moves now. A move completes only once every replica of
    its target is in the ISR, so a partition with replicas on other brokers that are not live
    moves them all at once, in this round: only when each of those brokers' grace is over too
    (``due``); otherwise it waits for theirs, and the first heal of one of them takes it."""
    partitions: set[TopicPartition] = set()
    leaving = {broker}
    waiting = 0
    for tp in hosted:
        current = replicas(tp)
        if current is None:
            continue
        others = {b for b in current if b not in live and b != broker}
        if tp in busy or not others <= set(due):
            waiting += 1
            continue
        partitions.add(tp)
        leaving |= others
    return Heal(frozenset(partitions), frozenset(leaving), waiting)


def outcome_of(batch: Batch | None) -> str:
    """How a round that ended left its broker, for the ``self_healing_ended`` record."""
    if batch is None:
        return "completed"
    return "failed" if batch.state is BatchState.FAILED else "completed"

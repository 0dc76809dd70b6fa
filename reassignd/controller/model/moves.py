"""One record per moving partition: where its move came from, what it moves from and to, and
where it is in its lifecycle (Cruise Control's ``ExecutionTask``, with its transition table).

Pure values. The controller context holds one :class:`Move` per partition whose assignment in
ZooKeeper has adding or removing replicas, created when that assignment is written or read and
dropped when it no longer moves (docs/design.md, "Moves"). A move exists in memory only once
ZooKeeper says it exists (persist, then commit): a request refused before phase U never becomes
one, so no state names it.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Mapping

import msgspec

from reassignd.controller.model.requests import Source
from reassignd.topic_partition import TopicPartition


class MoveState(enum.Enum):
    ADDING = "adding"  # phase U written: its adding replicas not started yet
    CATCHING_UP = "catching_up"  # phase A sent (LeaderAndIsr to ORS and AR): waiting for TRS ⊆ ISR
    FINISHING = "finishing"  # phase B wrote the final state; the topic znode (RS = TRS) comes next
    REVERTING = "reverting"  # a cancel or stop decided; its topic znode write ends the move
    COMPLETED = "completed"  # RS = TRS written by phase B: the move ended at its target (terminal)
    CANCELLED = "cancelled"  # it ended otherwise: reverted, stopped, re-targeted back, deleted (terminal)

    @property
    def terminal(self) -> bool:
        return not TRANSITIONS[self]


# a move nothing has decided the end of yet: what phase A, the completion test and a revert take
LIVE = frozenset({MoveState.ADDING, MoveState.CATCHING_UP})

# Every legal step this controller takes; a step not named here is a bug (IllegalMoveTransition:
# the event is refused and memory reloaded from ZooKeeper). A live move (ADDING, CATCHING_UP) may
# be re-targeted (→ ADDING: phase U again), have phase A run (again, on failover or a broker's
# return), finish, be reverted, or end elsewhere through a write that re-targets it back to its
# original replicas. FINISHING and REVERTING last one event, between a decision and the topic
# write that ends the move: a move completes only through phase B, and nothing else happens to
# one being finished or reverted. A move ZooKeeper says someone else ended (a topic change read,
# a deletion) is dropped whatever its state: ZooKeeper's word is no step of ours.
TRANSITIONS: Mapping[MoveState, frozenset[MoveState]] = {
    MoveState.ADDING: LIVE | {MoveState.FINISHING, MoveState.REVERTING, MoveState.CANCELLED},
    MoveState.CATCHING_UP: LIVE | {MoveState.FINISHING, MoveState.REVERTING, MoveState.CANCELLED},
    MoveState.FINISHING: frozenset({MoveState.COMPLETED}),
    MoveState.REVERTING: frozenset({MoveState.CANCELLED}),
    MoveState.COMPLETED: frozenset(),
    MoveState.CANCELLED: frozenset(),
}


class IllegalMoveTransition(RuntimeError):
    """A move asked to take a step its transition table does not have: a bug of ours, which the
    controller's failure classification treats as deterministic (the event is refused)."""

    def __init__(self, tp: TopicPartition, before: MoveState, after: MoveState) -> None:
        super().__init__(f"move of {tp[0]}-{tp[1]}: illegal transition {before.value} -> {after.value}")
        self.tp = tp
        self.before = before
        self.after = after


class Move(msgspec.Struct, frozen=True, gc=False):
    """A partition's move. ``source`` is None until an intake claims it (a move found in
    ZooKeeper at failover, or written by someone else, shows as "api" until then);
    ``request_status`` says a KIP-236 status node (/admin/reassignments/<t>/<p>) follows it (a
    sequenced request started or re-targeted it); ``batch`` names the executor batch running it,
    when one does."""

    tp: TopicPartition
    target: tuple[int, ...]  # TRS
    origins: tuple[int, ...]  # ORS: the replicas before the move, in their order
    state: MoveState = MoveState.ADDING
    source: Source | None = None
    started_at_ms: int | None = None
    request_status: bool = False
    batch: str | None = None


def check_transition(tp: TopicPartition, before: MoveState, after: MoveState) -> None:
    if after not in TRANSITIONS[before]:
        raise IllegalMoveTransition(tp, before, after)


def advance(move: Move, state: MoveState) -> Move:
    """The move in ``state``; IllegalMoveTransition when the table has no such step."""
    check_transition(move.tp, move.state, state)
    return msgspec.structs.replace(move, state=state)


def ended_state(move: Move, replicas: tuple[int, ...] | None) -> MoveState:
    """How a move ended once its partition's assignment is ``replicas`` with nothing moving (None:
    the partition is gone): COMPLETED at its target, CANCELLED otherwise; a move being reverted
    is CANCELLED wherever it stops (a stop keeping every adding replica ends at the target's
    replicas)."""
    if move.state is MoveState.REVERTING:
        return MoveState.CANCELLED
    return (
        MoveState.COMPLETED
        if replicas is not None and set(replicas) == set(move.target)
        else MoveState.CANCELLED
    )


# --- selection by state (what the reassignment algorithm and the batch runner take) ----------------


def next_phase(move: Move | None, isr: Collection[int]) -> MoveState:
    """Where the reassignment algorithm (KIP-455) takes a partition it was handed: FINISHING
    (phase B) when nothing moves (a reorder or a cancel's write: complete at once) or when the
    move's target replicas are all in the ISR (TRS ⊆ ISR, Kafka's completion test), CATCHING_UP
    (phase A) otherwise. The move's state decides whether it may take that step
    (:func:`check_transition`): a live one may, one whose end its event already decided
    (finishing, reverting) may not."""
    if move is None:
        return MoveState.FINISHING
    in_sync = set(isr)
    return MoveState.FINISHING if all(r in in_sync for r in move.target) else MoveState.CATCHING_UP


def revertible(move: Move | None, target: tuple[int, ...]) -> bool:
    """Whether a batch's stop may revert ``move``: it is live and still goes to the ``target``
    the batch started it to (a move re-targeted since, or already ending, is not the batch's to
    revert)."""
    return move is not None and move.state in LIVE and move.target == target


def of_batch(moves: Mapping[TopicPartition, Move]) -> dict[str, dict[TopicPartition, Move]]:
    """The moves each executor batch runs (``Move.batch``), by batch: a batch's running moves
    as ZooKeeper and the context say they are (its moves between log dirs have none)."""
    by_batch: dict[str, dict[TopicPartition, Move]] = {}
    for tp, m in moves.items():
        if m.batch is not None:
            by_batch.setdefault(m.batch, {})[tp] = m
    return by_batch

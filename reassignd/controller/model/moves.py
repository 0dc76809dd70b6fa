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
from collections.abc import Mapping

import msgspec

from reassignd.controller.model.requests import Source
from reassignd.topic_partition import TopicPartition


class MoveState(enum.Enum):
    ADDING = "adding"  # phase U written: waiting for TRS ⊆ ISR (phase A on each attempt)
    FINISHING = "finishing"  # phase B: the final state written, the topic znode not yet
    COMPLETED = "completed"  # RS = TRS written: the move ended at its target (terminal)
    CANCELLED = "cancelled"  # it stopped moving elsewhere than its target: reverted, stopped (terminal)

    @property
    def terminal(self) -> bool:
        return not TRANSITIONS[self]


# Every legal step; a step not named here is a bug (IllegalMoveTransition). ADDING → ADDING is
# a re-target (a new TRS while moving); FINISHING → FINISHING a phase B run again (the last one's
# topic write failed after its state write: the event was refused, the move stayed), FINISHING →
# ADDING a re-target or an ISR that no longer holds TRS by then.
TRANSITIONS: Mapping[MoveState, frozenset[MoveState]] = {
    MoveState.ADDING: frozenset(
        {MoveState.ADDING, MoveState.FINISHING, MoveState.COMPLETED, MoveState.CANCELLED}
    ),
    MoveState.FINISHING: frozenset(
        {MoveState.ADDING, MoveState.FINISHING, MoveState.COMPLETED, MoveState.CANCELLED}
    ),
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
    origins: tuple[int, ...]  # the replicas before the move, in their order
    state: MoveState = MoveState.ADDING
    source: Source | None = None
    started_at_ms: int | None = None
    request_status: bool = False
    batch: str | None = None

    @property
    def owner(self) -> str:
        """Who the move answers to: its batch, its KIP-236 request, or else its source."""
        if self.batch is not None:
            return f"batch:{self.batch}"
        if self.request_status:
            return Source.REQUEST.value
        return (self.source or Source.API).value


def check_transition(tp: TopicPartition, before: MoveState, after: MoveState) -> None:
    if after not in TRANSITIONS[before]:
        raise IllegalMoveTransition(tp, before, after)


def advance(move: Move, state: MoveState) -> Move:
    """The move in ``state``; IllegalMoveTransition when the table has no such step."""
    check_transition(move.tp, move.state, state)
    return msgspec.structs.replace(move, state=state)


def ended_state(move: Move, replicas: tuple[int, ...] | None) -> MoveState:
    """How a move ended once its partition's assignment is ``replicas`` with nothing moving (None:
    the partition is gone): COMPLETED at its target, CANCELLED otherwise."""
    return (
        MoveState.COMPLETED
        if replicas is not None and set(replicas) == set(move.target)
        else MoveState.CANCELLED
    )

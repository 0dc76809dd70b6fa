"""The move lifecycle's transition table: every legal step is taken, every other one raises."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest

import reassignd
from reassignd.controller.effects import failures
from reassignd.controller.model.moves import (
    TRANSITIONS,
    IllegalMoveTransition,
    Move,
    MoveState,
    advance,
    ended_state,
)

_LIVE = (MoveState.ADDING, MoveState.CATCHING_UP)
# a live move is re-targeted, has phase A run, finishes, is reverted or ends elsewhere; a move
# being finished only completes, one being reverted only ends cancelled
LEGAL = {
    *((a, b) for a in _LIVE for b in _LIVE),
    *((a, b) for a in _LIVE for b in (MoveState.FINISHING, MoveState.REVERTING, MoveState.CANCELLED)),
    (MoveState.FINISHING, MoveState.COMPLETED),
    (MoveState.REVERTING, MoveState.CANCELLED),
}


def test_a_move_completes_only_through_phase_b() -> None:
    assert {a for a, nexts in TRANSITIONS.items() if MoveState.COMPLETED in nexts} == {MoveState.FINISHING}


def test_the_table_names_every_state() -> None:
    assert set(TRANSITIONS) == set(MoveState)
    assert {(a, b) for a, nexts in TRANSITIONS.items() for b in nexts} == LEGAL


@pytest.mark.parametrize(("before", "after"), list(itertools.product(MoveState, MoveState)))
def test_every_pair(before: MoveState, after: MoveState) -> None:
    move = Move(("t", 0), target=(2, 3), origins=(1, 2), state=before)
    if (before, after) in LEGAL:
        moved = advance(move, after)
        assert moved.state is after
        assert (moved.tp, moved.target, moved.origins) == (
            move.tp,
            move.target,
            move.origins,
        )
    else:
        with pytest.raises(IllegalMoveTransition) as raised:
            advance(move, after)
        # a bug: the event is refused, the controller does not resign
        assert failures.classify(raised.value) is failures.Failure.DETERMINISTIC
        assert failures.describe(raised.value).bug


def test_terminal_states() -> None:
    assert {s for s in MoveState if s.terminal} == {MoveState.COMPLETED, MoveState.CANCELLED}


def test_how_a_move_ended() -> None:
    move = Move(("t", 0), target=(2, 3), origins=(1, 2))
    assert ended_state(move, (3, 2)) is MoveState.COMPLETED
    assert ended_state(move, (1, 2)) is MoveState.CANCELLED  # reverted
    assert ended_state(move, (1, 2, 3)) is MoveState.CANCELLED  # stopped with the added replica
    assert ended_state(move, None) is MoveState.CANCELLED  # the partition was deleted
    # a stop keeping its adding replica, on a move that removes none: at the target's replicas,
    # but a stop, not a completion
    stopping = Move(("t", 0), target=(1, 2, 3), origins=(1, 2), state=MoveState.REVERTING)
    assert ended_state(stopping, (1, 2, 3)) is MoveState.CANCELLED


def test_one_move_type() -> None:
    """The acceptance rule: in the controller and the executor it drives, one record type says a
    partition is moving (``Move``); the executor's plan entry is a BatchMove, a name of its own,
    and no other part declares a move record."""
    root = Path(reassignd.__file__).parent
    declared = sorted(
        f"{path.relative_to(root).as_posix()}:{node.name}"
        for part in ("controller", "executor")
        for path in (root / part).rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path)))
        if isinstance(node, ast.ClassDef) and node.name.endswith("Move")  # nested ones too
    )
    assert declared == [
        "controller/model/moves.py:Move",
        "executor/model.py:BatchMove",
    ]

"""The reassignment algorithm and the batch runner select moves by their state (pure)."""

from __future__ import annotations

import pytest

from reassignd.controller.model.moves import (
    LIVE,
    IllegalMoveTransition,
    Move,
    MoveState,
    check_transition,
    next_phase,
    of_batch,
    revertible,
)


def move(p: int, state: MoveState, target: tuple[int, ...] = (2, 3), batch: str | None = None) -> Move:
    return Move(("t", p), target=target, origins=(1, 2), state=state, batch=batch)


@pytest.mark.parametrize("state", list(MoveState))
def test_a_move_finishes_once_its_target_is_in_sync(state: MoveState) -> None:
    m = move(0, state, target=(2, 3))
    assert next_phase(m, (1, 2)) is MoveState.CATCHING_UP  # 3 not in the ISR: phase A
    assert next_phase(m, (2,)) is MoveState.CATCHING_UP
    assert next_phase(m, (3, 1, 2)) is MoveState.FINISHING  # TRS ⊆ ISR: phase B
    assert next_phase(m, (2, 3)) is MoveState.FINISHING


def test_nothing_moving_finishes_at_once() -> None:
    # a reorder or a cancel's write: Kafka's phase B at once, whatever the ISR
    assert next_phase(None, ()) is MoveState.FINISHING
    assert next_phase(None, (1,)) is MoveState.FINISHING


@pytest.mark.parametrize("state", list(MoveState))
@pytest.mark.parametrize("isr", [(1, 2), (2, 3)])
def test_only_a_live_move_takes_its_next_phase(state: MoveState, isr: tuple[int, ...]) -> None:
    """The state decides: an adding or catching-up move takes phase A or B; one whose end was
    decided (finishing, reverting) or that ended takes neither (the event is refused)."""
    m = move(0, state)
    phase = next_phase(m, isr)
    if state in LIVE:
        check_transition(m.tp, m.state, phase)
    else:
        with pytest.raises(IllegalMoveTransition):
            check_transition(m.tp, m.state, phase)


def test_a_stop_reverts_only_a_live_move_to_its_batch_target() -> None:
    assert revertible(move(0, MoveState.ADDING), (2, 3))
    assert revertible(move(0, MoveState.CATCHING_UP), (2, 3))
    assert not revertible(move(0, MoveState.CATCHING_UP, target=(3, 4)), (2, 3))  # re-targeted
    assert not revertible(move(0, MoveState.FINISHING), (2, 3))
    assert not revertible(move(0, MoveState.REVERTING), (2, 3))  # a cancel already decided
    assert not revertible(None, (2, 3))  # not moving


def test_a_batch_runs_the_moves_that_name_it() -> None:
    a0, a1 = move(0, MoveState.ADDING, batch="a"), move(1, MoveState.CATCHING_UP, batch="a")
    b2, api = move(2, MoveState.ADDING, batch="b"), move(3, MoveState.ADDING)
    assert of_batch({m.tp: m for m in (a0, b2, api, a1)}) == {
        "a": {a0.tp: a0, a1.tp: a1},
        "b": {b2.tp: b2},
    }
    assert of_batch({api.tp: api}) == {}

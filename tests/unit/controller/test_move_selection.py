"""The reassignment algorithm and the batch runner select moves by their state (pure)."""

from __future__ import annotations

import pytest

from reassignd.controller.model.moves import (
    LIVE,
    Move,
    MoveState,
    live_moves,
    next_phase,
    of_batch,
    revertible,
)


def move(p: int, state: MoveState, target: tuple[int, ...] = (2, 3), batch: str | None = None) -> Move:
    return Move(("t", p), target=target, original_replicas=(1, 2), state=state, batch=batch)


def test_only_live_moves_go_through_the_algorithm_again() -> None:
    moves = {m.tp: m for m in (move(p, s) for p, s in enumerate(MoveState))}
    asked = [("t", p) for p in reversed(range(len(MoveState) + 2))]  # two partitions not moving
    # in the order asked, the adding and catching-up moves only
    expected = [("t", p) for p, s in reversed(list(enumerate(MoveState))) if s in LIVE]
    assert live_moves(moves, asked) == expected
    assert {moves[tp].state for tp in expected} == {MoveState.ADDING, MoveState.CATCHING_UP}


@pytest.mark.parametrize("state", sorted(LIVE, key=lambda s: s.value))
def test_a_live_move_finishes_once_its_target_is_in_sync(state: MoveState) -> None:
    m = move(0, state, target=(2, 3))
    assert next_phase(m, (1, 2)) is MoveState.CATCHING_UP  # 3 not in the ISR: phase A
    assert next_phase(m, (2,)) is MoveState.CATCHING_UP
    assert next_phase(m, (3, 1, 2)) is MoveState.FINISHING  # TRS ⊆ ISR: phase B
    assert next_phase(m, (2, 3)) is MoveState.FINISHING


def test_nothing_moving_finishes_at_once() -> None:
    # a reorder or a cancel's write: Kafka's phase B at once, whatever the ISR
    assert next_phase(None, ()) is MoveState.FINISHING
    assert next_phase(None, (1,)) is MoveState.FINISHING


@pytest.mark.parametrize("state", [s for s in MoveState if s not in LIVE])
def test_a_move_whose_end_is_decided_takes_no_phase(state: MoveState) -> None:
    assert next_phase(move(0, state), (1, 2, 3)) is None
    assert next_phase(move(0, state), ()) is None


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

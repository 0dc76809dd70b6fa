"""ReplicaAssignment: Kafka's worked examples (KIP-455) and Hypothesis invariants."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from reassignd.controller.state.assignment import ReplicaAssignment


def test_move_to_disjoint_target_puts_target_first() -> None:
    a = ReplicaAssignment.of([1, 2, 3]).reassign_to([4, 5, 6])
    assert a.replicas == (4, 5, 6, 1, 2, 3)
    assert a.adding == (4, 5, 6)
    assert a.removing == (1, 2, 3)
    assert a.origins == (1, 2, 3)
    assert a.target_replicas == (4, 5, 6)
    assert a.is_being_reassigned


def test_retarget_is_relative_to_original_replicas() -> None:
    moving = ReplicaAssignment.of([1, 2, 3]).reassign_to([1, 2, 4])
    assert (moving.replicas, moving.adding, moving.removing) == ((1, 2, 4, 3), (4,), (3,))
    retargeted = moving.reassign_to([1, 2, 5])
    assert retargeted.replicas == (1, 2, 5, 3)
    assert retargeted.adding == (5,)
    assert retargeted.removing == (3,)


def test_reorder_only_is_not_a_reassignment() -> None:
    a = ReplicaAssignment.of([1, 2, 3]).reassign_to([3, 2, 1])
    assert a.replicas == (3, 2, 1)
    assert not a.is_being_reassigned
    assert a.is_complete(isr=[])


def test_cancel_returns_rs_minus_ar() -> None:
    moving = ReplicaAssignment.of([1, 2, 3]).reassign_to([4, 2, 1])
    assert moving.replicas == (4, 2, 1, 3)
    assert moving.revert() == ReplicaAssignment.of([2, 1, 3])


def test_stop_keeps_adding_replicas_in_isr() -> None:
    moving = ReplicaAssignment.of([1, 2, 3]).reassign_to([4, 5, 6])
    assert moving.stop(isr=[1, 2, 3, 5]).replicas == (1, 2, 3, 5)
    assert moving.stop(isr=[1]).replicas == (1, 2, 3)


def test_completion_needs_trs_in_isr() -> None:
    moving = ReplicaAssignment.of([1, 2, 3]).reassign_to([4, 5, 6])
    assert not moving.is_complete([1, 2, 3, 4, 5])
    assert moving.is_complete([1, 4, 5, 6])
    assert moving.completed() == ReplicaAssignment.of([4, 5, 6])


replica_sets = st.lists(st.integers(min_value=0, max_value=12), min_size=1, max_size=6, unique=True)


@given(replica_sets, replica_sets, replica_sets)
def test_invariants(original: list[int], first: list[int], second: list[int]) -> None:
    start = ReplicaAssignment.of(original)
    for a in (start.reassign_to(first), start.reassign_to(first).reassign_to(second)):
        rs, ar, rr = set(a.replicas), set(a.adding), set(a.removing)
        assert set(a.target_replicas) <= rs
        assert not ar & rr
        assert len(a.replicas) == len(rs)
        assert set(a.origins) == set(original)
    retargeted = start.reassign_to(first).reassign_to(second)
    direct = start.reassign_to(second)
    assert set(retargeted.replicas) == set(direct.replicas)
    assert retargeted.adding == direct.adding
    assert set(retargeted.removing) == set(direct.removing)
    assert set(retargeted.revert().replicas) == set(original)
    assert retargeted.target_replicas == tuple(second)

"""Per-partition validation of reassignment requests: Kafka's validation order, first failure wins."""

from __future__ import annotations

import pytest

from reassignd.controller.model.requests import CancelMode
from reassignd.controller.reassignment.validation import (
    cancelled_assignment,
    revert_needs_unclean_election,
    unclean_revert_error,
    validate_target,
)
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.errors import ReassigndError

CURRENT = ReplicaAssignment.of([1, 2, 3])


@pytest.mark.parametrize(
    ("target", "current", "deleting", "code", "message"),
    [
        ([], CURRENT, False, 39, "Empty replica list specified in partition reassignment."),
        ([1, 1], CURRENT, False, 39, "Duplicate replica ids in partition reassignment replica list: [1, 1]"),
        ([-1, 2], CURRENT, False, 39, "Invalid broker id in replica list: [-1, 2]"),
        (
            [1, 9],
            CURRENT,
            False,
            39,
            "Replica assignment has brokers that are not alive. Replica list: [9], live broker list: [1, 2, 3, 4]",
        ),
        ([1, 4], None, False, 3, "The partition does not exist."),
        ([1, 4], CURRENT, True, 3, "The partition does not exist."),
    ],
)
def test_rows(
    target: list[int], current: ReplicaAssignment | None, deleting: bool, code: int, message: str
) -> None:
    error = validate_target(target, current, {1, 2, 3, 4}, topic_deleting=deleting)
    assert error is not None
    assert (error.error_code, error.message) == (code, message)
    # the same answer when the caller hands over the move it built (the intake does)
    moved = (current or ReplicaAssignment(())).reassign_to(target)
    again = validate_target(target, current, {1, 2, 3, 4}, topic_deleting=deleting, moved=moved)
    assert again is not None
    assert (again.error_code, again.message) == (code, message)


def test_existing_replicas_may_be_dead() -> None:
    assert validate_target([3, 4], CURRENT, {4}, topic_deleting=False) is None
    moved = CURRENT.reassign_to([3, 4])
    assert validate_target([3, 4], CURRENT, {4}, topic_deleting=False, moved=moved) is None


def test_cancel_and_stop() -> None:
    moving = CURRENT.reassign_to([4, 5, 6])
    for current, ids in ((CURRENT, [1]), (None, [])):
        refused = cancelled_assignment("t", 0, current, ids, CancelMode.CANCEL, unclean_allowed=False)
        assert isinstance(refused, ReassigndError) and refused.error_code == 85
    assert cancelled_assignment("t", 0, moving, [1, 4], CancelMode.CANCEL, unclean_allowed=False) == (
        ReplicaAssignment.of([1, 2, 3])
    )
    assert cancelled_assignment("t", 0, moving, [1, 4], CancelMode.STOP, unclean_allowed=False) == (
        ReplicaAssignment.of([1, 2, 3, 4])
    )


def test_cancel_needing_an_unclean_election_is_refused_unless_allowed() -> None:
    moving = CURRENT.reassign_to([4, 5, 6])
    refused = cancelled_assignment("t", 7, moving, [4, 5], CancelMode.CANCEL, unclean_allowed=False)
    assert not isinstance(refused, ReplicaAssignment)
    assert refused.error_code == 39
    assert refused.message == (
        "Unable to revert partition assignment for t-7 because it would require an unclean leader election."
    )
    allowed = cancelled_assignment("t", 7, moving, [4, 5], CancelMode.CANCEL, unclean_allowed=True)
    assert allowed == ReplicaAssignment.of([1, 2, 3])


@pytest.mark.parametrize(
    ("original", "isr", "needs"),
    [
        ([1, 2, 3], [1, 4], False),
        ([1, 2, 3], [3], False),
        ([1, 2, 3], [4, 5], True),
        ([1, 2, 3], [], True),
    ],
)
def test_the_unclean_election_safety_rule(original: list[int], isr: list[int], needs: bool) -> None:
    assert revert_needs_unclean_election(original, isr) is needs


def test_stop_never_needs_an_unclean_election() -> None:
    """Stop keeps the adding replicas already in the ISR, so some ISR member stays."""
    moving = CURRENT.reassign_to([4, 5, 6])
    stopped = cancelled_assignment("t", 7, moving, [4, 5], CancelMode.STOP, unclean_allowed=False)
    assert stopped == ReplicaAssignment.of([1, 2, 3, 4, 5])


def test_the_refusal_carries_kafkas_message() -> None:
    error = unclean_revert_error("orders", 3)
    assert (error.error_code, error.message) == (
        39,
        "Unable to revert partition assignment for orders-3 because it would require an unclean leader election.",
    )

"""What of a set of moves fits in one topic write (controller/replication/topic_write.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reassignd.controller.replication.assignment import ReplicaAssignment
from reassignd.controller.replication.topic_write import fit, write_bytes
from reassignd.controller.topics.validation import encoded_size_error

LONG = (2_000_000_001, 2_000_000_002, 2_000_000_003)
TOPIC_ID = "A" * 22


def _topic(n: int, replicas: tuple[int, ...] = LONG) -> dict[int, ReplicaAssignment]:
    return {p: ReplicaAssignment(replicas) for p in range(n)}


def test_everything_fits_in_a_small_topic() -> None:
    before = _topic(10)
    moves = {p: a.reassign_to((1, 2, 3)) for p, a in before.items()}
    result = fit(before, {}, moves, TOPIC_ID)
    assert result.accepted == moves and result.refused == ()


def test_a_big_move_keeps_the_longest_prefix_that_fits_and_refuses_the_rest() -> None:
    before = _topic(4_000)
    moves = {p: a.reassign_to((1, 2, 3)) for p, a in before.items()}
    budget = write_bytes(before, {}, {}, TOPIC_ID) + 50_000
    result = fit(before, {}, moves, TOPIC_ID, budget=budget)
    assert result.refused and result.accepted
    assert list(result.accepted) == list(moves)[: len(result.accepted)]  # request order
    assert write_bytes(before, {}, result.accepted, TOPIC_ID) <= budget
    one_more = {**result.accepted, result.refused[0]: moves[result.refused[0]]}
    assert write_bytes(before, {}, one_more, TOPIC_ID) > budget  # the longest prefix
    assert result.size > budget


def test_cancels_and_completions_always_fit() -> None:
    before = {p: ReplicaAssignment(LONG).reassign_to((1, 2, 3)) for p in range(3_000)}
    origins = {p: LONG for p in before}
    budget = write_bytes(before, origins, {}, TOPIC_ID)  # already at its limit
    cancels = {p: ReplicaAssignment(LONG) for p in range(0, 3_000, 2)}
    result = fit(before, origins, cancels, TOPIC_ID, budget=budget)
    assert result.refused == () and result.accepted == cancels


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(1, 300),
    moving=st.integers(0, 300),
    slack=st.integers(0, 20_000),
)
def test_what_is_accepted_always_fits(n: int, moving: int, slack: int) -> None:
    before = _topic(n)
    moves = {p: before[p].reassign_to((1, 2, 3)) for p in range(min(n, moving))}
    budget = write_bytes(before, {}, {}, TOPIC_ID) + slack
    result = fit(before, {}, moves, TOPIC_ID, budget=budget)
    assert set(result.accepted) | set(result.refused) == set(moves)
    assert write_bytes(before, {}, result.accepted, TOPIC_ID) <= budget


def test_creation_counts_the_real_size_of_long_broker_ids() -> None:
    assert encoded_size_error({p: (1, 2, 3) for p in range(25_000)}) is None
    too_big = encoded_size_error({p: LONG for p in range(25_000)})
    assert too_big is not None and too_big.error_code == 37
    assert "bytes with these replicas" in (too_big.message or "")

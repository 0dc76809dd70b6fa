"""What of a set of moves fits in one topic write (controller/effects/topic_write.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reassignd.controller.effects.topic_write import fit, write_bytes, write_bytes_bound
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.controller.topics.validation import encoded_size_error
from tests.examples import examples

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


_IDS = st.integers(-(2**31), 2**31 - 1)
_LISTS = st.lists(_IDS, min_size=0, max_size=6, unique=True).map(tuple)


# built once: a strategy built inside a draw is built (and validated) again for every example
_KEYS = st.lists(st.integers(0, 2**31 - 1), max_size=40, unique=True)
_REPLICAS = st.lists(_IDS, min_size=1, max_size=6, unique=True)


@st.composite
def _assignments(draw: st.DrawFn) -> dict[int, ReplicaAssignment]:
    keys = draw(_KEYS)
    out = {}
    for p in keys:
        replicas = draw(_REPLICAS)
        adding = draw(st.lists(st.sampled_from(replicas), unique=True))
        removing = [r for r in draw(st.lists(st.sampled_from(replicas), unique=True)) if r not in adding]
        out[p] = ReplicaAssignment.of(replicas, adding, removing)
    return out


@settings(max_examples=examples(200), deadline=None)
@given(
    before=_assignments(),
    parts=_assignments(),
    origins=st.dictionaries(st.integers(0, 2**31 - 1), _LISTS, max_size=20),
    topic_id=st.text(max_size=30),
)
def test_the_bound_is_never_below_the_exact_size(
    before: dict[int, ReplicaAssignment],
    parts: dict[int, ReplicaAssignment],
    origins: dict[int, tuple[int, ...]],
    topic_id: str,
) -> None:
    bound = write_bytes_bound(before, origins, parts, topic_id)
    assert bound is not None
    try:
        exact = write_bytes(before, origins, parts, topic_id)
    except ValueError:  # what the codecs refuse (a negative id, an empty list): no size to bound
        return
    assert exact <= bound


def test_the_bound_is_close_for_a_usual_topic() -> None:
    before = _topic(100, (1, 2, 3))
    moves = {p: a.reassign_to((4, 5, 6)) for p, a in before.items()}
    exact = write_bytes(before, {}, moves, TOPIC_ID)
    bound = write_bytes_bound(before, {}, moves, TOPIC_ID)
    assert bound is not None and exact <= bound <= 2 * exact


def test_ids_that_are_not_ints_get_no_bound_and_an_exact_answer() -> None:
    before = {0: ReplicaAssignment((True, 2, 3))}  # JSON writes True as 'true': wider than its digit
    assert write_bytes_bound(before, {}, {}, TOPIC_ID) is None
    assert write_bytes_bound({0: ReplicaAssignment((1.5, 2))}, {}, {}, TOPIC_ID) is None  # type: ignore[arg-type]


def test_a_write_whose_bound_fits_is_accepted_with_the_bound_as_its_size() -> None:
    before = _topic(100)
    moves = {p: a.reassign_to((1, 2, 3)) for p, a in before.items()}
    result = fit(before, {}, moves, TOPIC_ID)
    assert result.refused == () and result.size == write_bytes_bound(before, {}, moves, TOPIC_ID)
    # just under the bound but over the exact size: still accepted, found by the exact encodings
    exact = write_bytes(before, {}, moves, TOPIC_ID)
    result = fit(before, {}, moves, TOPIC_ID, budget=exact)
    assert result.refused == () and result.accepted == moves and result.size == exact


def test_creation_counts_the_real_size_of_long_broker_ids() -> None:
    assert encoded_size_error({p: (1, 2, 3) for p in range(25_000)}) is None
    too_big = encoded_size_error({p: LONG for p in range(25_000)})
    assert too_big is not None and too_big.error_code == 37
    assert "bytes with these replicas" in (too_big.message or "")

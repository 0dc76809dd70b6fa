"""Leader election and ISR shrink decisions (Kafka's partition state machine)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from reassignd.controller.partitions.partition_logic import (
    after_broker_failure,
    initial_state,
    is_unclean_election,
    needs_unclean_election,
    offline_election,
)
from reassignd.zk.codec import PartitionState


def test_initial_state_takes_live_replicas() -> None:
    assert initial_state([3, 1, 2], live={1, 2}, controller_epoch=4) == PartitionState(1, 0, 4, (1, 2))
    assert initial_state([3], live={1}, controller_epoch=4) is None


def test_leader_death_elects_first_live_isr_member_in_assignment_order() -> None:
    state = PartitionState(leader=1, leader_epoch=5, controller_epoch=2, isr=(1, 3, 2))
    new = after_broker_failure([1, 2, 3], state, live={2, 3}, controller_epoch=3)
    assert new == PartitionState(2, 6, 3, (3, 2))


def test_follower_death_shrinks_isr_and_bumps_epoch() -> None:
    state = PartitionState(1, 5, 2, (1, 2, 3))
    assert after_broker_failure([1, 2, 3], state, live={1, 2}, controller_epoch=2) == PartitionState(
        1, 6, 2, (1, 2)
    )


def test_single_member_isr_stays_and_leader_goes_to_minus_one() -> None:
    state = PartitionState(1, 5, 2, (1,))
    assert after_broker_failure([1, 2], state, live={2}, controller_epoch=2) == PartitionState(-1, 6, 2, (1,))
    # and nothing changes again while nobody comes back
    assert after_broker_failure([1, 2], PartitionState(-1, 6, 2, (1,)), live={2}, controller_epoch=2) is None


def test_unrelated_failure_changes_nothing() -> None:
    assert (
        after_broker_failure([1, 2], PartitionState(1, 5, 2, (1, 2)), live={1, 2}, controller_epoch=2) is None
    )


def test_offline_partition_recovers_when_isr_member_returns() -> None:
    state = PartitionState(-1, 6, 2, (1,))
    assert offline_election([1, 2], state, live={1, 2}, controller_epoch=3) == PartitionState(1, 7, 3, (1,))
    assert offline_election([1, 2], state, live={2}, controller_epoch=3) is None
    assert offline_election([1, 2], state, live={2}, controller_epoch=3, unclean=True) == PartitionState(
        2, 7, 3, (2,)
    )


ids = st.integers(min_value=0, max_value=6)


@given(
    st.lists(ids, min_size=1, max_size=5, unique=True),
    st.lists(ids, min_size=1, max_size=5, unique=True),
    st.sets(ids),
)
def test_isr_never_empty_and_leader_always_live_member(
    replicas: list[int], isr: list[int], live: set[int]
) -> None:
    state = PartitionState(isr[0], 3, 1, tuple(isr))
    new = after_broker_failure(replicas, state, live, controller_epoch=1)
    if new is None:
        return
    assert new.isr
    assert new.leader_epoch == 4
    if new.leader != -1:
        assert new.leader in live and new.leader in new.isr


# --- unclean leader election -------------------------------------------------------------------


def test_unclean_election_takes_the_first_live_replica_alone_in_the_isr() -> None:
    state = PartitionState(-1, 6, 2, (1,))
    new = after_broker_failure([1, 2, 3], PartitionState(1, 6, 2, (1,)), live={2, 3}, controller_epoch=3)
    assert new == PartitionState(-1, 7, 3, (1,))  # not allowed: offline, the ISR keeps its member
    new = after_broker_failure(
        [1, 3, 2], PartitionState(1, 6, 2, (1,)), live={2, 3}, controller_epoch=3, unclean=True
    )
    assert new == PartitionState(3, 7, 3, (3,))
    assert is_unclean_election(PartitionState(1, 6, 2, (1,)), new)
    assert offline_election([1, 2], state, live={1, 2}, controller_epoch=3, unclean=True) == PartitionState(
        1, 7, 3, (1,)
    )  # an ISR member is live: a clean election even when unclean ones are allowed


def test_needs_unclean_election() -> None:
    assert needs_unclean_election([1, 2], PartitionState(-1, 6, 2, (1,)), live={2})
    assert not needs_unclean_election([1, 2], PartitionState(-1, 6, 2, (1,)), live={1, 2})  # clean
    assert not needs_unclean_election([1, 2], PartitionState(-1, 6, 2, (1,)), live=set())  # nobody
    assert not needs_unclean_election([1, 2], PartitionState(2, 6, 2, (1,)), live={2})  # has a leader
    assert needs_unclean_election([1, 2], PartitionState(1, 6, 2, (1,)), live={2})  # its leader died
    # a cancel took the only ISR member out of the replicas: it cannot lead
    assert needs_unclean_election([1], PartitionState(-1, 6, 2, (2,)), live={1, 2})


def test_is_unclean_election() -> None:
    before = PartitionState(-1, 6, 2, (1, 2))
    assert not is_unclean_election(before, PartitionState(2, 7, 2, (2,)))
    assert is_unclean_election(before, PartitionState(3, 7, 2, (3,)))
    assert not is_unclean_election(before, PartitionState(-1, 7, 2, (1,)))
    assert not is_unclean_election(
        PartitionState(3, 6, 2, (1,)), PartitionState(3, 7, 2, (1,))
    )  # no election


@given(
    st.lists(ids, min_size=1, max_size=5, unique=True),
    st.lists(ids, min_size=1, max_size=5, unique=True),
    st.sets(ids),
)
def test_unclean_elections_happen_exactly_when_needed(
    replicas: list[int], isr_pick: list[int], live: set[int]
) -> None:
    state = PartitionState(-1, 3, 1, tuple(isr_pick))  # ISR members need not be replicas any more
    clean = offline_election(replicas, state, live, 2)
    unclean = offline_election(replicas, state, live, 2, unclean=True)
    if needs_unclean_election(replicas, state, live):
        assert clean is None
        assert unclean is not None and is_unclean_election(state, unclean)
        assert unclean.isr == (unclean.leader,) and unclean.leader in live
    else:
        assert unclean == clean
        assert unclean is None or not is_unclean_election(state, unclean)

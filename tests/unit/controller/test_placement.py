"""Replica placement: Kafka's own expectations (AdminRackAwareTest, AddPartitionsTest) and
Hypothesis properties of AdminUtils.assignReplicasToBrokers."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reassignd.controller.topics.placement import (
    BrokerMeta,
    assign_new_partitions,
    assign_replicas,
    rack_alternated_brokers,
)
from reassignd.errors import InvalidPartitions, InvalidReplicationFactor

RNG = random.Random(0)


class ScriptedRandom(random.Random):
    """Answers randrange from a script and records the bounds asked for."""

    def __init__(self, draws: Sequence[int]) -> None:
        super().__init__(0)
        self.draws = list(draws)
        self.bounds: list[int] = []

    def randrange(self, *args: object, **kwargs: object) -> int:
        (stop,) = args
        assert isinstance(stop, int)
        self.bounds.append(stop)
        return self.draws.pop(0)


class NoDraws(random.Random):
    def randrange(self, *args: object, **kwargs: object) -> int:
        raise AssertionError("placement drew from the random source")


def brokers_with_racks(racks: Mapping[int, str]) -> list[BrokerMeta]:
    """Kafka's RackAwareTest.toBrokerMetadata: sorted by id."""
    return [BrokerMeta(b, racks[b]) for b in sorted(racks)]


def plain_brokers(ids: Sequence[int]) -> list[BrokerMeta]:
    return [BrokerMeta(b) for b in ids]


def check_replica_distribution(
    assignment: Mapping[int, Sequence[int]],
    racks: Mapping[int, str],
    n_partitions: int,
    replication_factor: int,
    *,
    verify_rack_aware: bool = True,
    verify_leader_distribution: bool = True,
    verify_replicas_distribution: bool = True,
) -> None:
    """Kafka's RackAwareTest.checkReplicaDistribution."""
    for replicas in assignment.values():
        assert len(set(replicas)) == len(replicas), "more than one replica on a broker"
    n_brokers = len(racks)
    if verify_rack_aware:
        assert [len({racks[b] for b in rs}) for rs in assignment.values()] == [
            replication_factor
        ] * n_partitions, "more than one replica of a partition in a rack"
    if verify_leader_distribution:
        leaders = Counter(rs[0] for rs in assignment.values())
        assert [leaders[b] for b in racks] == [n_partitions // n_brokers] * n_brokers
    if verify_replicas_distribution:
        counts = Counter(b for rs in assignment.values() for b in rs)
        assert [counts[b] for b in racks] == [n_partitions * replication_factor // n_brokers] * n_brokers


# --- Kafka's examples ---------------------------------------------------------------------------


def test_rack_unaware_classic_example() -> None:
    """AdminRackAwareTest.testReplicaAssignment: 5 brokers, 10 partitions, RF 3, start index 0."""
    assert assign_replicas(plain_brokers(range(5)), 10, 3, fixed_start_index=0, rng=RNG) == {
        0: (0, 1, 2),
        1: (1, 2, 3),
        2: (2, 3, 4),
        3: (3, 4, 0),
        4: (4, 0, 1),
        5: (0, 2, 3),
        6: (1, 3, 4),
        7: (2, 4, 0),
        8: (3, 0, 1),
        9: (4, 1, 2),
    }


def test_rack_alternated_broker_list() -> None:
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert rack_alternated_brokers(racks) == [0, 3, 1, 5, 4, 2]
    assert rack_alternated_brokers({b: r for b, r in racks.items() if b != 5}) == [0, 3, 1, 4, 2]
    grouped = {b: f"rack{b // 3 + 1}" for b in range(9)}
    assert rack_alternated_brokers(grouped) == [0, 3, 6, 1, 4, 7, 2, 5, 8]


def test_rack_aware_example_shifts_followers_after_first_round() -> None:
    """AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers."""
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert assign_replicas(
        brokers_with_racks(racks), 7, 3, fixed_start_index=0, start_partition_id=0, rng=RNG
    ) == {
        0: (0, 3, 1),
        1: (3, 1, 5),
        2: (1, 5, 4),
        3: (5, 4, 2),
        4: (4, 2, 0),
        5: (2, 0, 3),
        6: (0, 4, 2),
    }


EVEN_RACKS = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}


def test_rack_aware_fixed_start() -> None:
    """testAssignmentWithRackAware."""
    a = assign_replicas(
        brokers_with_racks(EVEN_RACKS), 6, 3, fixed_start_index=2, start_partition_id=0, rng=RNG
    )
    check_replica_distribution(a, EVEN_RACKS, 6, 3)


@pytest.mark.parametrize("seed", range(20))
def test_rack_aware_random_start(seed: int) -> None:
    """testAssignmentWithRackAwareWithRandomStartIndex."""
    a = assign_replicas(brokers_with_racks(EVEN_RACKS), 6, 3, rng=random.Random(seed))
    check_replica_distribution(a, EVEN_RACKS, 6, 3)


def test_rack_aware_uneven_replicas() -> None:
    """testAssignmentWithRackAwareWithUnevenReplicas: 13 partitions still span three racks each."""
    a = assign_replicas(
        brokers_with_racks(EVEN_RACKS), 13, 3, fixed_start_index=0, start_partition_id=0, rng=RNG
    )
    check_replica_distribution(
        a, EVEN_RACKS, 13, 3, verify_leader_distribution=False, verify_replicas_distribution=False
    )


@pytest.mark.parametrize("seed", range(20))
def test_rack_aware_uneven_racks(seed: int) -> None:
    """testAssignmentWithRackAwareWithUnevenRacks."""
    racks = {0: "rack1", 1: "rack1", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}
    a = assign_replicas(brokers_with_racks(racks), 12, 3, rng=random.Random(seed))
    check_replica_distribution(a, racks, 12, 3, verify_replicas_distribution=False)


@pytest.mark.parametrize("seed", range(20))
def test_rack_aware_two_replicas(seed: int) -> None:
    """testAssignmentWith2ReplicasRackAware and ...With6Partitions."""
    for n_partitions in (12, 6):
        a = assign_replicas(brokers_with_racks(EVEN_RACKS), n_partitions, 2, rng=random.Random(seed))
        check_replica_distribution(a, EVEN_RACKS, n_partitions, 2)


@pytest.mark.parametrize("seed", range(20))
def test_rack_aware_expansion(seed: int) -> None:
    """testRackAwareExpansion: partitions 12..23 on brokers 6..11."""
    racks = {6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack3", 11: "rack1"}
    a = assign_replicas(brokers_with_racks(racks), 12, 2, start_partition_id=12, rng=random.Random(seed))
    assert sorted(a) == list(range(12, 24))
    check_replica_distribution(a, racks, 12, 2)


@pytest.mark.parametrize("seed", range(20))
def test_rack_aware_three_brokers_three_racks(seed: int) -> None:
    """testAssignmentWith2ReplicasRackAwareWith6PartitionsAnd3Brokers."""
    racks = {0: "rack1", 1: "rack2", 4: "rack3"}
    a = assign_replicas(brokers_with_racks(racks), 3, 2, rng=random.Random(seed))
    check_replica_distribution(a, racks, 3, 2)


@pytest.mark.parametrize("seed", range(10))
def test_rack_aware_large_number_of_partitions(seed: int) -> None:
    """testLargeNumberPartitionsAssignment."""
    racks = {
        **{0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"},
        **{6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack1", 11: "rack3"},
    }
    a = assign_replicas(brokers_with_racks(racks), 96, 3, rng=random.Random(seed))
    check_replica_distribution(a, racks, 96, 3)


@pytest.mark.parametrize("seed", range(20))
def test_more_replicas_than_racks_uses_every_rack(seed: int) -> None:
    """testMoreReplicasThanRacks."""
    racks = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"}
    a = assign_replicas(brokers_with_racks(racks), 6, 5, rng=random.Random(seed))
    assert all(len(rs) == 5 for rs in a.values())
    assert all(len({racks[b] for b in rs}) == 3 for rs in a.values())


@pytest.mark.parametrize("seed", range(20))
def test_fewer_replicas_than_racks_uses_distinct_racks(seed: int) -> None:
    """testLessReplicasThanRacks."""
    racks = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"}
    a = assign_replicas(brokers_with_racks(racks), 6, 2, rng=random.Random(seed))
    assert all(len({racks[b] for b in rs}) == 2 for rs in a.values())


@pytest.mark.parametrize("seed", range(20))
def test_single_rack(seed: int) -> None:
    """testSingleRack: one leader per broker."""
    racks = dict.fromkeys(range(6), "rack1")
    a = assign_replicas(brokers_with_racks(racks), 6, 3, rng=random.Random(seed))
    assert all(len(rs) == 3 for rs in a.values())
    assert Counter(rs[0] for rs in a.values()) == dict.fromkeys(range(6), 1)


def test_skip_broker_with_replica_already_assigned() -> None:
    """testSkipBrokerWithReplicaAlreadyAssigned: three of five brokers in one rack, RF 4."""
    racks = {0: "a", 1: "b", 2: "c", 3: "a", 4: "a"}
    a = assign_replicas(brokers_with_racks(racks), 6, 4, fixed_start_index=2, rng=RNG)
    check_replica_distribution(
        a,
        racks,
        6,
        4,
        verify_rack_aware=False,
        verify_leader_distribution=False,
        verify_replicas_distribution=False,
    )
    assert all(len({racks[b] for b in rs}) == 3 for rs in a.values())


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize(
    "racks",
    [
        {0: "r1", 1: "r2", 2: "r3", 3: "r1", 4: "r2", 5: "r3"},
        {0: "r1", 1: "r1", 2: "r2", 3: "r2", 4: "r3", 5: "r3"},
    ],
    ids=["interleaved", "grouped"],
)
def test_twelve_partitions_rf3_six_brokers_three_racks_span_three_racks(
    racks: dict[int, str], seed: int
) -> None:
    a = assign_replicas(brokers_with_racks(racks), 12, 3, rng=random.Random(seed))
    assert sorted(a) == list(range(12))
    assert all(len({racks[b] for b in rs}) == 3 for rs in a.values())
    check_replica_distribution(a, racks, 12, 3)


# --- Errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n_partitions", "rf", "error", "message"),
    [
        (0, 3, InvalidPartitions, "Number of partitions must be larger than 0."),
        (-1, 3, InvalidPartitions, "Number of partitions must be larger than 0."),
        (0, 0, InvalidPartitions, "Number of partitions must be larger than 0."),
        (10, 0, InvalidReplicationFactor, "Replication factor must be larger than 0."),
        (10, -1, InvalidReplicationFactor, "Replication factor must be larger than 0."),
        (10, 6, InvalidReplicationFactor, "Replication factor: 6 larger than available brokers: 5."),
    ],
)
def test_refused_counts(n_partitions: int, rf: int, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as raised:
        assign_replicas(plain_brokers(range(5)), n_partitions, rf, rng=RNG)
    assert raised.value.args == (message,)


def test_error_codes() -> None:
    with pytest.raises(InvalidPartitions) as partitions:
        assign_replicas(plain_brokers(range(5)), 0, 1, rng=RNG)
    assert (partitions.value.error_code, partitions.value.error_name) == (37, "INVALID_PARTITIONS")
    with pytest.raises(InvalidReplicationFactor) as rf:
        assign_replicas(plain_brokers(range(5)), 1, 0, rng=RNG)
    assert (rf.value.error_code, rf.value.error_name) == (38, "INVALID_REPLICATION_FACTOR")


def test_no_brokers() -> None:
    with pytest.raises(
        InvalidReplicationFactor, match=r"^Replication factor: 1 larger than available brokers: 0\.$"
    ):
        assign_replicas([], 1, 1, rng=RNG)


def test_some_brokers_without_rack_are_refused() -> None:
    brokers = [BrokerMeta(0, "r1"), BrokerMeta(1, None), BrokerMeta(2, "r2")]
    with pytest.raises(InvalidReplicationFactor) as raised:
        assign_replicas(brokers, 3, 2, rng=RNG)
    assert raised.value.error_code == 38
    assert raised.value.message == "Not all brokers have rack information for replica rack aware assignment."


def test_duplicate_broker_ids_are_a_programming_error() -> None:
    with pytest.raises(ValueError, match="duplicate broker ids"):
        assign_replicas([BrokerMeta(1), BrokerMeta(1)], 1, 1, rng=RNG)


# --- Randomness ---------------------------------------------------------------------------------


def test_start_index_and_shift_are_two_independent_draws() -> None:
    rng = ScriptedRandom([2, 1])
    a = assign_replicas(plain_brokers(range(5)), 5, 3, rng=rng)
    assert rng.bounds == [5, 5]
    assert a[0] == (2, 4, 0)  # leader at index 2, followers shifted by 1 + 1 and 1 + 2
    same = ScriptedRandom([2, 2])
    assert assign_replicas(plain_brokers(range(5)), 5, 3, rng=same) == assign_replicas(
        plain_brokers(range(5)), 5, 3, fixed_start_index=2, rng=RNG
    )


def test_rack_aware_draws_over_the_alternated_list() -> None:
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    rng = ScriptedRandom([0, 0])
    a = assign_replicas(brokers_with_racks(racks), 7, 3, start_partition_id=0, rng=rng)
    assert rng.bounds == [6, 6]
    assert a[0] == (0, 3, 1)


def test_fixed_start_index_never_draws() -> None:
    assign_replicas(plain_brokers(range(5)), 10, 3, fixed_start_index=3, rng=NoDraws())


def test_same_seed_same_assignment() -> None:
    brokers = brokers_with_racks(EVEN_RACKS)
    assert assign_replicas(brokers, 30, 3, rng=random.Random(7)) == assign_replicas(
        brokers, 30, 3, rng=random.Random(7)
    )


def test_broker_order_is_the_callers_when_rack_unaware() -> None:
    a = assign_replicas(plain_brokers([30, 10, 20]), 3, 1, fixed_start_index=0, rng=RNG)
    assert a == {0: (30,), 1: (10,), 2: (20,)}


# --- CreatePartitions ---------------------------------------------------------------------------


def test_expansion_on_all_brokers() -> None:
    """AddPartitionsTest.testReplicaPlacementAllServers: leaders and replica sets."""
    a = assign_new_partitions({0: (2, 3, 0, 1)}, plain_brokers(range(4)), 7, NoDraws())
    assert sorted(a) == [1, 2, 3, 4, 5, 6]
    assert {p: rs[0] for p, rs in a.items()} == {1: 3, 2: 0, 3: 1, 4: 2, 5: 3, 6: 0}
    assert all(set(rs) == {0, 1, 2, 3} for rs in a.values())


def test_expansion_on_some_brokers() -> None:
    """AddPartitionsTest.testReplicaPlacementPartialServers."""
    a = assign_new_partitions({0: (1, 2)}, plain_brokers(range(4)), 3, NoDraws())
    assert {p: (rs[0], set(rs)) for p, rs in a.items()} == {1: (2, {0, 2}), 2: (3, {1, 3})}


def test_expansion_keeps_partition_zero_replication_factor() -> None:
    existing = {0: (1, 2, 3), 1: (2, 3, 4), 2: (3, 4, 5)}
    a = assign_new_partitions(existing, plain_brokers(range(1, 7)), 8, NoDraws())
    assert sorted(a) == [3, 4, 5, 6, 7]
    assert all(len(set(rs)) == 3 for rs in a.values())


def test_expansion_starts_at_first_broker_not_below_partition_zero_leader() -> None:
    # Partition 0's leader (4) is gone: the start index is that of the next id (5), so
    # partition 1 lands one further, on 7.
    a = assign_new_partitions({0: (4,)}, plain_brokers([1, 3, 5, 7]), 3, NoDraws())
    assert a == {1: (7,), 2: (1,)}
    # No live broker with an id that high: start at index 0.
    b = assign_new_partitions({0: (9,)}, plain_brokers([1, 3, 5, 7]), 2, NoDraws())
    assert b == {1: (3,)}


def test_expansion_rack_aware() -> None:
    existing = assign_replicas(brokers_with_racks(EVEN_RACKS), 6, 3, rng=random.Random(3))
    a = assign_new_partitions(existing, brokers_with_racks(EVEN_RACKS), 12, NoDraws())
    assert sorted(a) == list(range(6, 12))
    assert all(len({EVEN_RACKS[b] for b in rs}) == 3 for rs in a.values())


@pytest.mark.parametrize("new_count", [3, 2, 0])
def test_expansion_must_increase(new_count: int) -> None:
    with pytest.raises(InvalidPartitions) as raised:
        assign_new_partitions({0: (1,), 1: (2,), 2: (3,)}, plain_brokers([1, 2, 3]), new_count, RNG)
    assert raised.value.message == f"Topic currently has 3 partitions, {new_count} would not be an increase."


def test_expansion_refuses_more_replicas_than_brokers() -> None:
    with pytest.raises(
        InvalidReplicationFactor, match=r"^Replication factor: 3 larger than available brokers: 2\.$"
    ):
        assign_new_partitions({0: (1, 2, 3)}, plain_brokers([1, 2]), 2, RNG)


def test_expansion_without_partition_zero_is_a_corrupt_topic() -> None:
    with pytest.raises(ValueError, match="partition id 0 is missing"):
        assign_new_partitions({1: (1, 2)}, plain_brokers([1, 2]), 3, RNG)
    with pytest.raises(ValueError, match="partition 0 has no replicas"):
        assign_new_partitions({0: ()}, plain_brokers([1, 2]), 3, RNG)


# --- Properties ---------------------------------------------------------------------------------


@st.composite
def clusters(draw: st.DrawFn) -> list[BrokerMeta]:
    ids = draw(st.lists(st.integers(0, 50), min_size=1, max_size=12, unique=True))
    if not draw(st.booleans()):
        return plain_brokers(sorted(ids))
    n_racks = draw(st.integers(1, len(ids)))
    racks = [draw(st.integers(0, n_racks - 1)) for _ in ids]
    return [BrokerMeta(b, f"rack-{r}") for b, r in sorted(zip(ids, racks, strict=True))]


@given(
    clusters(),
    st.data(),
    st.integers(1, 40),
    st.integers(-1, 30),
    st.integers(-1, 15),
    st.integers(0, 2**32),
)
def test_placement_properties(
    brokers: list[BrokerMeta],
    data: st.DataObject,
    n_partitions: int,
    start_partition_id: int,
    fixed_start_index: int,
    seed: int,
) -> None:
    rf = data.draw(st.integers(1, len(brokers)))
    a = assign_replicas(
        brokers,
        n_partitions,
        rf,
        fixed_start_index=fixed_start_index,
        start_partition_id=start_partition_id,
        rng=random.Random(seed),
    )
    first = max(0, start_partition_id)
    assert sorted(a) == list(range(first, first + n_partitions))
    ids = {b.id for b in brokers}
    rack_of = {b.id: b.rack for b in brokers}
    n_racks = len({b.rack for b in brokers})
    for replicas in a.values():
        assert len(replicas) == rf
        assert len(set(replicas)) == rf
        assert set(replicas) <= ids
        if brokers[0].rack is not None:
            assert len({rack_of[b] for b in replicas}) == min(rf, n_racks)
    leaders = Counter(rs[0] for rs in a.values())
    leader_counts = [leaders[b] for b in ids]
    assert max(leader_counts) - min(leader_counts) <= 1
    if n_partitions % len(brokers) == 0:
        assert set(leader_counts) == {n_partitions // len(brokers)}


@given(
    st.integers(1, 4),
    st.integers(1, 3),
    st.booleans(),
    st.data(),
    st.integers(1, 4),
    st.integers(0, 3),
    st.integers(0, 2**32),
)
def test_replica_counts_are_even_on_even_racks(
    n_racks: int,
    per_rack: int,
    rack_aware: bool,
    data: st.DataObject,
    rounds: int,
    start_round: int,
    seed: int,
) -> None:
    """Equal racks (or none), whole rounds of partitions: every broker holds the same number of
    replicas (Kafka's "perfect situation")."""
    n = n_racks * per_rack
    brokers = [BrokerMeta(b, f"r{b % n_racks}" if rack_aware else None) for b in range(n)]
    rf = data.draw(st.integers(1, n))
    a = assign_replicas(brokers, rounds * n, rf, start_partition_id=start_round * n, rng=random.Random(seed))
    counts = Counter(b for rs in a.values() for b in rs)
    assert [counts[b] for b in range(n)] == [rounds * rf] * n

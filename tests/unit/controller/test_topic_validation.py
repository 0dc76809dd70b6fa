"""CreateTopics / CreatePartitions / DeleteTopics validation: every error row with its code, name
and Kafka's message, and the plans that pass."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from reassignd.controller.model.requests import PartitionsToAdd, TopicToCreate
from reassignd.controller.topics.placement import BrokerMeta, assign_new_partitions, assign_replicas
from reassignd.controller.topics.validation import (
    PartitionsCreation,
    TopicCatalog,
    TopicCreation,
    TopicDeletion,
    colliding_topics,
    topic_name_error,
    topic_size_error,
    validate_create_partition,
    validate_create_partitions,
    validate_create_topic,
    validate_create_topics,
    validate_delete_topics,
)
from reassignd.errors import (
    InvalidPartitions,
    InvalidReplicationFactor,
    InvalidTopic,
    ReassigndError,
    ReassignmentInProgress,
    ThrottlingQuotaExceeded,
    TopicAlreadyExists,
)

BROKERS = (BrokerMeta(1), BrokerMeta(2), BrokerMeta(3))
CATALOG = TopicCatalog(
    topics={
        "orders": {0: (1, 2), 1: (2, 3), 2: (3, 1)},
        "audit_log": {0: (1,)},
        "moving": {0: (1, 2), 1: (2, 3)},
        "doomed": {0: (2, 3)},
        "broken": {1: (1, 2)},
    },
    brokers=BROKERS,
    reassigning=frozenset({"moving"}),
    deleting=frozenset({"doomed"}),
)


def rng() -> random.Random:
    return random.Random(42)


def assert_error(result: object, code: int, name: str, message: str) -> None:
    assert isinstance(result, ReassigndError), result
    assert result.to_json() == {"error_code": code, "error_name": name, "error_message": message}


def create(
    topic: TopicToCreate,
    catalog: TopicCatalog = CATALOG,
    *,
    default_partitions: int = 1,
    default_replication_factor: int = 1,
) -> TopicCreation | ReassigndError:
    return validate_create_topic(
        topic,
        catalog,
        rng=rng(),
        default_partitions=default_partitions,
        default_replication_factor=default_replication_factor,
    )


# --- errors.py additions ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "code", "name"),
    [
        (TopicAlreadyExists, 36, "TOPIC_ALREADY_EXISTS"),
        (InvalidTopic, 17, "INVALID_TOPIC_EXCEPTION"),
        (InvalidPartitions, 37, "INVALID_PARTITIONS"),
        (InvalidReplicationFactor, 38, "INVALID_REPLICATION_FACTOR"),
        (ReassignmentInProgress, 60, "REASSIGNMENT_IN_PROGRESS"),
        (ThrottlingQuotaExceeded, 89, "THROTTLING_QUOTA_EXCEEDED"),
    ],
)
def test_new_error_classes_carry_kafka_codes(cls: type[ReassigndError], code: int, name: str) -> None:
    error = cls("why")
    assert (error.error_code, error.error_name, error.message) == (code, name, "why")


def test_throttling_default_message() -> None:
    assert ThrottlingQuotaExceeded().message == "The throttling quota has been exceeded."


# --- Topic names --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "Topic name is illegal, it can't be empty"),
        (".", 'Topic name cannot be "." or ".."'),
        ("..", 'Topic name cannot be "." or ".."'),
        (
            "x" * 250,
            "Topic name is illegal, it can't be longer than 249 characters, topic name: " + "x" * 250,
        ),
        (
            "a/b",
            "Topic name \"a/b\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'",
        ),
        (
            "café",
            "Topic name \"café\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'",
        ),
        (
            "has space",
            "Topic name \"has space\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'",
        ),
    ],
)
def test_illegal_topic_names(name: str, message: str) -> None:
    assert_error(topic_name_error(name), 17, "INVALID_TOPIC_EXCEPTION", message)
    assert_error(create(TopicToCreate(name)), 17, "INVALID_TOPIC_EXCEPTION", message)


@pytest.mark.parametrize("name", ["a", "x" * 249, "Orders-2026.v1_eu", "...", "-", "_"])
def test_legal_topic_names(name: str) -> None:
    assert topic_name_error(name) is None


def test_collisions_are_dot_versus_underscore() -> None:
    assert colliding_topics("audit.log", ["audit_log", "audit-log", "orders"]) == ["audit_log"]
    assert colliding_topics("a.b_c", ["a_b.c", "a_b_c", "a.b_c"]) == ["a_b.c", "a_b_c"]
    assert colliding_topics("plain", ["plain"]) == []


def test_collision_with_existing_topic() -> None:
    assert_error(
        create(TopicToCreate("audit.log")),
        17,
        "INVALID_TOPIC_EXCEPTION",
        "Topic 'audit.log' collides with existing topics: audit_log",
    )


# --- CreateTopics -------------------------------------------------------------------------------


def test_existing_topic() -> None:
    assert_error(
        create(TopicToCreate("orders")), 36, "TOPIC_ALREADY_EXISTS", "Topic 'orders' already exists."
    )


def test_topic_queued_for_deletion_still_exists() -> None:
    assert_error(
        create(TopicToCreate("doomed")), 36, "TOPIC_ALREADY_EXISTS", "Topic 'doomed' already exists."
    )


def test_null_config_values() -> None:
    assert_error(
        create(TopicToCreate("t", configs={"retention.ms": None, "cleanup.policy": "compact", "x": None})),
        42,
        "INVALID_REQUEST",
        "Null value not supported for topic configs : retention.ms,x",
    )


@pytest.mark.parametrize(("num_partitions", "rf"), [(2, -1), (-1, 2), (2, 2)])
def test_counts_and_assignments_together(num_partitions: int, rf: int) -> None:
    topic = TopicToCreate("t", num_partitions=num_partitions, replication_factor=rf, assignments={0: [1, 2]})
    assert_error(
        create(topic),
        42,
        "INVALID_REQUEST",
        "Both numPartitions or replicationFactor and replicasAssignments were set. "
        "Both cannot be used at the same time.",
    )


@pytest.mark.parametrize("num_partitions", [0, -2, -100])
def test_bad_partition_count(num_partitions: int) -> None:
    assert_error(
        create(TopicToCreate("t", num_partitions=num_partitions, replication_factor=1)),
        37,
        "INVALID_PARTITIONS",
        "Number of partitions must be larger than 0.",
    )


@pytest.mark.parametrize("rf", [0, -2])
def test_bad_replication_factor(rf: int) -> None:
    assert_error(
        create(TopicToCreate("t", num_partitions=3, replication_factor=rf)),
        38,
        "INVALID_REPLICATION_FACTOR",
        "Replication factor must be larger than 0.",
    )


def test_more_replicas_than_live_brokers() -> None:
    assert_error(
        create(TopicToCreate("t", num_partitions=3, replication_factor=4)),
        38,
        "INVALID_REPLICATION_FACTOR",
        "Replication factor: 4 larger than available brokers: 3.",
    )


def test_no_live_brokers() -> None:
    assert_error(
        create(TopicToCreate("t"), TopicCatalog(topics={}, brokers=())),
        38,
        "INVALID_REPLICATION_FACTOR",
        "Replication factor: 1 larger than available brokers: 0.",
    )


def test_default_replication_factor_above_live_brokers() -> None:
    assert_error(
        create(TopicToCreate("t", num_partitions=2), default_replication_factor=5),
        38,
        "INVALID_REPLICATION_FACTOR",
        "Replication factor: 5 larger than available brokers: 3.",
    )


def test_mixed_racks() -> None:
    catalog = TopicCatalog(topics={}, brokers=(BrokerMeta(1, "a"), BrokerMeta(2), BrokerMeta(3, "b")))
    assert_error(
        create(TopicToCreate("t", num_partitions=3, replication_factor=2), catalog),
        38,
        "INVALID_REPLICATION_FACTOR",
        "Not all brokers have rack information for replica rack aware assignment.",
    )


def test_bad_count_is_reported_before_bad_name_as_in_kafka() -> None:
    assert_error(
        create(TopicToCreate("a/b", num_partitions=0)),
        37,
        "INVALID_PARTITIONS",
        "Number of partitions must be larger than 0.",
    )


@pytest.mark.parametrize(
    ("assignments", "message"),
    [
        ({0: [1, 2], 1: []}, "Cannot have replication factor of 0 for partition id 1."),
        ({0: [1, 2], 1: [3]}, "All partitions should have the same number of replicas"),
        ({0: [1, 1], 1: [2, 3]}, "Duplicate replica assignment found: {0: [1, 1], 1: [2, 3]}"),
        ({0: [1, 2], 2: [2, 3]}, "partitions should be a consecutive 0-based integer sequence"),
        ({1: [1, 2]}, "partitions should be a consecutive 0-based integer sequence"),
        ({-1: [1, 2], 0: [2, 3]}, "partitions should be a consecutive 0-based integer sequence"),
        ({0: [1, 7], 1: [4, 1]}, "Unknown broker(s) in replica assignment: 4, 7."),
        ({0: [-1]}, "Unknown broker(s) in replica assignment: -1."),
    ],
)
def test_bad_explicit_assignment(assignments: dict[int, list[int]], message: str) -> None:
    assert_error(
        create(TopicToCreate("t", assignments=assignments)), 39, "INVALID_REPLICA_ASSIGNMENT", message
    )


def test_explicit_assignment_is_kept_as_given() -> None:
    plan = create(
        TopicToCreate("audit", assignments={1: [2, 3], 0: [1, 2]}, configs={"retention.ms": "1000"})
    )
    assert plan == TopicCreation("audit", {0: (1, 2), 1: (2, 3)}, {"retention.ms": "1000"})
    assert isinstance(plan, TopicCreation)
    assert (plan.num_partitions, plan.replication_factor) == (2, 2)


def test_explicit_assignment_with_explicit_minus_ones() -> None:
    topic = TopicToCreate("t", num_partitions=-1, replication_factor=-1, assignments={0: [3]})
    assert create(topic) == TopicCreation("t", {0: (3,)}, {})


def test_empty_assignments_mean_placement() -> None:
    plan = create(TopicToCreate("t", num_partitions=3, replication_factor=2, assignments={}))
    assert isinstance(plan, TopicCreation)
    assert (plan.num_partitions, plan.replication_factor) == (3, 2)


def test_placement_uses_brokers_sorted_by_id() -> None:
    catalog = TopicCatalog(topics={}, brokers=(BrokerMeta(3), BrokerMeta(1), BrokerMeta(2)))
    plan = create(TopicToCreate("t", num_partitions=6, replication_factor=2), catalog)
    expected = assign_replicas(list(BROKERS), 6, 2, rng=rng())
    assert plan == TopicCreation("t", expected, {})


def test_broker_defaults() -> None:
    plan = create(TopicToCreate("t"))
    assert isinstance(plan, TopicCreation)
    assert (plan.num_partitions, plan.replication_factor) == (1, 1)
    plan = create(TopicToCreate("t"), default_partitions=6, default_replication_factor=3)
    assert isinstance(plan, TopicCreation)
    assert (plan.num_partitions, plan.replication_factor) == (6, 3)
    plan = create(TopicToCreate("t", num_partitions=4), default_partitions=6, default_replication_factor=2)
    assert isinstance(plan, TopicCreation)
    assert (plan.num_partitions, plan.replication_factor) == (4, 2)


def test_rack_aware_creation_spans_racks() -> None:
    brokers = tuple(BrokerMeta(b, f"rack{b % 3}") for b in range(6))
    plan = create(
        TopicToCreate("t", num_partitions=12, replication_factor=3), TopicCatalog(topics={}, brokers=brokers)
    )
    assert isinstance(plan, TopicCreation)
    assert all(len({b % 3 for b in replicas}) == 3 for replicas in plan.assignment.values())


def test_batch_duplicates_fail_every_copy() -> None:
    results = validate_create_topics(
        [TopicToCreate("x"), TopicToCreate("y"), TopicToCreate("x", num_partitions=3)], CATALOG, rng=rng()
    )
    assert_error(results[0], 42, "INVALID_REQUEST", "Found multiple entries for this topic.")
    assert isinstance(results[1], TopicCreation)
    assert results[1].name == "y"
    assert_error(results[2], 42, "INVALID_REQUEST", "Found multiple entries for this topic.")


def test_batch_results_follow_request_order() -> None:
    results = validate_create_topics(
        [TopicToCreate("orders"), TopicToCreate("fresh", num_partitions=2), TopicToCreate("bad name")],
        CATALOG,
        rng=rng(),
    )
    assert [type(r) for r in results] == [TopicAlreadyExists, TopicCreation, InvalidTopic]


def test_batch_collision_with_topic_accepted_earlier_in_request() -> None:
    results = validate_create_topics([TopicToCreate("a.b"), TopicToCreate("a_b")], CATALOG, rng=rng())
    assert isinstance(results[0], TopicCreation)
    assert_error(results[1], 17, "INVALID_TOPIC_EXCEPTION", "Topic 'a_b' collides with existing topics: a.b")
    # A refused topic does not count.
    results = validate_create_topics(
        [TopicToCreate("a.b", num_partitions=0), TopicToCreate("a_b")], CATALOG, rng=rng()
    )
    assert isinstance(results[1], TopicCreation)


def test_batch_passes_defaults() -> None:
    (plan,) = validate_create_topics(
        [TopicToCreate("t")], CATALOG, rng=rng(), default_partitions=3, default_replication_factor=2
    )
    assert isinstance(plan, TopicCreation)
    assert (plan.num_partitions, plan.replication_factor) == (3, 2)


# --- CreatePartitions ---------------------------------------------------------------------------


def expand(request: PartitionsToAdd, catalog: TopicCatalog = CATALOG) -> PartitionsCreation | ReassigndError:
    return validate_create_partition(request, catalog, rng=rng())


def test_expand_unknown_topic() -> None:
    assert_error(
        expand(PartitionsToAdd("nope", 4)),
        3,
        "UNKNOWN_TOPIC_OR_PARTITION",
        "The topic 'nope' does not exist.",
    )


def test_expand_topic_queued_for_deletion() -> None:
    assert_error(
        expand(PartitionsToAdd("doomed", 4)),
        3,
        "UNKNOWN_TOPIC_OR_PARTITION",
        "The topic is queued for deletion.",
    )


def test_expand_reassigning_topic() -> None:
    assert_error(
        expand(PartitionsToAdd("moving", 4)),
        60,
        "REASSIGNMENT_IN_PROGRESS",
        "A partition reassignment is in progress for the topic 'moving'.",
    )


def test_expand_to_fewer_partitions() -> None:
    assert_error(
        expand(PartitionsToAdd("orders", 2)),
        37,
        "INVALID_PARTITIONS",
        "Topic currently has 3 partitions, which is higher than the requested 2.",
    )


def test_expand_to_same_count() -> None:
    assert_error(
        expand(PartitionsToAdd("orders", 3)), 37, "INVALID_PARTITIONS", "Topic already has 3 partitions."
    )


def test_expand_with_unknown_brokers() -> None:
    assert_error(
        expand(PartitionsToAdd("orders", 5, [[1, 9], [8, 2]])),
        39,
        "INVALID_REPLICA_ASSIGNMENT",
        "Unknown broker(s) in replica assignment: 8, 9.",
    )


@pytest.mark.parametrize(("assignments", "given"), [([[1, 2]], 1), ([], 0), ([[1, 2], [2, 3], [3, 1]], 3)])
def test_expand_with_wrong_number_of_assignments(assignments: list[list[int]], given: int) -> None:
    assert_error(
        expand(PartitionsToAdd("orders", 5, assignments)),
        39,
        "INVALID_REPLICA_ASSIGNMENT",
        f"Increasing the number of partitions by 2 but {given} assignments provided.",
    )


@pytest.mark.parametrize(
    ("assignments", "message"),
    [
        ([[1, 2], []], "Cannot have replication factor of 0 for partition id 4."),
        ([[1, 1], [2, 3]], "Duplicate brokers not allowed in replica assignment: 1, 1 for partition id 3."),
        (
            [[1], [1, 2, 3]],
            "Inconsistent replication factor between partitions, partition 0 has 2 while partitions "
            "[3, 4] have replication factors [1, 3], respectively.",
        ),
    ],
)
def test_expand_with_bad_assignments(assignments: list[list[int]], message: str) -> None:
    assert_error(expand(PartitionsToAdd("orders", 5, assignments)), 39, "INVALID_REPLICA_ASSIGNMENT", message)


def test_expand_with_more_replicas_than_live_brokers() -> None:
    catalog = TopicCatalog(topics={"orders": {0: (1, 2, 3)}}, brokers=(BrokerMeta(1), BrokerMeta(2)))
    assert_error(
        expand(PartitionsToAdd("orders", 2), catalog),
        38,
        "INVALID_REPLICATION_FACTOR",
        "Replication factor: 3 larger than available brokers: 2.",
    )


def test_expand_corrupt_topic_without_partition_zero() -> None:
    assert_error(
        expand(PartitionsToAdd("broken", 3)),
        -1,
        "UNKNOWN_SERVER_ERROR",
        "Unexpected existing replica assignment for topic 'broken', partition id 0 is missing. "
        "Assignment: {1: [1, 2]}",
    )


def test_expand_with_explicit_assignments() -> None:
    plan = expand(PartitionsToAdd("orders", 5, [[3, 1], [1, 2]]))
    assert plan == PartitionsCreation("orders", {3: (3, 1), 4: (1, 2)})


def test_expand_placed_like_kafka() -> None:
    """AddPartitionsTest.testReplicaPlacementAllServers through the validation layer."""
    catalog = TopicCatalog(
        topics={"t3": {0: (2, 3, 0, 1)}}, brokers=tuple(BrokerMeta(b) for b in (3, 2, 1, 0))
    )
    plan = expand(PartitionsToAdd("t3", 7), catalog)
    assert isinstance(plan, PartitionsCreation)
    assert {p: rs[0] for p, rs in plan.new_assignment.items()} == {1: 3, 2: 0, 3: 1, 4: 2, 5: 3, 6: 0}
    assert plan.new_assignment == assign_new_partitions(
        {0: (2, 3, 0, 1)}, [BrokerMeta(b) for b in range(4)], 7, rng()
    )


def test_expand_batch_duplicates_fail_every_copy() -> None:
    results = validate_create_partitions(
        [PartitionsToAdd("orders", 4), PartitionsToAdd("audit_log", 2), PartitionsToAdd("orders", 6)],
        CATALOG,
        rng=rng(),
    )
    assert_error(results[0], 42, "INVALID_REQUEST", "Duplicate topic in request.")
    assert results[1] == PartitionsCreation("audit_log", {1: (2,)})
    assert_error(results[2], 42, "INVALID_REQUEST", "Duplicate topic in request.")


# --- DeleteTopics -------------------------------------------------------------------------------


def delete(names: Sequence[str]) -> list[TopicDeletion | ReassigndError]:
    return validate_delete_topics(names, CATALOG)


def test_delete_unknown_topic() -> None:
    (result,) = delete(["nope"])
    assert_error(result, 3, "UNKNOWN_TOPIC_OR_PARTITION", "The topic 'nope' does not exist.")


def test_delete_duplicates_fail_every_copy() -> None:
    results = delete(["orders", "audit_log", "orders"])
    assert_error(results[0], 42, "INVALID_REQUEST", "Duplicate topic name.")
    assert results[1] == TopicDeletion("audit_log", already_queued=False)
    assert_error(results[2], 42, "INVALID_REQUEST", "Duplicate topic name.")


def test_delete_topic_already_queued_is_accepted() -> None:
    assert delete(["doomed"]) == [TopicDeletion("doomed", already_queued=True)]


def test_delete_reassigning_topic_is_accepted() -> None:
    assert delete(["moving"]) == [TopicDeletion("moving", already_queued=False)]


def test_delete_keeps_request_order() -> None:
    results = delete(["orders", "nope", "moving"])
    assert [type(r).__name__ for r in results] == [
        "TopicDeletion",
        "UnknownTopicOrPartition",
        "TopicDeletion",
    ]


def test_a_topic_that_cannot_fit_its_znode_is_refused_before_placement() -> None:
    assert topic_size_error(1000, 3) is None
    error = topic_size_error(2**31 - 1, 3)
    assert error is not None and error.error_code == 37
    assert "too large" in (error.message or "")

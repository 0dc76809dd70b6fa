"""Per-topic validation of CreateTopics, CreatePartitions and DeleteTopics. Pure.

Each function takes the request and a TopicCatalog of plain values and returns, per topic, the
validated plan or the ReassigndError to answer with; nothing is raised for a refused topic. The
first failure wins, in Kafka's order (KafkaApis, then ZkAdminManager, then AdminZkClient), and
the messages are Kafka's. Where reassignd departs from Kafka 3.3 (ZooKeeper mode) it says so.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass

from reassignd.controller.model.admission import topic_configs_error
from reassignd.controller.model.requests import (
    NO_NUM_PARTITIONS,
    NO_REPLICATION_FACTOR,
    PartitionsToAdd,
    TopicToCreate,
)
from reassignd.controller.topics.placement import BrokerMeta, assign_new_partitions, assign_replicas
from reassignd.errors import (
    InvalidPartitions,
    InvalidReplicaAssignment,
    InvalidRequest,
    InvalidTopic,
    ReassigndError,
    ReassignmentInProgress,
    TopicAlreadyExists,
    UnknownTopicOrPartition,
)
from reassignd.topic_partition import topic_name_problem
from reassignd.zk import codec


@dataclass(frozen=True, slots=True)
class TopicCatalog:
    """What validation needs to know about the cluster.

    ``topics`` maps every existing topic (those queued for deletion included) to its partitions'
    replicas (RS); ``brokers`` are the live brokers with their racks; ``reassigning`` names the
    topics with a partition being reassigned; ``deleting`` the topics queued for deletion.
    """

    topics: Mapping[str, Mapping[int, Sequence[int]]]
    brokers: Sequence[BrokerMeta]
    reassigning: Set[str] = frozenset()
    deleting: Set[str] = frozenset()

    @property
    def brokers_by_id(self) -> tuple[BrokerMeta, ...]:
        """Brokers sorted by id, the order Kafka's getBrokerMetadatas hands to placement."""
        return tuple(sorted(self.brokers, key=lambda b: b.id))


@dataclass(frozen=True, slots=True)
class TopicCreation:
    """A topic that may be created: its full assignment (partition → replicas) and configs."""

    name: str
    assignment: Mapping[int, tuple[int, ...]]
    configs: Mapping[str, str]

    @property
    def num_partitions(self) -> int:
        return len(self.assignment)

    @property
    def replication_factor(self) -> int:
        return len(self.assignment[0])


@dataclass(frozen=True, slots=True)
class PartitionsCreation:
    """Partitions that may be added: the replicas of the new partitions only."""

    name: str
    new_assignment: Mapping[int, tuple[int, ...]]


@dataclass(frozen=True, slots=True)
class TopicDeletion:
    """A topic that may be deleted; ``already_queued``: its deletion znode exists already (Kafka
    answers NONE and waits for that deletion)."""

    name: str
    already_queued: bool


def _fmt(replicas: Iterable[int]) -> str:
    return ", ".join(str(r) for r in replicas)


def _fmt_assignment(assignment: Mapping[int, Sequence[int]]) -> str:
    return "{" + ", ".join(f"{p}: [{_fmt(assignment[p])}]" for p in sorted(assignment)) + "}"


def _duplicated(names: Iterable[str]) -> set[str]:
    return {name for name, n in Counter(names).items() if n > 1}


# ---------------------------------------------------------------------------------------------
# Topic names (Kafka's Topic.validate and Topic.hasCollision)


def topic_name_error(name: str) -> InvalidTopic | None:
    """Kafka's name rules (:func:`topic_name_problem`) as the error to answer with."""
    problem = topic_name_problem(name)
    return None if problem is None else InvalidTopic(problem)


def _collision_key(name: str) -> str:
    return name.replace(".", "_")


def colliding_topics(name: str, existing: Iterable[str]) -> list[str]:
    """Existing topics whose names differ from ``name`` only by '.' versus '_' (their metric
    names would clash), sorted."""
    if "." not in name and "_" not in name:
        return []
    key = _collision_key(name)
    return sorted(t for t in existing if t != name and _collision_key(t) == key)


# ---------------------------------------------------------------------------------------------
# CreateTopics


def validate_create_topics(
    topics: Sequence[TopicToCreate],
    catalog: TopicCatalog,
    *,
    rng: random.Random,
    default_partitions: int = 1,
    default_replication_factor: int = 1,
) -> list[TopicCreation | ReassigndError]:
    """One result per request entry, in request order.

    A name given more than once fails every copy with 42 (KafkaApis). A topic accepted earlier in
    the request counts as existing for the collision check of later ones, as it does in Kafka,
    which creates the topics one by one.
    """
    duplicates = _duplicated(t.name for t in topics)
    accepted: list[str] = []
    results: list[TopicCreation | ReassigndError] = []
    for topic in topics:
        if topic.name in duplicates:
            results.append(InvalidRequest("Found multiple entries for this topic."))
            continue
        result = validate_create_topic(
            topic,
            catalog,
            rng=rng,
            default_partitions=default_partitions,
            default_replication_factor=default_replication_factor,
            created_in_request=accepted,
        )
        if isinstance(result, TopicCreation):
            accepted.append(result.name)
        results.append(result)
    return results


def validate_create_topic(
    topic: TopicToCreate,
    catalog: TopicCatalog,
    *,
    rng: random.Random,
    default_partitions: int = 1,
    default_replication_factor: int = 1,
    created_in_request: Iterable[str] = (),
) -> TopicCreation | ReassigndError:
    """One topic of a CreateTopics request: ZkAdminManager.createTopics's checks, then
    AdminZkClient.validateTopicCreate's (so, as in Kafka, a bad partition count is reported
    before a bad name).

    Departures from Kafka: an explicit assignment naming an unknown broker or an empty replica
    list is refused (39); Kafka 3.3 in ZooKeeper mode writes either.
    """
    if topic.name in catalog.topics:
        return TopicAlreadyExists(f"Topic '{topic.name}' already exists.")
    null_configs = [k for k, v in topic.configs.items() if v is None]
    if null_configs:
        return InvalidRequest(f"Null value not supported for topic configs : {','.join(null_configs)}")
    explicit = bool(topic.assignments)
    if explicit and (
        topic.num_partitions != NO_NUM_PARTITIONS or topic.replication_factor != NO_REPLICATION_FACTOR
    ):
        return InvalidRequest(
            "Both numPartitions or replicationFactor and replicasAssignments were set. "
            "Both cannot be used at the same time."
        )
    if topic.assignments:
        assignment = {p: tuple(replicas) for p, replicas in sorted(topic.assignments.items())}
    else:
        n_partitions = (
            default_partitions if topic.num_partitions == NO_NUM_PARTITIONS else topic.num_partitions
        )
        rf = (
            default_replication_factor
            if topic.replication_factor == NO_REPLICATION_FACTOR
            else topic.replication_factor
        )
        if (too_big := topic_size_error(n_partitions, rf)) is not None:
            return too_big
        try:
            assignment = assign_replicas(catalog.brokers_by_id, n_partitions, rf, rng=rng)
        except ReassigndError as refused:
            return refused
    # the name, then the configs (refused at the door already, model/admission.py: a safety net)
    if (bad := topic_name_error(topic.name) or topic_configs_error(topic.configs)) is not None:
        return bad
    colliding = colliding_topics(topic.name, [*catalog.topics, *created_in_request])
    if colliding:
        return InvalidTopic(f"Topic '{topic.name}' collides with existing topics: {', '.join(colliding)}")
    if explicit and (bad_assignment := explicit_assignment_error(assignment, catalog.brokers)) is not None:
        return bad_assignment
    if (too_big := encoded_size_error(assignment)) is not None:
        return too_big
    configs = {k: v for k, v in topic.configs.items() if v is not None}
    return TopicCreation(topic.name, assignment, configs)


# A topic znode must fit ZooKeeper's 1 MiB (jute.maxbuffer); Kafka would fail the write. Each
# partition costs about `"12345":[` + RF ids of up to 4 digits + separators. Refusing before the
# placement also keeps a request for millions of partitions from exhausting the controller.
TOPIC_ZNODE_BUDGET_BYTES = 900 * 1024


def topic_size_error(partitions: int, replication_factor: int) -> InvalidPartitions | None:
    """37 when a topic of ``partitions`` partitions could not be stored in one topic znode."""
    per_partition = 10 + 5 * max(replication_factor, 1)
    if partitions > 0 and partitions * per_partition > TOPIC_ZNODE_BUDGET_BYTES:
        limit = TOPIC_ZNODE_BUDGET_BYTES // per_partition
        return InvalidPartitions(
            f"Number of partitions {partitions} is too large: a topic of replication factor "
            f"{replication_factor} holds at most {limit} partitions in its ZooKeeper znode."
        )
    return None


class TopicZnodeTooLarge(InvalidPartitions):
    """37: the topic's znode, really encoded, would be over the budget (reported as a refusal)."""


def encoded_size_error(assignment: Mapping[int, Sequence[int]]) -> InvalidPartitions | None:
    """37 when the topic znode of ``assignment`` (its real encoding, with a topic id) is over the
    budget: the estimate above assumes broker ids of up to 4 digits, and ids may have 10."""
    znode = codec.TopicZnode({p: tuple(rs) for p, rs in assignment.items()}, topic_id="A" * 22)
    size = len(codec.encode_topic(znode))
    if size > TOPIC_ZNODE_BUDGET_BYTES:
        return TopicZnodeTooLarge(
            f"Number of partitions {len(assignment)} is too large: the topic's ZooKeeper znode would be "
            f"{size} bytes with these replicas, over the {TOPIC_ZNODE_BUDGET_BYTES} a topic may use."
        )
    return None


def explicit_assignment_error(
    assignment: Mapping[int, Sequence[int]], brokers: Sequence[BrokerMeta]
) -> InvalidReplicaAssignment | None:
    """A client's assignment for a new topic (AdminZkClient.validateTopicCreate, then the broker
    check ZkAdminManager applies to CreatePartitions)."""
    for partition in sorted(assignment):
        if not assignment[partition]:
            return InvalidReplicaAssignment(
                f"Cannot have replication factor of 0 for partition id {partition}."
            )
    if len({len(replicas) for replicas in assignment.values()}) != 1:
        return InvalidReplicaAssignment("All partitions should have the same number of replicas")
    if any(len(set(replicas)) != len(replicas) for replicas in assignment.values()):
        return InvalidReplicaAssignment(f"Duplicate replica assignment found: {_fmt_assignment(assignment)}")
    if set(assignment) != set(range(len(assignment))):
        return InvalidReplicaAssignment("partitions should be a consecutive 0-based integer sequence")
    return _unknown_brokers_error((r for replicas in assignment.values() for r in replicas), brokers)


def _unknown_brokers_error(
    replicas: Iterable[int], brokers: Sequence[BrokerMeta]
) -> InvalidReplicaAssignment | None:
    unknown = set(replicas) - {b.id for b in brokers}
    if unknown:
        return InvalidReplicaAssignment(f"Unknown broker(s) in replica assignment: {_fmt(sorted(unknown))}.")
    return None


# ---------------------------------------------------------------------------------------------
# CreatePartitions


def validate_create_partitions(
    requests: Sequence[PartitionsToAdd], catalog: TopicCatalog, *, rng: random.Random
) -> list[PartitionsCreation | ReassigndError]:
    """One result per request entry, in request order; a name given more than once fails every
    copy with 42 (KafkaApis)."""
    duplicates = _duplicated(r.name for r in requests)
    return [
        InvalidRequest("Duplicate topic in request.")
        if request.name in duplicates
        else validate_create_partition(request, catalog, rng=rng)
        for request in requests
    ]


def validate_create_partition(  # noqa: PLR0911 (Kafka's checks in Kafka's order, first failure wins)
    request: PartitionsToAdd, catalog: TopicCatalog, *, rng: random.Random
) -> PartitionsCreation | ReassigndError:
    """One topic of a CreatePartitions request: KafkaApis's deletion check, then ZkAdminManager's
    and AdminZkClient.createNewPartitionsAssignment's.

    Departure from Kafka: a topic queued for deletion gets 3 (Kafka 3.3 in ZooKeeper mode answers
    17 INVALID_TOPIC_EXCEPTION with this message; KRaft answers 3).
    """
    name = request.name
    if name in catalog.deleting:
        return UnknownTopicOrPartition("The topic is queued for deletion.")
    if name in catalog.reassigning:
        return ReassignmentInProgress(f"A partition reassignment is in progress for the topic '{name}'.")
    existing = catalog.topics.get(name)
    if not existing:
        return UnknownTopicOrPartition(f"The topic '{name}' does not exist.")
    current = len(existing)
    if request.count < current:
        return InvalidPartitions(
            f"Topic currently has {current} partitions, which is higher than the requested {request.count}."
        )
    if request.count == current:
        return InvalidPartitions(f"Topic already has {current} partitions.")
    partition0 = existing.get(0)
    if not partition0:
        # A corrupt topic znode; Kafka answers UNKNOWN_SERVER_ERROR (an AdminOperationException).
        return ReassigndError(
            f"Unexpected existing replica assignment for topic '{name}', partition id 0 is missing. "
            f"Assignment: {_fmt_assignment(existing)}"
        )
    if (too_big := topic_size_error(request.count, len(partition0))) is not None:
        return too_big
    if request.assignments is None:
        try:
            placed = assign_new_partitions(existing, catalog.brokers_by_id, request.count, rng)
        except ReassigndError as refused:
            return refused
        if (too_big := encoded_size_error({**existing, **placed})) is not None:
            return too_big
        return PartitionsCreation(name, placed)
    replica_lists = [tuple(replicas) for replicas in request.assignments]
    if (
        error := _unknown_brokers_error((r for rs in replica_lists for r in rs), catalog.brokers)
    ) is not None:
        return error
    if len(replica_lists) != request.count - current:
        return InvalidReplicaAssignment(
            f"Increasing the number of partitions by {request.count - current} "
            f"but {len(replica_lists)} assignments provided."
        )
    new_assignment = {current + i: replicas for i, replicas in enumerate(replica_lists)}
    if (error := new_partitions_assignment_error(new_assignment, len(partition0))) is not None:
        return error
    if (too_big := encoded_size_error({**existing, **new_assignment})) is not None:
        return too_big
    return PartitionsCreation(name, new_assignment)


def new_partitions_assignment_error(
    new_assignment: Mapping[int, Sequence[int]], replication_factor: int
) -> InvalidReplicaAssignment | None:
    """AdminZkClient.validateReplicaAssignment: no empty list, no broker twice in a partition, and
    the replication factor of partition 0 everywhere."""
    for partition in sorted(new_assignment):
        replicas = new_assignment[partition]
        if not replicas:
            return InvalidReplicaAssignment(
                f"Cannot have replication factor of 0 for partition id {partition}."
            )
        if len(set(replicas)) != len(replicas):
            return InvalidReplicaAssignment(
                "Duplicate brokers not allowed in replica assignment: "
                f"{_fmt(replicas)} for partition id {partition}."
            )
    bad = {p: len(rs) for p, rs in sorted(new_assignment.items()) if len(rs) != replication_factor}
    if bad:
        return InvalidReplicaAssignment(
            "Inconsistent replication factor between partitions, "
            f"partition 0 has {replication_factor} while partitions [{_fmt(bad)}] have "
            f"replication factors [{_fmt(bad.values())}], respectively."
        )
    return None


# ---------------------------------------------------------------------------------------------
# DeleteTopics


def validate_delete_topics(
    names: Sequence[str], catalog: TopicCatalog
) -> list[TopicDeletion | ReassigndError]:
    """One result per request entry, in request order. A name given more than once fails every
    copy with 42 (Kafka's KRaft controller; ZooKeeper mode silently merges them); an unknown topic
    gets 3; a topic already queued for deletion is accepted again. A topic with reassignments in
    flight is accepted: its deletion waits for them."""
    duplicates = _duplicated(names)
    results: list[TopicDeletion | ReassigndError] = []
    for name in names:
        if name in duplicates:
            results.append(InvalidRequest("Duplicate topic name."))
        elif name not in catalog.topics:
            results.append(UnknownTopicOrPartition(f"The topic '{name}' does not exist."))
        else:
            results.append(TopicDeletion(name, already_queued=name in catalog.deleting))
    return results

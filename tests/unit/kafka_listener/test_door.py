"""The Kafka listener's door: each admin request with an HTTP twin, converted into the HTTP API's
contract struct and built by the HTTP API's builder, gives the controller the very request the
HTTP door gives it for the same content; what only Kafka's wire can carry is refused in Kafka's
words, and an AlterClientQuotas entry is planned by the one planner."""

from __future__ import annotations

import json

from kafka.protocol.admin import (
    AlterClientQuotasRequest,
    AlterPartitionReassignmentsRequest,
    AlterReplicaLogDirsRequest,
    CreatePartitionsRequest,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    ElectLeadersRequest,
)

from reassignd.contracts.requests import MoveLogDirsRequest
from reassignd.controller.model import from_contracts as build
from reassignd.controller.model.admin_requests import ElectionType, ElectLeaders
from reassignd.controller.model.requests import (
    AlterReassignments,
    QuotaAlterationResult,
    QuotaChange,
    Requester,
)
from reassignd.http.routes.elections import parse_elect_body
from reassignd.http.routes.log_dirs import parse_moves_body
from reassignd.http.routes.quotas import parse_alter_quotas
from reassignd.http.routes.reassignments import parse_alter_body
from reassignd.http.routes.topics import parse_create_partitions, parse_create_topics, parse_delete_topics
from reassignd.kafka_listener import door
from reassignd.kafka_listener.quotas import plan_entry

CALLER = Requester("alice", "app")
RATE = "controller_mutation_rate"


def body(value: object) -> bytes:
    return json.dumps(value).encode()


def test_alter_partition_reassignments_is_the_http_request() -> None:
    Topic = AlterPartitionReassignmentsRequest.ReassignableTopic
    request = AlterPartitionReassignmentsRequest(
        timeout_ms=-5,  # no wait, as Kafka takes it
        topics=[
            Topic(
                name="t",
                partitions=[
                    Topic.ReassignablePartition(partition_index=0, replicas=[2, 1]),
                    Topic.ReassignablePartition(partition_index=1, replicas=None),
                    Topic.ReassignablePartition(partition_index=0, replicas=[3]),
                ],
            )
        ],
    )
    http = parse_alter_body(
        body(
            {
                "topics": [
                    {
                        "name": "t",
                        "partitions": [
                            {"partition": 0, "replicas": [2, 1]},
                            {"partition": 1, "replicas": None},
                            {"partition": 0, "replicas": [3]},
                        ],
                    }
                ]
            }
        )
    )
    kafka = build.alter_of(door.alter_reassignments(request))
    assert kafka == http
    assert kafka == AlterReassignments(((("t", 0), (2, 1)), (("t", 1), None), (("t", 0), (3,))))


def test_create_topics_is_the_http_request() -> None:
    Topic = CreateTopicsRequest.CreatableTopic
    request = CreateTopicsRequest(
        topics=[
            Topic(
                name="a",
                num_partitions=-1,
                replication_factor=-1,
                assignments=[
                    Topic.CreatableReplicaAssignment(partition_index=0, broker_ids=[1, 2]),
                    Topic.CreatableReplicaAssignment(partition_index=1, broker_ids=[2, 3]),
                ],
                configs=[Topic.CreatableTopicConfig(name="cleanup.policy", value="compact")],
            ),
            Topic(name="b", num_partitions=3, replication_factor=2, assignments=[], configs=[]),
        ],
        timeout_ms=1500,
        validate_only=True,
    )
    http = parse_create_topics(
        body(
            {
                "timeout_ms": 1500,
                "validate_only": True,
                "topics": [
                    {
                        "name": "a",
                        "assignments": {"0": [1, 2], "1": [2, 3]},
                        "configs": {"cleanup.policy": "compact"},
                    },
                    {"name": "b", "num_partitions": 3, "replication_factor": 2},
                ],
            }
        ),
        CALLER,
    )
    assert build.create_topics_of(door.create_topics(request, 7), CALLER) == http
    # v0 has no validate_only; before v6 the quota is permissive
    old = build.create_topics_of(door.create_topics(request, 0), CALLER, strict_quota=False)
    assert (old.validate_only, old.strict_quota, old.topics) == (False, False, http.topics)


def test_delete_topics_and_create_partitions_are_the_http_requests() -> None:
    delete = DeleteTopicsRequest(topic_names=["a", "b"], timeout_ms=900)
    http_delete = parse_delete_topics(body({"topics": ["a", "b"], "timeout_ms": 900}), CALLER)
    assert build.delete_topics_of(door.delete_topics(["a", "b"], delete), CALLER) == http_delete

    Topic = CreatePartitionsRequest.CreatePartitionsTopic
    create = CreatePartitionsRequest(
        topics=[
            Topic(name="a", count=3, assignments=[Topic.CreatePartitionsAssignment(broker_ids=[1, 2])]),
            Topic(name="b", count=5, assignments=None),
        ],
        timeout_ms=700,
        validate_only=False,
    )
    http_create = parse_create_partitions(
        body(
            {
                "timeout_ms": 700,
                "topics": [{"name": "a", "count": 3, "assignments": [[1, 2]]}, {"name": "b", "count": 5}],
            }
        ),
        CALLER,
    )
    assert build.create_partitions_of(door.create_partitions(create), CALLER) == http_create


def test_elect_leaders_is_the_http_request_and_an_unknown_type_is_refused_in_kafkas_words() -> None:
    Topic = ElectLeadersRequest.TopicPartitions
    request = ElectLeadersRequest(
        election_type=1, topic_partitions=[Topic(topic="t", partitions=[0, 2])], timeout_ms=1000
    )
    http = parse_elect_body(
        body(
            {
                "election_type": "unclean",
                "partitions": [{"topic": "t", "partition": 0}, {"topic": "t", "partition": 2}],
            }
        )
    )
    converted = door.elect_leaders(request, 1)
    assert not isinstance(converted, str)
    assert build.elect_of(converted) == http == ElectLeaders(ElectionType.UNCLEAN, (("t", 0), ("t", 2)))

    every = ElectLeadersRequest(election_type=1, topic_partitions=None, timeout_ms=1000)
    converted = door.elect_leaders(every, 0)  # v0 has no type: preferred
    assert not isinstance(converted, str)
    assert build.elect_of(converted) == ElectLeaders(ElectionType.PREFERRED, None)

    assert door.elect_leaders(
        ElectLeadersRequest(election_type=7, topic_partitions=None, timeout_ms=1), 1
    ) == ("Unknown election type 7")


def _entry(entity: list[tuple[str, str | None]], *ops: tuple[str, float, bool]) -> object:
    Entry = AlterClientQuotasRequest.EntryData
    return Entry(
        entity=[Entry.EntityData(entity_type=t, entity_name=n) for t, n in entity],
        ops=[Entry.OpData(key=k, value=v, remove=r) for k, v, r in ops],
    )


def test_a_quota_entry_is_planned_by_the_http_planner() -> None:
    http = parse_alter_quotas(
        body(
            {
                "entries": [
                    {
                        "entity": {"user": "<default>", "client_id": "<<default>"},
                        "ops": [{"key": RATE, "value": 2}],
                    },
                    {"entity": {"user": "bob"}, "ops": [{"key": RATE, "value": None}]},
                    {"entity": {"user": "bob"}, "ops": [{"key": "x", "value": 1}]},
                    {"entity": {"user": ""}, "ops": [{"key": "x", "value": 1}]},
                    {"entity": {"client_id": "app"}, "ops": []},
                ]
            }
        )
    )
    kafka = [
        _entry([("user", None), ("client-id", "<default>")], (RATE, 2.0, False)),
        _entry([("user", "bob")], (RATE, 9.0, True)),  # removed: its value is not read
        _entry([("user", "bob")], ("x", 1.0, False)),
        _entry([("user", "")], ("x", 1.0, False)),  # the entity is checked before the keys
        _entry([("client-id", "app")]),
    ]
    planned = [plan_entry(e) for e in kafka]
    assert planned == [build.quota_entry_of(e) for e in http]
    assert planned[:2] == [QuotaChange("<default>", "<<default>", 2.0), QuotaChange("bob", None, None)]
    assert [(p.error_code, p.error_message) for p in planned[2:]] == [  # type: ignore[union-attr]
        (42, 'Unsupported quota key "x": only controller_mutation_rate can be altered'),
        (42, "Empty user not supported"),
        (0, None),
    ]


def test_what_only_kafkas_quota_wire_carries_is_answered_at_the_door() -> None:
    assert plan_entry(_entry([("user", "a"), ("user", "b")], (RATE, 1.0, False))) == QuotaAlterationResult(
        "a", None, 42, "Unsupported or repeated entity type 'user'"
    )
    assert plan_entry(_entry([("ip", "10.0.0.1")], (RATE, 1.0, False))) == QuotaAlterationResult(
        None, None, 42, "Unsupported or repeated entity type 'ip'"
    )
    # a bad value: 42 at the door (before a viewer's 31 or a standby's 41), in the controller's words
    refused = plan_entry(_entry([("user", "a")], (RATE, -1.0, False)))
    assert refused == QuotaAlterationResult(
        "a", None, 42, "controller_mutation_rate must be a finite, non-negative number, got -1.0"
    )


def test_log_dir_moves_are_the_http_moves_and_the_builders_problem_is_left_to_http() -> None:
    Dir = AlterReplicaLogDirsRequest.AlterReplicaLogDir
    Topic = Dir.AlterReplicaLogDirTopic
    request = AlterReplicaLogDirsRequest(
        dirs=[
            Dir(path="/d1", topics=[Topic(name="t", partitions=[0, 1])]),
            Dir(path="/d2", topics=[Topic(name="u", partitions=[3])]),
        ]
    )
    http = parse_moves_body(
        body(
            {
                "broker": 2,
                "moves": [
                    {"topic": "t", "partition": 0, "dir": "/d1"},
                    {"topic": "t", "partition": 1, "dir": "/d1"},
                    {"topic": "u", "partition": 3, "dir": "/d2"},
                ],
            }
        )
    )
    built = build.log_dir_moves_of(MoveLogDirsRequest(2, door.log_dir_moves(request)))
    assert (built.broker, built.moves, built.problem) == (*http, None)

    twice = AlterReplicaLogDirsRequest(
        dirs=[
            Dir(path="/d1", topics=[Topic(name="t", partitions=[0])]),
            Dir(path="/d2", topics=[Topic(name="t", partitions=[0])]),
        ]
    )
    built = build.log_dir_moves_of(MoveLogDirsRequest(2, door.log_dir_moves(twice)))
    assert len(built.moves) == 2  # forwarded as Kafka's broker takes it
    assert built.problem == ("moves[1]", "duplicate replica t-0: a replica is moved to one dir")

"""Refusal is an answer on the Kafka wire: whatever the controller's side raises (a refused event,
one of reassignd's own codes, a bug), every API answers the request with the error on each item
it names, and the same connection serves the next request. The controller's side here is a small
fake behind the handlers' seam (``ctx.api``) that fails every call, so every API is reached."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from kafka.protocol.admin import (
    AlterClientQuotasRequest,
    AlterConfigsRequest,
    AlterPartitionReassignmentsRequest,
    AlterReplicaLogDirsRequest,
    CreatePartitionsRequest,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    DescribeClientQuotasRequest,
    DescribeClusterRequest,
    DescribeConfigsRequest,
    DescribeLogDirsRequest,
    DescribeTopicPartitionsRequest,
    ElectLeadersRequest,
    IncrementalAlterConfigsRequest,
    ListPartitionReassignmentsRequest,
)
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.metadata import ApiVersionsRequest, MetadataRequest

from reassignd.errors import EventRefused, ReassigndError
from reassignd.kafka_listener import protocol
from reassignd.kafka_listener.dispatch import REFUSALS
from reassignd.testing.fake_view import SETTINGS
from tests.integration.kafka_door import Client, listening

pytestmark = pytest.mark.timeout(60)

ZERO = uuid.UUID(int=0)


class Failing:
    """Every call the handlers make fails with ``error``."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        def fail(*args: object, **kwargs: object) -> Any:
            self.calls += 1
            raise self.error

        async def fail_async(*args: object, **kwargs: object) -> Any:
            self.calls += 1
            raise self.error

        return fail if name == "snapshot" else fail_async


def requests() -> dict[int, tuple[ApiMessage, int, list[str]]]:
    """One request per API that calls the controller's side, each naming two items (what they
    are called in the answer)."""
    Create = CreateTopicsRequest.CreatableTopic
    Alter = AlterPartitionReassignmentsRequest.ReassignableTopic
    Configs = IncrementalAlterConfigsRequest.AlterConfigsResource
    Entry = AlterClientQuotasRequest.EntryData
    return {
        protocol.METADATA: (
            MetadataRequest(
                topics=[MetadataRequest.MetadataRequestTopic(topic_id=ZERO, name=n) for n in ("a", "b", "a")],
                allow_auto_topic_creation=False,
                include_topic_authorized_operations=False,
            ),
            12,
            ["a", "b"],
        ),
        protocol.DESCRIBE_CLUSTER: (
            DescribeClusterRequest(include_cluster_authorized_operations=False),
            0,
            [],
        ),
        protocol.CREATE_TOPICS: (
            CreateTopicsRequest(
                topics=[
                    Create(name=n, num_partitions=1, replication_factor=1, assignments=[], configs=[])
                    for n in ("a", "b")
                ],
                timeout_ms=1000,
                validate_only=False,
            ),
            7,
            ["a", "b"],
        ),
        protocol.DELETE_TOPICS: (
            DeleteTopicsRequest(
                topics=[DeleteTopicsRequest.DeleteTopicState(name=n, topic_id=ZERO) for n in ("a", "b")],
                timeout_ms=1000,
            ),
            6,
            ["a", "b"],
        ),
        protocol.CREATE_PARTITIONS: (
            CreatePartitionsRequest(
                topics=[
                    CreatePartitionsRequest.CreatePartitionsTopic(name=n, count=3, assignments=None)
                    for n in ("a", "b")
                ],
                timeout_ms=1000,
                validate_only=False,
            ),
            3,
            ["a", "b"],
        ),
        protocol.ALTER_PARTITION_REASSIGNMENTS: (
            AlterPartitionReassignmentsRequest(
                timeout_ms=1000,
                topics=[
                    Alter(
                        name="a",
                        partitions=[
                            Alter.ReassignablePartition(partition_index=p, replicas=[1]) for p in (0, 1)
                        ],
                    )
                ],
            ),
            0,
            ["a-0", "a-1"],
        ),
        protocol.LIST_PARTITION_REASSIGNMENTS: (
            ListPartitionReassignmentsRequest(timeout_ms=1000, topics=None),
            0,
            [],
        ),
        protocol.DESCRIBE_CONFIGS: (
            DescribeConfigsRequest(
                resources=[
                    DescribeConfigsRequest.DescribeConfigsResource(
                        resource_type=2, resource_name=n, configuration_keys=None
                    )
                    for n in ("a", "b")
                ],
                include_synonyms=False,
                include_documentation=False,
            ),
            4,
            ["a", "b"],
        ),
        protocol.INCREMENTAL_ALTER_CONFIGS: (
            IncrementalAlterConfigsRequest(
                resources=[
                    Configs(
                        resource_type=2,
                        resource_name=n,
                        configs=[
                            Configs.AlterableConfig(name="min.insync.replicas", config_operation=0, value="1")
                        ],
                    )
                    for n in ("a", "b")
                ],
                validate_only=False,
            ),
            1,
            ["a", "b"],
        ),
        protocol.ALTER_CONFIGS: (
            AlterConfigsRequest(
                resources=[
                    AlterConfigsRequest.AlterConfigsResource(
                        resource_type=2,
                        resource_name=n,
                        configs=[
                            AlterConfigsRequest.AlterConfigsResource.AlterableConfig(
                                name="min.insync.replicas", value="1"
                            )
                        ],
                    )
                    for n in ("a", "b")
                ],
                validate_only=False,
            ),
            2,
            ["a", "b"],
        ),
        protocol.DESCRIBE_TOPIC_PARTITIONS: (
            DescribeTopicPartitionsRequest(
                topics=[DescribeTopicPartitionsRequest.TopicRequest(name=n) for n in ("a", "b")],
                response_partition_limit=2000,
                cursor=None,
            ),
            0,
            ["a", "b"],
        ),
        protocol.DESCRIBE_CLIENT_QUOTAS: (DescribeClientQuotasRequest(components=[], strict=False), 1, []),
        protocol.ALTER_CLIENT_QUOTAS: (
            AlterClientQuotasRequest(
                entries=[
                    Entry(
                        entity=[Entry.EntityData(entity_type="user", entity_name=n)],
                        ops=[Entry.OpData(key="controller_mutation_rate", value=1.0, remove=False)],
                    )
                    for n in ("a", "b")
                ],
                validate_only=False,
            ),
            1,
            ["a", "b"],
        ),
        protocol.DESCRIBE_LOG_DIRS: (DescribeLogDirsRequest(topics=None), 4, []),
        protocol.ALTER_REPLICA_LOG_DIRS: (
            AlterReplicaLogDirsRequest(
                dirs=[
                    AlterReplicaLogDirsRequest.AlterReplicaLogDir(
                        path="/d2",
                        topics=[
                            AlterReplicaLogDirsRequest.AlterReplicaLogDir.AlterReplicaLogDirTopic(
                                name="a", partitions=[0, 1]
                            )
                        ],
                    )
                ]
            ),
            2,
            ["a-0", "a-1"],
        ),
        protocol.ELECT_LEADERS: (
            ElectLeadersRequest(
                election_type=0,
                topic_partitions=[ElectLeadersRequest.TopicPartitions(topic="a", partitions=[0, 1])],
                timeout_ms=1000,
            ),
            2,
            ["a-0", "a-1"],
        ),
    }


def errors_of(response: Any) -> list[int]:
    """Every error code in the response, at any depth (a top-level one the version does not
    carry decodes as 0: left out)."""
    out: list[int] = []

    def walk(obj: Any, top: bool) -> None:
        if isinstance(obj, list):
            for item in obj:
                walk(item, False)
            return
        for name in getattr(obj, "__slots__", ()) or vars(obj):
            value = getattr(obj, name, None)
            if name == "error_code" and isinstance(value, int):
                if value != 0 or not top:
                    out.append(value)
            elif isinstance(value, list) or hasattr(value, "json"):
                walk(value, False)

    walk(response, True)
    return out


def test_every_api_served_has_a_refusal() -> None:
    assert set(REFUSALS) == set(protocol.SERVED) - {protocol.SASL_HANDSHAKE, protocol.SASL_AUTHENTICATE}
    # ApiVersions and DescribeUserScramCredentials (no credentials kept) ask the controller nothing
    answered_alone = {protocol.API_VERSIONS, protocol.DESCRIBE_USER_SCRAM_CREDENTIALS}
    assert set(requests()) == set(REFUSALS) - answered_alone


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (EventRefused("the znode is over ZooKeeper's limit"), -1),
        (ReassigndError("a partition is already in a batch", error_code=10003), 60),  # BATCH_CONFLICT
        (RuntimeError("a bug"), -1),
    ],
    ids=["EventRefused", "own-code", "bug"],
)
@pytest.mark.parametrize("api", sorted(requests()), ids=lambda k: protocol.SERVED[k].name)
async def test_a_failing_controller_call_is_answered_per_item_and_the_connection_stays(
    api: int, error: Exception, code: int
) -> None:
    request, version, items = requests()[api]
    failing = Failing(error)
    async with listening(failing, SETTINGS) as listener:
        client = await Client.open(listener)
        try:
            response = await client.call(request, version)
            assert failing.calls >= 1
            codes = errors_of(response)
            assert codes and set(codes) == {code}, codes
            # each item named (de-duplicated for Metadata) has its own answer
            assert len(codes) >= len(items)
            answered = await client.call(ApiVersionsRequest(), 0)  # the same connection
            assert answered.error_code == 0
        finally:
            await client.close()

"""Admission at the door, end to end: requests that are refused for their content, on the Kafka
wire (raw requests at a chosen version, every item's error read back) and over HTTP, against a
real controller process, broker agents and ZooKeeper. Each refusal is an answer per item; nothing
of a refused item is written (read back from ZooKeeper); the controller neither reloads (its
``reloads`` counter) nor changes hands (the epoch), and the admitted items of the same request
are done."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.protocol.admin import (
    AlterClientQuotasRequest,
    AlterPartitionReassignmentsRequest,
    CreateTopicsRequest,
    ElectLeadersRequest,
    IncrementalAlterConfigsRequest,
)
from prometheus_client.parser import text_string_to_metric_families

from reassignd.controller.model.config_rules import CONFIG_ZNODE_BUDGET_BYTES
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.harness import Kit, eventually, http_request
from tests.integration.kafka_clients import (
    KafkaController,
    off_loop,
    raw_call,
    start_controller,
    wait_active,
    wait_brokers,
)

pytestmark = pytest.mark.timeout(180)

BIG_VALUE = "x" * 1_200_000  # over ZooKeeper's 1 MiB packet limit once stored
LIMIT = 5  # --max-partitions-per-request of the controller under test


async def _cluster(kit: Kit) -> KafkaController:
    k = start_controller(kit, 9000, "--max-partitions-per-request", str(LIMIT))
    await wait_active(k)
    kit.cluster(3, 1)
    await wait_brokers(k, 3)
    return k


async def _health(k: KafkaController, zk: ZkClient) -> tuple[float, int, int]:
    """(reloads, controller epoch, czxid of /controller): all three stay put unless the
    controller reloaded or changed hands."""
    _, text = await http_request("GET", k.c.url + "/metrics")
    reloads = [
        s.value
        for family in text_string_to_metric_families(text if isinstance(text, str) else "")
        for s in family.samples
        if s.name == "reassignd_controller_reloads_total"
    ]
    assert len(reloads) == 1, "the reloads counter is exported"
    epoch = codec.decode_controller_epoch((await zk.get(paths.CONTROLLER_EPOCH)).data)
    controller = await zk.get(paths.CONTROLLER)
    return reloads[0], epoch, controller.stat.czxid


async def _refused_inputs(k: KafkaController, kind: str) -> float:
    _, text = await http_request("GET", k.c.url + "/metrics")
    return sum(
        s.value
        for family in text_string_to_metric_families(text if isinstance(text, str) else "")
        for s in family.samples
        if s.name == "reassignd_controller_refused_inputs_total" and s.labels.get("kind") == kind
    )


async def _call(k: KafkaController, request: Any, version: int) -> Any:
    return await off_loop(raw_call, k.host, k.port, request, version)


def _create(*topics: tuple[str, dict[str, str]]) -> Any:
    Topic = CreateTopicsRequest.CreatableTopic
    Config = Topic.CreatableTopicConfig
    return CreateTopicsRequest(
        topics=[
            Topic(
                name=name,
                num_partitions=2,
                replication_factor=1,
                assignments=[],
                configs=[Config(name=key, value=value) for key, value in configs.items()],
            )
            for name, configs in topics
        ],
        timeout_ms=20000,
        validate_only=False,
    )


async def test_refused_content_is_answered_per_item_and_moves_nothing(kit: Kit, zk: ZkClient) -> None:
    k = await _cluster(kit)
    before = await _health(k, zk)

    # CreateTopics: each topic on its own; the 1.2 MB value in the second topic fails that topic only
    response = await _call(
        k,
        _create(
            ("first", {"retention.ms": "60000"}),
            ("second", {"retention.ms": BIG_VALUE}),
            ("unknown-key", {"no.such.config": "1"}),
            ("bad-value", {"retention.ms": "soon"}),
            ("big-sim", {"cleanup.policy": "delete", "max.message.bytes": "1000"}),
            ("dup", {}),
            ("dup", {}),
        ),
        5,
    )
    codes = {(t.name, i): (t.error_code, t.error_message) for i, t in enumerate(response.topics)}
    assert codes[("first", 0)][0] == 0
    assert codes[("second", 1)][0] == 40 and "retention.ms" in codes[("second", 1)][1]
    assert codes[("unknown-key", 2)] == (40, "Unknown topic config name: no.such.config")
    assert codes[("bad-value", 3)] == (
        40,
        "Invalid value soon for configuration retention.ms: Not a number of type LONG",
    )
    assert codes[("big-sim", 4)][0] == 0
    assert codes[("dup", 5)][0] == 42 and codes[("dup", 6)][0] == 42
    for refused in ("second", "unknown-key", "bad-value", "dup"):
        assert await zk.exists(paths.topic(refused)) is None, refused
        assert await zk.exists(paths.config_topic(refused)) is None, refused
    stored = admin_codec.decode_entity_config((await zk.get(paths.config_topic("first"))).data)
    assert stored == {"retention.ms": "60000"}

    # IncrementalAlterConfigs: a BROKER resource named "abc", a value over 1 MiB, a bad value; the
    # good resource of the same request is written
    Resource = IncrementalAlterConfigsRequest.AlterConfigsResource
    Config = Resource.AlterableConfig
    alter = IncrementalAlterConfigsRequest(
        resources=[
            Resource(
                resource_type=4,
                resource_name="abc",
                configs=[Config(name="leader.replication.throttled.rate", config_operation=0, value="10")],
            ),
            Resource(
                resource_type=4,
                resource_name="1",
                configs=[Config(name="reassignd.sim.note", config_operation=0, value=BIG_VALUE)],
            ),
            Resource(
                resource_type=2,
                resource_name="big-sim",
                configs=[Config(name="min.cleanable.dirty.ratio", config_operation=0, value="2")],
            ),
            Resource(
                resource_type=2,
                resource_name="first",
                configs=[Config(name="retention.ms", config_operation=0, value="1000")],
            ),
        ],
        validate_only=False,
    )
    answered = await _call(k, alter, 1)
    assert [(r.resource_name, r.error_code) for r in answered.responses] == [
        ("abc", 42),
        ("1", 40),
        ("big-sim", 40),
        ("first", 0),
    ]
    assert "Broker id must be an integer" in answered.responses[0].error_message
    assert str(CONFIG_ZNODE_BUDGET_BYTES) in answered.responses[1].error_message
    assert await zk.exists(paths.config_broker(1)) is None
    big_sim = admin_codec.decode_entity_config((await zk.get(paths.config_topic("big-sim"))).data)
    assert "min.cleanable.dirty.ratio" not in big_sim
    stored = admin_codec.decode_entity_config((await zk.get(paths.config_topic("first"))).data)
    assert stored == {"retention.ms": "1000"}

    # an over-long quota entity name: Kafka wire and HTTP, short and 1 MiB long
    Entry = AlterClientQuotasRequest.EntryData
    quotas = AlterClientQuotasRequest(
        entries=[
            Entry(
                entity=[Entry.EntityData(entity_type="user", entity_name=name)],
                ops=[Entry.OpData(key="controller_mutation_rate", value=5.0, remove=False)],
            )
            for name in ("u" * 5000, "alice", "v" * (1 << 20))
        ],
        validate_only=False,
    )
    quota_answer = await _call(k, quotas, 1)
    assert [e.error_code for e in quota_answer.entries] == [42, 0, 42]
    assert "4096" in quota_answer.entries[0].error_message
    dry_run = AlterClientQuotasRequest(
        entries=[
            Entry(
                entity=[Entry.EntityData(entity_type="user", entity_name="bob")],
                ops=[Entry.OpData(key="controller_mutation_rate", value=-1.0, remove=False)],
            )
        ],
        validate_only=True,
    )
    assert [e.error_code for e in (await _call(k, dry_run, 1)).entries] == [42]
    code, body = await http_request(
        "POST",
        k.c.url + "/v1/quotas",
        {
            "entries": [
                {
                    "entity": {"client_id": "c" * 5000},
                    "ops": [{"key": "controller_mutation_rate", "value": 1}],
                }
            ]
        },
    )
    assert code == 200 and [r["error_code"] for r in body["entries"]] == [42], body
    assert await zk.children(paths.CONFIG_USERS) == ["alice"]
    assert await zk.exists(paths.CONFIG_CLIENTS) is None or await zk.children(paths.CONFIG_CLIENTS) == []

    # the controller never reloaded nor changed hands
    assert await _health(k, zk) == before


async def test_requests_naming_too_many_partitions_are_refused(kit: Kit, zk: ZkClient) -> None:
    k = await _cluster(kit)
    code, _ = await http_request(
        "POST",
        k.c.url + "/v1/topics",
        {"topics": [{"name": "wide", "num_partitions": 8, "replication_factor": 1}]},
    )
    assert code == 200

    async def online() -> bool:
        code, body = await http_request("GET", k.c.url + "/v1/topics/wide")
        return code == 200 and all(p["leader"] >= 0 for p in body["partitions"])

    await eventually(online, what="wide online")
    state_before = [await zk.get(paths.partition_state("wide", p)) for p in range(8)]
    before = await _health(k, zk)
    too_many = LIMIT + 1

    # AlterPartitionReassignments on the Kafka wire
    Topic = AlterPartitionReassignmentsRequest.ReassignableTopic
    Partition = Topic.ReassignablePartition
    reassign = AlterPartitionReassignmentsRequest(
        timeout_ms=10000,
        topics=[
            Topic(
                name="wide", partitions=[Partition(partition_index=p, replicas=[2]) for p in range(too_many)]
            )
        ],
    )
    answer = await _call(k, reassign, 0)
    results = [(p.partition_index, p.error_code) for t in answer.responses for p in t.partitions]
    assert results == [(p, 42) for p in range(too_many)]
    assert str(LIMIT) in answer.responses[0].partitions[0].error_message

    # POST /v1/reassignments: the same refusal over HTTP (duplicates count once)
    body = {
        "topics": [
            {"name": "wide", "partitions": [{"partition": p, "replicas": [2]} for p in range(too_many)]}
        ]
    }
    code, answered = await http_request("POST", k.c.url + "/v1/reassignments", body)
    codes = {p["error_code"] for t in answered["responses"] for p in t["partitions"]}
    assert code == 200 and codes == {42}, answered
    assert await zk.exists(paths.REASSIGN_PARTITIONS) is None

    # ElectLeaders naming too many partitions
    Elect = ElectLeadersRequest.TopicPartitions
    elect = ElectLeadersRequest(
        election_type=0,
        topic_partitions=[Elect(topic="wide", partitions=list(range(too_many)))],
        timeout_ms=10000,
    )
    elected = await _call(k, elect, 1)
    assert {p.error_code for t in elected.replica_election_results for p in t.partition_result} == {42}

    # CreatePartitions adding more than the limit
    code, grown = await http_request(
        "POST", k.c.url + "/v1/topics/partitions", {"topics": [{"name": "wide", "count": 8 + too_many}]}
    )
    assert [r["error_code"] for r in grown["results"]] == [42], grown

    # a batch of too many partitions: refused whole, no journal written
    batch = {
        "batch_id": "wide-batch",
        "partitions": [{"topic": "wide", "partition": p, "replicas": [2]} for p in range(too_many)],
    }
    code, refused_batch = await http_request("POST", k.c.url + "/v1/batches", batch)
    assert code == 400 and refused_batch["error_code"] == 42 and str(LIMIT) in refused_batch["error_message"]
    code, _ = await http_request("GET", k.c.url + "/v1/batches/wide-batch")
    assert code == 404

    # a KIP-236 sequenced request (through ZooKeeper, no door): refused whole, reported, deleted
    request = admin_codec.ReassignmentRequest({("wide", p): (2,) for p in range(too_many)})
    await zk.create(
        paths.reassignment_request("request_0000000000"),
        admin_codec.encode_reassignment_request(request),
        make_parents=True,
    )

    async def request_gone() -> bool:
        return await zk.exists(paths.reassignment_request("request_0000000000")) is None

    await eventually(request_gone, what="the sequenced request deleted")
    assert await zk.exists(paths.REASSIGNMENTS) is None or await zk.children(paths.REASSIGNMENTS) == []
    assert await _refused_inputs(k, "reassignment_request") == 1

    # nothing moved, nothing was added, no reload, same controller
    assert [await zk.get(paths.partition_state("wide", p)) for p in range(8)] == state_before
    assert len(await zk.children(paths.topic_partitions("wide"))) == 8
    assert await _health(k, zk) == before

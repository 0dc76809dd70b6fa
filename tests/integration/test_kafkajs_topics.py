"""KafkaJS (the Node client) against a real controller process and broker agents: what an
operator's Node tooling does first — the cluster and a topic's metadata, a topic created with an
explicit assignment, partitions added, a partition moved with ``alterPartitionReassignments`` and
followed with ``listPartitionReassignments`` while it copies (and cancelled over HTTP: KafkaJS refuses
a null replica list before sending it), the topic deleted. Each step is checked through the controller's HTTP API too."""

from __future__ import annotations

from typing import Any

import pytest

from reassignd.testing.polling import eventually
from reassignd.zk import admin_codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.harness import Procs
from tests.integration.kafka_clients import start_controller, wait_active, wait_brokers
from tests.integration.kafkajs import kafkajs, needs_kafkajs

pytestmark = [pytest.mark.timeout(300), needs_kafkajs]

SLOW_BYTES = "200000000"  # 200 MB per partition at 2 kB/s: a move that stays in progress
SLOW_RATE = "2000"
CREATE_PARTITIONS = 37
ALTER_REASSIGNMENTS = 45
LIST_REASSIGNMENTS = 46


def ok(answer: dict[str, Any]) -> Any:
    assert "error" not in answer, answer
    return answer["result"]


def sent(answer: dict[str, Any], key: int) -> list[int]:
    return [version for _, k, version in answer["requests"] if k == key]


def listed(answer: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """listPartitionReassignments' answer for topic ``js``: each moving partition's entry."""
    return {p["partition"]: p for t in ok(answer)["topics"] if t["name"] == "js" for p in t["partitions"]}


async def test_kafkajs_topics_partitions_and_reassignments(procs: Procs, zk: ZkClient) -> None:
    k = start_controller(procs, 9000)
    await wait_active(k)
    procs.cluster(4, 1)
    await wait_brokers(k, 4)

    described = ok(await kafkajs(k.address, "describeCluster"))
    assert sorted(b["nodeId"] for b in described["brokers"]) == [1, 2, 3, 4]
    assert described["controller"] in (1, 2, 3, 4)

    created = await kafkajs(
        k.address,
        "createTopics",
        {
            "waitForLeaders": True,
            "topics": [
                {
                    "topic": "js",
                    "replicaAssignment": [
                        {"partition": 0, "replicas": [1, 2]},
                        {"partition": 1, "replicas": [2, 3]},
                    ],
                    "configEntries": [{"name": "reassignd.sim.initial.bytes", "value": SLOW_BYTES}],
                }
            ],
        },
    )
    assert ok(created) is True
    for b in (1, 2, 3, 4):
        await zk.create(
            paths.config_broker(b),
            admin_codec.encode_entity_config({"reassignd.sim.replication.bytes.per.s": SLOW_RATE}),
            make_parents=True,
        )

    # partitions added; the new one placed by the controller, seen in KafkaJS's metadata and over HTTP
    grown = await kafkajs(k.address, "createPartitions", {"topicPartitions": [{"topic": "js", "count": 3}]})
    ok(grown)  # KafkaJS resolves createPartitions with nothing
    assert sent(grown, CREATE_PARTITIONS), grown["requests"]
    metadata = ok(await kafkajs(k.address, "fetchTopicMetadata", {"topics": ["js"]}))
    (topic,) = metadata["topics"]
    replicas = {p["partitionId"]: p["replicas"] for p in topic["partitions"]}
    assert set(replicas) == {0, 1, 2}
    assert (replicas[0], replicas[1]) == ([1, 2], [2, 3])
    _, http = await k.c.get("/v1/topics/js")
    assert [p["replicas"] for p in http["partitions"]] == [replicas[0], replicas[1], replicas[2]]

    # a move, followed while it copies
    moved = await kafkajs(
        k.address,
        "alterPartitionReassignments",
        {"topics": [{"topic": "js", "partitionAssignment": [{"partition": 0, "replicas": [1, 4]}]}]},
    )
    ok(moved)
    assert sent(moved, ALTER_REASSIGNMENTS) == [0], moved["requests"]
    following = await kafkajs(
        k.address, "listPartitionReassignments", {"topics": [{"topic": "js", "partitions": [0, 1]}]}
    )
    assert sent(following, LIST_REASSIGNMENTS) == [0], following["requests"]
    moving = listed(following)
    assert set(moving) == {0}  # partition 1 does not move
    assert (moving[0]["addingReplicas"], moving[0]["removingReplicas"]) == ([4], [2])
    assert set(listed(await kafkajs(k.address, "listPartitionReassignments", {}))) == {0}
    _, http = await k.c.get("/v1/reassignments")
    assert {(t["name"], p["partition"]) for t in http["topics"] for p in t["partitions"]} == {("js", 0)}

    # KafkaJS cannot cancel: it checks replicas client-side and refuses a null list unsent;
    # the move is cancelled over HTTP, back to the replicas before it
    refused = await kafkajs(
        k.address,
        "alterPartitionReassignments",
        {"topics": [{"topic": "js", "partitionAssignment": [{"partition": 0, "replicas": None}]}]},
    )
    assert "Invalid replica assignment" in refused["error"]["message"], refused
    assert not sent(refused, ALTER_REASSIGNMENTS)
    code, _ = await k.c.delete("/v1/reassignments/js/0")
    assert code == 200

    async def back() -> bool:
        _, topic = await k.c.get("/v1/topics/js")
        return bool(topic["partitions"][0]["replicas"] == [1, 2])

    await eventually(back, what="js-0 back on [1, 2]")
    assert listed(await kafkajs(k.address, "listPartitionReassignments", {})) == {}

    # deleted
    ok(await kafkajs(k.address, "deleteTopics", {"topics": ["js"]}))

    async def gone() -> bool:
        return "js" not in ok(await kafkajs(k.address, "listTopics"))

    await eventually(gone, timeout_s=60, what="js deleted")
    code, _ = await k.c.get("/v1/topics/js")
    assert code == 404

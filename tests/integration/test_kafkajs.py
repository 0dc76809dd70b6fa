"""KafkaJS against a real controller process and broker agents: ``admin.alterConfigs`` (it sends
AlterConfigs, 33) replaces a topic's and a broker's dynamic config, ``admin.describeConfigs``
reads it back, ``validateOnly`` and a refused value change nothing, and a resource named twice is
refused whole; every change checked in ZooKeeper."""

from __future__ import annotations

from typing import Any

import pytest

from reassignd.zk import paths
from reassignd.zk.client import ZkClient
from tests.integration.harness import Procs
from tests.integration.kafka_clients import notified, start_controller, stored, wait_active, wait_brokers
from tests.integration.kafkajs import kafkajs, needs_kafkajs

pytestmark = [pytest.mark.timeout(240), needs_kafkajs]

TOPIC = 2  # KafkaJS's ConfigResourceTypes
BROKER = 4
ALTER_CONFIGS = 33
DESCRIBE_CONFIGS = 32


def sent(answer: dict[str, Any], key: int) -> list[int]:
    """The versions of the requests with API ``key`` KafkaJS sent."""
    return [version for _, k, version in answer["requests"] if k == key]


def described(answer: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """describeConfigs' answer for one resource: its entries by name."""
    (resource,) = answer["result"]["resources"]
    assert resource["errorCode"] == 0, resource
    return {e["configName"]: e for e in resource["configEntries"]}


async def test_kafkajs_alter_configs_and_describe_configs(procs: Procs, zk: ZkClient) -> None:
    k = start_controller(procs, 9000)
    await wait_active(k)
    procs.cluster(2, 1)
    await wait_brokers(k, 2)

    created = await kafkajs(
        k.address,
        "createTopics",
        {
            "waitForLeaders": True,
            "topics": [
                {
                    "topic": "js",
                    "numPartitions": 2,
                    "replicationFactor": 2,
                    "configEntries": [
                        {"name": "retention.ms", "value": "60000"},
                        {"name": "segment.ms", "value": "100000"},
                    ],
                }
            ],
        },
    )
    assert created["result"] is True, created
    topic = paths.config_topic("js")
    assert await stored(zk, topic) == {"retention.ms": "60000", "segment.ms": "100000"}

    # the full replacement Kafka does: segment.ms, not named, is removed
    before = len(await notified(zk))
    altered = await kafkajs(
        k.address,
        "alterConfigs",
        {
            "resources": [
                {"type": TOPIC, "name": "js", "configEntries": [{"name": "retention.ms", "value": "120000"}]},
                {
                    "type": BROKER,
                    "name": "1",
                    "configEntries": [{"name": "leader.replication.throttled.rate", "value": "4096"}],
                },
            ]
        },
    )
    assert "error" not in altered, altered
    assert sorted(
        (r["resourceType"], r["resourceName"], r["errorCode"]) for r in altered["result"]["resources"]
    ) == [
        (TOPIC, "js", 0),
        (BROKER, "1", 0),
    ]
    # AlterConfigs itself (KafkaJS has no IncrementalAlterConfigs), at v1: the highest version
    # both KafkaJS 2.2.4 (0-1) and the listener (0-2) speak
    assert sent(altered, ALTER_CONFIGS) == [1], altered["requests"]
    assert await stored(zk, topic) == {"retention.ms": "120000"}
    assert await stored(zk, paths.config_broker(1)) == {"leader.replication.throttled.rate": "4096"}
    assert {"topics/js", "brokers/1"} <= set((await notified(zk))[before:])

    read = await kafkajs(
        k.address,
        "describeConfigs",
        {
            "includeSynonyms": False,
            "resources": [{"type": TOPIC, "name": "js", "configNames": ["retention.ms", "segment.ms"]}],
        },
    )
    entries = described(read)
    assert sent(read, DESCRIBE_CONFIGS), read["requests"]
    assert (entries["retention.ms"]["configValue"], entries["retention.ms"]["isDefault"]) == ("120000", False)
    assert entries["segment.ms"]["isDefault"] is True
    broker = described(
        await kafkajs(
            k.address,
            "describeConfigs",
            {"includeSynonyms": False, "resources": [{"type": BROKER, "name": "1", "configNames": []}]},
        )
    )
    assert broker["leader.replication.throttled.rate"]["configValue"] == "4096"

    # validateOnly: answered as the change would be, nothing written or notified
    count = len(await notified(zk))
    dry = await kafkajs(
        k.address,
        "alterConfigs",
        {
            "validateOnly": True,
            "resources": [
                {"type": TOPIC, "name": "js", "configEntries": [{"name": "retention.ms", "value": "1"}]}
            ],
        },
    )
    assert [r["errorCode"] for r in dry["result"]["resources"]] == [0], dry
    assert await stored(zk, topic) == {"retention.ms": "120000"}
    assert len(await notified(zk)) == count
    again = described(
        await kafkajs(
            k.address,
            "describeConfigs",
            {
                "includeSynonyms": False,
                "resources": [{"type": TOPIC, "name": "js", "configNames": ["retention.ms"]}],
            },
        )
    )
    assert again["retention.ms"]["configValue"] == "120000"

    # refusals reach KafkaJS as its protocol errors, and change nothing
    bad = await kafkajs(
        k.address,
        "alterConfigs",
        {
            "resources": [
                {"type": TOPIC, "name": "js", "configEntries": [{"name": "segment.bytes", "value": "13"}]}
            ]
        },
    )
    assert bad["error"]["type"] == "INVALID_CONFIG", bad
    twice = await kafkajs(
        k.address,
        "alterConfigs",
        {
            "resources": [
                {"type": TOPIC, "name": "js", "configEntries": [{"name": "retention.ms", "value": "1"}]},
                {"type": TOPIC, "name": "js", "configEntries": [{"name": "segment.ms", "value": "1"}]},
            ]
        },
    )
    assert twice["error"]["type"] == "INVALID_REQUEST", twice
    assert await stored(zk, topic) == {"retention.ms": "120000"}
    assert len(await notified(zk)) == count

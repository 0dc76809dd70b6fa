"""The admin calls older and newer tools make, driven by stock clients against real controller
processes and broker agents: AlterConfigs (33) through kafka-python (``incremental=False``) and
confluent-kafka (its deprecated ``alter_configs``, which sends 33), and as raw requests at each
version, every change checked in ZooKeeper (the config znode and its ``/config/changes``
notification); a resource or a key named twice in one alter request (42, the others applied);
DescribeConfigs listing unset settable keys; DescribeTopicPartitions (75) and
DescribeUserScramCredentials (50); confluent-kafka's describe, incremental alter and election calls."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.protocol.admin import (
    AlterConfigsRequest,
    DescribeTopicPartitionsRequest,
    DescribeUserScramCredentialsRequest,
    IncrementalAlterConfigsRequest,
)
from kafka.protocol.metadata import ApiVersionsRequest

from reassignd.zk import paths
from reassignd.zk.client import ZkClient
from tests.integration.harness import Procs
from tests.integration.kafka_clients import (
    KafkaController,
    admin_client,
    notified,
    off_loop,
    raw_call,
    start_controller,
    stored,
    wait_active,
    wait_brokers,
)

pytestmark = pytest.mark.timeout(180)

INVALID_CONFIG = 40
INVALID_REQUEST = 42
UNKNOWN_TOPIC_OR_PARTITION = 3


async def cluster(procs: Procs, brokers: int = 3) -> KafkaController:
    k = start_controller(procs, 9000, "--log-format", "json")
    await wait_active(k)
    procs.cluster(brokers, 1)
    await wait_brokers(k, brokers)
    return k


def kafka_audit(k: KafkaController) -> list[dict[str, Any]]:
    """The audit entries of requests that came through the Kafka listener (the JSON log)."""
    entries = []
    for line in k.c.proc.log().splitlines():
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if (
            isinstance(doc, dict)
            and doc.get("logger") == "reassignd.audit"
            and doc["audit"]["via"] == "kafka"
        ):
            entries.append(doc["audit"])
    return entries


def alter_request(
    resources: list[tuple[int, str, dict[str, str | None]]], validate_only: bool = False
) -> Any:
    Resource = AlterConfigsRequest.AlterConfigsResource
    return AlterConfigsRequest(
        resources=[
            Resource(
                resource_type=kind,
                resource_name=name,
                configs=[Resource.AlterableConfig(name=k, value=v) for k, v in configs.items()],
            )
            for kind, name, configs in resources
        ],
        validate_only=validate_only,
    )


async def test_alter_configs_with_kafka_python_and_raw_requests(procs: Procs, zk: ZkClient) -> None:
    k = await cluster(procs)
    served = raw_call(k.host, k.port, ApiVersionsRequest(), 0)
    assert {(a.api_key, a.min_version, a.max_version) for a in served.api_keys} >= {(33, 0, 2)}
    admin = await admin_client(k.address)
    try:
        await off_loop(
            admin.create_topics,
            [NewTopic("c", 2, 2, topic_configs={"retention.ms": "60000", "segment.ms": "100000"})],
        )
        topic = paths.config_topic("c")
        before = len(await notified(zk))

        # kafka-python's AlterConfigs: it re-sends the modified keys it described, so segment.ms stays
        answer = await off_loop(
            admin.alter_configs,
            [
                ConfigResource(ConfigResourceType.TOPIC, "c", {"retention.ms": "120000"}),
                ConfigResource(
                    ConfigResourceType.BROKER, "1", {"leader.replication.throttled.rate": "1048576"}
                ),
            ],
            incremental=False,
        )
        assert answer == {"topic": {"c": "OK"}, "broker": {"1": "OK"}}
        assert await stored(zk, topic) == {"retention.ms": "120000", "segment.ms": "100000"}
        assert await stored(zk, paths.config_broker(1)) == {"leader.replication.throttled.rate": "1048576"}
        assert {"topics/c", "brokers/1"} <= set((await notified(zk))[before:])

        # validate_only and a bad value change nothing
        dry = await off_loop(
            admin.alter_configs,
            [ConfigResource(ConfigResourceType.TOPIC, "c", {"retention.ms": "1"})],
            validate_only=True,
            incremental=False,
        )
        assert dry == {"topic": {"c": "OK"}}
        bad = await off_loop(
            admin.alter_configs,
            [ConfigResource(ConfigResourceType.TOPIC, "c", {"segment.bytes": "13"})],
            incremental=False,
        )
        assert "InvalidConfig" in bad["topic"]["c"], bad
        assert await stored(zk, topic) == {"retention.ms": "120000", "segment.ms": "100000"}
        # kafka-python sent AlterConfigs (33), not IncrementalAlterConfigs (a broker's resources
        # to that broker, the rest in one request), and each was audited
        audited = [
            (e["action"], e.get("resources"), e.get("validate_only", False))
            for e in kafka_audit(k)
            if e["action"] != "CreateTopics"
        ]
        assert audited == [
            ("AlterConfigs", ["broker:1"], False),
            ("AlterConfigs", ["topic:c"], False),
            ("AlterConfigs", ["topic:c"], True),
            ("AlterConfigs", ["topic:c"], False),
        ], audited
    finally:
        await off_loop(admin.close)

    # the raw request at each version: a full replacement (segment.ms goes), a null value unset
    for version in (0, 1, 2):
        value = str(5000 + version)
        request = alter_request([(2, "c", {"retention.ms": value, "cleanup.policy": None})])
        response = raw_call(k.host, k.port, request, version)
        assert [(r.error_code, r.resource_name) for r in response.responses] == [(0, "c")]
        assert await stored(zk, topic) == {"retention.ms": value}
    count = len(await notified(zk))
    dry_run = raw_call(k.host, k.port, alter_request([(2, "c", {})], validate_only=True), 1)
    assert dry_run.responses[0].error_code == 0
    assert await stored(zk, topic) == {"retention.ms": "5002"}
    assert len(await notified(zk)) == count  # nothing written, nothing notified

    # per-resource errors, the others of the request applied (each resource named once a
    # request: a resource named twice is refused whole, test_a_resource_or_a_key_named_twice...)
    mixed = alter_request(
        [
            (2, "nope", {"retention.ms": "1"}),
            (2, "c", {"no.such.config": "1"}),
            (4, "x", {"leader.replication.throttled.rate": "1"}),
            (4, "2", {"retention.ms": "1"}),
            (99, "c", {"retention.ms": "1"}),
            (4, "1", {"follower.replication.throttled.rate": "1024"}),
        ]
    )
    codes = [
        (r.error_code, r.resource_type, r.resource_name) for r in raw_call(k.host, k.port, mixed, 2).responses
    ]
    assert codes == [
        (UNKNOWN_TOPIC_OR_PARTITION, 2, "nope"),
        (INVALID_CONFIG, 2, "c"),
        (INVALID_REQUEST, 4, "x"),
        (INVALID_CONFIG, 4, "2"),
        (INVALID_REQUEST, 99, "c"),
        (0, 4, "1"),
    ]
    mixed = alter_request(
        [(2, "c", {"min.insync.replicas": "0"}), (4, "2", {"follower.replication.throttled.rate": "2048"})]
    )
    codes = [
        (r.error_code, r.resource_type, r.resource_name) for r in raw_call(k.host, k.port, mixed, 2).responses
    ]
    assert codes == [(INVALID_CONFIG, 2, "c"), (0, 4, "2")]
    assert await stored(zk, paths.config_broker(1)) == {"follower.replication.throttled.rate": "1024"}
    assert await stored(zk, topic) == {"retention.ms": "5002"}
    assert await stored(zk, paths.config_broker(2)) == {"follower.replication.throttled.rate": "2048"}
    # the HTTP API reads the same config
    code, body = await k.c.get("/v1/topics/c")
    assert code == 200, body


@pytest.mark.filterwarnings("ignore:alter_configs has been deprecated:DeprecationWarning")
async def test_alter_configs_with_confluent_kafka(procs: Procs, zk: ZkClient) -> None:
    """librdkafka's AlterConfigs replaces the resource's config: the keys not named are removed."""
    from confluent_kafka import KafkaException  # noqa: PLC0415
    from confluent_kafka.admin import AdminClient  # noqa: PLC0415
    from confluent_kafka.admin import ConfigResource as CConfigResource  # type: ignore[attr-defined]  # noqa: PLC0415
    from confluent_kafka.admin import NewTopic as CNewTopic  # type: ignore[attr-defined]  # noqa: PLC0415

    k = await cluster(procs)
    admin = AdminClient({"bootstrap.servers": k.address, "socket.timeout.ms": 20000})

    def done(futures: dict[Any, Any]) -> None:
        for future in futures.values():
            future.result(timeout=30)

    await off_loop(
        done,
        admin.create_topics(
            [
                CNewTopic(
                    "rd",
                    num_partitions=2,
                    replication_factor=2,
                    config={"retention.ms": "60000", "segment.ms": "100000"},
                )
            ]
        ),
    )
    topic = paths.config_topic("rd")
    assert await stored(zk, topic) == {"retention.ms": "60000", "segment.ms": "100000"}

    await off_loop(
        done,
        admin.alter_configs(
            [CConfigResource("topic", "rd", set_config={"retention.ms": "1"})], validate_only=True
        ),
    )
    assert await stored(zk, topic) == {"retention.ms": "60000", "segment.ms": "100000"}

    await off_loop(
        done,
        admin.alter_configs(
            [
                CConfigResource("topic", "rd", set_config={"retention.ms": "120000"}),
                CConfigResource("broker", "1", set_config={"leader.replication.throttled.rate": "4096"}),
            ]
        ),
    )
    assert await stored(zk, topic) == {"retention.ms": "120000"}
    assert await stored(zk, paths.config_broker(1)) == {"leader.replication.throttled.rate": "4096"}
    assert {"topics/rd", "brokers/1"} <= set(await notified(zk))

    with pytest.raises(KafkaException, match=r"INVALID_CONFIG|Invalid value"):
        await off_loop(
            done, admin.alter_configs([CConfigResource("topic", "rd", set_config={"segment.bytes": "13"})])
        )
    assert await stored(zk, topic) == {"retention.ms": "120000"}


async def test_describe_configs_lists_unset_settable_keys_so_kafka_python_alters_them(
    procs: Procs, zk: ZkClient
) -> None:
    """kafka-python refuses client-side a key DescribeConfigs does not list (``raise_on_unknown``):
    the simulation's keys, never set, are listed as DEFAULT_CONFIG with the agents' defaults, and
    then set through both AlterConfigs and IncrementalAlterConfigs."""
    k = await cluster(procs, brokers=1)
    admin = await admin_client(k.address)
    try:
        await off_loop(admin.create_topics, [NewTopic("s", 1, 1)])
        described = await off_loop(
            admin.describe_configs,
            [ConfigResource(ConfigResourceType.TOPIC, "s"), ConfigResource(ConfigResourceType.BROKER, "1")],
            config_filter="all",
        )
        initial = described["topic"]["s"]["reassignd.sim.initial.bytes"]
        assert (initial["value"], initial["config_source"], initial["config_type"]) == (
            "0",
            "DEFAULT_CONFIG",
            "LONG",
        )
        rate = described["broker"]["1"]["reassignd.sim.replication.bytes.per.s"]
        assert (rate["value"], rate["config_source"]) == (str(100 * 1024 * 1024), "DEFAULT_CONFIG")
        assert described["topic"]["s"]["retention.ms"]["config_source"] == "DEFAULT_CONFIG"
        # nothing is modified yet: the default filter shows nothing
        modified = await off_loop(admin.describe_configs, [ConfigResource(ConfigResourceType.TOPIC, "s")])
        assert modified == {"topic": {"s": {}}}

        incremental = await off_loop(
            admin.alter_configs,
            [ConfigResource(ConfigResourceType.TOPIC, "s", {"reassignd.sim.produce.bytes.per.s": "10"})],
        )
        assert incremental == {"topic": {"s": "OK"}}
        replacing = await off_loop(
            admin.alter_configs,
            [
                ConfigResource(ConfigResourceType.TOPIC, "s", {"reassignd.sim.initial.bytes": "1000"}),
                ConfigResource(
                    ConfigResourceType.BROKER, "1", {"reassignd.sim.replication.bytes.per.s": "5000"}
                ),
            ],
            incremental=False,
        )
        assert replacing == {"topic": {"s": "OK"}, "broker": {"1": "OK"}}
        # kafka-python's AlterConfigs re-sends the modified key it described: both are kept
        assert await stored(zk, paths.config_topic("s")) == {
            "reassignd.sim.produce.bytes.per.s": "10",
            "reassignd.sim.initial.bytes": "1000",
        }
        assert await stored(zk, paths.config_broker(1)) == {"reassignd.sim.replication.bytes.per.s": "5000"}
        described = await off_loop(admin.describe_configs, [ConfigResource(ConfigResourceType.TOPIC, "s")])
        assert {n: c["config_source"] for n, c in described["topic"]["s"].items()} == {
            "reassignd.sim.produce.bytes.per.s": "DYNAMIC_TOPIC_CONFIG",
            "reassignd.sim.initial.bytes": "DYNAMIC_TOPIC_CONFIG",
        }
        # a name nothing lists is still refused client-side, before anything is sent
        with pytest.raises(ValueError, match="Unrecognized configs"):
            await off_loop(
                admin.alter_configs,
                [ConfigResource(ConfigResourceType.TOPIC, "s", {"reassignd.sim.no.such": "1"})],
            )
    finally:
        await off_loop(admin.close)


async def test_describe_topic_partitions_pages_and_no_scram_credentials(procs: Procs) -> None:
    """DescribeTopicPartitions (75) through kafka-python and as raw requests: every partition
    exactly once across the pages, none larger than the limit; DescribeUserScramCredentials (50):
    no user has credentials."""
    k = await cluster(procs)
    admin = await admin_client(k.address)
    try:
        await off_loop(admin.create_topics, [NewTopic("pa", 5, 2), NewTopic("pb", 3, 2)])
        # one page per call, each at most 3 partitions, following the cursor
        seen: list[tuple[str, int]] = []
        cursor = None
        pages = 0
        while True:
            page = await off_loop(admin.describe_topic_partitions, ["pb", "pa"], 3, cursor)
            pages += 1
            partitions = [(t["name"], p["partition_index"]) for t in page["topics"] for p in t["partitions"]]
            assert 0 < len(partitions) <= 3 and all(t["error_code"] == 0 for t in page["topics"])
            seen += partitions
            cursor = page["next_cursor"]
            if cursor is None:
                break
            assert pages < 10
        assert seen == [("pa", p) for p in range(5)] + [("pb", p) for p in range(3)]
        assert pages == 3
        whole = await off_loop(admin.describe_topic_partitions, ["pa", "nope"])
        assert [(t["name"], t["error_code"]) for t in whole["topics"]] == [
            ("nope", 3),
            ("pa", 0),
        ]  # name order
        assert whole["next_cursor"] is None
        _, http_pa = await k.c.get("/v1/topics/pa")  # the same partitions as the HTTP API's
        assert [(p["leader_id"], p["replica_nodes"]) for p in whole["topics"][1]["partitions"]] == [
            (p["leader"], p["replicas"]) for p in http_pa["partitions"]
        ]

        assert await off_loop(admin.describe_user_scram_credentials) == {}
        named = await off_loop(admin.describe_user_scram_credentials, ["alice", "bob"])
        assert set(named) == {"alice", "bob"}
        assert all("does not exist" in v["error"] and v["credential_infos"] == [] for v in named.values())
    finally:
        await off_loop(admin.close)

    # raw: every topic from a cursor; a negative cursor partition is 42 on every topic named
    Request = DescribeTopicPartitionsRequest
    every = raw_call(
        k.host,
        k.port,
        Request(
            topics=[], response_partition_limit=2, cursor=Request.Cursor(topic_name="pa", partition_index=4)
        ),
        0,
    )
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in every.topics] == [
        ("pa", [4]),
        ("pb", [0]),
    ]
    assert (every.next_cursor.topic_name, every.next_cursor.partition_index) == ("pb", 1)
    bad = raw_call(
        k.host,
        k.port,
        Request(
            topics=[Request.TopicRequest(name="pa"), Request.TopicRequest(name="pb")],
            response_partition_limit=10,
            cursor=Request.Cursor(topic_name="pa", partition_index=-1),
        ),
        0,
    )
    assert [(t.name, t.error_code, t.partitions) for t in bad.topics] == [("pa", 42, []), ("pb", 42, [])]
    scram = raw_call(k.host, k.port, DescribeUserScramCredentialsRequest(users=None), 0)
    assert (scram.error_code, scram.results) == (0, [])
    served = {
        a.api_key: (a.min_version, a.max_version)
        for a in raw_call(k.host, k.port, ApiVersionsRequest(), 0).api_keys
    }
    assert (served[50], served[75]) == ((0, 0), (0, 0))


async def test_confluent_kafka_describes_scram_credentials(procs: Procs) -> None:
    """librdkafka's DescribeUserScramCredentials: all users is an empty answer, a named user is
    RESOURCE_NOT_FOUND."""
    from confluent_kafka import KafkaException  # noqa: PLC0415
    from confluent_kafka.admin import AdminClient  # noqa: PLC0415

    k = await cluster(procs, brokers=1)
    admin = AdminClient({"bootstrap.servers": k.address, "socket.timeout.ms": 20000})
    every_user: Any = admin.describe_user_scram_credentials()  # one future for "all users"
    assert await off_loop(every_user.result, timeout=30) == {}
    futures: Any = admin.describe_user_scram_credentials(["alice"])  # a future per user named
    with pytest.raises(KafkaException, match=r"RESOURCE_NOT_FOUND|does not exist"):
        await off_loop(futures["alice"].result, timeout=30)


def incremental_request(resources: list[tuple[int, str, list[tuple[str, int, str | None]]]]) -> Any:
    Resource = IncrementalAlterConfigsRequest.AlterConfigsResource
    return IncrementalAlterConfigsRequest(
        resources=[
            Resource(
                resource_type=kind,
                resource_name=name,
                configs=[
                    Resource.AlterableConfig(name=k, config_operation=op, value=v) for k, op, v in configs
                ],
            )
            for kind, name, configs in resources
        ],
        validate_only=False,
    )


async def test_a_resource_or_a_key_named_twice_is_refused_and_the_others_applied(
    procs: Procs, zk: ZkClient
) -> None:
    """A resource named twice in one AlterConfigs or IncrementalAlterConfigs request: every entry
    of it 42 and nothing of it written, the request's other resources applied (Kafka's
    ConfigAdminManager); a key named twice in one resource: 42 for that resource. Through
    kafka-python (two ConfigResources of one name, both APIs) and as raw requests."""
    k = await cluster(procs, brokers=2)
    admin = await admin_client(k.address)
    topic = paths.config_topic("d")
    try:
        await off_loop(admin.create_topics, [NewTopic("d", 1, 1), NewTopic("e", 1, 1)])
        for incremental in (False, True):
            before = len(await notified(zk))
            retention = "1000" if incremental else "2000"
            answer = await off_loop(
                admin.alter_configs,
                [
                    ConfigResource(ConfigResourceType.TOPIC, "d", {"retention.ms": "1"}),
                    ConfigResource(ConfigResourceType.TOPIC, "e", {"retention.ms": retention}),
                    ConfigResource(ConfigResourceType.TOPIC, "d", {"segment.ms": "1"}),
                    ConfigResource(
                        ConfigResourceType.BROKER, "1", {"leader.replication.throttled.rate": "1"}
                    ),
                    ConfigResource(
                        ConfigResourceType.BROKER, "1", {"follower.replication.throttled.rate": "1"}
                    ),
                ],
                incremental=incremental,
            )
            # kafka-python keys its answer by resource: one line for both entries of d and of 1
            assert answer["topic"]["e"] == "OK", answer
            for refused in (answer["topic"]["d"], answer["broker"]["1"]):
                assert (
                    "InvalidRequestError" in refused and "Each resource must appear at most once" in refused
                )
            assert await stored(zk, topic) == {}
            assert await stored(zk, paths.config_broker(1)) == {}
            assert await stored(zk, paths.config_topic("e")) == {"retention.ms": retention}
            assert (await notified(zk))[before:] == ["topics/e"]
    finally:
        await off_loop(admin.close)

    # raw: every entry answered in order, each copy of the duplicated resource 42
    before = len(await notified(zk))
    legacy = alter_request(
        [
            (4, "2", {"leader.replication.throttled.rate": "1"}),
            (2, "d", {"retention.ms": "1"}),
            (4, "02", {"leader.replication.throttled.rate": "2"}),  # broker 2 again
            (2, "d", {"segment.ms": "1"}),
            (4, "1", {"follower.replication.throttled.rate": "4096"}),
        ]
    )
    answered = [(r.error_code, r.resource_name) for r in raw_call(k.host, k.port, legacy, 1).responses]
    assert answered == [(42, "2"), (42, "d"), (42, "02"), (42, "d"), (0, "1")]
    changes = incremental_request(
        [
            (2, "d", [("retention.ms", 0, "5"), ("retention.ms", 1, None)]),  # a key twice
            (2, "e", [("retention.ms", 0, "7000")]),
            (2, "d", [("segment.ms", 0, "5")]),
            (
                4,
                "1",
                [
                    ("leader.replication.throttled.rate", 0, "8"),
                    ("leader.replication.throttled.rate", 0, "9"),
                ],
            ),
            (4, "2", [("leader.replication.throttled.rate", 0, "8192")]),
        ]
    )
    for version in (0, 1):
        responses = raw_call(k.host, k.port, changes, version).responses
        assert [(r.error_code, r.resource_name) for r in responses] == [
            (42, "d"),
            (0, "e"),
            (42, "d"),
            (42, "1"),
            (0, "2"),
        ]
        assert [r.error_message for r in responses if r.error_code] == [
            "Each resource must appear at most once.",
            "Each resource must appear at most once.",
            "Error due to duplicate config keys : leader.replication.throttled.rate",
        ]
    twice_in_one = alter_request([(2, "d", {"retention.ms": "1"})])
    twice_in_one.resources[0].configs.append(twice_in_one.resources[0].configs[0])
    only = raw_call(k.host, k.port, twice_in_one, 0).responses[0]
    assert (only.error_code, only.error_message) == (42, "Error due to duplicate config keys : retention.ms")

    assert await stored(zk, topic) == {}
    assert await stored(zk, paths.config_broker(1)) == {"follower.replication.throttled.rate": "4096"}
    assert await stored(zk, paths.config_broker(2)) == {"leader.replication.throttled.rate": "8192"}
    assert await stored(zk, paths.config_topic("e")) == {"retention.ms": "7000"}
    assert "topics/d" not in (await notified(zk))[before:]


async def test_confluent_kafka_describe_alter_and_elect(procs: Procs, zk: ZkClient) -> None:
    """librdkafka's newer admin calls: describe_cluster (DescribeCluster, 60), describe_topics,
    incremental_alter_configs (44) with SET and DELETE, describe_configs (32) reading it back, and
    elect_leaders (43) for a preferred election that is not needed."""
    from confluent_kafka import ElectionType, TopicCollection  # noqa: PLC0415
    from confluent_kafka import TopicPartition as CTopicPartition  # noqa: PLC0415
    from confluent_kafka.admin import AdminClient  # noqa: PLC0415
    from confluent_kafka.admin import ConfigResource as CConfigResource  # type: ignore[attr-defined]  # noqa: PLC0415
    from confluent_kafka.admin import NewTopic as CNewTopic  # type: ignore[attr-defined]  # noqa: PLC0415
    from confluent_kafka.admin._config import AlterConfigOpType, ConfigEntry  # noqa: PLC0415

    k = await cluster(procs)
    admin = AdminClient({"bootstrap.servers": k.address, "socket.timeout.ms": 20000})

    def results(futures: dict[Any, Any]) -> dict[Any, Any]:
        return {key: future.result(timeout=30) for key, future in futures.items()}

    cluster_description: Any = await off_loop(lambda: admin.describe_cluster().result(timeout=30))
    assert sorted(node.id for node in cluster_description.nodes) == [1, 2, 3]
    assert cluster_description.controller.id in (1, 2, 3)

    await off_loop(
        results,
        admin.create_topics(
            [CNewTopic("ck", num_partitions=2, replication_factor=2, config={"segment.ms": "100000"})]
        ),
    )
    (description,) = (await off_loop(results, admin.describe_topics(TopicCollection(["ck"])))).values()
    assert description.name == "ck"
    assert [len(p.replicas) for p in description.partitions] == [2, 2]

    topic = paths.config_topic("ck")
    entries = [
        ConfigEntry("retention.ms", "60000", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("segment.ms", None, incremental_operation=AlterConfigOpType.DELETE),
    ]
    await off_loop(
        results,
        admin.incremental_alter_configs([CConfigResource("topic", "ck", incremental_configs=entries)]),
    )
    assert await stored(zk, topic) == {"retention.ms": "60000"}  # SET one, DELETE the other
    assert "topics/ck" in await notified(zk)

    (configs,) = (await off_loop(results, admin.describe_configs([CConfigResource("topic", "ck")]))).values()
    assert configs["retention.ms"].value == "60000"
    assert configs["retention.ms"].is_default is False

    # the replicas' first is already every partition's leader: Kafka answers ELECTION_NOT_NEEDED (84)
    elected: Any = await off_loop(
        lambda: admin.elect_leaders(
            ElectionType.PREFERRED, [CTopicPartition("ck", 0), CTopicPartition("ck", 1)]
        ).result(timeout=30)
    )
    assert sorted(tp.partition for tp in elected) == [0, 1]
    assert all(error is not None and error.code() == 84 for error in elected.values()), elected

"""The Kafka-protocol listener driven by stock clients (kafka-python's KafkaAdminClient, aiokafka's
admin client) against real controller processes and broker agents; every mutation made through
the listener is checked through the HTTP API, and the other way round."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin import NewPartitions as AioNewPartitions
from aiokafka.admin import NewTopic as AioNewTopic
from aiokafka.admin.config_resource import ConfigResource as AioConfigResource
from aiokafka.admin.config_resource import ConfigResourceType as AioConfigResourceType
from kafka import TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic
from kafka.errors import ThrottlingQuotaExceededError, TopicAlreadyExistsError
from kafka.protocol.admin import (
    AlterClientQuotasRequest,
    CreateTopicsRequest,
    DescribeClientQuotasRequest,
)

from reassignd.zk import admin_codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.harness import Procs, eventually
from tests.integration.kafka_clients import (
    KafkaController,
    admin_client,
    off_loop,
    raw_call,
    start_controller,
    stored,
    wait_active,
    wait_brokers,
)

pytestmark = pytest.mark.timeout(180)

SLOW_BYTES = "200000000"  # 200 MB per partition at 2 kB/s: a move that stays in progress
SLOW_RATE = "2000"


async def cluster(procs: Procs, brokers: int = 3, racks: int | None = None) -> KafkaController:
    k = start_controller(procs)
    await wait_active(k)
    procs.cluster(brokers, 1, racks)
    await wait_brokers(k, brokers)
    return k


async def http_topics(k: KafkaController) -> set[str]:
    code, body = await k.c.get("/v1/topics")
    assert code == 200
    return {t["name"] for t in body["topics"]}


async def test_topics_with_kafka_python_and_http(procs: Procs) -> None:
    k = await cluster(procs, brokers=6, racks=3)
    admin = await admin_client(k.address)
    try:
        cluster_info = await off_loop(admin.describe_cluster)
        assert {b["broker_id"] for b in cluster_info["brokers"]} == {1, 2, 3, 4, 5, 6}
        assert cluster_info["controller_id"] in {1, 2, 3, 4, 5, 6}
        assert all(b["port"] == k.port for b in cluster_info["brokers"])

        # validate_only creates nothing
        await off_loop(admin.create_topics, [NewTopic("dry", 4, 3)], validate_only=True)
        assert "dry" not in await http_topics(k)

        # rack-aware (count and factor), explicit assignment, configs
        await off_loop(
            admin.create_topics,
            [
                NewTopic("orders", 6, 3, topic_configs={"retention.ms": "60000"}),
                NewTopic("pinned", replica_assignments={0: [1, 2], 1: [2, 3]}),
            ],
        )
        code, orders = await k.c.get("/v1/topics/orders")
        assert code == 200 and len(orders["partitions"]) == 6
        _, brokers = await k.c.get("/v1/brokers")
        rack = {b["id"]: b["rack"] for b in brokers["brokers"]}
        for p in orders["partitions"]:
            assert len({rack[r] for r in p["replicas"]}) == 3
        code, pinned = await k.c.get("/v1/topics/pinned")
        assert [p["replicas"] for p in pinned["partitions"]] == [[1, 2], [2, 3]]

        with pytest.raises(TopicAlreadyExistsError):
            await off_loop(admin.create_topics, [NewTopic("orders", 1, 1)])

        # HTTP -> Kafka
        code, _ = await k.c.post("/v1/topics", {"topics": [{"name": "via-http", "num_partitions": 2}]})
        assert code == 200
        assert {"orders", "pinned", "via-http"} <= set(await off_loop(admin.list_topics))
        [described] = await off_loop(admin.describe_topics, ["orders"])
        assert len(described["partitions"]) == 6
        by_index = {p["partition_index"]: p for p in described["partitions"]}
        for p in orders["partitions"]:
            assert by_index[p["partition"]]["replica_nodes"] == p["replicas"]
            assert by_index[p["partition"]]["leader_id"] == p["leader"]

        # CreatePartitions, then DeleteTopics, both seen over HTTP
        await off_loop(admin.create_partitions, {"pinned": NewPartitions(4)})
        _, pinned = await k.c.get("/v1/topics/pinned")
        assert len(pinned["partitions"]) == 4
        await off_loop(admin.delete_topics, ["via-http", "pinned"])
        assert await http_topics(k) == {"orders"}

        # what arrived through the listener is on the event stream as audit records, with the principal
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"{k.c.url}/v1/events?type=audit&last_event_id=1-0&max_s=1") as resp,
        ):
            stream = await resp.text()
        records = [json.loads(line[5:]) for line in stream.splitlines() if line.startswith("data:")]
        kafka = [(r["action"], r["user"]) for r in records if r["via"] == "kafka"]
        assert ("CreateTopics", "ANONYMOUS") in kafka and ("DeleteTopics", "ANONYMOUS") in kafka
        assert any(r["action"] == "CreatePartitions" and r["topics"] == ["pinned"] for r in records)
        dry = [r for r in records if r["action"] == "CreateTopics" and r.get("validate_only")]
        assert [r["topics"] for r in dry] == [["dry"]]  # validate-only requests are audited too
    finally:
        await off_loop(admin.close)


async def test_reassignments_move_retarget_cancel(procs: Procs, zk: ZkClient) -> None:
    k = await cluster(procs, brokers=4)
    admin = await admin_client(k.address)
    try:
        topic = NewTopic(
            "m",
            replica_assignments={0: [1, 2], 1: [2, 3], 2: [3, 1]},
            topic_configs={"reassignd.sim.initial.bytes": SLOW_BYTES},
        )
        await off_loop(admin.create_topics, [topic])
        for b in (1, 2, 3, 4):
            await zk.create(
                paths.config_broker(b),
                admin_codec.encode_entity_config({"reassignd.sim.replication.bytes.per.s": SLOW_RATE}),
                make_parents=True,
            )
        tp0, tp1, tp2 = (TopicPartition("m", p) for p in range(3))
        answer = await off_loop(admin.alter_partition_reassignments, {tp0: [1, 4], tp1: [2, 4]})
        assert all(v is None for v in answer.values()), answer
        listed = await off_loop(admin.list_partition_reassignments)
        assert set(listed) == {tp0, tp1}
        assert listed[tp0]["adding_replicas"] == [4] and listed[tp0]["removing_replicas"] == [2]
        selected = await off_loop(admin.list_partition_reassignments, {"m": [1]})
        assert set(selected) == {tp1}
        code, http = await k.c.get("/v1/reassignments")
        assert {(t["name"], p["partition"]) for t in http["topics"] for p in t["partitions"]} == {
            ("m", 0),
            ("m", 1),
        }

        # re-target partition 0, cancel partition 1 with None
        await off_loop(admin.alter_partition_reassignments, {tp0: [4, 1], tp1: None})
        listed = await off_loop(admin.list_partition_reassignments)
        assert set(listed) == {tp0}
        _, m = await k.c.get("/v1/topics/m")
        assert m["partitions"][1]["replicas"] == [2, 3]

        # a move started over HTTP is listed through Kafka; a cancel of nothing answers 85
        code, _ = await k.c.post(
            "/v1/reassignments",
            {"topics": [{"name": "m", "partitions": [{"partition": 2, "replicas": [3, 4]}]}]},
        )
        assert code == 200
        assert set(await off_loop(admin.list_partition_reassignments)) == {tp0, tp2}
        answer = await off_loop(admin.alter_partition_reassignments, {tp1: None})
        assert answer[tp1] is not None and answer[tp1].errno == 85
    finally:
        await off_loop(admin.close)


def _config_values(described: Any, kind: str, name: str) -> dict[str, str]:
    entries = described[kind][name]
    return {key: value["value"] if isinstance(value, dict) else value for key, value in entries.items()}


async def test_configs_quotas_and_log_dirs(procs: Procs, zk: ZkClient) -> None:
    k = await cluster(procs, brokers=3)
    admin = await admin_client(k.address)
    try:
        await off_loop(admin.create_topics, [NewTopic("c", 2, 2)])
        # KIP-73 throttles as kafka-reassign-partitions --throttle sets them, then removed
        throttled = "0:1,0:2,1:2,1:3"
        answer = await off_loop(
            admin.alter_configs,
            [
                ConfigResource(
                    ConfigResourceType.TOPIC,
                    "c",
                    {
                        "leader.replication.throttled.replicas": throttled,
                        "follower.replication.throttled.replicas": throttled,
                    },
                ),
                ConfigResource(
                    ConfigResourceType.BROKER, "1", {"leader.replication.throttled.rate": "1048576"}
                ),
            ],
        )
        assert answer, answer
        stored = admin_codec.decode_entity_config((await zk.get(paths.config_topic("c"))).data)
        assert stored["leader.replication.throttled.replicas"] == throttled
        broker = admin_codec.decode_entity_config((await zk.get(paths.config_broker(1))).data)
        assert broker["leader.replication.throttled.rate"] == "1048576"
        changes = await zk.children(paths.CONFIG_CHANGES)
        notified = {
            admin_codec.decode_config_change((await zk.get(f"{paths.CONFIG_CHANGES}/{c}")).data)
            for c in changes
        }
        assert {"topics/c", "brokers/1"} <= notified

        described = await off_loop(
            admin.describe_configs,
            [ConfigResource(ConfigResourceType.TOPIC, "c"), ConfigResource(ConfigResourceType.BROKER, "1")],
        )
        text = repr(described)
        assert throttled in text and "1048576" in text

        await off_loop(
            admin.alter_configs,
            [
                ConfigResource(
                    ConfigResourceType.TOPIC, "c", {"leader.replication.throttled.replicas": ("DELETE", None)}
                )
            ],
        )
        stored = admin_codec.decode_entity_config((await zk.get(paths.config_topic("c"))).data)
        assert "leader.replication.throttled.replicas" not in stored

        # client quotas through the raw requests (KafkaAdminClient has no quota methods)
        Entry = AlterClientQuotasRequest.EntryData
        alter = AlterClientQuotasRequest(
            entries=[
                Entry(
                    entity=[Entry.EntityData(entity_type="user", entity_name="alice")],
                    ops=[Entry.OpData(key="controller_mutation_rate", value=5.0, remove=False)],
                )
            ],
            validate_only=False,
        )
        response = raw_call(k.host, k.port, alter, 1)
        assert [e.error_code for e in response.entries] == [0]
        _, quotas = await k.c.get("/v1/quotas?user=alice")
        assert quotas["entries"] == [
            {"entity": {"user": "alice"}, "values": {"controller_mutation_rate": 5.0}}
        ]
        await k.c.post(
            "/v1/quotas",
            {
                "entries": [
                    {"entity": {"client_id": "app"}, "ops": [{"key": "controller_mutation_rate", "value": 2}]}
                ]
            },
        )
        Component = DescribeClientQuotasRequest.ComponentData
        described_quotas = raw_call(
            k.host,
            k.port,
            DescribeClientQuotasRequest(
                components=[Component(entity_type="client-id", match_type=2, match=None)], strict=False
            ),
            1,
        )
        assert [(e.entity[0].entity_name, e.values[0].value) for e in described_quotas.entries] == [
            ("app", 2.0)
        ]

        # log dirs from the agents' replica reports
        log_dirs = await off_loop(admin.describe_log_dirs)
        hosted = {
            (d["log_dir"], t["name"], p["partition_index"])
            for answer_ in log_dirs
            for d in answer_["log_dirs"]
            for t in d["topics"]
            for p in t["partitions"]
        }
        _, topic = await k.c.get("/v1/topics/c")
        expected = {
            (f"/sim/broker-{r}", "c", p["partition"]) for p in topic["partitions"] for r in p["replicas"]
        }
        assert expected <= hosted
    finally:
        await off_loop(admin.close)


async def test_throttled_create_topics_answers_89_and_older_versions_are_permissive(
    procs: Procs, zk: ZkClient
) -> None:
    k = await cluster(procs, brokers=2)
    await zk.create(
        paths.config_entity(None, "greedy"),
        admin_codec.encode_entity_config({"controller_mutation_rate": "1.0"}),
        make_parents=True,
    )
    await zk.create(
        paths.CONFIG_CHANGE_PREFIX, admin_codec.encode_config_change("clients/greedy"), sequential=True
    )
    admin = await admin_client(k.address, client_id="greedy")
    try:

        async def refused() -> bool:
            try:
                await off_loop(admin.create_topics, [NewTopic("big-a", 40, 1)])
                await off_loop(admin.create_topics, [NewTopic("big-b", 40, 1)])
            except ThrottlingQuotaExceededError:
                return True
            return False

        assert await refused()
        Topic = CreateTopicsRequest.CreatableTopic
        request = CreateTopicsRequest(
            topics=[Topic(name="big-c", num_partitions=3, replication_factor=1, assignments=[], configs=[])],
            timeout_ms=10000,
            validate_only=False,
        )
        strict = raw_call(k.host, k.port, request, 7, client_id="greedy")
        assert strict.topics[0].error_code == 89 and strict.throttle_time_ms > 0
        permissive = raw_call(k.host, k.port, request, 5, client_id="greedy")
        assert permissive.topics[0].error_code == 0 and permissive.throttle_time_ms > 0
        assert "big-c" in await http_topics(k)
    finally:
        await off_loop(admin.close)


async def test_preferred_leader_election_after_a_broker_returned(procs: Procs) -> None:
    # the auto leader rebalance off: the election asked for here is the only one
    k = start_controller(procs, 9000, "--auto-leader-rebalance-enable", "false")
    await wait_active(k)
    brokers = {b: procs.broker(b) for b in (1, 2, 3)}
    await wait_brokers(k, 3)
    admin = await admin_client(k.address)
    try:
        await off_loop(admin.create_topics, [NewTopic("e", replica_assignments={0: [1, 2], 1: [1, 3]})])
        brokers[1].kill()

        async def moved() -> bool:
            _, t = await k.c.get("/v1/topics/e")
            return [p["leader"] for p in t["partitions"]] == [2, 3]

        await eventually(moved, what="leaders moved off broker 1")
        procs.restart(brokers[1])

        async def back_in_isr() -> bool:
            _, t = await k.c.get("/v1/topics/e")
            return all(1 in p["isr"] for p in t["partitions"])

        await eventually(back_in_isr, what="broker 1 back in the ISRs", timeout_s=60)
        response = await off_loop(admin.elect_leaders, 0, {"e": [0, 1]})
        codes = {
            (r.topic, p.partition_id): p.error_code
            for r in response.replica_election_results
            for p in r.partition_result
        }
        assert codes == {("e", 0): 0, ("e", 1): 0}
        _, t = await k.c.get("/v1/topics/e")
        assert [p["leader"] for p in t["partitions"]] == [1, 1]
        again = await off_loop(admin.elect_leaders, 0, {"e": [0]}, raise_errors=False)
        assert again.replica_election_results[0].partition_result[0].error_code == 84
    finally:
        await off_loop(admin.close)


async def test_a_standby_sends_clients_to_the_active_controller(procs: Procs) -> None:
    first = start_controller(procs, 9000)
    await wait_active(first)
    standby = start_controller(procs, 9001)
    procs.cluster(2, 1)
    await wait_brokers(first, 2)

    async def following() -> bool:
        s = await standby.c.status()
        return bool(s and not s["active"] and s["active_controller"] and s["active_controller"]["id"] == 9000)

    await eventually(following, what="standby following 9000")
    admin = await admin_client(standby.address)  # bootstrapped at the standby
    try:
        await off_loop(admin.create_topics, [NewTopic("followed", 2, 2)])
        assert "followed" in await http_topics(first)
    finally:
        await off_loop(admin.close)
    # a controller request sent to the standby itself is refused with 41
    Topic = CreateTopicsRequest.CreatableTopic
    request = CreateTopicsRequest(
        topics=[Topic(name="x", num_partitions=1, replication_factor=1, assignments=[], configs=[])],
        timeout_ms=5000,
        validate_only=False,
    )
    assert raw_call(standby.host, standby.port, request, 7).topics[0].error_code == 41


async def test_aiokafka_admin_client(procs: Procs, zk: ZkClient) -> None:
    k = await cluster(procs, brokers=3)
    admin = AIOKafkaAdminClient(bootstrap_servers=k.address, request_timeout_ms=20000)
    await admin.start()
    try:
        await admin.create_topics([AioNewTopic("aio", 3, 2)])
        assert "aio" in await admin.list_topics()
        assert "aio" in await http_topics(k)
        await admin.create_partitions({"aio": AioNewPartitions(5)})
        _, topic = await k.c.get("/v1/topics/aio")
        assert len(topic["partitions"]) == 5
        described = await admin.describe_cluster()
        assert {b["node_id"] for b in described["brokers"]} == {1, 2, 3}
        (aio,) = await admin.describe_topics(["aio"])
        assert aio["error_code"] == 0 and len(aio["partitions"]) == 5
        assert all(len(p["replicas"]) == 2 for p in aio["partitions"])

        # AlterConfigs (33, aiokafka has no incremental alter): the topic's config replaced
        altered = await admin.alter_configs(
            [AioConfigResource(AioConfigResourceType.TOPIC, "aio", {"retention.ms": "60000"})]
        )
        assert [r[0] for response in altered for r in response.resources] == [
            0
        ]  # (error_code, message, type, name)
        (response,) = await admin.describe_configs([AioConfigResource(AioConfigResourceType.TOPIC, "aio")])
        ((error, _, _, _, entries),) = response.resources
        assert error == 0
        values = {e[0]: e[1] for e in entries}
        assert values["retention.ms"] == "60000"
        assert await stored(zk, paths.config_topic("aio")) == {"retention.ms": "60000"}
        await admin.delete_topics(["aio"])
        assert "aio" not in await http_topics(k)
    finally:
        await admin.close()


async def test_confluent_kafka_admin_client(procs: Procs) -> None:
    """A third, librdkafka-based implementation: create, list, add partitions, delete."""
    from confluent_kafka.admin import AdminClient  # noqa: PLC0415
    from confluent_kafka.admin import NewPartitions as CNewPartitions  # type: ignore[attr-defined]  # noqa: PLC0415
    from confluent_kafka.admin import NewTopic as CNewTopic  # type: ignore[attr-defined]  # noqa: PLC0415

    k = await cluster(procs, brokers=3)
    admin = AdminClient({"bootstrap.servers": k.address, "socket.timeout.ms": 20000})

    def done(futures: dict[Any, Any]) -> None:
        for future in futures.values():
            future.result(timeout=30)

    await off_loop(done, admin.create_topics([CNewTopic("rd", num_partitions=3, replication_factor=2)]))
    assert "rd" in await http_topics(k)
    listed = await off_loop(admin.list_topics, timeout=20)
    assert len(listed.topics["rd"].partitions) == 3 and set(listed.brokers) == {1, 2, 3}
    await off_loop(done, admin.create_partitions([CNewPartitions("rd", 4)]))
    _, topic = await k.c.get("/v1/topics/rd")
    assert len(topic["partitions"]) == 4
    await off_loop(done, admin.delete_topics(["rd"]))
    assert "rd" not in await http_topics(k)

"""A port per broker on the Kafka listener (``--kafka-broker-ports``), driven by stock clients
against real controller processes and broker agents: kafka-python, aiokafka and confluent-kafka
see each broker at a port of its own and their admin calls work there; kafka-python's
``describe_log_dirs`` (it asks every broker) gets each broker's replicas from that broker only,
no replica counted twice, while the bootstrap port answers for every broker; a broker that
deregisters has its port closed; a port that cannot be bound, and the brokers past the range, are
advertised at the bootstrap address and logged, the controller staying up."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin import NewTopic as AioNewTopic
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin import NewTopic as ConfluentNewTopic  # type: ignore[attr-defined]
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.protocol.admin import DescribeLogDirsRequest

from tests.integration.harness import Procs, eventually, two_free_ports
from tests.integration.kafka_clients import (
    TOKENS,
    KafkaController,
    admin_client,
    off_loop,
    raw_call,
    start_controller,
    wait_active,
    wait_brokers,
)

pytestmark = pytest.mark.timeout(240)


def ports_of(brokers: list[dict[str, Any]]) -> dict[int, int]:
    """Each broker's port (kafka-python's DescribeCluster says broker_id, aiokafka's Metadata node_id)."""
    return {int(b["broker_id"] if "broker_id" in b else b["node_id"]): int(b["port"]) for b in brokers}


async def expected_replicas(k: KafkaController, topic: str) -> set[tuple[str, str, int]]:
    _, body = await k.c.get(f"/v1/topics/{topic}")
    return {(f"/sim/broker-{r}", topic, p["partition"]) for p in body["partitions"] for r in p["replicas"]}


def replicas_in(answers: list[dict[str, Any]], topic: str) -> Counter[tuple[str, str, int]]:
    """Each (log dir, topic, partition) of the answers, counted as often as it is reported."""
    return Counter(
        (d["log_dir"], t["name"], p["partition_index"])
        for answer in answers
        for d in answer["log_dirs"]
        for t in d["topics"]
        if t["name"] == topic
        for p in t["partitions"]
    )


def log_dirs_at(host: str, port: int) -> list[str]:
    response = raw_call(host, port, DescribeLogDirsRequest(topics=None), 1)
    return sorted(r.log_dir for r in response.results)


async def refused(host: str, port: int) -> bool:
    try:
        _, writer = await asyncio.open_connection(host, port)
    except OSError:
        return True
    writer.close()
    await writer.wait_closed()
    return False


async def test_each_broker_answers_for_itself_at_its_own_port(procs: Procs) -> None:
    k = start_controller(procs, 9000, "--kafka-broker-ports", "0")
    await wait_active(k)
    procs.cluster(3, 1)
    leaving = procs.broker(4)
    await wait_brokers(k, 4)
    probe = await admin_client(k.address)
    try:

        async def four_ports() -> dict[int, int] | None:
            found = ports_of((await off_loop(probe.describe_cluster))["brokers"])
            return found if len(set(found.values())) == 4 else None

        ports = await eventually(four_ports, what="four brokers at four ports")
        assert set(ports) == {1, 2, 3, 4} and k.port not in ports.values()
    finally:
        await off_loop(probe.close)
    # a client bootstrapped once every broker has its port: kafka-python keeps the brokers'
    # addresses of its first Metadata (DescribeCluster does not refresh them), and one that
    # started before the ports opened would reach every broker at the bootstrap port
    admin = await admin_client(k.address)
    try:
        # admin calls reach the controller node at its own port
        await off_loop(admin.create_topics, [NewTopic("t", 8, 2)])
        configs = await off_loop(admin.describe_configs, [ConfigResource(ConfigResourceType.TOPIC, "t")])
        assert configs
        expected = await expected_replicas(k, "t")
        assert len(expected) == 16

        # every broker asked separately: each replica once, from its own broker
        async def all_reported() -> Counter[tuple[str, str, int]] | None:
            counted = replicas_in(await off_loop(admin.describe_log_dirs), "t")
            return counted if set(counted) == expected else None

        counted = await eventually(all_reported, what="every replica of t reported")
        assert max(counted.values()) == 1, counted
        for broker_id, port in ports.items():
            assert await off_loop(log_dirs_at, k.host, port) == [f"/sim/broker-{broker_id}"]
        assert await off_loop(log_dirs_at, k.host, k.port) == [f"/sim/broker-{b}" for b in (1, 2, 3, 4)]
    finally:
        await off_loop(admin.close)

    # aiokafka and confluent-kafka see the same ports and work through them
    aio = AIOKafkaAdminClient(bootstrap_servers=k.address, request_timeout_ms=20000)
    await aio.start()
    try:
        described = await aio.describe_cluster()
        assert ports_of(described["brokers"]) == ports
        await aio.create_topics([AioNewTopic("from-aiokafka", 2, 2)])
    finally:
        await aio.close()
    confluent = AdminClient({"bootstrap.servers": k.address})
    listed = await off_loop(confluent.list_topics, timeout=20)
    assert {b.id: b.port for b in listed.brokers.values()} == ports
    futures = confluent.create_topics([ConfluentNewTopic("from-confluent", 2, 2)], request_timeout=20)
    await off_loop(futures["from-confluent"].result, 30)
    _, topics = await k.c.get("/v1/topics")
    assert {"from-aiokafka", "from-confluent"} <= {t["name"] for t in topics["topics"]}

    # a broker that leaves has its port closed, and the connections it accepted, and is no
    # longer advertised
    reader, writer = await asyncio.open_connection(k.host, ports[4])
    leaving.kill()

    async def port_closed() -> bool:
        return await refused(k.host, ports[4])

    await eventually(port_closed, what="broker 4's port closed", timeout_s=60)
    assert await asyncio.wait_for(reader.read(), 30) == b""  # closed by the listener (idle: 600 s)
    writer.close()
    admin = await admin_client(k.address)
    try:
        left = ports_of((await off_loop(admin.describe_cluster))["brokers"])
        assert left == {b: p for b, p in ports.items() if b != 4}
    finally:
        await off_loop(admin.close)


async def test_a_port_that_cannot_be_bound_and_brokers_past_the_range_fall_back_to_bootstrap(
    procs: Procs,
) -> None:
    held, first = two_free_ports()
    try:
        k = start_controller(procs, 9000, "--kafka-broker-ports", f"{first}-{first + 1}")
        await wait_active(k)
        procs.cluster(3, 1)
        await wait_brokers(k, 3)
        admin = await admin_client(k.address)
        try:

            async def settled() -> dict[int, int] | None:
                found = ports_of((await off_loop(admin.describe_cluster))["brokers"])
                return found if len(found) == 3 and first + 1 in found.values() else None

            # which broker registers first (and meets the taken port) is the agents' race: one
            # broker at the free port of the range, the other two at the bootstrap port
            ports = await eventually(settled, what="a broker at the free port of the range")
            own = [b for b, port in ports.items() if port == first + 1]
            assert len(own) == 1 and sorted(ports.values()) == sorted([k.port, k.port, first + 1])
            assert await off_loop(log_dirs_at, k.host, first + 1) == [f"/sim/broker-{own[0]}"]
        finally:
            await off_loop(admin.close)
        log = k.c.proc.log()
        failed = [b for b in ports if f"cannot listen on 127.0.0.1:{first} for broker {b}:" in log]
        assert len(failed) == 1 and failed[0] not in own
        assert "1 broker(s) past the cap of 2 broker ports" in log
        assert k.c.proc.alive
    finally:
        held.close()


async def test_broker_ports_require_sasl_as_the_bootstrap_port(procs: Procs, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(TOKENS)
    k = start_controller(procs, 9000, "--kafka-broker-ports", "0", tokens=tokens)
    k.c.token = "alice-secret"  # the HTTP API's status, with the same tokens file
    await wait_active(k)
    procs.cluster(2, 1)
    await wait_brokers(k, 2)
    login = {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": "victor",
        "sasl_plain_password": "victor-secret",
    }

    async def both_dirs() -> dict[int, int] | None:
        """Each broker's own port and its dir once, over SASL, through a client that bootstraps
        now: the listener opens a broker's port just after the broker registers, and a client's
        first metadata taken before that would keep the bootstrap port for ~5 minutes."""
        admin = await admin_client(k.address, **login)
        try:
            ports = ports_of((await off_loop(admin.describe_cluster))["brokers"])
            if len(set(ports.values())) != 2 or k.port in ports.values():
                return None
            dirs = sorted(
                d["log_dir"] for a in await off_loop(admin.describe_log_dirs) for d in a["log_dirs"]
            )
            return ports if dirs == ["/sim/broker-1", "/sim/broker-2"] else None
        finally:
            await off_loop(admin.close)

    ports = await eventually(both_dirs, what="each broker's port and dir once, over SASL")
    # a request before SASL on a broker's port closes the connection, as on the bootstrap port
    for port in ports.values():
        with pytest.raises(ConnectionError):
            await off_loop(raw_call, k.host, port, DescribeLogDirsRequest(topics=None), 1)


async def test_a_standby_opens_no_broker_port_until_it_takes_over(procs: Procs) -> None:
    first = start_controller(procs, 9000, "--kafka-broker-ports", "0")
    await wait_active(first)
    second = start_controller(procs, 9001, "--kafka-broker-ports", "0")
    procs.cluster(2, 1)
    await wait_brokers(first, 2)

    async def described(k: KafkaController) -> dict[int, int] | None:
        admin = await admin_client(k.address, request_timeout_ms=5000)
        try:
            found = ports_of((await off_loop(admin.describe_cluster))["brokers"])
        finally:
            await off_loop(admin.close)
        return found if set(found) == {1, 2} else None

    # the active instance's broker ports, whichever instance a client bootstraps from
    active_ports = await eventually(lambda: described(first), what="the active instance's ports")
    assert len(set(active_ports.values())) == 2 and first.port not in active_ports.values()
    assert "kafka listener: broker" not in second.c.proc.log()

    first.c.proc.kill()
    await wait_active(second)

    async def own_ports() -> dict[int, int] | None:
        found = await described(second)
        return (
            found if found and second.port not in found.values() and len(set(found.values())) == 2 else None
        )

    taken_over = await eventually(own_ports, what="the new active instance's broker ports", timeout_s=60)
    for broker_id, port in taken_over.items():

        async def own_dir(port: int = port, broker_id: int = broker_id) -> bool:
            return await off_loop(log_dirs_at, second.host, port) == [f"/sim/broker-{broker_id}"]

        await eventually(own_dir, what=f"broker {broker_id}'s dir at its port")

"""JBOD (KIP-113) against real processes: broker agents with two log dirs each (``--log-dirs``)
and the controller's Kafka listener with a port per broker. kafka-python's
``alter_replica_log_dirs`` moves a replica between the dirs of one broker under the intra-broker
throttle; while it copies, DescribeLogDirs on that broker's port shows the future replica with
its size and lag, and ``GET /v1/log-dirs`` too; it ends in the named dir. An unknown dir, a replica
the broker does not host, the dir it is already in and the bootstrap port get Kafka's answers."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.errors import InvalidRequestError, LogDirNotFoundError, NoError, ReplicaNotAvailableError
from kafka.protocol.admin import AlterReplicaLogDirsRequest, DescribeLogDirsRequest

from tests.integration.harness import Procs, eventually
from tests.integration.kafka_clients import (
    admin_client,
    off_loop,
    raw_call,
    start_controller,
    wait_active,
    wait_brokers,
)

pytestmark = pytest.mark.timeout(240)

SIZE = 3_000_000
THROTTLE = 1_000_000  # bytes/s: the move takes about 3 s
CAPACITY = 50_000_000


def dirs_at(host: str, port: int, topic: str) -> dict[str, dict[str, Any]]:
    """DescribeLogDirs v4 on one port: each dir's bytes and its replicas of ``topic``,
    (partition, is_future) -> (size, lag)."""
    response = raw_call(host, port, DescribeLogDirsRequest(topics=None), 4)
    out = {}
    for r in response.results:
        assert r.error_code == 0, r
        replicas = {
            (p.partition_index, p.is_future_key): (p.partition_size, p.offset_lag)
            for t in r.topics
            if t.name == topic
            for p in t.partitions
        }
        out[r.log_dir] = {"total": r.total_bytes, "usable": r.usable_bytes, "replicas": replicas}
    return out


def where(dirs: dict[str, dict[str, Any]], partition: int) -> list[tuple[str, bool]]:
    return sorted((d, future) for d, v in dirs.items() for (p, future) in v["replicas"] if p == partition)


async def test_a_replica_moves_between_two_dirs_of_a_broker(procs: Procs) -> None:
    k = start_controller(procs, 9000, "--kafka-broker-ports", "0")
    await wait_active(k)
    procs.cluster(2, 1, None, "--log-dirs", f"/d1,/d2:{CAPACITY}")
    await wait_brokers(k, 2)
    admin = await admin_client(k.address)
    try:
        brokers = (await off_loop(admin.describe_cluster))["brokers"]
        port = {int(b["node_id"] if "node_id" in b else b["broker_id"]): int(b["port"]) for b in brokers}[1]
        assert port != k.port
        topic = NewTopic("j", 2, 2, topic_configs={"reassignd.sim.initial.bytes": str(SIZE)})
        await off_loop(admin.create_topics, [topic])
        await off_loop(
            admin.alter_configs,
            [
                ConfigResource(
                    ConfigResourceType.BROKER,
                    "1",
                    configs={"replica.alter.log.dirs.io.max.bytes.per.second": str(THROTTLE)},
                )
            ],
        )

        # the two partitions went to the two dirs (fewest logs first)
        async def placed() -> dict[str, dict[str, Any]] | None:
            found = await off_loop(dirs_at, k.host, port, "j")
            return found if all(where(found, p) for p in (0, 1)) else None

        found = await eventually(placed, what="j's replicas on broker 1")
        assert sorted(found) == ["/d1", "/d2"]
        assert found["/d1"]["total"] == -1 and found["/d2"]["total"] == CAPACITY
        assert found["/d2"]["usable"] == CAPACITY - SIZE
        assert {where(found, 0)[0][0], where(found, 1)[0][0]} == {"/d1", "/d2"}
        source = where(found, 0)[0][0]
        target = "/d2" if source == "/d1" else "/d1"

        # errors first: an unknown dir, a replica broker 1 does not host, the dir it is in
        answers = await off_loop(
            admin.alter_replica_log_dirs,
            {("j", 0, 1): "/nowhere", ("absent", 0, 1): target},
        )
        assert {(t.topic, t.partition): e for t, e in answers.items()} == {
            ("j", 0): LogDirNotFoundError,
            ("absent", 0): ReplicaNotAvailableError,
        }
        answers = await off_loop(admin.alter_replica_log_dirs, {("j", 0, 1): source})
        assert list(answers.values()) == [NoError]
        assert where(await off_loop(dirs_at, k.host, port, "j"), 0) == [(source, False)]
        # the bootstrap port cannot tell whose disks are meant
        request = AlterReplicaLogDirsRequest(
            dirs=[
                AlterReplicaLogDirsRequest.AlterReplicaLogDir(
                    path=target,
                    topics=[
                        AlterReplicaLogDirsRequest.AlterReplicaLogDir.AlterReplicaLogDirTopic(
                            name="j", partitions=[0]
                        )
                    ],
                )
            ]
        )
        refused = await off_loop(raw_call, k.host, k.port, request, 2)
        assert [(t.topic_name, p.error_code) for t in refused.results for p in t.partitions] == [
            ("j", InvalidRequestError.errno)
        ]

        # the move: a future replica in the target, copying under the throttle
        answers = await off_loop(admin.alter_replica_log_dirs, {("j", 0, 1): target})
        assert list(answers.values()) == [NoError]

        async def moving() -> dict[str, dict[str, Any]] | None:
            found = await off_loop(dirs_at, k.host, port, "j")
            future = found[target]["replicas"].get((0, True))
            return found if future is not None and 0 < future[0] < SIZE else None

        during = await eventually(moving, what="j-0's future replica copying")
        size, lag = during[target]["replicas"][(0, True)]
        assert size + lag == SIZE and lag > 0
        assert where(during, 0) == sorted([(source, False), (target, True)])
        _, http = await k.c.get("/v1/log-dirs?broker=1")
        dirs = {d["logDir"]: d for d in http["brokers"][0]["logDirs"]}
        assert any(p["partition"] == "j-0" and p["isFuture"] for p in dirs[target]["partitions"])
        assert dirs["/d2"]["totalBytes"] == CAPACITY

        async def moved() -> bool:
            return where(await off_loop(dirs_at, k.host, port, "j"), 0) == [(target, False)]

        await eventually(moved, what="j-0 in its new dir", timeout_s=60)
        # broker 2's replicas did not move
        ports = {int(b["node_id"] if "node_id" in b else b["broker_id"]): int(b["port"]) for b in brokers}
        other = await off_loop(dirs_at, k.host, ports[2], "j")
        assert not any(future for d in other.values() for (_, future) in d["replicas"])
    finally:
        await off_loop(admin.close)

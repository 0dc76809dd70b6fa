"""The Kafka listener shares the reads it makes for many clients: a standby's broker list (its
Metadata and DescribeCluster answers) is read from ZooKeeper at most once a second, concurrent
requests sharing the read in progress; concurrent DescribeLogDirs requests share one round of
questions to the agents. Real in-process controllers on a real ZooKeeper, real agents' HTTP
answers on loopback, kafka-python's protocol classes on real sockets."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from aiohttp import web
from kafka.protocol.admin import DescribeClusterRequest, DescribeLogDirsRequest
from kafka.protocol.metadata import MetadataRequest

from reassignd.control.replicas_report import ReplicaInfo
from reassignd.controller.api.controller_api import ControllerApi
from reassignd.controller.model.snapshot import BrokerView
from reassignd.controller.settings import ControllerSettings
from reassignd.kafka_listener.cluster import STANDBY_BROKERS_TTL_S
from reassignd.testing.controller import InProcessController, in_process_controller
from reassignd.testing.fake_view import ACTIVE, FakeView
from reassignd.testing.polling import eventually
from reassignd.zk import codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.kafka_door import Client, listening

pytestmark = pytest.mark.timeout(120)

ACTIVE_KAFKA = "127.0.0.1:19092"  # what the active instance advertises (never dialled here)


class CountingApi:
    """The standby's real ControllerApi, its ``registered_brokers`` (a ZooKeeper children read)
    counted and, while ``gate`` is closed, held before it reads."""

    def __init__(self, api: ControllerApi) -> None:
        self._api = api
        self.reads = 0
        self.read_at: list[float] = []
        self.gate = asyncio.Event()
        self.gate.set()
        self.reached = asyncio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._api, name)

    async def registered_brokers(self) -> list[int]:
        self.reads += 1
        self.reached.set()
        await self.gate.wait()
        ids = await self._api.registered_brokers()
        self.read_at.append(time.monotonic())
        return ids


async def register(zk: ZkClient, broker_id: int) -> None:
    reg = codec.BrokerRegistration(
        broker_id, "127.0.0.1", 9, (codec.Endpoint("PLAINTEXT", "127.0.0.1", 9),), timestamp_ms=1
    )
    await zk.create(paths.broker(broker_id), codec.encode_broker(reg), ephemeral=True, make_parents=True)


@pytest.fixture
async def standby(zk_connect: str, zk: ZkClient) -> AsyncIterator[InProcessController]:
    async with in_process_controller(zk_connect, http=False, session_timeout_s=4.0) as active:
        # set before the loop first runs: the election writes it into /controller
        active.controller.kafka_address = ACTIVE_KAFKA
        await active.until_active()
        async with in_process_controller(
            zk_connect, controller_id=9001, http=False, session_timeout_s=4.0
        ) as second:

            async def following() -> bool:
                known = second.controller.snapshot().active_controller
                return known is not None and known.controller_id == 9000 and known.kafka == ACTIVE_KAFKA

            await eventually(following, what="the standby following 9000")
            yield second


def _metadata() -> MetadataRequest:
    return MetadataRequest(topics=None, allow_auto_topic_creation=False)


async def test_a_standby_reads_the_broker_list_once_a_second_and_shares_the_read(
    standby: InProcessController, zk: ZkClient
) -> None:
    for b in (1, 2):
        await register(zk, b)
    api = CountingApi(standby.controller.api)
    async with listening(api, standby.controller.settings) as listener:
        clients = [await Client.open(listener) for _ in range(20)]  # one request in flight each
        try:
            # 20 requests on 20 connections while the first read is held: one read for all
            api.gate.clear()
            pending = [
                asyncio.create_task(
                    c.call(
                        _metadata()
                        if i % 2
                        else DescribeClusterRequest(include_cluster_authorized_operations=False),
                        1 if i % 2 else 0,
                    )
                )
                for i, c in enumerate(clients)
            ]
            await asyncio.wait_for(api.reached.wait(), 10)
            await asyncio.sleep(0.3)  # the other requests arrive while the read is out
            assert api.reads == 1
            api.gate.set()
            answers = await asyncio.gather(*pending)
            assert api.reads == 1
            for answer in answers:
                assert sorted(
                    b.node_id if hasattr(b, "node_id") else b.broker_id for b in answer.brokers
                ) == [1, 2]
                assert {(b.host, b.port) for b in answer.brokers} == {("127.0.0.1", 19092)}

            # within the second that follows, answers come from the list read
            await register(zk, 3)
            client = clients[0]
            for _ in range(5):
                answer = await client.call(_metadata(), 1)
            first_read_s = api.read_at[0]
            if time.monotonic() - first_read_s < STANDBY_BROKERS_TTL_S:
                assert api.reads == 1
                assert sorted(b.node_id for b in answer.brokers) == [1, 2]

            # then one more read, which sees the new broker; never more than one per second
            async def listed_three() -> bool:
                got = await client.call(_metadata(), 1)
                return sorted(b.node_id for b in got.brokers) == [1, 2, 3]

            await eventually(listed_three, what="the new broker listed", interval_s=0.05)
            assert api.reads == 2
            assert api.read_at[1] - first_read_s >= STANDBY_BROKERS_TTL_S
        finally:
            for c in clients:
                await c.close()


# --- DescribeLogDirs --------------------------------------------------------------------------------


@dataclass
class Agent:
    """A broker agent's ``GET /replicas``, answering once ``gate`` opens."""

    broker_id: int
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    hits: int = 0
    reached: asyncio.Event = field(default_factory=asyncio.Event)

    async def replicas(self, request: web.Request) -> web.Response:
        self.hits += 1
        self.reached.set()
        await self.gate.wait()
        info = ReplicaInfo("orders", 0, False, 42, 100, 10.0, False)
        return web.json_response({"broker_id": self.broker_id, "replicas": [info.to_json()]})


async def test_concurrent_describe_log_dirs_share_one_round_of_agent_questions(serve_agent: Any) -> None:
    agents = {b: Agent(b) for b in (1, 2)}
    brokers = {b: BrokerView(b, None, (await serve_agent(agent),), 1000 + b) for b, agent in agents.items()}
    view = FakeView(current=replace(ACTIVE, brokers=brokers))
    settings = ControllerSettings(zk_connect="127.0.0.1:2181")
    async with listening(view, settings) as listener:
        clients = [await Client.open(listener) for _ in range(6)]  # one request in flight each
        try:
            pending = [asyncio.create_task(c.call(DescribeLogDirsRequest(topics=None), 1)) for c in clients]
            await asyncio.wait_for(asyncio.gather(*(a.reached.wait() for a in agents.values())), 10)
            await asyncio.sleep(0.3)  # the other requests arrive while the round is out
            for agent in agents.values():
                agent.gate.set()
            answers = await asyncio.gather(*pending)
            assert [a.hits for a in agents.values()] == [1, 1]  # one question per agent for six requests
            for answer in answers:
                assert [(r.error_code, r.log_dir) for r in answer.results] == [
                    (0, "/sim/broker-1"),
                    (0, "/sim/broker-2"),
                ]
                assert answer.results[0].topics[0].partitions[0].partition_size == 42
            # the round is over: the next request asks again
            await clients[0].call(DescribeLogDirsRequest(topics=None), 1)
            assert [a.hits for a in agents.values()] == [2, 2]
        finally:
            for c in clients:
                await c.close()

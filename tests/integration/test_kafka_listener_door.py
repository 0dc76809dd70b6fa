"""The Kafka listener's front door against a real in-process controller and ZooKeeper: a
Metadata request that repeats a big topic is answered once per topic without holding the loop,
frames before SASL are capped, idle announced frames hold no budget, connections per address
are capped; DeleteTopics v6 by an unknown id and AlterClientQuotas validate_only as Kafka."""

from __future__ import annotations

import asyncio
import struct
import time
import uuid
from collections.abc import AsyncIterator

import pytest
from kafka.protocol.admin import AlterClientQuotasRequest, DeleteTopicsRequest
from kafka.protocol.metadata import ApiVersionsRequest, MetadataRequest

from reassignd.kafka_listener.connection import READ_CHUNK_BYTES
from reassignd.testing.controller import InProcessController, in_process_controller
from reassignd.testing.polling import eventually
from reassignd.tokens import Principal, Role
from reassignd.zk import codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.kafka_door import Client, listening

pytestmark = pytest.mark.timeout(120)

PARTITIONS = 1000


@pytest.fixture
async def controller(zk_connect: str) -> AsyncIterator[InProcessController]:
    async with in_process_controller(zk_connect, http=False, session_timeout_s=4.0) as c:
        await c.until_active()
        yield c


async def _true(value: object) -> bool:
    return bool(value)


async def test_a_topic_named_700_times_is_answered_once_without_holding_the_loop(
    controller: InProcessController, zk: ZkClient
) -> None:
    await zk.create(
        paths.topic("big"), codec.encode_topic(codec.TopicZnode({p: (1,) for p in range(PARTITIONS)}))
    )
    api = controller.controller.api
    await eventually(lambda: _true("big" in api.snapshot().topics), timeout_s=60, what="the topic published")
    worst_held_s = 0.0
    stop = asyncio.Event()

    async def ticker() -> None:
        """The loop thread's CPU between two ticks 10 ms apart: the work that held the loop (a
        wall-clock lag would also count the time a loaded machine gave the thread no core)."""
        nonlocal worst_held_s
        while not stop.is_set():
            before = time.thread_time()
            await asyncio.sleep(0.01)
            worst_held_s = max(worst_held_s, time.thread_time() - before)

    async with listening(api, controller.controller.settings) as listener:
        client = await Client.open(listener)
        ticking = asyncio.create_task(ticker())
        try:
            request = MetadataRequest(
                topics=[MetadataRequest.MetadataRequestTopic(name="big")] * 700,
                allow_auto_topic_creation=False,
                include_topic_authorized_operations=False,
            )
            for _ in range(3):  # the first builds, the next are answered from the cache
                response = await client.call(request, 9)
                assert [t.name for t in response.topics] == ["big"]
                assert len(response.topics[0].partitions) == PARTITIONS
        finally:
            stop.set()
            await ticking
            await client.close()
    # before: 700 entries of 1,000 partitions built on the loop (6.2 s on the reported machine)
    assert worst_held_s < 0.5, f"the loop was held for {worst_held_s:.3f} s of CPU"


async def test_frames_before_sasl_are_capped_at_512_kib(controller: InProcessController) -> None:
    tokens = {"secret": Principal("alice", Role.ADMIN)}
    api = controller.controller.api
    async with listening(api, controller.controller.settings, tokens) as listener:
        small = await Client.open(listener)
        big = await Client.open(listener)
        try:
            assert (await small.call(ApiVersionsRequest(), 0)).error_code == 0
            big.writer.write(struct.pack(">i", 512 * 1024 + 1) + b"\0" * 1024)
            assert await big.closed_by_peer()
            assert (await small.call(ApiVersionsRequest(), 0)).error_code == 0
        finally:
            await small.close()
            await big.close()


async def test_idle_announced_frames_hold_no_budget(controller: InProcessController) -> None:
    api = controller.controller.api
    async with listening(api, controller.controller.settings) as listener:
        idle = [await Client.open(listener) for _ in range(4)]
        client = await Client.open(listener)
        try:
            for c in idle:  # 4 x 10 MiB announced (the whole budget), nothing sent
                c.writer.write(struct.pack(">i", 10 * 1024 * 1024))
                await c.writer.drain()
            await asyncio.sleep(0.2)
            started = time.monotonic()
            response = await client.call(ApiVersionsRequest(), 0, timeout_s=5.0)
            assert response.error_code == 0
            assert time.monotonic() - started < 2.0
            assert listener.connections == 5  # the idle ones are still open
            # at most the one chunk each is waiting to read, not the 40 MiB they announced
            assert listener.budget.used <= 4 * READ_CHUNK_BYTES
        finally:
            for c in [*idle, client]:
                await c.close()


async def test_connections_per_address_are_capped(controller: InProcessController) -> None:
    api = controller.controller.api
    async with listening(api, controller.controller.settings, kafka_max_connections_per_ip=3) as listener:
        first = [await Client.open(listener) for _ in range(3)]
        for c in first:
            assert (await c.call(ApiVersionsRequest(), 0)).error_code == 0
        over = await Client.open(listener)
        assert await over.closed_by_peer()
        assert listener.refused_connections == 1
        await first[0].close()
        await eventually(lambda: _true(listener.connections == 2), what="the closed connection gone")
        again = await Client.open(listener)
        try:
            assert (await again.call(ApiVersionsRequest(), 0)).error_code == 0
        finally:
            for c in [*first[1:], over, again]:
                await c.close()


async def test_delete_topics_v6_by_an_unknown_id_answers_100_with_the_id(
    controller: InProcessController,
) -> None:
    api = controller.controller.api
    unknown = uuid.uuid4()
    async with listening(api, controller.controller.settings) as listener:
        client = await Client.open(listener)
        try:
            request = DeleteTopicsRequest(
                topics=[DeleteTopicsRequest.DeleteTopicState(name=None, topic_id=unknown)], timeout_ms=5000
            )
            response = await client.call(request, 6)
            [result] = response.responses
            assert (result.error_code, result.topic_id, result.name) == (100, unknown, None)
        finally:
            await client.close()


async def test_alter_client_quotas_validate_only_checks_the_values(
    controller: InProcessController, zk: ZkClient
) -> None:
    api = controller.controller.api
    Entry = AlterClientQuotasRequest.EntryData

    def request(value: float, validate_only: bool) -> AlterClientQuotasRequest:
        return AlterClientQuotasRequest(
            entries=[
                Entry(
                    entity=[Entry.EntityData(entity_type="user", entity_name="bob")],
                    ops=[Entry.OpData(key="controller_mutation_rate", value=value, remove=False)],
                )
            ],
            validate_only=validate_only,
        )

    async with listening(api, controller.controller.settings) as listener:
        client = await Client.open(listener)
        try:
            for validate_only in (True, False):
                [entry] = (await client.call(request(-1.0, validate_only), 1)).entries
                assert entry.error_code == 42, (validate_only, entry)
            [entry] = (await client.call(request(5.0, True), 1)).entries
            assert entry.error_code == 0
            assert await zk.get_or_none(paths.config_entity("bob", None)) is None  # nothing written
        finally:
            await client.close()

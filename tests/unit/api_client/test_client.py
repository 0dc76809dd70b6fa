"""The API client's typed calls decode what the server encodes: the same contract's structs on
both sides (a real app in front of the fake controller view), and an answer of another shape is
one line of ResponseError naming the request."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import AsyncIterator

import msgspec
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from reassignd.api_client.client import ApiClient
from reassignd.api_client.errors import ResponseError, Unreachable
from reassignd.api_client.kafka_probe import api_versions_request, is_api_versions_answer
from reassignd.api_client.shapes import alter_request, partition_results
from reassignd.contracts.batches import BatchStatus, BatchSummary
from reassignd.contracts.cluster import Status
from reassignd.contracts.requests import (
    BatchPartitionSpec,
    PlanPartition,
    ReassignmentPlan,
    SubmitBatchRequest,
)
from reassignd.http.app import build_app
from reassignd.testing.fake_view import SETTINGS
from tests.unit.http.batch_helpers import CLUSTER, fixed_clock
from tests.unit.http.fake_view import FakeView

MOVE = {"topic": "orders", "partition": 0, "replicas": [2, 3, 4]}


@pytest.fixture
async def api() -> AsyncIterator[ApiClient]:
    view = FakeView(current=CLUSTER, now_ms=fixed_clock)
    server = TestServer(build_app(view, SETTINGS), host="127.0.0.1")
    await server.start_server()
    try:
        async with ApiClient.open(f"http://127.0.0.1:{server.port}", timeout_s=10) as client:
            yield client
    finally:
        await server.close()


def as_json(value: object) -> object:
    return msgspec.json.decode(msgspec.json.encode(value))


async def test_each_typed_call_decodes_the_servers_answer(api: ApiClient) -> None:
    status = await api.status()
    assert isinstance(status, Status) and status.active and status.controller_id == 9000
    assert as_json(status) == await api.get("/v1/status") | {"uptime_s": status.uptime_s}
    assert [b.id for b in (await api.brokers()).brokers] == sorted(CLUSTER.brokers)
    assert [t.name for t in (await api.topics()).topics] == ["orders"]
    orders = await api.topic("orders")
    assert sorted(orders) == [0, 1, 2, 3] and orders[0].replicas == (1, 2, 3)
    assert {b.broker for b in (await api.log_dirs()).brokers} == set(CLUSTER.brokers)
    assert (await api.reassignments()).topics == ()
    alter = {"topics": [{"name": "orders", "partitions": [{"partition": 0, "replicas": [2, 3, 4]}]}]}
    assert [(tp, r.ok) for tp, r in partition_results(await api.alter(alter))] == [(("orders", 0), True)]
    assert (await api.cancel_all()).responses == ()
    # the request structs, as the admin tools send them: either shape of AlterPartitionReassignments
    plan = ReassignmentPlan(partitions=(PlanPartition(topic="orders", partition=1, replicas=(2, 3, 4)),))
    assert [(tp, r.ok) for tp, r in partition_results(await api.alter(plan))] == [(("orders", 1), True)]
    cancelled = partition_results(await api.alter(alter_request({("orders", 1): None})))
    assert [(tp, r.ok) for tp, r in cancelled] == [(("orders", 1), True)]
    submitted = await api.submit_batch({"batch_id": "b1", "partitions": [MOVE]})
    assert submitted.created and [p.ok for p in submitted.partitions] == [True]
    assert isinstance(submitted.batch, BatchStatus) and submitted.batch.running == ()
    again = await api.submit_batch(
        SubmitBatchRequest(batch_id="b1", partitions=(BatchPartitionSpec("orders", 0, (2, 3, 4)),))
    )
    assert not again.created  # the same body, as a struct
    # each batch endpoint decodes into its own struct: the list's entries have no moves in flight
    listed = (await api.batches()).batches
    assert [type(b) for b in listed] == [BatchSummary] and listed[0].batch_id == "b1"
    described = await api.batch("b1")
    assert isinstance(described, BatchStatus) and described.running == ()
    paused = await api.control_batch("b1", "pause")
    assert isinstance(paused, BatchStatus) and paused.state == "paused"


async def test_an_answer_of_another_shape_is_one_line_naming_the_request() -> None:
    async def status(_: web.Request) -> web.Response:
        return web.json_response({"active": True, "controller_id": "9000"})

    app = web.Application()
    app.router.add_get("/v1/status", status)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        url = f"http://127.0.0.1:{server.port}"
        async with ApiClient.open(url, timeout_s=10, follow_active=False) as api:
            with pytest.raises(ResponseError) as refused:
                await api.status()
    finally:
        await server.close()
    assert str(refused.value) == (
        "unexpected answer from the controller to GET /v1/status: Expected `int`, got `str` - at "
        "`$.controller_id`"
    )


def test_the_kafka_probe_frames_an_api_versions_request_and_knows_its_answer() -> None:
    request = api_versions_request()
    size, api_key, version, correlation_id = struct.unpack(">ihhi", request[:12])
    assert (size, api_key, version) == (len(request) - 4, 18, 0)
    answer_head = struct.pack(">ii", 14, correlation_id)
    assert is_api_versions_answer(answer_head)
    assert not is_api_versions_answer(struct.pack(">ii", 14, correlation_id + 1))
    assert not is_api_versions_answer(b"HTTP/1.1")  # an HTTP server's answer
    assert not is_api_versions_answer(b"\x00\x00")


async def test_a_server_that_hangs_up_is_not_called_a_kafka_listener() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(100)
        writer.close()

    server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        with pytest.raises(Unreachable) as raised:
            async with ApiClient.open(f"http://127.0.0.1:{port}", timeout_s=5.0):
                pass
    finally:
        server.close()
        await server.wait_closed()
    assert str(raised.value).startswith(f"cannot reach the controller at http://127.0.0.1:{port}: ")
    assert "Kafka" not in str(raised.value)

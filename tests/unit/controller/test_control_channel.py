"""The control channel against a small HTTP server standing in for an agent (real sockets): a
request refused as too large is split and its halves delivered, one that cannot be split or that
meets a permanent error is dropped (logged, counted, answered) instead of retried forever, and a
transient error is still retried."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from aiohttp import web

from reassignd.control.protocol import (
    ControlRequest,
    ControlResponse,
    FullSet,
    Header,
    LeaderAndIsrRequest,
    StopReplicaPartition,
    StopReplicaRequest,
    WirePartitionState,
)
from reassignd.control.request_sizes import partitions_of
from reassignd.control.wire import (
    INVALID_REQUEST,
    LEADER_AND_ISR_PATH,
    MAX_CONTROL_BODY_BYTES,
    MESSAGE_TOO_LARGE,
    STOP_REPLICA_PATH,
)
from reassignd.controller.instance.channel import ControlChannel
from reassignd.controller.instance.metrics import ControllerMetrics

LIMIT = 4096  # the fake agent's body limit
HEADER = Header(9000, 7, 11)


@dataclass
class FakeAgent:
    """Answers LeaderAndIsr like an agent (every partition OK) with a small body limit; StopReplica
    with whatever status ``stop_status`` says (a 503 first, ``transient`` times)."""

    limit: int = LIMIT
    bodies: list[int] = field(default_factory=list)  # every body size offered, refused ones too
    received: list[tuple[str, int]] = field(default_factory=list)
    stop_status: int = 200
    transient: int = 0
    stop_calls: int = 0

    async def leader_and_isr(self, request: web.Request) -> web.Response:
        self.bodies.append(request.content_length or 0)
        body = await request.json()  # over client_max_size: 413
        parsed = LeaderAndIsrRequest.from_json(body)
        self.received.extend(partitions_of(parsed))
        return web.json_response(ControlResponse(0).to_json())

    async def stop_replica(self, request: web.Request) -> web.Response:
        self.stop_calls += 1
        await request.read()
        if self.transient:
            self.transient -= 1
            return web.Response(status=503, text="busy")
        if self.stop_status == 400:
            body = {"error_code": INVALID_REQUEST, "partition_errors": [], "message": "bad"}
            return web.json_response(body, status=400)
        if self.stop_status != 200:
            return web.Response(status=self.stop_status, text="no such thing")
        return web.json_response(ControlResponse(0).to_json())

    def app(self) -> web.Application:
        app = web.Application(client_max_size=self.limit)
        app.router.add_post(LEADER_AND_ISR_PATH, self.leader_and_isr)
        app.router.add_post(STOP_REPLICA_PATH, self.stop_replica)
        return app


@dataclass
class Harness:
    agent: FakeAgent
    channel: ControlChannel
    metrics: ControllerMetrics
    answers: asyncio.Queue[tuple[ControlRequest, ControlResponse]]

    async def answer(self) -> tuple[ControlRequest, ControlResponse]:
        async with asyncio.timeout(20):
            return await self.answers.get()

    def count(self, kind: str, outcome: str) -> float:
        value = self.metrics.registry.get_sample_value(
            "reassignd_control_requests_total", {"request": kind, "outcome": outcome}
        )
        return value or 0.0


@pytest.fixture
async def harness() -> AsyncIterator[Harness]:
    agent = FakeAgent()
    runner = web.AppRunner(agent.app(), access_log=None)
    await runner.setup()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    await web.SockSite(runner, sock).start()
    metrics = ControllerMetrics()
    answers: asyncio.Queue[tuple[ControlRequest, ControlResponse]] = asyncio.Queue()
    channel = ControlChannel(
        request_timeout_s=5,
        backoff_ms=10,
        backoff_max_ms=50,
        metrics=metrics,
        on_response=lambda _b, req, resp: answers.put_nowait((req, resp)),
    )
    await channel.start()
    channel.add_broker(1, f"http://127.0.0.1:{port}")
    try:
        yield Harness(agent, channel, metrics, answers)
    finally:
        await channel.close()
        await runner.cleanup()
        sock.close()


def states(n: int, topic: str = "orders") -> tuple[WirePartitionState, ...]:
    return tuple(WirePartitionState(topic, p, 7, 1, 3, (1, 2), 5, (1, 2)) for p in range(n))


async def test_a_request_refused_as_too_large_is_split_until_every_half_fits(harness: Harness) -> None:
    full = FullSet(3, 60)
    request = LeaderAndIsrRequest(HEADER, states(60), (), full)  # ~12 KiB against a 4 KiB limit
    harness.channel.send(1, request)
    delivered: list[ControlRequest] = []
    while sum(len(partitions_of(r)) for r in delivered) < 60:
        piece, response = await harness.answer()
        assert response.error_code == 0
        delivered.append(piece)
    assert len(delivered) >= 4
    assert harness.agent.received == partitions_of(request)  # each partition once, in order
    assert all(isinstance(r, LeaderAndIsrRequest) and r.full == full for r in delivered)
    assert harness.count("LeaderAndIsrRequest", "split") >= 3
    assert harness.count("LeaderAndIsrRequest", "dropped") == 0
    assert max(harness.agent.bodies) > LIMIT  # it was refused at least once...
    assert harness.channel.idle()


async def test_a_single_partition_that_cannot_fit_is_dropped_and_the_queue_goes_on(harness: Harness) -> None:
    huge = LeaderAndIsrRequest(HEADER, states(1, "x" * (2 * LIMIT)))
    after = LeaderAndIsrRequest(HEADER, states(2))
    harness.channel.send(1, huge)
    harness.channel.send(1, after)
    request, response = await harness.answer()
    assert request == huge
    assert response.error_code == MESSAGE_TOO_LARGE
    assert [e.error_code for e in response.partition_errors] == [MESSAGE_TOO_LARGE]
    assert harness.count("LeaderAndIsrRequest", "dropped") == 1
    request, response = await harness.answer()
    assert request == after and response.error_code == 0
    assert len(harness.agent.bodies) == 2  # the huge one was offered once, never retried


async def test_a_body_over_the_agents_limit_is_split_before_it_is_sent(harness: Harness) -> None:
    request = LeaderAndIsrRequest(HEADER, states(3, "y" * (MAX_CONTROL_BODY_BYTES // 2)))
    harness.channel.send(1, request)
    for _ in range(3):
        _, response = await harness.answer()
        assert response.error_code == MESSAGE_TOO_LARGE  # each ~512 KiB partition alone, over 4 KiB
    assert all(size < MAX_CONTROL_BODY_BYTES for size in harness.agent.bodies)
    assert harness.count("LeaderAndIsrRequest", "split") == 2


async def test_permanent_http_errors_are_dropped_and_transient_ones_retried(harness: Harness) -> None:
    stop = StopReplicaRequest(HEADER, (StopReplicaPartition("orders", 0, 3, True),))
    harness.agent.transient = 2
    harness.channel.send(1, stop)
    _, response = await harness.answer()
    assert response.error_code == 0
    assert harness.agent.stop_calls == 3
    assert harness.count("StopReplicaRequest", "retry") == 2
    harness.agent.stop_calls = 0
    for status in (404, 405, 201):  # 201: a success whose body is no control response
        harness.agent.stop_status = status
        harness.channel.send(1, stop)
        _, response = await harness.answer()
        assert response.error_code == INVALID_REQUEST
        assert [(e.topic, e.partition, e.error_code) for e in response.partition_errors] == [
            ("orders", 0, INVALID_REQUEST)
        ]
    assert harness.agent.stop_calls == 3  # each offered once
    assert harness.count("StopReplicaRequest", "dropped") == 3


async def test_an_agents_own_refusal_is_a_response_not_a_drop(harness: Harness) -> None:
    harness.agent.stop_status = 400  # as control.py answers a malformed body
    stop = StopReplicaRequest(HEADER, (StopReplicaPartition("orders", 0, 3, True),))
    harness.channel.send(1, stop)
    _, response = await harness.answer()
    assert response == ControlResponse(INVALID_REQUEST)
    assert harness.count("StopReplicaRequest", f"error_{INVALID_REQUEST}") == 1
    assert harness.count("StopReplicaRequest", "dropped") == 0

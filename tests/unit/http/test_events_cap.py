"""``GET /v1/events`` holds at most ``--events-max-subscribers`` streams: one more is answered 503
with ``Retry-After`` (and the uniform error object), and a stream that ends frees its place. The
real app on a real socket in front of the fake view."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from aiohttp.test_utils import TestClient, TestServer

from reassignd.contracts.records import TopicCreated
from reassignd.http.app import build_app
from reassignd.stream.record_log import RecordLog
from reassignd.testing.fake_view import SETTINGS, FakeView


async def test_one_stream_over_the_cap_is_answered_503() -> None:
    events = RecordLog()
    app = build_app(FakeView(), replace(SETTINGS, events_max_subscribers=2), records=events)
    async with TestClient(TestServer(app)) as client:
        first = await client.get("/v1/events")
        second = await client.get("/v1/events?type=topic_created")
        assert (first.status, second.status) == (200, 200)
        assert events.subscribers == 2

        refused = await client.get("/v1/events")
        assert refused.status == 503
        assert refused.headers["Retry-After"] == "5"
        body = await refused.json()
        assert body["error_code"] == -1
        assert "the most --events-max-subscribers allows" in body["error_message"]
        assert events.subscribers == 2

        # a record still reaches both streams
        events.start_epoch(1)
        events.emit(TopicCreated("t", 1, 1))
        assert b"event: topic_created" in await first.content.readuntil(b"\n\n")
        assert b"event: topic_created" in await second.content.readuntil(b"\n\n")

        second.close()  # the client goes away: its place is free once the server notices

        async def freed() -> None:
            while events.subscribers > 1:
                events.emit(TopicCreated("t", 1, 1))  # a write to the closed stream ends it
                await asyncio.sleep(0.05)

        await asyncio.wait_for(freed(), 10)
        again = await client.get("/v1/events?max_s=0.2")
        assert again.status == 200
        await again.read()
        first.close()

"""The event topic read back by a stock Kafka consumer, for the tests of the controller's events."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp


class Stream:
    """``GET /v1/events`` read as ``curl -N`` would: the records parsed from the SSE frames."""

    def __init__(self, url: str, last_event_id: str | None = None, query: str = "") -> None:
        self.url, self.last, self.query = url, last_event_id, query
        self.records: list[dict[str, Any]] = []
        self.ids: list[str] = []
        self.task: asyncio.Task[None] | None = None

    async def _read(self) -> None:
        headers = {"Last-Event-ID": self.last} if self.last else {}
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"{self.url}/v1/events{self.query}", headers=headers) as resp,
        ):
            assert resp.status == 200 and resp.content_type == "text/event-stream"
            frame: dict[str, str] = {}
            async for raw in resp.content:
                line = raw.decode().rstrip("\n")
                if line.startswith(":"):
                    continue
                if line:
                    name, _, value = line.partition(": ")
                    frame[name] = value
                    continue
                if "data" in frame:
                    self.records.append(json.loads(frame["data"]))
                    self.ids.append(frame.get("id", ""))
                frame = {}

    def __enter__(self) -> Stream:
        self.task = asyncio.get_running_loop().create_task(self._read(), name="sse-reader")
        return self

    def __exit__(self, *_: object) -> None:
        assert self.task is not None
        self.task.cancel()

    def of(self, topic: str, partition: int) -> list[str]:
        return [r["type"] for r in self.records if (r.get("topic"), r.get("partition")) == (topic, partition)]

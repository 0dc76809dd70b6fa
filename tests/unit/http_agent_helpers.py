"""Helpers of the HTTP reassignment tests: a simulated agent and its reports."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any

from aiohttp import web

from reassignd.control.replicas_report import ReplicaInfo


def info(
    topic: str, partition: int, log_end_offset: int, lag_bytes: int = 0, rate: float = 0.0
) -> ReplicaInfo:
    return ReplicaInfo(topic, partition, False, log_end_offset, lag_bytes, rate, False)


@dataclass
class Agent:
    """A broker agent's ``GET /replicas``, and nothing else."""

    report: Any
    status: int = 200
    delay_s: float = 0.0
    hits: int = 0

    async def replicas(self, request: web.Request) -> web.Response:
        self.hits += 1
        await asyncio.sleep(self.delay_s)
        if isinstance(self.report, bytes):
            return web.Response(body=self.report, status=self.status, content_type="application/json")
        return web.json_response(self.report, status=self.status)


def report(broker_id: int, *replicas: ReplicaInfo, leader: bool = False) -> Any:
    return {"broker_id": broker_id, "replicas": [replace(r, leader=leader).to_json() for r in replicas]}

"""A fake ControllerView for the HTTP tests of topic mutations and quotas: it records every
request that reaches the "controller" and answers with what the test set (or raises)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client import CollectorRegistry

from reassignd.controller.requests import (
    AlterQuotas,
    AlterReassignments,
    AlterResult,
    CancelReassignments,
    CreatePartitions,
    CreateTopics,
    DeleteTopics,
    PartitionResult,
    QuotaAlterationResult,
    QuotaDescription,
    TopicResult,
    TopicsResult,
)
from reassignd.controller.settings import ControllerSettings
from reassignd.controller.snapshot import ActiveController, ClusterSnapshot
from reassignd.http import build_app
from reassignd.http.auth import Principal

Client = TestClient[web.Request, web.Application]
Request = (
    CreateTopics | DeleteTopics | CreatePartitions | AlterQuotas | AlterReassignments | CancelReassignments
)

ACTIVE = ClusterSnapshot(
    controller_id=9000,
    active=True,
    controller_epoch=3,
    active_controller=ActiveController(9000, "http://127.0.0.1:8080"),
)
SETTINGS = ControllerSettings(zk_connect="127.0.0.1:2181", http_port=0)


def ok_per_topic(names: tuple[str, ...]) -> TopicsResult:
    return TopicsResult(tuple(TopicResult(name) for name in names))


@dataclass
class FakeView:
    """Implements ControllerView. ``topics_result``/``quota_results`` None: NONE for each item."""

    current: ClusterSnapshot = ACTIVE
    topics_result: TopicsResult | None = None
    quota_results: tuple[QuotaAlterationResult, ...] | None = None
    descriptions: tuple[QuotaDescription, ...] = ()
    fail_with: Exception | None = None
    requests: list[Request] = field(default_factory=list)
    described: list[tuple[str | None, str | None]] = field(default_factory=list)
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def snapshot(self) -> ClusterSnapshot:
        return self.current

    def _record(self, request: Request) -> None:
        self.requests.append(request)
        if self.fail_with is not None:
            raise self.fail_with

    async def alter_reassignments(self, request: AlterReassignments) -> AlterResult:
        self._record(request)
        return AlterResult(tuple(PartitionResult(t, p) for (t, p), _ in request.targets))

    async def cancel_reassignments(self, request: CancelReassignments) -> AlterResult:
        self._record(request)
        return AlterResult(())

    async def create_topics(self, request: CreateTopics) -> TopicsResult:
        self._record(request)
        return self.topics_result or ok_per_topic(tuple(t.name for t in request.topics))

    async def delete_topics(self, request: DeleteTopics) -> TopicsResult:
        self._record(request)
        return self.topics_result or ok_per_topic(request.names)

    async def create_partitions(self, request: CreatePartitions) -> TopicsResult:
        self._record(request)
        return self.topics_result or ok_per_topic(tuple(t.name for t in request.topics))

    async def alter_quotas(self, request: AlterQuotas) -> tuple[QuotaAlterationResult, ...]:
        self._record(request)
        if self.quota_results is not None:
            return self.quota_results
        return tuple(QuotaAlterationResult(e.user, e.client_id) for e in request.entries)

    async def describe_quotas(self, user: str | None, client_id: str | None) -> tuple[QuotaDescription, ...]:
        self.described.append((user, client_id))
        if self.fail_with is not None:
            raise self.fail_with
        return self.descriptions

    @property
    def zk_connected(self) -> bool:
        return True

    @property
    def zk_session_id(self) -> int | None:
        return 1

    def queue_size(self) -> int:
        return 0

    def queue_time_percentiles_ms(self) -> Mapping[str, float]:
        return {}

    @property
    def metrics_registry(self) -> CollectorRegistry:
        return self.registry

    @property
    def started_at_s(self) -> float:
        return time.monotonic()


@contextlib.asynccontextmanager
async def serve(view: FakeView, tokens: Mapping[str, Principal] | None = None) -> AsyncIterator[Client]:
    """The real app in front of ``view``, on a real socket; ``tokens`` None: ANONYMOUS admin."""
    async with TestClient(TestServer(build_app(view, SETTINGS, tokens=tokens))) as c:
        yield c


async def call(client: Client, method: str, path: str, status: int, **kwargs: Any) -> Any:
    resp = await client.request(method, path, **kwargs)
    assert resp.status == status, await resp.text()
    assert resp.content_type == "application/json"
    return await resp.json()

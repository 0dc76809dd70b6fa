"""A fake ControllerView for the HTTP tests of topic mutations, quotas and batches: it records every
request that reaches the "controller" and answers with what the test set (or raises).

Batches behave as the real controller's do, over the executor's pure functions (``submit``,
``pause``, ``resume``, ``stop``, ``rollback``): a partition's replicas are the snapshot's, live
brokers the snapshot's brokers, and every change is published in the snapshot's ``batches``.
Nothing ever moves: the test changes moves' states itself (``set_batch``)."""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client import CollectorRegistry

from reassignd.agent_reports.batch_inputs import partition_view
from reassignd.controller.model.admin_requests import DemotionResult, ElectionResult, ElectLeaders
from reassignd.controller.model.requests import (
    AlterPartitionResult,
    AlterQuotas,
    AlterReassignments,
    AlterResult,
    CancelReassignments,
    CreatePartitions,
    CreateTopics,
    DeleteTopics,
    QuotaAlterationResult,
    QuotaDescription,
    TopicOutcome,
    TopicsResult,
)
from reassignd.controller.model.samples import AgentSample, DirMovesSeen
from reassignd.controller.model.snapshot import (
    ActiveControllerAddress,
    BatchAction,
    BatchControlResult,
    ClusterSnapshot,
)
from reassignd.controller.reassignment.validation import validate_target
from reassignd.controller.settings import ControllerSettings
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.errors import NotController, ReassigndError
from reassignd.executor import lifecycle
from reassignd.executor.errors import UnknownBatch
from reassignd.executor.model import Batch, BatchSpec, PartitionSpec
from reassignd.executor.submit import SubmitResult, submit
from reassignd.http.app import build_app
from reassignd.http.auth import Principal
from reassignd.topic_partition import Replicas, TopicPartition
from reassignd.zk.values import ZkAccess

Client = TestClient[web.Request, web.Application]
Request = (
    CreateTopics
    | DeleteTopics
    | CreatePartitions
    | AlterQuotas
    | AlterReassignments
    | CancelReassignments
    | ElectLeaders
)

ACTIVE = ClusterSnapshot(
    controller_id=9000,
    active=True,
    controller_epoch=3,
    active_controller=ActiveControllerAddress(9000, "http://127.0.0.1:8080"),
)
SETTINGS = ControllerSettings(zk_connect="127.0.0.1:2181", http_port=0)


def ok_per_topic(names: tuple[str, ...]) -> TopicsResult:
    return TopicsResult(tuple(TopicOutcome(name) for name in names))


@dataclass
class FakeView:
    """Implements ControllerView. ``topics_result``/``quota_results`` None: NONE for each item."""

    current: ClusterSnapshot = ACTIVE
    topics_result: TopicsResult | None = None
    quota_results: tuple[QuotaAlterationResult, ...] | None = None
    election_results: list[ElectionResult] | None = None  # None: 0 for each partition named
    descriptions: tuple[QuotaDescription, ...] = ()
    fail_with: Exception | None = None
    requests: list[Request] = field(default_factory=list)
    described: list[tuple[str | None, str | None]] = field(default_factory=list)
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)
    submitted: list[BatchSpec] = field(default_factory=list)
    controlled: list[tuple[str, BatchAction]] = field(default_factory=list)
    handed_over: list[bool] = field(default_factory=list)  # each hand_over's ``leaving``
    samples: list[AgentSample] = field(default_factory=list)
    dir_rounds: list[DirMovesSeen] = field(default_factory=list)
    demotions: list[tuple[int, bool]] = field(default_factory=list)  # (broker, promote) per call
    demotion_result: DemotionResult | None = None  # None: nothing to do for the broker
    successor: ActiveControllerAddress | None = None
    now_ms: Callable[[], int] = field(default=lambda: int(time.time() * 1000))

    def snapshot(self) -> ClusterSnapshot:
        return self.current

    # --- batches, as the controller runs them (without the moves) ---------------------------------

    def _replicas(self, tp: TopicPartition) -> Replicas | None:
        view = partition_view(self.current, tp)
        return None if view is None else view.replicas

    def _validate(self, p: PartitionSpec) -> ReassigndError | None:
        view = partition_view(self.current, p.tp)
        current = None if view is None else ReplicaAssignment(view.replicas)
        return validate_target(p.replicas, current, self.current.brokers, topic_deleting=False)

    def set_batch(self, *batches: Batch) -> None:
        """Publish ``batches`` (new ones or new states of known ones) in the snapshot."""
        known = dict(self.current.batches)
        known.update((b.batch_id, b) for b in batches)
        self.current = dataclasses.replace(self.current, batches=known)

    async def submit_batch(
        self, spec: BatchSpec, sizes: Mapping[TopicPartition, int] | None = None
    ) -> SubmitResult:
        self.submitted.append(spec)
        if self.fail_with is not None:
            raise self.fail_with
        if not self.current.active:
            raise NotController()
        result = submit(spec, self.current.batches, self._replicas, self._validate, self.now_ms(), sizes)
        if result.created:
            self.set_batch(result.batch)
        return result

    async def control_batch(self, batch_id: str, action: BatchAction) -> BatchControlResult:
        self.controlled.append((batch_id, action))
        if self.fail_with is not None:
            raise self.fail_with
        if not self.current.active:
            raise NotController()
        batch = self.current.batches.get(batch_id)
        if batch is None:
            raise UnknownBatch(f"no batch {batch_id!r}")
        now = self.now_ms()
        match action:
            case BatchAction.PAUSE:
                self.set_batch(lifecycle.pause(batch, now))
            case BatchAction.RESUME:
                self.set_batch(lifecycle.resume(batch, now))
            case BatchAction.STOP:
                self.set_batch(lifecycle.stop(batch, now)[0])
            case BatchAction.ROLLBACK:
                outcome = lifecycle.rollback(batch, self.current.batches, self._replicas, self._validate, now)
                self.set_batch(outcome.batch, outcome.reverse.batch)
                return BatchControlResult(self.current.batches[batch_id], outcome.reverse.batch.batch_id)
        return BatchControlResult(self.current.batches[batch_id])

    def _record(self, request: Request) -> None:
        self.requests.append(request)
        if self.fail_with is not None:
            raise self.fail_with

    async def alter_reassignments(self, request: AlterReassignments) -> AlterResult:
        self._record(request)
        return AlterResult(tuple(AlterPartitionResult(t, p) for (t, p), _ in request.targets))

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

    async def hand_over(self, leaving: bool) -> ActiveControllerAddress | None:
        if self.fail_with is not None:
            raise self.fail_with
        if not self.current.active:
            raise NotController()
        self.handed_over.append(leaving)
        return self.successor

    async def alter_quotas(self, request: AlterQuotas) -> tuple[QuotaAlterationResult, ...]:
        self._record(request)
        if self.quota_results is not None:
            return self.quota_results
        return tuple(QuotaAlterationResult(e.user, e.client_id) for e in request.entries)

    async def elect_leaders(self, request: ElectLeaders) -> list[ElectionResult]:
        self._record(request)
        if self.election_results is not None:
            return self.election_results
        return [ElectionResult(t, p) for t, p in request.partitions or ()]

    def agents_sampled(self, sample: AgentSample) -> None:
        self.samples.append(sample)

    def dir_moves_seen(self, seen: DirMovesSeen) -> None:
        self.dir_rounds.append(seen)

    async def demote_broker(self, broker_id: int, *, promote: bool = False) -> DemotionResult:
        self.demotions.append((broker_id, promote))
        if self.fail_with is not None:
            raise self.fail_with
        if not self.current.active:
            raise NotController()
        return self.demotion_result or DemotionResult(broker_id, (), 0)

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

    @property
    def zk_access(self) -> ZkAccess:
        return ZkAccess("anonymous", tls=False, set_acl=False)

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

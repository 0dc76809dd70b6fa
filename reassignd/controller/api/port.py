"""The HTTP layer's port: what the HTTP API may ask of a controller instance. The controller owns
it (``ControllerApi`` implements it); ``reassignd.http`` is written against it alone, and tests
stand a fake behind it (``reassignd.testing.fake_view``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from prometheus_client import CollectorRegistry

from reassignd.controller.model.admin_requests import DemotionResult, ElectionResult, ElectLeaders
from reassignd.controller.model.requests import (
    AlterQuotas,
    AlterReassignments,
    AlterResult,
    CancelReassignments,
    CreatePartitions,
    CreateTopics,
    DeleteTopics,
    QuotaAlterationResult,
    QuotaDescription,
    TopicsResult,
)
from reassignd.controller.model.samples import AgentSample, DirMovesSeen
from reassignd.controller.model.snapshot import (
    ActiveControllerAddress,
    BatchAction,
    BatchControlResult,
    ClusterSnapshot,
)
from reassignd.executor.model import BatchSpec
from reassignd.executor.submit import SubmitResult
from reassignd.topic_partition import TopicPartition
from reassignd.zk.values import ZkAccess


class ControllerView(Protocol):
    """What the HTTP layer may ask of a controller instance."""

    def snapshot(self) -> ClusterSnapshot: ...

    async def alter_reassignments(self, request: AlterReassignments) -> AlterResult:
        """Enqueue and await the controller's answer; raises NotController on a standby."""
        ...

    async def cancel_reassignments(self, request: CancelReassignments) -> AlterResult: ...

    async def submit_batch(
        self, spec: BatchSpec, sizes: Mapping[TopicPartition, int] | None = None
    ) -> SubmitResult:
        """POST /v1/batches (defaults already filled in; ``sizes`` the partitions' sizes in bytes as
        their leaders reported them, for the size strategies). Raises NotController on a standby,
        BatchIdInUse (10004, HTTP 409) for a known id with another body, InvalidRequest for a
        spec refused whole."""
        ...

    async def control_batch(self, batch_id: str, action: BatchAction) -> BatchControlResult:
        """pause / resume / stop / rollback. Raises NotController, UnknownBatch (HTTP 404),
        BatchStateError (42: the batch's state does not allow it)."""
        ...

    def agents_sampled(self, sample: AgentSample) -> None:
        """A sample of the agents' reports (``agent_reports.sampler``) for the active controller's
        adaptive concurrency and self-healing; a standby drops it."""
        ...

    def dir_moves_seen(self, seen: DirMovesSeen) -> None:
        """A round of the batches' moves between log dirs (``agent_reports.dir_mover``) for the
        active controller; a standby drops it."""
        ...

    async def create_topics(self, request: CreateTopics) -> TopicsResult:
        """Answers once every new partition has a leader (7 per topic past ``timeout_ms``; the
        creation still completes). NotController on a standby."""
        ...

    async def delete_topics(self, request: DeleteTopics) -> TopicsResult:
        """Answers once the topics' znodes are gone (7 past ``timeout_ms``)."""
        ...

    async def create_partitions(self, request: CreatePartitions) -> TopicsResult: ...

    async def hand_over(self, leaving: bool) -> ActiveControllerAddress | None:
        """Give the active role up (a planned resignation); the instance that won it, if any."""
        ...

    async def alter_quotas(self, request: AlterQuotas) -> tuple[QuotaAlterationResult, ...]:
        """AlterClientQuotas through the controller (entity znode + change notification)."""
        ...

    async def elect_leaders(self, request: ElectLeaders) -> list[ElectionResult]:
        """ElectLeaders: preferred or unclean elections, per-partition results (84, 80, 83, 3 as
        Kafka answers them). NotController on a standby."""
        ...

    async def demote_broker(self, broker_id: int, *, promote: bool = False) -> DemotionResult:
        """Demote a broker out of leadership (its partitions' replica orders with it last, then
        preferred elections), or with ``promote`` restore the orders its demotion recorded.
        Raises NotController on a standby, UnknownBroker (HTTP 404) for a broker nothing knows."""
        ...

    async def describe_quotas(self, user: str | None, client_id: str | None) -> tuple[QuotaDescription, ...]:
        """DescribeClientQuotas: every configured entity matching the filter (reads ZooKeeper;
        works on a standby too)."""
        ...

    @property
    def zk_connected(self) -> bool: ...

    @property
    def zk_session_id(self) -> int | None: ...

    @property
    def zk_access(self) -> ZkAccess:
        """How the controller is connected to ZooKeeper (principal, TLS, ACL mode)."""
        ...

    def queue_size(self) -> int: ...

    def queue_time_percentiles_ms(self) -> Mapping[str, float]:
        """``{"p50": ..., "p99": ...}`` over recent events."""
        ...

    @property
    def metrics_registry(self) -> CollectorRegistry:
        """The instance's Prometheus registry, served at ``/metrics``."""
        ...

    @property
    def started_at_s(self) -> float:
        """``time.monotonic()`` at process start, for ``uptime_s``."""
        ...

"""What the HTTP layer may ask of one controller instance: the implementation of its port
(``port.ControllerView``).

Reads answer from the published snapshot; requests become events with a reply future, handled
by the event loop like any other event (a standby refuses them at once with NotController).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from prometheus_client import CollectorRegistry

from reassignd.controller.instance.changes import Changes
from reassignd.controller.instance.events import (
    AgentsSampled,
    AlterConfigsRequested,
    AlterQuotasRequested,
    ApiPartitionReassignment,
    BatchControlRequested,
    BatchSubmitRequested,
    CancelReassignmentsRequested,
    CreatePartitionsRequested,
    CreateTopicsRequested,
    DeleteTopicsRequested,
    DemotionRequested,
    DirMovesObserved,
    ElectLeadersRequested,
    HandOverRequested,
    RequestEvent,
)
from reassignd.controller.instance.shared import Shared
from reassignd.controller.model import admission
from reassignd.controller.model.admin_requests import (
    AlterConfigs,
    ConfigResource,
    ConfigResult,
    DemotionResult,
    ElectionResult,
    ElectLeaders,
)
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
from reassignd.controller.quotas.entity_configs import read_configs
from reassignd.errors import NotController, ReassigndError, RequestTimedOut
from reassignd.executor.model import BatchSpec
from reassignd.executor.submit import SubmitResult
from reassignd.quotas.config_store import describe_quotas
from reassignd.topic_partition import TopicPartition
from reassignd.zk import codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.values import ZkAccess

R = TypeVar("R")
T = TypeVar("T")


def _merged(
    errors: Sequence[ReassigndError | None],
    answered: Sequence[R],
    refused: Callable[[int, ReassigndError], R],
) -> list[R]:
    """The answers in request order: the event's for the admitted items (``errors[i]`` None), the
    door's refusal for the others."""
    it = iter(answered)
    return [next(it) if e is None else refused(i, e) for i, e in enumerate(errors)]


def _admitted(items: Sequence[T], errors: Sequence[ReassigndError | None]) -> tuple[T, ...]:
    return tuple(item for item, e in zip(items, errors, strict=True) if e is None)


class ControllerApi:
    def __init__(
        self,
        shared: Shared,
        session: ZkClient,
        snapshot: Callable[[], ClusterSnapshot],
        is_active: Callable[[], bool],
        started_at_s: float,
        published: Changes,
    ) -> None:
        self._shared = shared
        self._session = session  # its state only: every read goes through shared.reads
        self._snapshot = snapshot
        self._published = published  # notified at each snapshot published
        self._is_active = is_active
        self._started_at = started_at_s
        self._cluster_id: str | None = None

    # reads

    def snapshot(self) -> ClusterSnapshot:
        return self._snapshot()

    @property
    def zk_connected(self) -> bool:
        return self._session.connected

    @property
    def zk_session_id(self) -> int | None:
        return self._session.session_id

    @property
    def zk_access(self) -> ZkAccess:
        return self._session.settings.access

    def queue_size(self) -> int:
        return len(self._shared.queue)

    def queue_time_percentiles_ms(self) -> Mapping[str, float]:
        return self._shared.queue.queue_time_percentiles_ms()

    @property
    def metrics_registry(self) -> CollectorRegistry:
        return self._shared.metrics.registry

    @property
    def started_at_s(self) -> float:
        return self._started_at

    async def describe_quotas(self, user: str | None, client_id: str | None) -> tuple[QuotaDescription, ...]:
        entries = await describe_quotas(self._shared.reads, user, client_id, self._shared.report)
        return tuple(QuotaDescription(e.user, e.client_id, tuple(sorted(e.values.items()))) for e in entries)

    async def cluster_id(self) -> str | None:
        """``/cluster/id`` (read once, then kept: it never changes); None until it exists."""
        if self._cluster_id is None:
            znode = await self._shared.reads.get_or_none(paths.CLUSTER_ID)
            if znode is not None:
                try:
                    self._cluster_id = codec.decode_cluster_id(znode.data)
                except codec.CodecError:
                    return None
        return self._cluster_id

    async def registered_brokers(self) -> list[int]:
        """The broker ids registered in ``/brokers/ids``, read from ZooKeeper (a standby has no
        cluster view; the Kafka listener lists them pointing at the active instance)."""
        names = await self._shared.reads.children(paths.BROKER_IDS)
        return sorted(int(n) for n in names if n.isascii() and n.isdigit())

    async def describe_configs(self, resources: tuple[ConfigResource, ...]) -> list[dict[str, str] | None]:
        """DescribeConfigs: each resource's stored config, read from ZooKeeper (any instance);
        None for a znode that cannot be decoded."""
        return await read_configs(self._shared.reads, resources, self._shared.report)

    # requests

    async def _request(self, make: Callable[[asyncio.Future[R]], RequestEvent]) -> R:
        if not self._is_active():
            raise NotController()
        reply: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._shared.queue.put(make(reply))
        return await reply

    async def hand_over(self, leaving: bool) -> ActiveControllerAddress | None:
        """Give the active role up (after the event in hand, before any queued one) and return the
        instance that won it, if any (``leaving``: this process stops; it never runs again)."""
        reply: asyncio.Future[ActiveControllerAddress | None] = asyncio.get_running_loop().create_future()
        self._shared.queue.put_first(HandOverRequested(leaving, reply))
        return await reply

    def agents_sampled(self, sample: AgentSample) -> None:
        """A sample of the agents' reports for the active controller (dropped on a standby, and by
        the controller if its epoch moved on since)."""
        if self._is_active():
            self._shared.queue.put(AgentsSampled(sample))

    def dir_moves_seen(self, seen: DirMovesSeen) -> None:
        """A round of the batches' moves between log dirs for the active controller (dropped on
        a standby, and by the controller if its epoch moved on since)."""
        if self._is_active():
            self._shared.queue.put(DirMovesObserved(seen))

    # --- admission at the door (model/admission.py): every request is checked before it is queued;
    # a refused item is answered here and never reaches the event

    def _admit(self) -> None:
        """A standby refuses every request first (41), as the event would."""
        if not self._is_active():
            raise NotController()

    @property
    def _max_partitions(self) -> int:
        return self._shared.settings.max_partitions_per_request

    async def alter_reassignments(self, request: AlterReassignments) -> AlterResult:
        self._admit()
        named = dict.fromkeys(tp for tp, _ in request.targets)
        refused = admission.too_many_partitions(len(named), self._max_partitions, "The reassignment")
        if refused is not None:
            return AlterResult(
                tuple(AlterPartitionResult(t, p, refused.error_code, refused.message) for t, p in named)
            )
        return await self._request(lambda reply: ApiPartitionReassignment(request, reply))

    async def cancel_reassignments(self, request: CancelReassignments) -> AlterResult:
        return await self._request(lambda reply: CancelReassignmentsRequested(request, reply))

    async def submit_batch(
        self, spec: BatchSpec, sizes: Mapping[TopicPartition, int] | None = None
    ) -> SubmitResult:
        self._admit()
        count = admission.distinct_partitions((p.topic, p.partition) for p in spec.partitions)
        refused = admission.too_many_partitions(count, self._max_partitions, f"Batch {spec.batch_id}")
        if refused is not None:
            raise refused
        return await self._request(lambda reply: BatchSubmitRequested(spec, reply, dict(sizes or {})))

    async def control_batch(self, batch_id: str, action: BatchAction) -> BatchControlResult:
        return await self._request(lambda reply: BatchControlRequested(batch_id, action, reply))

    async def alter_quotas(self, request: AlterQuotas) -> tuple[QuotaAlterationResult, ...]:
        self._admit()
        errors = [admission.quota_entry_error(e) for e in request.entries]
        admitted = _admitted(request.entries, errors)
        answered: tuple[QuotaAlterationResult, ...] = ()
        if admitted:
            sent = AlterQuotas(admitted)
            answered = await self._request(lambda reply: AlterQuotasRequested(sent, reply))
        entries = request.entries
        return tuple(
            _merged(
                errors,
                answered,
                lambda i, e: QuotaAlterationResult(
                    entries[i].user, entries[i].client_id, e.error_code, e.message
                ),
            )
        )

    async def alter_configs(self, request: AlterConfigs) -> tuple[ConfigResult, ...]:
        """AlterConfigs and IncrementalAlterConfigs through the controller (config znode + change
        notification), each resource checked at the door first."""
        self._admit()
        problems = admission.alterations_problems(request.resources)
        errors = [None if p is None else ReassigndError(p[1], error_code=p[0]) for p in problems]
        admitted = _admitted(request.resources, errors)
        answered: tuple[ConfigResult, ...] = ()
        if admitted:
            sent = dataclasses.replace(request, resources=admitted)
            answered = await self._request(lambda reply: AlterConfigsRequested(sent, reply))
        resources = request.resources
        return tuple(
            _merged(
                errors, answered, lambda i, e: ConfigResult(resources[i].resource, e.error_code, e.message)
            )
        )

    async def elect_leaders(self, request: ElectLeaders) -> list[ElectionResult]:
        self._admit()
        if request.partitions is not None:
            named = dict.fromkeys(request.partitions)
            refused = admission.too_many_partitions(len(named), self._max_partitions, "The election")
            if refused is not None:
                return [ElectionResult(t, p, refused.error_code, refused.message) for t, p in named]
        return await self._request(lambda reply: ElectLeadersRequested(request, reply))

    async def demote_broker(self, broker_id: int, *, promote: bool = False) -> DemotionResult:
        return await self._request(lambda reply: DemotionRequested(broker_id, promote, reply))

    async def create_topics(self, request: CreateTopics) -> TopicsResult:
        self._admit()
        errors: list[ReassigndError | None] = list(admission.new_topics_errors(request.topics))
        admitted = _admitted(request.topics, errors)
        result = TopicsResult(())
        if admitted:
            sent = dataclasses.replace(request, topics=admitted)
            result = await self._request(lambda reply: CreateTopicsRequested(sent, reply))
        topics = request.topics
        result = dataclasses.replace(
            result,
            results=tuple(
                _merged(
                    errors, result.results, lambda i, e: TopicOutcome(topics[i].name, e.error_code, e.message)
                )
            ),
        )
        if request.validate_only:
            return result.answered_at(self._shared.clock())
        return await self._await_done(result, request.timeout_ms, self._topic_online)

    async def create_partitions(self, request: CreatePartitions) -> TopicsResult:
        self._admit()
        topics = self.snapshot().topics
        new = 0
        for t in request.topics:
            view = topics.get(t.name)
            new += max(0, t.count - (len(view.partitions) if view is not None else 0))
        refused = admission.too_many_partitions(new, self._max_partitions, "The CreatePartitions request")
        if refused is not None:
            return TopicsResult(
                tuple(TopicOutcome(t.name, refused.error_code, refused.message) for t in request.topics)
            )
        result: TopicsResult = await self._request(lambda reply: CreatePartitionsRequested(request, reply))
        if request.validate_only:
            return result.answered_at(self._shared.clock())
        return await self._await_done(result, request.timeout_ms, self._topic_online)

    async def delete_topics(self, request: DeleteTopics) -> TopicsResult:
        result: TopicsResult = await self._request(lambda reply: DeleteTopicsRequested(request, reply))
        return await self._await_done(result, request.timeout_ms, lambda t: t not in self.snapshot().topics)

    def _topic_online(self, topic: str) -> bool:
        view = self.snapshot().topics.get(topic)
        return view is not None and all(p.leader >= 0 for p in view.partitions)

    async def _await_done(
        self, result: TopicsResult, timeout_ms: int, done: Callable[[str], bool]
    ) -> TopicsResult:
        """Wait (outside the event loop's consumer) until each accepted topic is done; the ones
        that are not by ``timeout_ms`` answer 7 REQUEST_TIMED_OUT (the operation continues)."""
        clock = self._shared.clock
        deadline = clock() + timeout_ms / 1000
        waiting = {r.name for r in result.results if r.error_code == 0}

        def all_done() -> bool:  # checked at each snapshot published
            nonlocal waiting
            waiting = {t for t in waiting if not done(t)}
            return not waiting

        await self._published.until(all_done, deadline, clock)
        result = result.answered_at(clock())  # throttle_time_ms: what is left to wait now
        if not waiting:
            return result
        timed_out = RequestTimedOut()
        return TopicsResult(
            tuple(
                TopicOutcome(r.name, timed_out.error_code, timed_out.message) if r.name in waiting else r
                for r in result.results
            ),
            result.throttle_time_ms,
            result.decided_at_s,
        )

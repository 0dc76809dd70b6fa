"""What HTTP handlers ask of the controller (the ControllerView request methods) and the quota
configuration they and ZooKeeper change. Requests become events with a reply future.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping

from reassignd.controller.broker_events import BrokerEvents
from reassignd.controller.events import (
    AlterQuotasRequested,
    ApiPartitionReassignment,
    BatchControlRequested,
    BatchSubmitRequested,
    CancelReassignmentsRequested,
    CreatePartitionsRequested,
    CreateTopicsRequested,
    DeleteTopicsRequested,
    QuotaConfigChanged,
    RequestEvent,
)
from reassignd.controller.requests import (
    AlterQuotas,
    AlterReassignments,
    AlterResult,
    CancelReassignments,
    CreatePartitions,
    CreateTopics,
    DeleteTopics,
    QuotaAlterationResult,
    QuotaDescription,
    TopicResult,
    TopicsResult,
)
from reassignd.controller.snapshot import BatchAction, BatchControlResult
from reassignd.errors import NotController, ReassigndError, RequestTimedOut
from reassignd.executor.model import BatchSpec
from reassignd.executor.submit import SubmitResult
from reassignd.quotas.config_changes import reread_quota_entities
from reassignd.quotas.config_store import alter_quota, describe_quotas, load_quota_configs
from reassignd.topic_partition import TopicPartition
from reassignd.zk import paths
from reassignd.zk.client import (
    NotControllerError,
)

log = logging.getLogger(__name__)


class ClientRequests(BrokerEvents):
    """What HTTP handlers ask of the controller (the ControllerView request methods) and the quota"""

    async def _request(self, make: Callable[[asyncio.Future[AlterResult]], RequestEvent]) -> AlterResult:
        if not self.active:
            raise NotController()
        reply: asyncio.Future[AlterResult] = asyncio.get_running_loop().create_future()
        self.queue.put(make(reply))
        return await reply

    async def alter_reassignments(self, request: AlterReassignments) -> AlterResult:
        return await self._request(lambda reply: ApiPartitionReassignment(request, reply))

    async def cancel_reassignments(self, request: CancelReassignments) -> AlterResult:
        return await self._request(lambda reply: CancelReassignmentsRequested(request, reply))

    async def submit_batch(
        self, spec: BatchSpec, sizes: Mapping[TopicPartition, int] | None = None
    ) -> SubmitResult:
        if not self.active:
            raise NotController()
        reply: asyncio.Future[SubmitResult] = asyncio.get_running_loop().create_future()
        self.queue.put(BatchSubmitRequested(spec, reply, dict(sizes or {})))
        return await reply

    async def control_batch(self, batch_id: str, action: BatchAction) -> BatchControlResult:
        if not self.active:
            raise NotController()
        reply: asyncio.Future[BatchControlResult] = asyncio.get_running_loop().create_future()
        self.queue.put(BatchControlRequested(batch_id, action, reply))
        return await reply

    async def _topics_request(
        self, make: Callable[[asyncio.Future[TopicsResult]], RequestEvent]
    ) -> TopicsResult:
        if not self.active:
            raise NotController()
        reply: asyncio.Future[TopicsResult] = asyncio.get_running_loop().create_future()
        self.queue.put(make(reply))
        return await reply

    async def create_topics(self, request: CreateTopics) -> TopicsResult:
        result = await self._topics_request(lambda reply: CreateTopicsRequested(request, reply))
        if request.validate_only:
            return result
        return await self._await_done(result, request.timeout_ms, self._topic_online)

    async def create_partitions(self, request: CreatePartitions) -> TopicsResult:
        result = await self._topics_request(lambda reply: CreatePartitionsRequested(request, reply))
        if request.validate_only:
            return result
        return await self._await_done(result, request.timeout_ms, self._topic_online)

    async def delete_topics(self, request: DeleteTopics) -> TopicsResult:
        result = await self._topics_request(lambda reply: DeleteTopicsRequested(request, reply))
        return await self._await_done(result, request.timeout_ms, lambda t: t not in self._snapshot.topics)

    def _topic_online(self, topic: str) -> bool:
        view = self._snapshot.topics.get(topic)
        return view is not None and all(p.leader >= 0 for p in view.partitions)

    async def _await_done(
        self, result: TopicsResult, timeout_ms: int, done: Callable[[str], bool]
    ) -> TopicsResult:
        """Wait (outside the event loop's consumer) until each accepted topic is done; the ones
        that are not by ``timeout_ms`` answer 7 REQUEST_TIMED_OUT (the operation continues)."""
        deadline = self._clock() + timeout_ms / 1000
        waiting = {r.name for r in result.results if r.error_code == 0}
        while waiting and self._clock() < deadline:
            waiting = {t for t in waiting if not done(t)}
            if waiting:
                await asyncio.sleep(0.02)
        waiting = {t for t in waiting if not done(t)}
        if not waiting:
            return result
        timed_out = RequestTimedOut()
        return TopicsResult(
            tuple(
                TopicResult(r.name, timed_out.error_code, timed_out.message) if r.name in waiting else r
                for r in result.results
            ),
            result.throttle_time_ms,
        )

    async def alter_quotas(self, request: AlterQuotas) -> tuple[QuotaAlterationResult, ...]:
        if not self.active:
            raise NotController()
        reply: asyncio.Future[tuple[QuotaAlterationResult, ...]] = asyncio.get_running_loop().create_future()
        self.queue.put(AlterQuotasRequested(request, reply))
        return await reply

    async def describe_quotas(self, user: str | None, client_id: str | None) -> tuple[QuotaDescription, ...]:
        entries = await describe_quotas(self.zk, user, client_id, self._report)
        return tuple(QuotaDescription(e.user, e.client_id, tuple(sorted(e.values.items()))) for e in entries)

    async def _load_quotas(self) -> None:
        reader = self._config_changes
        assert reader is not None and self.quotas is not None
        await reader.skip_existing(
            self.zk, time.time(), self._watch(paths.CONFIG_CHANGES, QuotaConfigChanged())
        )
        self._quota_configs = await load_quota_configs(self.zk, self._report)
        self.quotas.set_quotas(self._quota_configs)
        self._update_quota_metrics()

    async def _on_quota_config_changed(self) -> None:
        reader = self._config_changes
        assert reader is not None and self.quotas is not None
        changes = await reader.read(
            self.zk, time.time(), self._watch(paths.CONFIG_CHANGES, QuotaConfigChanged())
        )
        if changes.quota_entities:
            self._quota_configs = await reread_quota_entities(
                self.zk, changes, self._quota_configs, self._report
            )
            self.quotas.set_quotas(self._quota_configs)
            log.info("quota configs changed: %s", list(changes.quota_entities))
        self._update_quota_metrics()
        await self._on_configs_changed(changes.entity_paths)  # topic configs: unclean elections

    async def _alter_quotas(self, request: AlterQuotas) -> tuple[QuotaAlterationResult, ...]:
        """AlterClientQuotas: each entity's znode and a change notification (fenced); the
        change applies through the notification, as for any Kafka-compatible tool."""
        writer = self._writer()
        results = []
        for entry in request.entries:
            try:
                await alter_quota(
                    self.zk, entry.user, entry.client_id, entry.controller_mutation_rate, fence=writer.fence
                )
                results.append(QuotaAlterationResult(entry.user, entry.client_id))
            except NotControllerError:
                raise
            except ReassigndError as e:
                results.append(QuotaAlterationResult(entry.user, entry.client_id, e.error_code, e.message))
        await self._on_quota_config_changed()
        return tuple(results)

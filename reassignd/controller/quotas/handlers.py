"""Client quotas (KIP-599's controller mutation rate) on the active controller: loaded at failover,
re-read from the config change notifications, altered through AlterClientQuotas. Topic config
changes in the same notifications trigger the elections they may now allow.
"""

from __future__ import annotations

import logging

from reassignd.controller.instance.events import QuotaConfigChanged
from reassignd.controller.instance.shared import Shared
from reassignd.controller.model.requests import AlterQuotas, QuotaAlterationResult
from reassignd.controller.replication.event_outputs import EventOutputs
from reassignd.controller.replication.partition_state_machine import PartitionStateMachine
from reassignd.controller.replication.writer import ZkWriter
from reassignd.errors import NotController, ReassigndError
from reassignd.quotas.config_changes import ConfigChangeReader, reread_quota_entities
from reassignd.quotas.config_store import alter_quota, load_quota_configs
from reassignd.quotas.entities import ConfigKey
from reassignd.quotas.manager import QuotaManager
from reassignd.quotas.metrics import QuotaMetrics
from reassignd.zk import paths
from reassignd.zk.values import WatchCallback

log = logging.getLogger(__name__)


class QuotaEvents:
    def __init__(
        self,
        shared: Shared,
        writer: ZkWriter,
        elections: PartitionStateMachine,
        quotas: QuotaManager,
        quota_metrics: QuotaMetrics,
    ) -> None:
        self.shared = shared
        self.writer = writer
        self.elections = elections
        self.quotas = quotas
        self.quota_metrics = quota_metrics
        self._changes = ConfigChangeReader(shared.report, fence=writer.fence, children=writer.children)
        self._configs: dict[ConfigKey, float] = {}

    def _watch(self) -> WatchCallback | None:
        return self.shared.watch(paths.CONFIG_CHANGES, QuotaConfigChanged())

    def update_metrics(self) -> None:
        self.quota_metrics.update(self.quotas.snapshot(self.shared.clock()))

    async def load(self) -> None:
        zk = self.shared.zk
        await self._changes.skip_existing(zk, self.shared.wall_clock(), self._watch())
        self._configs = await load_quota_configs(zk, self.shared.report)
        self.quotas.set_quotas(self._configs)
        self.update_metrics()

    async def on_config_changed(self, out: EventOutputs) -> None:
        zk = self.shared.zk
        changes = await self._changes.read(zk, self.shared.wall_clock(), self._watch())
        if changes.quota_entities:
            self._configs = await reread_quota_entities(zk, changes, self._configs, self.shared.report)
            self.quotas.set_quotas(self._configs)
            log.info("quota configs changed: %s", list(changes.quota_entities))
        self.update_metrics()
        # topic configs: unclean elections
        await self.elections.on_configs_changed(changes.entity_paths, out)

    async def alter(self, request: AlterQuotas, out: EventOutputs) -> tuple[QuotaAlterationResult, ...]:
        """AlterClientQuotas: each entity's znode and a change notification (fenced); the
        change applies through the notification, as for any Kafka-compatible tool."""
        results = []
        for entry in request.entries:
            try:
                await alter_quota(
                    self.shared.zk,
                    entry.user,
                    entry.client_id,
                    entry.controller_mutation_rate,
                    fence=self.writer.fence,
                )
                results.append(QuotaAlterationResult(entry.user, entry.client_id))
            except NotController:
                raise
            except ReassigndError as e:
                results.append(QuotaAlterationResult(entry.user, entry.client_id, e.error_code, e.message))
        await self.on_config_changed(out)
        return tuple(results)

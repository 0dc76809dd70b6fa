"""Client quotas (KIP-599's controller mutation rate) on the active controller: loaded at failover,
re-read from the config change notifications, altered through AlterClientQuotas. Topic config
changes in the same notifications trigger the elections they may now allow.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.effects.fenced_writes import Refused
from reassignd.controller.instance.events import QuotaConfigChanged
from reassignd.controller.instance.shared import Shared
from reassignd.controller.model.requests import AlterQuotas, QuotaAlterationResult
from reassignd.controller.partitions.partition_state_machine import PartitionStateMachine
from reassignd.errors import NotController, ReassigndError
from reassignd.quotas.config_changes import ConfigChangeReader, reread_quota_entities
from reassignd.quotas.config_store import (
    ALTER_ATTEMPTS,
    QUOTA_KEY,
    kept_changing,
    load_quota_configs,
    quota_ops,
    quota_path,
)
from reassignd.quotas.entities import ConfigKey
from reassignd.quotas.manager import QuotaManager
from reassignd.quotas.metrics import QuotaMetrics
from reassignd.zk import paths
from reassignd.zk.errors import BadVersionError, NodeExistsError, NoNodeError
from reassignd.zk.reads import ZkReads
from reassignd.zk.values import Create, Delete, WatchCallback

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _EventChangeWrites:
    """The config change reader's writes in one event, through its fenced write gateway."""

    out: EventOutputs

    async def children(self, path: str, watch: WatchCallback | None) -> list[str]:
        return await self.out.writes.children(path, watch)

    async def delete(self, path: str) -> None:
        await self.out.writes.write([Delete(path)], expect=(NoNodeError,))  # gone already: fine


async def _alter_quota(
    reads: ZkReads, out: EventOutputs, user: str | None, client_id: str | None, value: float | None
) -> str:
    """``config_store.alter_quota`` through the event's fenced writes: the entity's config map and its
    change notification in one multi; read again when it changed meanwhile, its missing parents
    created first. Returns the notification's path."""
    path = quota_path(user, client_id, value, QUOTA_KEY)
    for _ in range(ALTER_ATTEMPTS):
        znode = await reads.get_or_none(path)
        ops = quota_ops(path, znode, value, QUOTA_KEY)
        written = await out.writes.write(ops, expect=(BadVersionError, NodeExistsError, NoNodeError))
        match written:
            case Refused(index=index, error=NoNodeError()) if index == 1 or isinstance(ops[0], Create):
                await _ensure_parents(reads, out, paths.parent(ops[index].path))  # a missing parent
                continue
            case Refused():
                continue  # written or deleted meanwhile: read again
        created = written.results[1]
        assert isinstance(created, str)
        return created
    raise kept_changing(path)


async def _ensure_parents(reads: ZkReads, out: EventOutputs, path: str) -> None:
    """``path`` and every missing znode above it (null data), one fenced write each."""
    parts = path.strip("/").split("/")
    for depth in range(1, len(parts) + 1):
        prefix = "/" + "/".join(parts[:depth])
        if await reads.exists(prefix) is None:
            await out.writes.write([Create(prefix)], expect=(NodeExistsError,))  # created meanwhile: fine


class QuotaEvents:
    def __init__(
        self,
        shared: Shared,
        elections: PartitionStateMachine,
        quotas: QuotaManager,
        quota_metrics: QuotaMetrics,
    ) -> None:
        self.shared = shared
        self.elections = elections
        self.quotas = quotas
        self.quota_metrics = quota_metrics
        self._changes = ConfigChangeReader(shared.report)
        self._configs: dict[ConfigKey, float] = {}

    def _watch(self) -> WatchCallback | None:
        return self.shared.watch(paths.CONFIG_CHANGES, QuotaConfigChanged())

    def update_metrics(self) -> None:
        self.quota_metrics.update(self.quotas.snapshot(self.shared.clock()))

    def _writes(self, out: EventOutputs) -> _EventChangeWrites:
        return _EventChangeWrites(out)

    async def load(self, out: EventOutputs) -> None:
        reads = self.shared.reads
        await self._changes.skip_existing(reads, self.shared.wall_clock(), self._watch(), self._writes(out))
        self._configs = await load_quota_configs(reads, self.shared.report)
        self.quotas.set_quotas(self._configs)
        self.update_metrics()

    async def on_config_changed(self, out: EventOutputs) -> None:
        reads = self.shared.reads
        changes = await self._changes.read(reads, self.shared.wall_clock(), self._watch(), self._writes(out))
        if changes.quota_entities:
            self._configs = await reread_quota_entities(reads, changes, self._configs, self.shared.report)
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
                await _alter_quota(
                    self.shared.reads, out, entry.user, entry.client_id, entry.controller_mutation_rate
                )
                results.append(QuotaAlterationResult(entry.user, entry.client_id))
            except NotController:
                raise
            except ReassigndError as e:
                results.append(QuotaAlterationResult(entry.user, entry.client_id, e.error_code, e.message))
        await self.on_config_changed(out)
        return tuple(results)

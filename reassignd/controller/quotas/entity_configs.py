"""Topic and broker configs (``/config/topics/<t>``, ``/config/brokers/<id>|<default>``) as
DescribeConfigs reads them and IncrementalAlterConfigs and AlterConfigs write them, Kafka's way:
merge into (or, for AlterConfigs, replace) the entity's config map and create a
``/config/changes`` notification in the same fenced multi, so Kafka's tools, the agents and this
controller (unclean elections) follow the change.

The requests and results are pure values; ``model/config_rules.py`` is the pure validation; the
writes happen inside the controller's event loop (``ConfigWrites``, an ``AlterConfigsRequested``
event), never from a listener.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.effects.fenced_writes import Refused
from reassignd.controller.model.admin_requests import (
    AlterConfigs,
    ConfigResource,
    ConfigResult,
    ResourceAlteration,
    ResourceType,
)
from reassignd.controller.model.config_rules import (
    DUPLICATE_RESOURCE,
    INVALID_REQUEST,
    duplicated_resources,
    plan_alteration,
    resource_key,
    resource_problem,
)
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.errors import BadVersionError, NodeExistsError
from reassignd.zk.reads import ZkReads
from reassignd.zk.values import Create, Op, SetData

log = logging.getLogger(__name__)

Report = Callable[[str, str, str], None]

UNKNOWN_TOPIC_OR_PARTITION = 3

# --- the shell: reads (any instance) and writes (the event loop) -------------------------------


async def read_configs(
    reads: ZkReads, resources: Sequence[ConfigResource], report: Report
) -> list[dict[str, str] | None]:
    """Each resource's stored config (empty when absent); None when it cannot be decoded."""
    znodes = await reads.get_many([r.path for r in resources])
    out: list[dict[str, str] | None] = []
    for resource, znode in zip(resources, znodes, strict=True):
        if znode is None or not znode.data:
            out.append({})
            continue
        try:
            out.append(dict(admin_codec.decode_entity_config(znode.data)))
        except codec.CodecError as e:
            report(resource.path, e.reason, "entity_config")
            out.append(None)
    return out


class ConfigWrites:
    """IncrementalAlterConfigs and AlterConfigs on the active controller: one fenced multi per resource (config
    znode and change notification), re-read and merged again when it changed meanwhile."""

    def __init__(self, reads: ZkReads, topic_exists: Callable[[str], bool]) -> None:
        self.reads = reads
        self.topic_exists = topic_exists

    async def alter(self, request: AlterConfigs, out: EventOutputs) -> tuple[ConfigResult, ...]:
        keys = [resource_key(a.resource.type, a.resource.name) for a in request.resources]
        duplicated = duplicated_resources(keys)  # refused at the door already: the safety net
        results = []
        for key, alteration in zip(keys, request.resources, strict=True):
            if key in duplicated:
                results.append(ConfigResult(alteration.resource, INVALID_REQUEST, DUPLICATE_RESOURCE))
                continue
            results.append(await self._alter_one(alteration, request.validate_only, out))
        return tuple(results)

    async def _alter_one(
        self, alteration: ResourceAlteration, validate_only: bool, out: EventOutputs
    ) -> ConfigResult:
        resource = alteration.resource
        problem = resource_problem(resource)  # refused at the door already; its path needs it
        if problem is not None:
            return ConfigResult(resource, problem[0], problem[1])
        if resource.type is ResourceType.TOPIC and not self.topic_exists(resource.name):
            return ConfigResult(
                resource, UNKNOWN_TOPIC_OR_PARTITION, f"Topic {resource.name} does not exist."
            )
        path = resource.path
        notification = admin_codec.encode_config_change(paths.entity_path(path))
        for _ in range(5):
            znode = await self.reads.get_or_none(path)
            config: dict[str, str] = {}
            if znode is not None and znode.data:
                try:
                    config = dict(admin_codec.decode_entity_config(znode.data))
                except codec.CodecError as e:
                    return ConfigResult(resource, -1, f"{path}: cannot decode the stored config ({e.reason})")
            planned = plan_alteration(alteration, config)
            if isinstance(planned, tuple):
                return ConfigResult(resource, planned[0], planned[1])
            if validate_only or planned == config:
                return ConfigResult(resource)
            data = admin_codec.encode_entity_config(planned)
            write: Op = Create(path, data) if znode is None else SetData(path, data, znode.stat.version)
            written = await out.writes.write(
                [write, Create(paths.CONFIG_CHANGE_PREFIX, notification, sequential=True)],
                expect=(BadVersionError, NodeExistsError),
            )
            if isinstance(written, Refused):
                continue  # changed (or created) meanwhile: read again
            log.info(
                "configs of %s %s: %s",
                paths.entity_path(path),
                "replaced" if alteration.replace else "changed",
                sorted(c.name for c in alteration.changes),
            )
            return ConfigResult(resource)
        return ConfigResult(resource, -1, f"{path} kept changing while being altered; try again")

"""Topic and broker configs (``/config/topics/<t>``, ``/config/brokers/<id>|<default>``) as
DescribeConfigs reads them and IncrementalAlterConfigs writes them, Kafka's way: merge into the
entity's config map and create a ``/config/changes`` notification in the same fenced multi, so
Kafka's tools, the agents and this controller (unclean elections) follow the change.

The requests and results are pure values; :func:`plan_alteration` is the pure validation; the
writes happen inside the controller's event loop (``ConfigWrites``, an ``AlterConfigsRequested``
event), never from a listener.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

from reassignd.controller.admin_requests import (
    AlterConfigs,
    ConfigOp,
    ConfigResource,
    ConfigResult,
    ResourceAlteration,
    ResourceType,
)
from reassignd.controller.topic_configs import parse_bool, parse_positive_int
from reassignd.controller.writer import ZkWriter
from reassignd.topic_partition import topic_name_problem
from reassignd.zk import codec, paths
from reassignd.zk.client import (
    BadVersionError,
    Create,
    MultiFailedError,
    NodeExistsError,
    Op,
    SetData,
    ZkClient,
)

log = logging.getLogger(__name__)

Report = Callable[[str, str, str], None]

INVALID_CONFIG = 40
INVALID_REQUEST = 42
UNKNOWN_TOPIC_OR_PARTITION = 3
SIM_PREFIX = "reassignd.sim."

# Kafka's topic-level configs (LogConfig, 3.x), the names kafka-configs accepts for a topic
TOPIC_CONFIG_NAMES = frozenset(
    {
        "cleanup.policy",
        "compression.type",
        "delete.retention.ms",
        "file.delete.delay.ms",
        "flush.messages",
        "flush.ms",
        "follower.replication.throttled.replicas",
        "index.interval.bytes",
        "leader.replication.throttled.replicas",
        "local.retention.bytes",
        "local.retention.ms",
        "max.compaction.lag.ms",
        "max.message.bytes",
        "message.downconversion.enable",
        "message.format.version",
        "message.timestamp.after.max.ms",
        "message.timestamp.before.max.ms",
        "message.timestamp.difference.max.ms",
        "message.timestamp.type",
        "min.cleanable.dirty.ratio",
        "min.compaction.lag.ms",
        "min.insync.replicas",
        "preallocate",
        "remote.storage.enable",
        "retention.bytes",
        "retention.ms",
        "segment.bytes",
        "segment.index.bytes",
        "segment.jitter.ms",
        "segment.ms",
        "unclean.leader.election.enable",
    }
)
# the dynamic broker configs reassignd and its agents act on (KIP-73 throttles, elections)
BROKER_CONFIG_NAMES = frozenset(
    {
        "leader.replication.throttled.rate",
        "follower.replication.throttled.rate",
        "replica.alter.log.dirs.io.max.bytes.per.second",
        "unclean.leader.election.enable",
        "min.insync.replicas",
    }
)
_LONGS = frozenset(
    {
        "leader.replication.throttled.rate",
        "follower.replication.throttled.rate",
        "replica.alter.log.dirs.io.max.bytes.per.second",
    }
)
_REPLICA_LISTS = frozenset(
    {"leader.replication.throttled.replicas", "follower.replication.throttled.replicas"}
)


# --- validation and the merge (pure) ------------------------------------------------------------


def resource_problem(resource: ConfigResource) -> tuple[int, str] | None:
    if resource.type is ResourceType.TOPIC:
        problem = topic_name_problem(resource.name)
        return None if problem is None else (INVALID_REQUEST, problem)
    if resource.name and (not resource.name.isascii() or not resource.name.isdigit()):
        return (INVALID_REQUEST, f"Broker id must be an integer, got {resource.name!r}")
    return None


def known_name(resource_type: ResourceType, name: str) -> bool:
    if name.startswith(SIM_PREFIX) and len(name) > len(SIM_PREFIX):
        return True
    return name in (TOPIC_CONFIG_NAMES if resource_type is ResourceType.TOPIC else BROKER_CONFIG_NAMES)


def value_problem(name: str, value: str) -> str | None:
    """Why ``value`` is not valid for ``name`` (only the keys reassignd reads are checked)."""
    if name == "unclean.leader.election.enable" and parse_bool(value) is None:
        return f"Invalid value {value} for configuration {name}: Expected value to be either true or false"
    if name == "min.insync.replicas" and parse_positive_int(value) is None:
        return f"Invalid value {value} for configuration {name}: Value must be at least 1"
    if name in _LONGS and (not value.strip().isascii() or not value.strip().isdigit()):
        return f"Invalid value {value} for configuration {name}: Expected a non-negative long"
    if name in _REPLICA_LISTS and value.strip() != "*":
        for entry in (e.strip() for e in value.split(",") if e.strip()):
            p, sep, b = entry.partition(":")
            if not sep or not p.isdigit() or not b.isdigit():
                return f"Invalid value {value} for configuration {name}: expected '*' or partition:broker,..."
    return None


def _list_items(value: str | None) -> list[str]:
    return [] if value is None else [v.strip() for v in value.split(",") if v.strip()]


def plan_alteration(
    alteration: ResourceAlteration, config: Mapping[str, str]
) -> dict[str, str] | tuple[int, str]:
    """The entity's config after ``alteration``, or (error code, message). Kafka's rules: a name
    given twice is refused, SET/APPEND/SUBTRACT need a value, APPEND/SUBTRACT only for lists."""
    resource = alteration.resource
    problem = resource_problem(resource)
    if problem is not None:
        return problem
    names = [c.name for c in alteration.changes]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        return (INVALID_REQUEST, f"Error due to duplicate config keys : {','.join(duplicated)}")
    new = dict(config)
    for change in alteration.changes:
        kind = "topic" if resource.type is ResourceType.TOPIC else "broker"
        if not known_name(resource.type, change.name):
            return (INVALID_CONFIG, f"Unknown {kind} config name: {change.name}")
        if change.op is ConfigOp.DELETE:
            new.pop(change.name, None)
            continue
        if change.value is None:
            return (INVALID_REQUEST, f"Null value not supported for : {change.name}")
        if change.op in (ConfigOp.APPEND, ConfigOp.SUBTRACT):
            if change.name not in _REPLICA_LISTS and change.name != "cleanup.policy":
                return (INVALID_CONFIG, f"Config value append is not allowed for config key: {change.name}")
            items = _list_items(new.get(change.name))
            given = _list_items(change.value)
            if change.op is ConfigOp.APPEND:
                items += [v for v in given if v not in items]
            else:
                items = [v for v in items if v not in given]
            new[change.name] = ",".join(items)
        else:
            new[change.name] = change.value
        problem_text = value_problem(change.name, new[change.name])
        if problem_text is not None:
            return (INVALID_CONFIG, problem_text)
    return new


# --- the shell: reads (any instance) and writes (the event loop) -------------------------------


async def read_configs(
    zk: ZkClient, resources: Sequence[ConfigResource], report: Report
) -> list[dict[str, str] | None]:
    """Each resource's stored config (empty when absent); None when it cannot be decoded."""
    znodes = await zk.get_many([r.path for r in resources])
    out: list[dict[str, str] | None] = []
    for resource, znode in zip(resources, znodes, strict=True):
        if znode is None or not znode.data:
            out.append({})
            continue
        try:
            out.append(dict(codec.decode_entity_config(znode.data)))
        except codec.CodecError as e:
            report(resource.path, e.reason, "entity_config")
            out.append(None)
    return out


class ConfigWrites:
    """IncrementalAlterConfigs on the active controller: one fenced multi per resource (config
    znode and change notification), re-read and merged again when it changed meanwhile."""

    def __init__(self, zk: ZkClient, writer: ZkWriter, topic_exists: Callable[[str], bool]) -> None:
        self.zk = zk
        self.writer = writer
        self.topic_exists = topic_exists

    async def alter(self, request: AlterConfigs) -> tuple[ConfigResult, ...]:
        results = []
        for alteration in request.resources:
            results.append(await self._alter_one(alteration, request.validate_only))
        return tuple(results)

    async def _alter_one(self, alteration: ResourceAlteration, validate_only: bool) -> ConfigResult:
        resource = alteration.resource
        if resource.type is ResourceType.TOPIC and not self.topic_exists(resource.name):
            return ConfigResult(
                resource, UNKNOWN_TOPIC_OR_PARTITION, f"Topic {resource.name} does not exist."
            )
        path = resource.path
        notification = codec.encode_config_change(paths.entity_path(path))
        for _ in range(5):
            znode = await self.zk.get_or_none(path)
            config: dict[str, str] = {}
            if znode is not None and znode.data:
                try:
                    config = dict(codec.decode_entity_config(znode.data))
                except codec.CodecError as e:
                    return ConfigResult(resource, -1, f"{path}: cannot decode the stored config ({e.reason})")
            planned = plan_alteration(alteration, config)
            if isinstance(planned, tuple):
                return ConfigResult(resource, planned[0], planned[1])
            if validate_only or planned == config:
                return ConfigResult(resource)
            data = codec.encode_entity_config(planned)
            write: Op = Create(path, data) if znode is None else SetData(path, data, znode.stat.version)
            try:
                await self.writer.fenced(
                    [write, Create(paths.CONFIG_CHANGE_PREFIX, notification, sequential=True)]
                )
            except MultiFailedError as e:
                if not isinstance(e.cause, BadVersionError | NodeExistsError):
                    raise
                continue
            log.info(
                "configs of %s changed: %s",
                paths.entity_path(path),
                sorted(c.name for c in alteration.changes),
            )
            return ConfigResult(resource)
        return ConfigResult(resource, -1, f"{path} kept changing while being altered; try again")

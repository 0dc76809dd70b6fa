"""The rules of IncrementalAlterConfigs and AlterConfigs, Kafka's way, and the parsing of the config
values the controller acts on. Pure: the request and the stored config in, the new config or a
refusal out.

Which names a topic or a broker config accepts, which values are valid for the keys reassignd
reads, and the merge (SET, DELETE, APPEND, SUBTRACT); ``quotas/entity_configs.py`` writes the
result, the Kafka listener refuses a bad resource name with the same words.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from reassignd.controller.model.admin_requests import (
    ConfigOp,
    ConfigResource,
    ResourceAlteration,
    ResourceType,
)
from reassignd.controller.model.config_types import (
    BROKER_CONFIG_TYPES,
    TOPIC_CONFIG_TYPES,
    typed_value_problem,
)
from reassignd.topic_partition import topic_name_problem
from reassignd.zk import admin_codec


def parse_bool(value: str) -> bool | None:
    """Kafka's ConfigDef BOOLEAN: ``true``/``false`` in any case, surrounding blanks ignored."""
    text = value.strip().lower()
    if text == "true":
        return True
    if text == "false":
        return False
    return None


def parse_positive_int(value: str) -> int | None:
    text = value.strip()
    if not text.isascii() or not text.isdigit() or int(text) < 1:
        return None
    return int(text)


INVALID_CONFIG = 40
INVALID_REQUEST = 42
SIM_PREFIX = "reassignd.sim."
# The simulation's keys the broker agents read (``broker/sim_config.py``), with the value an agent
# applies when one is not set: settable as Kafka's are, and listed by DescribeConfigs (any other
# ``reassignd.sim.*`` name is accepted too, and read by nothing)
TOPIC_SIM_DEFAULTS: dict[str, str] = {
    "reassignd.sim.initial.bytes": "0",
    "reassignd.sim.produce.bytes.per.s": "0",
}
BROKER_SIM_DEFAULTS: dict[str, str] = {
    # then /config/brokers/<default>, then the agent's --replication-bytes-per-s (this is its default)
    "reassignd.sim.replication.bytes.per.s": str(100 * 1024 * 1024),
}

# Kafka's topic-level configs (LogConfig, 3.x), the names kafka-configs accepts for a topic, and
# the dynamic broker configs reassignd and its agents act on (KIP-73 throttles, elections)
TOPIC_CONFIG_NAMES = frozenset(TOPIC_CONFIG_TYPES)
BROKER_CONFIG_NAMES = frozenset(BROKER_CONFIG_TYPES)
_TYPES = {**TOPIC_CONFIG_TYPES, **BROKER_CONFIG_TYPES}  # the names both take have one type

# A config znode (its JSON, every value a string) must fit ZooKeeper's packet limit (jute.maxbuffer,
# 1 MiB less one byte) with its path and the multi's framing and change notification around it:
# a config whose encoding is over this budget is refused 40 before anything is written.
CONFIG_ZNODE_BUDGET_BYTES = 1_000_000

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


def resource_problem(resource: ConfigResource) -> tuple[int, str] | None:
    if resource.type is ResourceType.TOPIC:
        problem = topic_name_problem(resource.name)
        return None if problem is None else (INVALID_REQUEST, problem)
    if resource.name and (not resource.name.isascii() or not resource.name.isdigit()):
        return (INVALID_REQUEST, f"Broker id must be an integer, got {resource.name!r}")
    return None


DUPLICATE_RESOURCE = "Each resource must appear at most once."


def resource_key(resource_type: int, name: str) -> tuple[int, str]:
    """What makes two entries of one AlterConfigs or IncrementalAlterConfigs request the same
    resource: its type and name, a broker's id as a number (``01`` and ``1`` write one znode)."""
    if resource_type == ResourceType.BROKER and name.isascii() and name.isdigit():
        return (resource_type, str(int(name)))
    return (resource_type, name)


def duplicated_resources(keys: Iterable[tuple[int, str]]) -> frozenset[tuple[int, str]]:
    """The resource keys named more than once: every entry of such a resource is refused 42
    (Kafka's ConfigAdminManager), the request's other resources are served."""
    return frozenset(key for key, n in Counter(keys).items() if n > 1)


def duplicate_keys_problem(names: Sequence[str]) -> tuple[int, str] | None:
    """A config key named twice in one resource's entry: 42, the resource refused whole."""
    duplicated = sorted(n for n, count in Counter(names).items() if count > 1)
    if not duplicated:
        return None
    return (INVALID_REQUEST, f"Error due to duplicate config keys : {','.join(duplicated)}")


def settable_names(resource_type: ResourceType) -> frozenset[str]:
    """Every name a topic's or broker's config may set that something reads: Kafka's and the
    simulation's (what DescribeConfigs lists, set or not)."""
    if resource_type is ResourceType.TOPIC:
        return TOPIC_CONFIG_NAMES | frozenset(TOPIC_SIM_DEFAULTS)
    return BROKER_CONFIG_NAMES | frozenset(BROKER_SIM_DEFAULTS)


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
    config_type = _TYPES.get(name)
    return None if config_type is None else typed_value_problem(config_type, name, value)


def config_size_problem(config: Mapping[str, str]) -> str | None:
    """Why a config znode holding ``config`` could not be written (its encoding is over
    CONFIG_ZNODE_BUDGET_BYTES), naming the biggest value; None when it fits."""
    size = len(admin_codec.encode_entity_config(config))
    if size <= CONFIG_ZNODE_BUDGET_BYTES:
        return None
    biggest = max(config, key=lambda k: len(k.encode()) + len(config[k].encode()))
    return (
        f"The config would encode to {size} bytes, over the {CONFIG_ZNODE_BUDGET_BYTES} bytes a config "
        f"znode holds in ZooKeeper (its biggest value: {biggest}, {len(config[biggest].encode())} bytes)"
    )


def _list_items(value: str | None) -> list[str]:
    return [] if value is None else [v.strip() for v in value.split(",") if v.strip()]


def plan_alteration(
    alteration: ResourceAlteration, config: Mapping[str, str]
) -> dict[str, str] | tuple[int, str]:
    """The entity's config after ``alteration``, or (error code, message). Kafka's rules: a name
    given twice is refused, SET/APPEND/SUBTRACT need a value, APPEND/SUBTRACT only for lists. A
    replacing alteration (AlterConfigs) starts from an empty config: the keys it does not name
    are removed, whatever was stored; the same checks apply to what it names."""
    resource = alteration.resource
    problem = resource_problem(resource)
    if problem is not None:
        return problem
    duplicate_keys = duplicate_keys_problem([c.name for c in alteration.changes])
    if duplicate_keys is not None:
        return duplicate_keys
    new = {} if alteration.replace else dict(config)
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
    too_big = config_size_problem(new)
    if too_big is not None:
        return (INVALID_CONFIG, too_big)
    return new

"""DescribeConfigs, AlterConfigs and IncrementalAlterConfigs for topic and broker configs, stored
as Kafka's tools stored them (``/config/topics/<t>``, ``/config/brokers/<id>`` and ``<default>``).
Describe reads ZooKeeper on any instance; both alters go through the controller's door checks and
event queue (a fenced write with a ``/config/changes`` notification): AlterConfigs replaces the
resource's config, IncrementalAlterConfigs changes it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kafka.protocol.admin import (
    AlterConfigsResponse,
    DescribeConfigsResponse,
    IncrementalAlterConfigsResponse,
)

from reassignd.controller.model.admin_requests import (
    AlterConfigs,
    ConfigChange,
    ConfigOp,
    ConfigResource,
    ConfigResult,
    ResourceAlteration,
    ResourceType,
)
from reassignd.controller.model.config_rules import (
    BROKER_SIM_DEFAULTS,
    DUPLICATE_RESOURCE,
    TOPIC_SIM_DEFAULTS,
    duplicate_keys_problem,
    duplicated_resources,
    resource_key,
    resource_problem,
    settable_names,
)
from reassignd.controller.model.config_types import BROKER_CONFIG_TYPES, TOPIC_CONFIG_TYPES, Kind
from reassignd.errors import NotController
from reassignd.kafka_listener.context import (
    CLUSTER_AUTHORIZATION_FAILED,
    NOT_CONTROLLER,
    TOPIC_AUTHORIZATION_FAILED,
    RequestContext,
)

UNKNOWN_TOPIC_OR_PARTITION = 3
INVALID_REQUEST = 42
UNKNOWN_SERVER_ERROR = -1

# Kafka's DescribeConfigsResponse.ConfigSource
SOURCE_TOPIC = 1
SOURCE_BROKER = 2
SOURCE_DEFAULT_BROKER = 3
SOURCE_DEFAULT = 5
# the defaults the controller and agents apply when a key is not set (shown as DEFAULT_CONFIG);
# Kafka's other keys, which nothing here reads, are listed with a null value
TOPIC_DEFAULTS = {
    "unclean.leader.election.enable": "false",
    "min.insync.replicas": "1",
    "leader.replication.throttled.replicas": "",
    "follower.replication.throttled.replicas": "",
    **TOPIC_SIM_DEFAULTS,
}
BROKER_DEFAULTS = {
    "leader.replication.throttled.rate": "9223372036854775807",
    "follower.replication.throttled.rate": "9223372036854775807",
    "replica.alter.log.dirs.io.max.bytes.per.second": "9223372036854775807",
    "unclean.leader.election.enable": "false",
    "min.insync.replicas": "1",
    **BROKER_SIM_DEFAULTS,
}
# Kafka's ConfigType codes, by the type reassignd checks a value against
KIND_CODES = {Kind.BOOLEAN: 1, Kind.STRING: 2, Kind.INT: 3, Kind.LONG: 5, Kind.DOUBLE: 6, Kind.LIST: 7}
SIM_CONFIG_TYPES = {
    "reassignd.sim.initial.bytes": 5,
    "reassignd.sim.produce.bytes.per.s": 6,
    "reassignd.sim.replication.bytes.per.s": 6,
}
STRING = 2


def config_type_code(resource_type: ResourceType, name: str) -> int:
    types = TOPIC_CONFIG_TYPES if resource_type is ResourceType.TOPIC else BROKER_CONFIG_TYPES
    known = types.get(name)
    return KIND_CODES[known.kind] if known is not None else SIM_CONFIG_TYPES.get(name, STRING)


def _resource(resource_type: int, name: str) -> ConfigResource | None:
    if resource_type not in (ResourceType.TOPIC, ResourceType.BROKER):
        return None
    return ConfigResource(ResourceType(resource_type), name)


def config_entries(
    resource: ConfigResource, stored: dict[str, str], keys: list[str] | None, version: int
) -> list[Any]:
    """DescribeConfigs' entries of one resource: every settable key, the stored ones with their
    source, the others as DEFAULT_CONFIG with the default reassignd applies (null where nothing
    here reads the key), then any other stored key; only ``keys`` when named. Pure."""
    Entry = DescribeConfigsResponse.DescribeConfigsResult.DescribeConfigsResourceResult
    if resource.type is ResourceType.TOPIC:
        source = SOURCE_TOPIC
    else:
        source = SOURCE_BROKER if resource.name else SOURCE_DEFAULT_BROKER
    # every config a tool may set is listed (tools check names against the list): stored values,
    # else the default reassignd applies, else null (Kafka's own default, not known here)
    names = settable_names(resource.type)
    defaults = TOPIC_DEFAULTS if resource.type is ResourceType.TOPIC else BROKER_DEFAULTS
    shown: dict[str, tuple[str | None, int]] = {n: (defaults.get(n), SOURCE_DEFAULT) for n in names}
    shown.update({k: (v, source) for k, v in stored.items()})
    out = []
    for name in sorted(shown):
        if keys is not None and name not in keys:
            continue
        value, from_ = shown[name]
        entry = Entry(
            name=name,
            value=value,
            read_only=False,
            is_sensitive=False,
            synonyms=[],
            config_type=config_type_code(resource.type, name),
            documentation=None,
        )
        if version == 0:
            entry.is_default = from_ == SOURCE_DEFAULT
        else:
            entry.config_source = from_
        out.append(entry)
    return out


async def describe_configs(ctx: RequestContext, request: Any) -> Any:
    Result = DescribeConfigsResponse.DescribeConfigsResult
    snapshot = ctx.api.snapshot()
    wanted: list[tuple[Any, ConfigResource | None, tuple[int, str] | None]] = []
    for r in request.resources:
        resource = _resource(r.resource_type, r.resource_name)
        problem: tuple[int, str] | None = None
        if resource is None:
            problem = (INVALID_REQUEST, f"Unsupported resource type {r.resource_type}")
        else:
            problem = resource_problem(resource)
            topic = resource.type is ResourceType.TOPIC
            if problem is None and topic and snapshot.active and resource.name not in snapshot.topics:
                problem = (UNKNOWN_TOPIC_OR_PARTITION, f"Topic {resource.name} does not exist.")
        wanted.append((r, resource, problem))
    readable = tuple(res for _, res, problem in wanted if res is not None and problem is None)
    stored = iter(await ctx.api.describe_configs(readable)) if readable else iter(())
    results = []
    for r, resource, refused in wanted:
        problem = refused
        config = None if resource is None or problem is not None else next(stored)
        if problem is None and config is None:
            problem = (UNKNOWN_SERVER_ERROR, "the stored config cannot be decoded")
        keys = None if r.configuration_keys is None else list(r.configuration_keys)
        results.append(
            Result(
                error_code=0 if problem is None else problem[0],
                error_message=None if problem is None else problem[1],
                resource_type=r.resource_type,
                resource_name=r.resource_name,
                configs=[]
                if problem is not None or resource is None or config is None
                else config_entries(resource, config, keys, ctx.version),
            )
        )
    return DescribeConfigsResponse(throttle_time_ms=0, results=results)


def _incremental_changes(r: Any) -> tuple[ConfigChange, ...] | str:
    """The changes, or why the request is invalid (42)."""
    ops = [c.config_operation for c in r.configs]
    if any(op not in ConfigOp._value2member_map_ for op in ops):
        return f"Unknown config operation in {ops}"
    return tuple(ConfigChange(c.name, ConfigOp(c.config_operation), c.value) for c in r.configs)


def _replacing_changes(r: Any) -> tuple[ConfigChange, ...] | str:
    """AlterConfigs: every key named is SET; a null value leaves the key unset (Kafka drops it
    from the new config), so it is a DELETE, which a replacement makes a no-op but for the name
    check."""
    return tuple(
        ConfigChange(c.name, ConfigOp.DELETE if c.value is None else ConfigOp.SET, c.value) for c in r.configs
    )


def request_problems(resources: Sequence[Any]) -> dict[int, tuple[int, str]]:
    """The resources of an AlterConfigs or IncrementalAlterConfigs request refused before anything
    else is checked (Kafka's ConfigAdminManager.preprocess, ahead of authorization), by index:
    every entry of a resource named more than once, then an entry naming a config key twice —
    each INVALID_REQUEST (42), nothing of it written. Pure."""
    keys = [resource_key(r.resource_type, r.resource_name) for r in resources]
    duplicated = duplicated_resources(keys)
    problems: dict[int, tuple[int, str]] = {}
    for i, (key, r) in enumerate(zip(keys, resources, strict=True)):
        problem = (
            (INVALID_REQUEST, DUPLICATE_RESOURCE)
            if key in duplicated
            else duplicate_keys_problem([c.name for c in r.configs])
        )
        if problem is not None:
            problems[i] = problem
    return problems


async def _alter(
    ctx: RequestContext,
    request: Any,
    changes_of: Callable[[Any], tuple[ConfigChange, ...] | str],
    replace: bool,
) -> list[tuple[int, str | None]]:
    """Per resource of the request, in its order, the error code and message it is answered:
    the listener's own checks (duplicates, resource type, role), then the controller's (the
    door's and the event's, as for every config write)."""
    answers: dict[int, tuple[int, str | None]] = dict(request_problems(request.resources))
    sent: list[tuple[int, ResourceAlteration]] = []
    for i, r in enumerate(request.resources):
        if i in answers:
            continue
        resource = _resource(r.resource_type, r.resource_name)
        if resource is None:
            answers[i] = (INVALID_REQUEST, f"Unsupported resource type {r.resource_type}")
            continue
        if not ctx.may_alter:
            code = (
                TOPIC_AUTHORIZATION_FAILED
                if resource.type is ResourceType.TOPIC
                else CLUSTER_AUTHORIZATION_FAILED
            )
            answers[i] = (code, ctx.denied_message("ALTER configs"))
            continue
        changes = changes_of(r)
        if isinstance(changes, str):
            answers[i] = (INVALID_REQUEST, changes)
            continue
        sent.append((i, ResourceAlteration(resource, changes, replace=replace)))
    if sent:
        alter = AlterConfigs(tuple(a for _, a in sent), bool(request.validate_only), ctx.principal.user)
        try:
            results: tuple[ConfigResult, ...] = await ctx.api.alter_configs(alter)
        except NotController as e:
            results = tuple(ConfigResult(a.resource, NOT_CONTROLLER, e.message) for _, a in sent)
        for (i, _), result in zip(sent, results, strict=True):
            answers[i] = (result.error_code, result.error_message)
    return [answers[i] for i in range(len(request.resources))]


async def incremental_alter_configs(ctx: RequestContext, request: Any) -> Any:
    Response = IncrementalAlterConfigsResponse.AlterConfigsResourceResponse
    answers = await _alter(ctx, request, _incremental_changes, replace=False)
    return IncrementalAlterConfigsResponse(
        throttle_time_ms=0,
        responses=[
            Response(
                error_code=code,
                error_message=message,
                resource_type=r.resource_type,
                resource_name=r.resource_name,
            )
            for r, (code, message) in zip(request.resources, answers, strict=True)
        ],
    )


async def alter_configs(ctx: RequestContext, request: Any) -> Any:
    """AlterConfigs (33): each resource's dynamic config replaced by the keys named (the others
    removed, as Kafka does), with IncrementalAlterConfigs' checks and write."""
    Response = AlterConfigsResponse.AlterConfigsResourceResponse
    answers = await _alter(ctx, request, _replacing_changes, replace=True)
    return AlterConfigsResponse(
        throttle_time_ms=0,
        responses=[
            Response(
                error_code=code,
                error_message=message,
                resource_type=r.resource_type,
                resource_name=r.resource_name,
            )
            for r, (code, message) in zip(request.resources, answers, strict=True)
        ],
    )


def describe_configs_refusal(request: Any, version: int, code: int, message: str) -> Any:
    Result = DescribeConfigsResponse.DescribeConfigsResult
    return DescribeConfigsResponse(
        throttle_time_ms=0,
        results=[
            Result(
                error_code=code,
                error_message=message,
                resource_type=r.resource_type,
                resource_name=r.resource_name,
                configs=[],
            )
            for r in request.resources
        ],
    )


def _alter_refusal(response_class: Any, request: Any, code: int, message: str) -> Any:
    """Every resource of an AlterConfigs or IncrementalAlterConfigs request answered ``code``."""
    Response = response_class.AlterConfigsResourceResponse
    return response_class(
        throttle_time_ms=0,
        responses=[
            Response(
                error_code=code,
                error_message=message,
                resource_type=r.resource_type,
                resource_name=r.resource_name,
            )
            for r in request.resources
        ],
    )


def incremental_alter_configs_refusal(request: Any, version: int, code: int, message: str) -> Any:
    return _alter_refusal(IncrementalAlterConfigsResponse, request, code, message)


def alter_configs_refusal(request: Any, version: int, code: int, message: str) -> Any:
    return _alter_refusal(AlterConfigsResponse, request, code, message)

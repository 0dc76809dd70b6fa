"""DescribeConfigs and IncrementalAlterConfigs for topic and broker configs, stored as Kafka's tools
stored them (``/config/topics/<t>``, ``/config/brokers/<id>`` and ``<default>``). Describe reads
ZooKeeper on any instance; alter goes through the controller's event queue (a fenced write with
a ``/config/changes`` notification).
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import DescribeConfigsResponse, IncrementalAlterConfigsResponse

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
    BROKER_CONFIG_NAMES,
    TOPIC_CONFIG_NAMES,
    resource_problem,
)
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
# the defaults the controller and agents apply when a key is not set (shown as DEFAULT_CONFIG)
TOPIC_DEFAULTS = {
    "unclean.leader.election.enable": "false",
    "min.insync.replicas": "1",
    "leader.replication.throttled.replicas": "",
    "follower.replication.throttled.replicas": "",
}
BROKER_DEFAULTS = {
    "leader.replication.throttled.rate": "9223372036854775807",
    "follower.replication.throttled.rate": "9223372036854775807",
    "replica.alter.log.dirs.io.max.bytes.per.second": "9223372036854775807",
    "unclean.leader.election.enable": "false",
    "min.insync.replicas": "1",
}
CONFIG_TYPES = {  # Kafka's ConfigType: BOOLEAN 1, STRING 2, INT 3, LONG 5, LIST 7
    "unclean.leader.election.enable": 1,
    "min.insync.replicas": 3,
    "leader.replication.throttled.rate": 5,
    "follower.replication.throttled.rate": 5,
    "leader.replication.throttled.replicas": 7,
    "follower.replication.throttled.replicas": 7,
}


def _resource(resource_type: int, name: str) -> ConfigResource | None:
    if resource_type not in (ResourceType.TOPIC, ResourceType.BROKER):
        return None
    return ConfigResource(ResourceType(resource_type), name)


def _entries(
    resource: ConfigResource, stored: dict[str, str], keys: list[str] | None, version: int
) -> list[Any]:
    Entry = DescribeConfigsResponse.DescribeConfigsResult.DescribeConfigsResourceResult
    if resource.type is ResourceType.TOPIC:
        source = SOURCE_TOPIC
    else:
        source = SOURCE_BROKER if resource.name else SOURCE_DEFAULT_BROKER
    # every config a tool may set is listed (tools check names against the list): stored values,
    # else the default reassignd applies, else null (Kafka's own default, not known here)
    names, defaults = (
        (TOPIC_CONFIG_NAMES, TOPIC_DEFAULTS)
        if resource.type is ResourceType.TOPIC
        else (BROKER_CONFIG_NAMES, BROKER_DEFAULTS)
    )
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
            config_type=CONFIG_TYPES.get(name, 2),
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
                else _entries(resource, config, keys, ctx.version),
            )
        )
    return DescribeConfigsResponse(throttle_time_ms=0, results=results)


async def incremental_alter_configs(ctx: RequestContext, request: Any) -> Any:
    Response = IncrementalAlterConfigsResponse.AlterConfigsResourceResponse
    answers: dict[int, tuple[int, str | None]] = {}
    sent: list[tuple[int, ResourceAlteration]] = []
    for i, r in enumerate(request.resources):
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
        ops = [c.config_operation for c in r.configs]
        if any(op not in ConfigOp._value2member_map_ for op in ops):
            answers[i] = (INVALID_REQUEST, f"Unknown config operation in {ops}")
            continue
        changes = tuple(ConfigChange(c.name, ConfigOp(c.config_operation), c.value) for c in r.configs)
        sent.append((i, ResourceAlteration(resource, changes)))
    if sent:
        alter = AlterConfigs(tuple(a for _, a in sent), bool(request.validate_only), ctx.principal.user)
        try:
            results: tuple[ConfigResult, ...] = await ctx.api.alter_configs(alter)
        except NotController as e:
            results = tuple(ConfigResult(a.resource, NOT_CONTROLLER, e.message) for _, a in sent)
        for (i, _), result in zip(sent, results, strict=True):
            answers[i] = (result.error_code, result.error_message)
    return IncrementalAlterConfigsResponse(
        throttle_time_ms=0,
        responses=[
            Response(
                error_code=answers[i][0],
                error_message=answers[i][1],
                resource_type=r.resource_type,
                resource_name=r.resource_name,
            )
            for i, r in enumerate(request.resources)
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


def incremental_alter_configs_refusal(request: Any, version: int, code: int, message: str) -> Any:
    Response = IncrementalAlterConfigsResponse.AlterConfigsResourceResponse
    return IncrementalAlterConfigsResponse(
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

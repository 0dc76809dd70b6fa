"""CreateTopics, DeleteTopics and CreatePartitions over the Kafka listener: each request converted
into the HTTP API's contract struct (:mod:`reassignd.kafka_listener.door`) and built into the
controller's request by the HTTP API's builder (:mod:`reassignd.controller.model.from_contracts`),
so the same validation, errors, event queue and KIP-599 quotas apply. The quota is strict (89) only from the versions where Kafka's is
(CreateTopics v6, CreatePartitions v3, DeleteTopics v5); below them the mutation is made and the
response carries the throttle.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from kafka.protocol.admin import CreatePartitionsResponse, CreateTopicsResponse, DeleteTopicsResponse

from reassignd.controller.model import from_contracts as build
from reassignd.controller.model.requests import Requester, TopicOutcome, TopicsResult
from reassignd.errors import DEFAULT_MESSAGES, NotController
from reassignd.kafka_listener import door
from reassignd.kafka_listener.cluster import ZERO_UUID, topic_uuid
from reassignd.kafka_listener.context import NOT_CONTROLLER, TOPIC_AUTHORIZATION_FAILED, RequestContext

STRICT_FROM = {"CreateTopics": 6, "CreatePartitions": 3, "DeleteTopics": 5}
INVALID_REQUEST = 42
UNKNOWN_TOPIC_ID = 100


def _caller(ctx: RequestContext) -> Requester:
    return Requester(user=ctx.principal.user, client_id=ctx.client_id)


def _message(result: TopicOutcome) -> str | None:
    if result.error_code == 0:
        return None
    return result.error_message or DEFAULT_MESSAGES.get(result.error_code)


def _all_failed(names: list[str], code: int, message: str) -> TopicsResult:
    return TopicsResult(tuple(TopicOutcome(n, code, message) for n in names))


async def _answer(
    ctx: RequestContext, names: list[str], call: Callable[[], Awaitable[TopicsResult]]
) -> TopicsResult:
    """The controller's answer, 41 per topic on a standby, 29 per topic for a viewer."""
    if not ctx.may_alter:
        return _all_failed(names, TOPIC_AUTHORIZATION_FAILED, ctx.denied_message("ALTER topics"))
    try:
        result = await call()
    except NotController as e:
        return _all_failed(names, NOT_CONTROLLER, e.message or "not the controller")
    return result


# --- CreateTopics ---------------------------------------------------------------------------------


async def create_topics(ctx: RequestContext, request: Any) -> Any:
    strict = ctx.version >= STRICT_FROM["CreateTopics"]
    create = build.create_topics_of(door.create_topics(request, ctx.version), _caller(ctx), strict)
    names = [t.name for t in create.topics]
    result = await _answer(ctx, names, lambda: ctx.api.create_topics(create))
    snapshot = ctx.api.snapshot()
    Created = CreateTopicsResponse.CreatableTopicResult
    out = []
    for r in result.results:
        view = snapshot.topics.get(r.name) if r.error_code == 0 else None
        out.append(
            Created(
                name=r.name,
                topic_id=topic_uuid(view.topic_id) if view is not None else ZERO_UUID,
                error_code=r.error_code,
                error_message=_message(r),
                num_partitions=r.num_partitions if r.num_partitions is not None and r.error_code == 0 else -1,
                replication_factor=(
                    r.replication_factor if r.replication_factor is not None and r.error_code == 0 else -1
                ),
                configs=None if r.error_code else [],
            )
        )
    return CreateTopicsResponse(throttle_time_ms=result.throttle_time_ms, topics=out)


# --- DeleteTopics ---------------------------------------------------------------------------------


async def delete_topics(ctx: RequestContext, request: Any) -> Any:
    snapshot = ctx.api.snapshot()
    unknown_ids: list[Any] = []  # v6: named by an id no topic has (100 UNKNOWN_TOPIC_ID, the id echoed)
    if ctx.version >= 6:
        by_id = {topic_uuid(v.topic_id): n for n, v in snapshot.topics.items()}
        names = []
        for t in request.topics:
            if t.name is not None:
                names.append(t.name)
            elif t.topic_id in by_id:
                names.append(by_id[t.topic_id])
            else:
                unknown_ids.append(t.topic_id)
    else:
        names = list(request.topic_names)
    if not names:
        return DeleteTopicsResponse(throttle_time_ms=0, responses=_unknown_ids(unknown_ids))
    strict = ctx.version >= STRICT_FROM["DeleteTopics"]
    delete = build.delete_topics_of(door.delete_topics(names, request), _caller(ctx), strict)
    result = await _answer(ctx, names, lambda: ctx.api.delete_topics(delete))
    Deleted = DeleteTopicsResponse.DeletableTopicResult
    ids = {n: topic_uuid(v.topic_id) for n, v in snapshot.topics.items()}
    return DeleteTopicsResponse(
        throttle_time_ms=result.throttle_time_ms,
        responses=[
            Deleted(
                name=r.name,
                topic_id=ids.get(r.name, ZERO_UUID),
                error_code=r.error_code,
                error_message=_message(r),
            )
            for r in result.results
        ]
        + _unknown_ids(unknown_ids),
    )


def _unknown_ids(ids: list[Any]) -> list[Any]:
    Deleted = DeleteTopicsResponse.DeletableTopicResult
    return [
        Deleted(
            name=None,
            topic_id=i,
            error_code=UNKNOWN_TOPIC_ID,
            error_message=f"Topic id {i} does not exist.",
        )
        for i in ids
    ]


# --- CreatePartitions -----------------------------------------------------------------------------


async def create_partitions(ctx: RequestContext, request: Any) -> Any:
    strict = ctx.version >= STRICT_FROM["CreatePartitions"]
    create = build.create_partitions_of(door.create_partitions(request), _caller(ctx), strict)
    names = [t.name for t in create.topics]
    result = await _answer(ctx, names, lambda: ctx.api.create_partitions(create))
    Result = CreatePartitionsResponse.CreatePartitionsTopicResult
    return CreatePartitionsResponse(
        throttle_time_ms=result.throttle_time_ms,
        results=[
            Result(name=r.name, error_code=r.error_code, error_message=_message(r)) for r in result.results
        ],
    )


# --- the answers to a request that failed: its error on every topic ----------------------------


def create_topics_refusal(request: Any, version: int, code: int, message: str) -> Any:
    Created = CreateTopicsResponse.CreatableTopicResult
    return CreateTopicsResponse(
        throttle_time_ms=0,
        topics=[
            Created(
                name=t.name,
                topic_id=ZERO_UUID,
                error_code=code,
                error_message=message,
                num_partitions=-1,
                replication_factor=-1,
                configs=None,
            )
            for t in request.topics
        ],
    )


def delete_topics_refusal(request: Any, version: int, code: int, message: str) -> Any:
    Deleted = DeleteTopicsResponse.DeletableTopicResult
    named = (
        [(t.name, t.topic_id) for t in request.topics]
        if version >= 6
        else [(n, ZERO_UUID) for n in request.topic_names]
    )
    return DeleteTopicsResponse(
        throttle_time_ms=0,
        responses=[
            Deleted(name=name, topic_id=topic_id, error_code=code, error_message=message)
            for name, topic_id in named
        ],
    )


def create_partitions_refusal(request: Any, version: int, code: int, message: str) -> Any:
    Result = CreatePartitionsResponse.CreatePartitionsTopicResult
    return CreatePartitionsResponse(
        throttle_time_ms=0,
        results=[Result(name=t.name, error_code=code, error_message=message) for t in request.topics],
    )

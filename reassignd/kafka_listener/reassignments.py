"""AlterPartitionReassignments and ListPartitionReassignments over the Kafka listener.

Alter converts the request into the HTTP API's contract struct (:mod:`reassignd.kafka_listener.door`)
and hands the controller what the HTTP API's builder makes of it (a null replica list cancels, as
in Kafka);
List answers from the published snapshot, as ``GET /v1/reassignments`` does. A standby answers
41 NOT_CONTROLLER (top level, and per partition for Alter), a viewer 31 for Alter.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import AlterPartitionReassignmentsResponse, ListPartitionReassignmentsResponse

from reassignd.controller.model.from_contracts import alter_of
from reassignd.controller.model.requests import AlterPartitionResult, AlterResult
from reassignd.errors import DEFAULT_MESSAGES, NotController
from reassignd.kafka_listener import door
from reassignd.kafka_listener.context import CLUSTER_AUTHORIZATION_FAILED, NOT_CONTROLLER, RequestContext

TopicResponse = AlterPartitionReassignmentsResponse.ReassignableTopicResponse
PartitionResponse = TopicResponse.ReassignablePartitionResponse


def _failed(request: Any, code: int, message: str) -> AlterResult:
    return AlterResult(
        tuple(
            AlterPartitionResult(t.name, p.partition_index, code, message)
            for t in request.topics
            for p in t.partitions
        )
    )


def alter_response(result: AlterResult, error_code: int = 0, error_message: str | None = None) -> Any:
    by_topic: dict[str, list[Any]] = {}
    for r in result.results:
        message = r.error_message or (DEFAULT_MESSAGES.get(r.error_code) if r.error_code else None)
        by_topic.setdefault(r.topic, []).append(
            PartitionResponse(partition_index=r.partition, error_code=r.error_code, error_message=message)
        )
    return AlterPartitionReassignmentsResponse(
        throttle_time_ms=0,
        error_code=error_code,
        error_message=error_message,
        responses=[TopicResponse(name=name, partitions=parts) for name, parts in by_topic.items()],
    )


async def alter_partition_reassignments(ctx: RequestContext, request: Any) -> Any:
    if not ctx.may_alter:
        message = ctx.denied_message("ALTER the cluster")
        return alter_response(
            _failed(request, CLUSTER_AUTHORIZATION_FAILED, message), CLUSTER_AUTHORIZATION_FAILED, message
        )
    alter = alter_of(door.alter_reassignments(request))
    try:
        result = await ctx.api.alter_reassignments(alter)
    except NotController as e:
        message = e.message or "not the controller"
        return alter_response(_failed(request, NOT_CONTROLLER, message), NOT_CONTROLLER, message)
    return alter_response(result)


async def list_partition_reassignments(ctx: RequestContext, request: Any) -> Any:
    snapshot = ctx.api.snapshot()
    Ongoing = ListPartitionReassignmentsResponse.OngoingTopicReassignment
    OngoingPartition = Ongoing.OngoingPartitionReassignment
    if not snapshot.active:
        return ListPartitionReassignmentsResponse(
            throttle_time_ms=0, error_code=NOT_CONTROLLER, error_message=DEFAULT_MESSAGES[41], topics=[]
        )
    reassignments = snapshot.reassignments
    if request.topics is None:
        chosen = sorted(reassignments)
    else:
        wanted = {(t.name, p) for t in request.topics for p in t.partition_indexes}
        chosen = sorted(tp for tp in wanted if tp in reassignments)
    by_topic: dict[str, list[Any]] = {}
    for tp in chosen:
        r = reassignments[tp]
        by_topic.setdefault(r.topic, []).append(
            OngoingPartition(
                partition_index=r.partition,
                replicas=list(r.replicas),
                adding_replicas=list(r.adding_replicas),
                removing_replicas=list(r.removing_replicas),
            )
        )
    return ListPartitionReassignmentsResponse(
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        topics=[Ongoing(name=name, partitions=parts) for name, parts in by_topic.items()],
    )


def alter_refusal(request: Any, version: int, code: int, message: str) -> Any:
    return alter_response(_failed(request, code, message), code, message)


def list_refusal(request: Any, version: int, code: int, message: str) -> Any:
    return ListPartitionReassignmentsResponse(
        throttle_time_ms=0, error_code=code, error_message=message, topics=[]
    )

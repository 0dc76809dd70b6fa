"""ElectLeaders (KIP-460): preferred or unclean elections on demand, through the controller's event
queue. ``topic_partitions`` null means every partition (those that needed no election left out
of the answer, as Kafka does)."""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import ElectLeadersResponse

from reassignd.controller.model.admin_requests import ElectionResult, ElectionType, ElectLeaders
from reassignd.errors import NotController
from reassignd.kafka_listener.context import CLUSTER_AUTHORIZATION_FAILED, NOT_CONTROLLER, RequestContext

INVALID_REQUEST = 42

Topic = ElectLeadersResponse.ReplicaElectionResult
Partition = Topic.PartitionResult


def _response(results: list[ElectionResult], error_code: int = 0) -> Any:
    by_topic: dict[str, list[Any]] = {}
    for r in results:
        by_topic.setdefault(r.topic, []).append(
            Partition(partition_id=r.partition, error_code=r.error_code, error_message=r.error_message)
        )
    return ElectLeadersResponse(
        throttle_time_ms=0,
        error_code=error_code,
        replica_election_results=[Topic(topic=t, partition_result=ps) for t, ps in by_topic.items()],
    )


async def elect_leaders(ctx: RequestContext, request: Any) -> Any:
    partitions = (
        None
        if request.topic_partitions is None
        else tuple((t.topic, p) for t in request.topic_partitions for p in t.partitions)
    )
    named = list(partitions or ())
    election = request.election_type if ctx.version >= 1 else ElectionType.PREFERRED
    if election not in (ElectionType.PREFERRED, ElectionType.UNCLEAN):
        message = f"Unknown election type {election}"
        return _response([ElectionResult(t, p, INVALID_REQUEST, message) for t, p in named], INVALID_REQUEST)
    if not ctx.may_alter:
        message = ctx.denied_message("ALTER the cluster")
        failed = [ElectionResult(t, p, CLUSTER_AUTHORIZATION_FAILED, message) for t, p in named]
        return _response(failed, CLUSTER_AUTHORIZATION_FAILED)
    try:
        results = await ctx.api.elect_leaders(ElectLeaders(ElectionType(election), partitions))
    except NotController as e:
        return _response([ElectionResult(t, p, NOT_CONTROLLER, e.message) for t, p in named], NOT_CONTROLLER)
    return _response(results)


def elect_leaders_refusal(request: Any, version: int, code: int, message: str) -> Any:
    named = (
        []
        if request.topic_partitions is None
        else [
            ElectionResult(t.topic, p, code, message) for t in request.topic_partitions for p in t.partitions
        ]
    )
    return _response(named, code)

"""ElectLeaders (KIP-460): preferred or unclean elections on demand, through the controller's event
queue. ``topic_partitions`` null means every partition (those that needed no election left out
of the answer, as Kafka does). The request is converted into the HTTP API's contract struct
(:mod:`reassignd.kafka_listener.door`) and built by the HTTP API's builder."""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import ElectLeadersResponse

from reassignd.controller.model.admin_requests import ElectionResult
from reassignd.controller.model.from_contracts import elect_of
from reassignd.errors import NotController
from reassignd.kafka_listener import door
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
    converted = door.elect_leaders(request, ctx.version)
    if isinstance(converted, str):  # an election type Kafka does not know
        return elect_leaders_refusal(request, ctx.version, INVALID_REQUEST, converted)
    if not ctx.may_alter:
        message = ctx.denied_message("ALTER the cluster")
        return elect_leaders_refusal(request, ctx.version, CLUSTER_AUTHORIZATION_FAILED, message)
    try:
        results = await ctx.api.elect_leaders(elect_of(converted))
    except NotController as e:
        return elect_leaders_refusal(request, ctx.version, NOT_CONTROLLER, e.message)
    return _response(results)


def elect_leaders_refusal(request: Any, version: int, code: int, message: str | None) -> Any:
    """Every partition named answered ``code``, at the top level too."""
    named = (
        []
        if request.topic_partitions is None
        else [
            ElectionResult(t.topic, p, code, message) for t in request.topic_partitions for p in t.partitions
        ]
    )
    return _response(named, code)

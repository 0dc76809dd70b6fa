"""AlterReplicaLogDirs (KIP-113): move replicas between the log dirs of one broker.

In Kafka the request goes straight to the broker that hosts the replicas (the Java AdminClient
and kafka-python send one request per broker named in the assignment) and touches no znode. Here
a request that came to a broker's own port (``--kafka-broker-ports``) is forwarded to that
broker's agent (``POST /log-dirs/alter``, control/log_dir_moves.py; the forwarding is
agent_reports/log_dir_moves.py's, shared with ``POST /v1/log-dirs/moves``), which answers each replica
with Kafka's code: NONE, LOG_DIR_NOT_FOUND (57, no such dir on the broker),
REPLICA_NOT_AVAILABLE (9, the broker does not host it; the dir is remembered for when it comes)
or KAFKA_STORAGE_ERROR (56, it does not fit in the dir's free capacity; the agent logs why).
The request names no broker, so on the bootstrap port (where every broker is advertised without
broker ports) it cannot be told whose disks it means: every replica named is answered
INVALID_REQUEST and the listener logs that the broker's own port must be asked. A broker that is
not registered, or whose agent does not answer, gets KAFKA_STORAGE_ERROR (56) on every replica.
It needs the admin role (Kafka: ALTER on the cluster). The controller's queue is not involved.
The moves are the HTTP API's (``POST /v1/log-dirs/moves``): converted into its contract struct
(:mod:`reassignd.kafka_listener.door`) and built by its builder, whose problem (a replica named
twice, a name no topic can have), a 400 over HTTP, is not an error here: Kafka's broker takes
such a request, and the agent answers each replica.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from kafka.protocol.admin import AlterReplicaLogDirsResponse

from reassignd.agent_reports.fetch import agent_urls
from reassignd.agent_reports.log_dir_moves import forward_log_dir_moves
from reassignd.contracts.requests import LogDirMoveSpec, MoveLogDirsRequest
from reassignd.control.log_dir_moves import KAFKA_STORAGE_ERROR
from reassignd.controller.model.from_contracts import log_dir_moves_of
from reassignd.kafka_listener import door
from reassignd.kafka_listener.context import CLUSTER_AUTHORIZATION_FAILED, NOT_CONTROLLER, RequestContext

INVALID_REQUEST = 42

log = logging.getLogger(__name__)

TopicResult = AlterReplicaLogDirsResponse.AlterReplicaLogDirTopicResult
PartitionResult = TopicResult.AlterReplicaLogDirPartitionResult


def response_of(codes: list[tuple[str, int, int]]) -> Any:
    """Pure: the answer, one result per topic (in the order first named)."""
    by_topic: dict[str, list[Any]] = {}
    for topic, partition, code in codes:
        by_topic.setdefault(topic, []).append(PartitionResult(partition_index=partition, error_code=code))
    return AlterReplicaLogDirsResponse(
        throttle_time_ms=0,
        results=[TopicResult(topic_name=t, partitions=ps) for t, ps in by_topic.items()],
    )


def _all(moves: Sequence[LogDirMoveSpec], code: int) -> Any:
    return response_of([(m.topic, m.partition, code) for m in moves])


async def alter_replica_log_dirs(ctx: RequestContext, request: Any) -> Any:
    moves = door.log_dir_moves(request)
    if not ctx.may_alter:
        return _all(moves, CLUSTER_AUTHORIZATION_FAILED)
    snapshot = ctx.api.snapshot()
    if not snapshot.active:
        return _all(moves, NOT_CONTROLLER)
    broker_id = ctx.broker_id
    if broker_id is None:
        log.info(
            "AlterReplicaLogDirs from %s on the bootstrap port names no broker: refused; "
            "send it to the broker's own port (--kafka-broker-ports)",
            ctx.client_id or "a client",
        )
        return _all(moves, INVALID_REQUEST)
    if not moves:
        return _all(moves, 0)
    # the builder's problem (a replica named twice, a name no topic has) is the HTTP API's 400;
    # Kafka's broker takes such a request, and the agent answers each replica
    built = log_dir_moves_of(MoveLogDirsRequest(broker_id, moves))
    url = agent_urls(snapshot.brokers, [broker_id]).get(broker_id)
    session = ctx.listener.agents
    answer = (
        None
        if url is None or session is None
        else await forward_log_dir_moves(session, broker_id, url, built.moves)
    )
    if answer is None:
        return _all(moves, KAFKA_STORAGE_ERROR)
    return response_of(
        [(m.topic, m.partition, r.error_code) for m, r in zip(built.moves, answer.results, strict=True)]
    )


def alter_replica_log_dirs_refusal(request: Any, version: int, code: int, message: str) -> Any:
    return _all(door.log_dir_moves(request), code)

"""DescribeLogDirs from the broker agents' replica reports (as ``GET /v1/log-dirs``).

A request that came to a broker's own port (``--kafka-broker-ports``) is answered for that broker
only, as a Kafka broker answers for its own disks: a client asking every broker (kafka-python's
``describe_log_dirs``, the Java AdminClient's ``describeLogDirs(brokers)``) counts each replica
once. A request that came to the bootstrap port is answered for every live broker at once, as
before (every broker a client knows may be this one address). Each broker's replicas are under a
log dir of its own, ``/sim/broker-<id>`` (a broker whose agent did not answer, or that is no
longer registered, has that dir with error 57 KAFKA_STORAGE_ERROR). ``size`` is
the replica's log end offset (the simulated log is its bytes), ``offset_lag`` how far it is
behind its leader.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka.protocol.admin import DescribeLogDirsResponse

from reassignd.agent_reports.fetch import agent_urls
from reassignd.control.replicas_report import ReplicasReport
from reassignd.kafka_listener.context import RequestContext

KAFKA_STORAGE_ERROR = 57
NOT_CONTROLLER = 41

Result = DescribeLogDirsResponse.DescribeLogDirsResult
Topic = Result.DescribeLogDirsTopic
Partition = Topic.DescribeLogDirsPartition


def log_dir(broker_id: int) -> str:
    return f"/sim/broker-{broker_id}"


def log_dir_results(
    brokers: list[int], reports: Mapping[int, ReplicasReport], wanted: set[tuple[str, int]] | None
) -> list[Any]:
    """Pure: one result per broker; ``wanted`` None means every replica."""
    out = []
    for b in sorted(brokers):
        report = reports.get(b)
        if report is None:
            out.append(
                Result(
                    error_code=KAFKA_STORAGE_ERROR,
                    log_dir=log_dir(b),
                    topics=[],
                    total_bytes=-1,
                    usable_bytes=-1,
                )
            )
            continue
        by_topic: dict[str, list[Any]] = {}
        for r in sorted(report.replicas, key=lambda r: (r.topic, r.partition)):
            if wanted is not None and (r.topic, r.partition) not in wanted:
                continue
            by_topic.setdefault(r.topic, []).append(
                Partition(
                    partition_index=r.partition,
                    partition_size=max(0, r.log_end_offset),
                    offset_lag=max(0, r.lag_bytes),
                    is_future_key=False,
                )
            )
        out.append(
            Result(
                error_code=0,
                log_dir=log_dir(b),
                topics=[Topic(name=t, partitions=ps) for t, ps in by_topic.items()],
                total_bytes=-1,
                usable_bytes=-1,
            )
        )
    return out


async def describe_log_dirs(ctx: RequestContext, request: Any) -> Any:
    snapshot = ctx.api.snapshot()
    if not snapshot.active:
        return DescribeLogDirsResponse(throttle_time_ms=0, error_code=NOT_CONTROLLER, results=[])
    wanted = None if request.topics is None else {(t.topic, p) for t in request.topics for p in t.partitions}
    brokers = list(snapshot.brokers) if ctx.broker_id is None else [ctx.broker_id]
    urls = agent_urls(snapshot.brokers, [b for b in brokers if b in snapshot.brokers])
    session = ctx.listener.agents
    # concurrent requests share one round of questions to the agents (as the HTTP API's)
    reports = await ctx.listener.reports.fetch(session, urls) if urls and session is not None else {}
    return DescribeLogDirsResponse(
        throttle_time_ms=0, error_code=0, results=log_dir_results(brokers, reports, wanted)
    )


def describe_log_dirs_refusal(request: Any, version: int, code: int, message: str) -> Any:
    """The error at the top (v3+); below v3, which has no error field, no log dir."""
    return DescribeLogDirsResponse(throttle_time_ms=0, error_code=code, results=[])

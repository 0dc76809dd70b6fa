"""DescribeLogDirs from the broker agents' replica reports (as ``GET /v1/log-dirs``).

A request that came to a broker's own port (``--kafka-broker-ports``) is answered for that broker
only, as a Kafka broker answers for its own disks: a client asking every broker (kafka-python's
``describe_log_dirs``, the Java AdminClient's ``describeLogDirs(brokers)``) counts each replica
once. A request that came to the bootstrap port is answered for every live broker at once, as
before (every broker a client knows may be this one address). Each broker's replicas are under a
log dir of its own, ``/sim/broker-<id>`` (a broker whose agent did not answer, or that is no
longer registered, has that dir with error 56 KAFKA_STORAGE_ERROR). ``size`` is
the replica's log end offset (the simulated log is its bytes), ``offset_lag`` how far it is
behind its leader.

An agent given ``--log-dirs`` (JBOD) reports its own dirs, by the paths it was given (those
AlterReplicaLogDirs takes): one result per dir with its replicas, its capacity and what is left
of it (``total_bytes``/``usable_bytes``, v4; -1 without a capacity), and each replica being moved
into it as a *future* replica (``is_future_key``) whose ``partition_size`` is what was copied so
far and ``offset_lag`` what it still misses of the current replica.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kafka.protocol.admin import DescribeLogDirsResponse

from reassignd.agent_reports.fetch import agent_urls
from reassignd.control.log_dir_moves import single_log_dir
from reassignd.control.replicas_report import FutureInfo, ReplicaInfo, ReplicasReport
from reassignd.kafka_listener.context import RequestContext

KAFKA_STORAGE_ERROR = 56
NOT_CONTROLLER = 41

Result = DescribeLogDirsResponse.DescribeLogDirsResult
Topic = Result.DescribeLogDirsTopic
Partition = Topic.DescribeLogDirsPartition


def log_dir(broker_id: int) -> str:
    return single_log_dir(broker_id)


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
        if report.log_dirs is not None:
            out.extend(_jbod_results(report, wanted))
            continue
        out.append(
            Result(
                error_code=0,
                log_dir=log_dir(b),
                topics=_topics(report.replicas, wanted),
                total_bytes=-1,
                usable_bytes=-1,
            )
        )
    return out


def _topics(
    replicas: Iterable[ReplicaInfo],
    wanted: set[tuple[str, int]] | None,
    futures: Iterable[FutureInfo] = (),
) -> list[Any]:
    entries = [
        (r.topic, r.partition, max(0, r.log_end_offset), max(0, r.lag_bytes), False) for r in replicas
    ] + [(f.topic, f.partition, max(0, f.size_bytes), max(0, f.lag_bytes), True) for f in futures]
    by_topic: dict[str, list[Any]] = {}
    for topic, partition, size, lag, future in sorted(entries):
        if wanted is not None and (topic, partition) not in wanted:
            continue
        by_topic.setdefault(topic, []).append(
            Partition(partition_index=partition, partition_size=size, offset_lag=lag, is_future_key=future)
        )
    return [Topic(name=t, partitions=ps) for t, ps in by_topic.items()]


def _jbod_results(report: ReplicasReport, wanted: set[tuple[str, int]] | None) -> list[Any]:
    assert report.log_dirs is not None
    return [
        Result(
            error_code=0,
            log_dir=d.path,
            topics=_topics((r for r in report.replicas if r.log_dir == d.path), wanted, d.futures),
            total_bytes=d.total_bytes,
            usable_bytes=d.usable_bytes,
        )
        for d in report.log_dirs
    ]


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

"""``GET /v1/log-dirs`` (viewer; a standby answers 503): what DescribeLogDirs answers in Kafka,
from the broker agents' replica reports, in the JSON ``kafka-log-dirs --describe`` prints, so the
same readers take a real cluster's export and ours (``reassignd feed plan`` reads it for sizes):

    {"version": 1, "brokers": [{"broker": 1, "logDirs": [{"logDir": "/sim", "error": null,
      "partitions": [{"partition": "orders-0", "size": 1048576, "offsetLag": 0, "isFuture": false}]}]}]}

``size`` is the replica's log end offset (the simulated log is its bytes), ``offsetLag`` how far
it is behind its leader. An agent given ``--log-dirs`` (JBOD) has its own dirs, each with
``totalBytes``/``usableBytes`` (-1 without a capacity) and, for a replica being moved into it, a
future replica (``isFuture``: its size so far, ``offsetLag`` what it still misses). A broker whose agent did not answer has one log dir with an ``error``
and no partitions. ``?broker=`` (repeatable) asks only those brokers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from aiohttp import web

from reassignd.agent_reports.fetch import agent_urls
from reassignd.contracts.cluster import BrokerLogDirs, LogDir, LogDirPartition, LogDirs
from reassignd.control.replicas_report import FutureInfo, ReplicaInfo, ReplicasReport
from reassignd.http.active import active_snapshot
from reassignd.http.agent_session import AGENT_SESSION
from reassignd.http.json_input import fail, query_params
from reassignd.http.keys import REPORTS
from reassignd.http.responses import json_response
from reassignd.int_limits import INT32_MAX

routes = web.RouteTableDef()

LOG_DIR = "/sim"


def log_dirs_json(brokers: Iterable[int], reports: Mapping[int, ReplicasReport]) -> LogDirs:
    """Pure: the document for ``brokers`` from the reports that came back."""
    out = []
    for b in sorted(brokers):
        report = reports.get(b)
        if report is None:
            out.append(BrokerLogDirs(b, (LogDir(LOG_DIR, "the agent did not answer", ()),)))
            continue
        if report.log_dirs is not None:
            out.append(BrokerLogDirs(b, _jbod_dirs(report)))
            continue
        out.append(BrokerLogDirs(b, (LogDir(LOG_DIR, None, _partitions(report.replicas)),)))
    return LogDirs(1, tuple(out))


def _partitions(
    replicas: Iterable[ReplicaInfo], futures: Iterable[FutureInfo] = ()
) -> tuple[LogDirPartition, ...]:
    entries = [(r.topic, r.partition, r.log_end_offset, r.lag_bytes, False) for r in replicas]
    entries += [(f.topic, f.partition, f.size_bytes, f.lag_bytes, True) for f in futures]
    return tuple(
        LogDirPartition(f"{topic}-{partition}", max(0, size), max(0, lag), future)
        for topic, partition, size, lag, future in sorted(entries)
    )


def _jbod_dirs(report: ReplicasReport) -> tuple[LogDir, ...]:
    assert report.log_dirs is not None
    return tuple(
        LogDir(
            d.path,
            None,
            _partitions((r for r in report.replicas if r.log_dir == d.path), d.futures),
            d.total_bytes,
            d.usable_bytes,
        )
        for d in report.log_dirs
    )


@routes.get("/v1/log-dirs")
async def log_dirs(request: web.Request) -> web.Response:
    found = query_params(request.query.items(), ("broker",))
    wanted: set[int] | None = None
    if "broker" in found:
        wanted = set()
        for text in found["broker"]:
            if not text.isdigit() or int(text) > INT32_MAX:
                fail("broker", f"must be a broker id, got {text[:40]!r}")
            wanted.add(int(text))
    snapshot = active_snapshot(request)
    brokers = set(snapshot.brokers) if wanted is None else wanted & set(snapshot.brokers)
    urls = agent_urls(snapshot.brokers, brokers)
    reports = await request.app[REPORTS].fetch(request.app[AGENT_SESSION], urls) if urls else {}
    return json_response(log_dirs_json(brokers, reports))

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

``POST /v1/log-dirs/moves`` (admin; a standby answers 503): AlterReplicaLogDirs for one broker,
``{"broker": 1, "moves": [{"topic", "partition", "dir"}]}``, what ``reassignd admin reassign``
sends for a plan's ``log_dirs``. Checked at the door (legal topic names, partitions, non-empty
dirs, 1 to 50,000 moves, each replica once; an unregistered broker is 404) and then forwarded
to the broker's agent by the function the Kafka listener uses (agent_reports/log_dir_moves.py):
no znode is written and nothing is forwarded for a refused request. Each replica gets Kafka's
code: 0, 9 REPLICA_NOT_AVAILABLE (not hosted yet; the agent keeps the dir for when it comes),
57 LOG_DIR_NOT_FOUND, 56 KAFKA_STORAGE_ERROR (the agent could not be asked, or has no room).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from aiohttp import web

from reassignd.agent_reports.fetch import agent_urls
from reassignd.agent_reports.log_dir_moves import forward_log_dir_moves
from reassignd.contracts.cluster import (
    BrokerLogDirs,
    LogDir,
    LogDirMoveResult,
    LogDirPartition,
    LogDirs,
    MoveLogDirsResponse,
)
from reassignd.contracts.queries import LogDirsQuery
from reassignd.contracts.requests import LOG_DIR_MAX, MAX_LOG_DIR_MOVES, MoveLogDirsRequest
from reassignd.control.log_dir_moves import (
    KAFKA_STORAGE_ERROR,
    LOG_DIR_NOT_FOUND,
    REPLICA_NOT_AVAILABLE,
    LogDirMove,
)
from reassignd.control.replicas_report import FutureInfo, ReplicaInfo, ReplicasReport
from reassignd.controller.model.from_contracts import log_dir_moves_of
from reassignd.errors import UnknownBroker, error_name
from reassignd.http.active import active_snapshot
from reassignd.http.agent_session import AGENT_SESSION
from reassignd.http.door import decode_request
from reassignd.http.json_input import (
    decode_object,
    expect_int,
    expect_list,
    expect_object,
    expect_string,
    fail,
)
from reassignd.http.keys import REPORTS
from reassignd.http.query_door import query_of
from reassignd.http.responses import json_response
from reassignd.int_limits import INT32_MAX
from reassignd.topic_partition import TopicPartition, topic_name_problem

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


async def log_dirs(request: web.Request) -> web.Response:
    chosen = query_of(request, LogDirsQuery).broker  # ?broker=B, repeatable, decoded at the door
    wanted = None if chosen is None else set(chosen)
    snapshot = active_snapshot(request)
    brokers = set(snapshot.brokers) if wanted is None else wanted & set(snapshot.brokers)
    urls = agent_urls(snapshot.brokers, brokers)
    reports = await request.app[REPORTS].fetch(request.app[AGENT_SESSION], urls) if urls else {}
    return json_response(log_dirs_json(brokers, reports))


# --- POST /v1/log-dirs/moves -----------------------------------------------------------------------


def parse_moves_body(body: bytes) -> tuple[int, tuple[LogDirMove, ...]]:
    """Pure: the broker and its moves, or 400 naming the field. Decoded once, into its contract
    struct (:mod:`reassignd.http.door`); :func:`check_moves_body` words what msgspec refuses."""
    return decode_request(body, MoveLogDirsRequest, moves_of, check_moves_body)


def moves_of(request: MoveLogDirsRequest) -> tuple[int, tuple[LogDirMove, ...]]:
    """The broker and its moves, built by the Kafka listener's builder too
    (:func:`~reassignd.controller.model.from_contracts.log_dir_moves_of`); what the struct cannot
    say ("." or ".." as a topic, a replica named twice) is that builder's problem, a 400 here."""
    built = log_dir_moves_of(request)
    if built.problem is not None:
        fail(*built.problem)
    return built.broker, built.moves


def _check_topic(topic: str, path: str) -> None:
    if (problem := topic_name_problem(topic)) is not None:
        fail(f"{path}.topic", problem)


def _check_once(topic: str, partition: int, seen: set[TopicPartition], path: str) -> None:
    if (topic, partition) in seen:
        fail(path, f"duplicate replica {topic}-{partition}: a replica is moved to one dir")
    seen.add((topic, partition))


def check_moves_body(body: bytes) -> None:
    """The strict reader of a log-dir move (the door's second tier): our refusal's words."""
    doc = decode_object(body, ("broker", "moves"))
    expect_int(doc["broker"], "broker", 0, INT32_MAX)
    raw_moves = expect_list(doc["moves"], "moves")
    if not 1 <= len(raw_moves) <= MAX_LOG_DIR_MOVES:
        fail("moves", f"expected 1 to {MAX_LOG_DIR_MOVES} moves, got {len(raw_moves)}")
    seen: set[TopicPartition] = set()
    for i, raw in enumerate(raw_moves):
        path = f"moves[{i}]"
        item = expect_object(raw, path, ("topic", "partition", "dir"))
        topic = expect_string(item["topic"], f"{path}.topic")
        _check_topic(topic, path)
        partition = expect_int(item["partition"], f"{path}.partition", 0, INT32_MAX)
        log_dir = expect_string(item["dir"], f"{path}.dir")
        if not 1 <= len(log_dir) <= LOG_DIR_MAX:
            fail(f"{path}.dir", f"expected a log dir of 1 to {LOG_DIR_MAX} characters, got {len(log_dir)}")
        _check_once(topic, partition, seen, path)


def _message(broker: int, move: LogDirMove, code: int, reason: str | None) -> str | None:
    if reason is not None:  # the agent's own word (no room in the dir)
        return f"broker {broker}: {reason}"
    if code == REPLICA_NOT_AVAILABLE:
        return (
            f"broker {broker} does not host {move.topic}-{move.partition} (yet): its agent keeps "
            f"{move.log_dir} for it, for when the replica comes"
        )
    if code == LOG_DIR_NOT_FOUND:
        return f"broker {broker} has no log dir {move.log_dir}"
    if code == KAFKA_STORAGE_ERROR:
        return f"broker {broker}'s agent did not move {move.topic}-{move.partition}: it could not be asked"
    return None


def moves_json(
    broker: int, moves: tuple[LogDirMove, ...], answers: list[tuple[int, str | None]]
) -> MoveLogDirsResponse:
    """Pure: the answer, one result per move in order; ``answers``: each move's code and the
    agent's reason, if it gave one."""
    return MoveLogDirsResponse(
        broker,
        tuple(
            LogDirMoveResult(
                m.topic, m.partition, m.log_dir, code, error_name(code), _message(broker, m, code, reason)
            )
            for m, (code, reason) in zip(moves, answers, strict=True)
        ),
    )


async def move_log_dirs(request: web.Request) -> web.Response:
    broker, moves = parse_moves_body(await request.read())
    snapshot = active_snapshot(request)
    if broker not in snapshot.brokers:
        raise UnknownBroker(f"broker {broker} is not registered: nothing was forwarded")
    url = agent_urls(snapshot.brokers, [broker]).get(broker)
    answer = None
    if url is not None:
        answer = await forward_log_dir_moves(request.app[AGENT_SESSION], broker, url, moves)
    answers: list[tuple[int, str | None]] = (
        [(KAFKA_STORAGE_ERROR, None)] * len(moves)
        if answer is None
        else [(r.error_code, r.error_message) for r in answer.results]
    )
    return json_response(moves_json(broker, moves, answers))

"""A plan's ``log_dirs`` in ``reassignd admin reassign``, the pure part: which replica goes where,
one request per broker, the rounds of answers, and Kafka's lines for --execute and --verify."""

from __future__ import annotations

import argparse
import io

import pytest

from reassignd.admin import log_dir_report as ldr
from reassignd.admin.command_line import timeout_ms
from reassignd.admin.reassign import move_log_dirs
from reassignd.contracts.cluster import (
    BrokerLogDirs,
    LogDir,
    LogDirMoveResult,
    LogDirPartition,
    LogDirs,
    MoveLogDirsResponse,
)
from reassignd.contracts.requests import LogDirMoveSpec, MoveLogDirsRequest
from reassignd.errors import error_name
from reassignd.plan_format import parse_plan

PLAN = parse_plan(
    b'{"version":1,"partitions":['
    b'{"topic":"b","partition":1,"replicas":[3,1],"log_dirs":["/d2","any"]},'
    b'{"topic":"a","partition":0,"replicas":[1,3,2],"log_dirs":["/d1","/d2","any"]},'
    b'{"topic":"c","partition":0,"replicas":[2]}]}'
)


def test_the_replicas_the_plan_names_a_dir_for_one_request_per_broker() -> None:
    moves = ldr.dir_moves(PLAN)
    assert moves == {("b", 1, 3): "/d2", ("a", 0, 1): "/d1", ("a", 0, 3): "/d2"}
    assert ldr.move_requests(moves) == [
        MoveLogDirsRequest(1, (LogDirMoveSpec("a", 0, "/d1"),)),
        MoveLogDirsRequest(3, (LogDirMoveSpec("a", 0, "/d2"), LogDirMoveSpec("b", 1, "/d2"))),
    ]
    assert ldr.dir_moves(parse_plan(b'{"partitions":[{"topic":"c","partition":0,"replicas":[2]}]}')) == {}


def result(topic: str, partition: int, code: int, message: str | None = None) -> LogDirMoveResult:
    return LogDirMoveResult(topic, partition, "/d", code, "X", message)


def test_a_round_sorts_started_pending_and_refused_as_kafka_sorts_replicas() -> None:
    moved = ldr.move_round(
        {3: [result("b", 1, 0), result("a", 0, 9)], 1: [result("a", 0, 0), result("z", 0, 57, "no such dir")]}
    )
    assert moved.started == (("a", 0, 1), ("b", 1, 3))
    assert moved.pending == (("a", 0, 3),)
    assert [r for r, _ in moved.refused] == [("z", 0, 1)]
    moves = {("a", 0, 1): "/d1", ("b", 1, 3): "/d2"}
    assert ldr.started_lines(moved.started, moves) == [
        "Successfully started moving log directory to /d1 for replica a-0 with broker 1",
        "Successfully started moving log directory to /d2 for replica b-1 with broker 3",
    ]
    assert ldr.refused_lines(moved.refused) == ["Failed to alter dir for z-0-1: X: no such dir"]
    assert (
        ldr.timed_out_line([("a", 0, 3)]) == "Timed out before log directory move could be started for: a-0-3"
    )
    assert (
        ldr.timed_out_line([("b", 0, 2), ("a", 0, 3)])
        == "Timed out before log directory moves could be started for: b-0-2,a-0-3"
    )


def doc(*dirs: tuple[int, str, str | None, tuple[LogDirPartition, ...]]) -> LogDirs:
    brokers: dict[int, list[LogDir]] = {}
    for broker, path, error, partitions in dirs:
        brokers.setdefault(broker, []).append(LogDir(path, error, partitions))
    return LogDirs(1, tuple(BrokerLogDirs(b, tuple(ds)) for b, ds in brokers.items()))


def p(name: str, size: int, lag: int = 0, future: bool = False) -> LogDirPartition:
    return LogDirPartition(name, size, lag, future)


def test_verify_tells_each_move_in_kafkas_words_with_progress_while_it_copies() -> None:
    moves = {
        ("a", 0, 1): "/d2",  # copying into /d2
        ("a", 0, 2): "/d2",  # done
        ("b", 0, 1): "/d2",  # being moved elsewhere
        ("c", 0, 1): "/d2",  # not moving, in /d1
        ("d", 0, 1): "/d2",  # not on broker 1
        ("a", 0, 4): "/d1",  # broker 4's agent did not answer
    }
    found = doc(
        (1, "/d1", None, (p("a-0", 3 * 2**20), p("b-0", 10), p("c-0", 10))),
        (1, "/d2", None, (p("a-0", 2**20, 2 * 2**20, True),)),
        (1, "/d3", None, (p("b-0", 5, 5, True),)),
        (2, "/d2", None, (p("a-0", 7),)),
        (4, "/sim", "the agent did not answer", ()),
    )
    assert ldr.verify_dir_lines(moves, found) == [
        "Reassignment of replica a-0-1 is still in progress.",
        "  a-0-1: copying from /d1 to /d2: 1.0 MiB of 3.0 MiB (33%), lag 2097152 bytes.",
        "Partition b-0 on broker 1 is being moved to log dir /d3 instead of /d2.",
        "  b-0-1: copying from /d1 to /d3: 5 B of 10 B (50%), lag 5 bytes.",
        "Partition c-0 on broker 1 is not being moved from log dir /d1 to /d2.",
        "Partition d-0 cannot be found in any live log directory on broker 1.",
        "Reassignment of replica a-0-2 completed successfully.",
        "Partition a-0 cannot be found in any live log directory on broker 4.",
    ]
    # a future replica without a current one: Kafka's offline-dir line
    only_future = doc((1, "/d2", None, (p("a-0", 1, 1, True),)))
    assert ldr.verify_dir_lines({("a", 0, 1): "/d2"}, only_future) == [
        "Partition a-0 is not found in any live log dir on broker 1. There is likely an offline log "
        "directory on the broker."
    ]
    assert ldr.move_done(ldr.replica_dirs(found, ("a", 0, 2)), "/d2")
    assert not ldr.move_done(ldr.replica_dirs(found, ("a", 0, 1)), "/d2")


def test_the_timeout_flag_takes_milliseconds() -> None:
    assert timeout_ms("0") == 0 and timeout_ms("10000") == 10000
    for bad in ("-1", "1.5", "", "1e3", "٣"):
        with pytest.raises(argparse.ArgumentTypeError):
            timeout_ms(bad)


class ScriptedBrokers:
    """Stands in for the API client behind ``LogDirMover``: each broker answers from its script
    of codes (the last one repeated), and the requests are kept."""

    def __init__(self, scripts: dict[tuple[str, int, int], list[int]]) -> None:
        self.scripts = scripts
        self.requests: list[MoveLogDirsRequest] = []

    async def move_log_dirs(self, body: MoveLogDirsRequest) -> MoveLogDirsResponse:
        self.requests.append(body)
        results = []
        for m in body.moves:
            script = self.scripts[(m.topic, m.partition, body.broker)]
            code = script.pop(0) if len(script) > 1 else script[0]
            results.append(LogDirMoveResult(m.topic, m.partition, m.dir, code, error_name(code), None))
        return MoveLogDirsResponse(body.broker, tuple(results))


async def test_replicas_not_there_yet_are_asked_again_until_they_start() -> None:
    moves = {("a", 0, 1): "/d1", ("a", 0, 3): "/d2"}
    brokers = ScriptedBrokers({("a", 0, 1): [0], ("a", 0, 3): [9, 9, 0]})
    out = io.StringIO()
    assert await move_log_dirs(brokers, moves, 10_000, out) == 0
    assert out.getvalue().splitlines() == [
        "Successfully started moving log directory to /d1 for replica a-0 with broker 1",
        "Successfully started moving log directory to /d2 for replica a-0 with broker 3",
    ]
    # the started one is not asked again
    assert [(r.broker, len(r.moves)) for r in brokers.requests] == [(1, 1), (3, 1), (3, 1), (3, 1)]


async def test_a_replica_that_never_comes_times_out_and_a_refusal_stops_the_run() -> None:
    out = io.StringIO()
    never = ScriptedBrokers({("a", 0, 3): [9]})
    assert await move_log_dirs(never, {("a", 0, 3): "/d2"}, 250, out) == 1
    assert out.getvalue().splitlines() == ["Timed out before log directory move could be started for: a-0-3"]
    assert 2 <= len(never.requests) <= 5  # every 100 ms for 250 ms
    out = io.StringIO()
    refused = ScriptedBrokers({("a", 0, 1): [57], ("b", 0, 1): [0]})
    assert await move_log_dirs(refused, {("a", 0, 1): "/x", ("b", 0, 1): "/d1"}, 10_000, out) == 1
    assert out.getvalue().splitlines() == [
        "Successfully started moving log directory to /d1 for replica b-0 with broker 1",
        "Failed to alter dir for a-0-1: LOG_DIR_NOT_FOUND",
    ]
    assert len(refused.requests) == 1

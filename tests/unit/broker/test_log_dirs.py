"""An agent's log dirs (JBOD, KIP-113), as pure code: the ``--log-dirs`` value, Kafka's choice of
a dir for a new replica, a move's copy under the intra-broker throttle, its errors, and the report."""

from __future__ import annotations

import math

import pytest

from reassignd.broker.log_dirs import (
    FutureReplica,
    LogDirSpec,
    copied,
    copy_budget_bytes,
    next_log_dir,
    no_room,
    parse_log_dirs,
)
from reassignd.broker.sim_config import broker_sim_config, topic_sim_config
from reassignd.broker.state import ReplicaManager
from reassignd.control.log_dir_moves import (
    KAFKA_STORAGE_ERROR,
    LOG_DIR_NOT_FOUND,
    REPLICA_NOT_AVAILABLE,
    AgentLogDirMoveResult,
    AlterLogDirsRequest,
    AlterLogDirsResponse,
    LogDirMove,
)
from reassignd.control.protocol import (
    LeaderAndIsrRequest,
    StopReplicaPartition,
    StopReplicaRequest,
    WirePartitionState,
)
from reassignd.control.replicas_report import ReplicasReport
from reassignd.control.wire import NONE
from tests.unit.broker.state_helpers import header

DIRS = (LogDirSpec("/d1", 1000), LogDirSpec("/d2"))


def test_log_dirs_flag_parses_paths_and_capacities() -> None:
    assert parse_log_dirs("/d1:1000, /d2") == DIRS
    assert parse_log_dirs(["/d1:1000", "/d2"]) == DIRS
    assert parse_log_dirs("C:/data") == (LogDirSpec("C:/data"),)  # a colon not followed by digits
    for bad in ("", " , ", "/d1,/d1", ":5", 7):
        with pytest.raises(ValueError):
            parse_log_dirs(bad)


def test_new_replica_goes_to_the_dir_with_fewest_logs_first_configured_on_ties() -> None:
    assert next_log_dir(DIRS, {}) == "/d1"
    assert next_log_dir(DIRS, {"/d1": 1}) == "/d2"
    assert next_log_dir(DIRS, {"/d1": 3, "/d2": 3}) == "/d1"
    assert next_log_dir(DIRS, {"/d1": 3, "/d2": 4}) == "/d1"


def test_copy_budget_carries_fractions_and_is_shared_max_min_fairly() -> None:
    assert copy_budget_bytes(10.0, 0.25) == (2, 0.5)
    assert copy_budget_bytes(10.0, 0.25, 0.5) == (3, 0.0)
    assert copy_budget_bytes(10.0, 0.0, 0.7) == (0, 0.7)
    whole, carry = copy_budget_bytes(math.inf, 1.0)
    assert whole > 10**15 and carry == 0.0
    assert copied([5, 100, 100], 55) == [5, 25, 25]
    assert copied([0, 7], 100) == [0, 7]
    assert FutureReplica("/d2", 30).lag_bytes(100) == 70
    assert FutureReplica("/d2", 30).lag_bytes(10) == 0


def jbod_manager(rate: float = 100.0) -> ReplicaManager:
    mgr = ReplicaManager(1, replication_bytes_per_s=rate, log_dirs=DIRS, now=0.0)
    mgr.broker_epoch = 1001
    return mgr


def create(mgr: ReplicaManager, topic: str, partitions: int, size: int) -> None:
    mgr.set_topic_config(topic, topic_sim_config({"reassignd.sim.initial.bytes": str(size)}), 0.0)
    states = tuple(
        WirePartitionState(topic, p, 7, 1, 1, (1,), 0, (1,), is_new=True) for p in range(partitions)
    )
    mgr.leader_and_isr(LeaderAndIsrRequest(header(mgr), states), 0.0)


def move(mgr: ReplicaManager, *moves: tuple[str, int, str]) -> list[int]:
    response = mgr.alter_log_dirs(AlterLogDirsRequest(tuple(LogDirMove(t, p, d) for t, p, d in moves)))
    return [r.error_code for r in response.results]


def test_replicas_spread_over_the_dirs_and_the_report_says_where() -> None:
    mgr = jbod_manager()
    create(mgr, "t", 3, 200)
    report = ReplicasReport.from_json(mgr.report(0.0).to_json())
    assert [(r.partition, r.log_dir) for r in report.replicas] == [(0, "/d1"), (1, "/d2"), (2, "/d1")]
    assert report.log_dirs is not None
    d1, d2 = report.log_dirs
    assert (d1.path, d1.size_bytes, d1.total_bytes, d1.usable_bytes) == ("/d1", 400, 1000, 600)
    assert (d2.path, d2.size_bytes, d2.total_bytes, d2.usable_bytes) == ("/d2", 200, -1, -1)


def test_an_agent_without_log_dirs_reports_as_before() -> None:
    mgr = ReplicaManager(1, replication_bytes_per_s=100.0, now=0.0)
    mgr.broker_epoch = 1001
    create(mgr, "t", 2, 10)
    body = mgr.report(0.0).to_json()
    assert "log_dirs" not in body and all("log_dir" not in r for r in body["replicas"])


def test_a_move_copies_at_the_throttle_then_replaces_the_current_replica() -> None:
    mgr = jbod_manager(rate=1000.0)
    mgr.set_broker_config(
        broker_sim_config({"replica.alter.log.dirs.io.max.bytes.per.second": "50"}, None, 1000.0), 0.0
    )
    create(mgr, "t", 1, 200)  # t-0 in /d1
    mgr.advance_moves(0.0)
    assert move(mgr, ("t", 0, "/d2")) == [NONE]
    assert mgr.advance_moves(1.0) == []
    report = mgr.report(1.0)
    assert report.log_dirs is not None
    future = report.log_dirs[1].futures
    assert [(f.topic, f.partition, f.size_bytes, f.lag_bytes) for f in future] == [("t", 0, 50, 150)]
    assert report.replicas[0].log_dir == "/d1"  # still the current one
    assert report.log_dirs[0].size_bytes == 200 and report.log_dirs[1].size_bytes == 50
    assert mgr.advance_moves(3.0) == []  # 150 bytes
    assert mgr.advance_moves(4.0) == [("t", 0)]
    after = mgr.report(4.0)
    assert after.replicas[0].log_dir == "/d2"
    assert after.log_dirs is not None and all(not d.futures for d in after.log_dirs)
    assert [d.size_bytes for d in after.log_dirs] == [0, 200]


def test_move_errors_and_no_ops_as_kafka() -> None:
    mgr = jbod_manager()
    create(mgr, "t", 1, 200)
    assert move(mgr, ("t", 0, "/nowhere"), ("t", 0, "/d1"), ("t", 9, "/d2")) == [
        LOG_DIR_NOT_FOUND,
        NONE,
        REPLICA_NOT_AVAILABLE,
    ]
    assert not mgr.dirs.futures  # a move to its own dir does nothing
    assert move(mgr, ("t", 0, "/d2")) == [NONE]
    assert move(mgr, ("t", 0, "/d1")) == [NONE]  # back home: the move in progress is dropped
    assert not mgr.dirs.futures
    # a replica asked for before it came is created in that dir (Kafka's preferred log dir)
    create(mgr, "u", 1, 0)  # u-0 goes to /d2 (fewest logs)
    assert mgr.dirs.dir_of[("u", 0)] == "/d2"
    assert move(mgr, ("v", 0, "/d1")) == [REPLICA_NOT_AVAILABLE]
    create(mgr, "v", 1, 0)
    assert mgr.dirs.dir_of[("v", 0)] == "/d1"


def test_a_replica_deleted_mid_move_leaves_no_future_behind() -> None:
    mgr = jbod_manager()
    create(mgr, "t", 1, 200)
    assert move(mgr, ("t", 0, "/d2")) == [NONE]
    mgr.stop_replica(StopReplicaRequest(header(mgr), (StopReplicaPartition("t", 0, -1, True),)), 1.0)
    report = mgr.report(1.0)
    assert report.log_dirs is not None and [d.size_bytes for d in report.log_dirs] == [0, 0]
    assert not mgr.dirs.futures and mgr.advance_moves(2.0) == []


def test_wire_round_trip() -> None:
    request = AlterLogDirsRequest((LogDirMove("t", 0, "/d2"),))
    assert AlterLogDirsRequest.from_json(request.to_json()) == request
    response = jbod_manager().alter_log_dirs(request)
    assert AlterLogDirsResponse.from_json(response.to_json()) == response


def test_the_intra_broker_throttle_is_the_brokers_own_then_the_default() -> None:
    key = "replica.alter.log.dirs.io.max.bytes.per.second"
    assert broker_sim_config(None, None, 100.0).log_dir_move_throttled_rate == math.inf
    assert broker_sim_config(None, {key: "7"}, 100.0).log_dir_move_throttled_rate == 7.0
    assert broker_sim_config({key: "5"}, {key: "7"}, 100.0).log_dir_move_throttled_rate == 5.0
    bad = broker_sim_config({key: "fast"}, None, 100.0)
    assert bad.log_dir_move_throttled_rate == math.inf and bad.problems
    # unthrottled, a move copies at the broker's replication rate (a simulated disk)
    mgr = jbod_manager(rate=80.0)
    assert mgr.log_dir_move_bytes_per_s() == 80.0
    mgr.set_broker_config(broker_sim_config({key: "5"}, None, 80.0), 0.0)
    assert mgr.log_dir_move_bytes_per_s() == 5.0


def test_a_move_of_a_growing_leader_catches_up_and_shares_the_rate() -> None:
    mgr = jbod_manager(rate=1000.0)
    mgr.set_broker_config(
        broker_sim_config({"replica.alter.log.dirs.io.max.bytes.per.second": "100"}, None, 1000.0), 0.0
    )
    mgr.set_topic_config(
        "t",
        topic_sim_config({"reassignd.sim.initial.bytes": "100", "reassignd.sim.produce.bytes.per.s": "10"}),
        0.0,
    )
    states = tuple(WirePartitionState("t", p, 7, 1, 1, (1,), 0, (1,), is_new=True) for p in range(2))
    mgr.leader_and_isr(LeaderAndIsrRequest(header(mgr), states), 0.0)
    assert [mgr.dirs.dir_of[("t", p)] for p in (0, 1)] == ["/d1", "/d2"]
    mgr.advance_moves(0.0)
    assert move(mgr, ("t", 0, "/d2"), ("t", 1, "/d1")) == [NONE, NONE]
    mgr.advance_moves(1.0)  # 100 bytes shared by the two copies; each log is 110 bytes now
    assert sorted(f.copied_bytes for f in mgr.dirs.futures.values()) == [50, 50]
    done: list[tuple[str, int]] = []
    now = 1.0
    while len(done) < 2 and now < 10.0:
        now = round(now + 0.1, 6)
        done += mgr.advance_moves(now)
    # 100 + 10 t bytes each, copied at 50 B/s each from t = 0: caught up at t = 100 / 40 s = 2.5 s
    assert sorted(done) == [("t", 0), ("t", 1)] and 2.4 < now <= 2.6
    assert [mgr.dirs.dir_of[("t", p)] for p in (0, 1)] == ["/d2", "/d1"]


def test_an_agent_without_log_dirs_has_its_one_dir_under_both_names() -> None:
    mgr = ReplicaManager(1, replication_bytes_per_s=100.0, now=0.0)
    mgr.broker_epoch = 1001
    create(mgr, "t", 1, 10)
    assert move(mgr, ("t", 0, "/sim"), ("t", 0, "/sim/broker-1"), ("t", 0, "/sim/broker-4")) == [
        NONE,
        NONE,
        LOG_DIR_NOT_FOUND,
    ]
    assert move(mgr, ("u", 0, "/sim")) == [REPLICA_NOT_AVAILABLE]
    assert not mgr.dirs.futures


def test_a_move_that_does_not_fit_in_the_dirs_free_capacity_is_a_storage_error() -> None:
    """/d1 holds 1000 bytes: its replicas and the future replicas on their way there (at their full
    size) count as taken; a move that does not fit in the rest is KAFKA_STORAGE_ERROR, with why,
    and changes nothing."""
    mgr = jbod_manager()
    create(mgr, "t", 3, 200)  # t-0 /d1, t-1 /d2, t-2 /d1: 400 of /d1's 1000
    create(mgr, "u", 1, 500)  # u-0 /d2
    assert mgr.dirs.dir_of[("u", 0)] == "/d2"
    assert move(mgr, ("t", 1, "/d1")) == [NONE]  # 600 promised
    response = mgr.alter_log_dirs(AlterLogDirsRequest((LogDirMove("u", 0, "/d1"), LogDirMove("t", 1, "/d1"))))
    assert [(r.error_code, r.error_message) for r in response.results] == [
        (KAFKA_STORAGE_ERROR, "u-0: 500 bytes do not fit in log dir /d1: 400 of its 1000 bytes are free"),
        (NONE, None),  # already on its way: not counted twice
    ]
    assert set(mgr.dirs.futures) == {("t", 1)}
    # the wire carries the reason, and only when there is one
    assert AlterLogDirsResponse.from_json(response.to_json()) == response
    assert "error_message" not in AgentLogDirMoveResult("t", 0, NONE).to_json()
    # /d2 has no capacity: anything fits there; t-1 back home gives its 200 promised bytes back
    assert move(mgr, ("t", 0, "/d2"), ("t", 1, "/d2")) == [NONE, NONE]
    assert set(mgr.dirs.futures) == {("t", 0)}
    assert move(mgr, ("u", 0, "/d1")) == [NONE]  # 400 (t-0 still counts until it is gone) + 500


def test_no_room_is_pure() -> None:
    assert no_room(LogDirSpec("/d"), 10**18, 10**18) is None
    assert no_room(LogDirSpec("/d", 100), 40, 60) is None
    assert (
        no_room(LogDirSpec("/d", 100), 40, 61)
        == "61 bytes do not fit in log dir /d: 60 of its 100 bytes are free"
    )
    assert (
        no_room(LogDirSpec("/d", 100), 140, 1)
        == "1 bytes do not fit in log dir /d: 0 of its 100 bytes are free"
    )

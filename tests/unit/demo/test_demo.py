"""The demo's pure parts: its options, the plans (topic assignment, drain targets) and what it
prints (cluster state, reassignment progress)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from reassignd.api_client.shapes import decode
from reassignd.contracts.cluster import Brokers, Status, Topic
from reassignd.contracts.reassignments import (
    AlterReassignmentsResponse,
    ListReassignmentsResponse,
    Progress,
    Reassignment,
)
from reassignd.demo.options import DemoOptions, parse_options
from reassignd.demo.plan import (
    alter_body,
    assignment_of,
    drain_targets,
    fraction_done,
    ids,
    listed,
    partition_errors,
    racks_of,
    replacement,
    round_robin_assignment,
)
from reassignd.demo.text import (
    bar,
    progress_cells,
    render,
    render_load,
    render_progress,
    replica_moves,
    seconds,
    size,
    table,
)
from reassignd.topic_partition import TopicPartition

STATUS_JSON = {
    "controller_id": 9000,
    "active": True,
    "controller_epoch": 1,
    "active_controller": {"id": 9000, "http": "http://127.0.0.1:8080"},
    "zookeeper": {"connected": True, "session_id": "0x100000a962b0000"},
    "brokers": {"live": [1, 2, 3]},
    "topics": 1,
    "partitions": 2,
    "reassigning_partitions": 1,
    "event_queue": {"size": 0, "queue_time_ms": {"p50": 0.2, "p99": 3.14}},
    "uptime_s": 12,
    "problems": [],
}
TOPIC_JSON = {
    "name": "demo",
    "topic_id": "kqP0cOvlQ5Gx0r5VxD1x3g",
    "partitions": [
        {
            "partition": 0,
            "replicas": [4, 1, 2],
            "leader": 1,
            "leader_epoch": 3,
            "isr": [1, 2],
            "adding_replicas": [4],
            "removing_replicas": [2],
        },
        {
            "partition": 1,
            "replicas": [2, 3, 1],
            "leader": -1,
            "leader_epoch": 0,
            "isr": [],
            "adding_replicas": [],
            "removing_replicas": [],
        },
    ],
}


STATUS = decode(STATUS_JSON, Status)
TOPIC = decode(TOPIC_JSON, Topic)


def test_round_robin_assignment() -> None:
    assert round_robin_assignment([3, 1, 2], 4, 2) == {0: (1, 2), 1: (2, 3), 2: (3, 1), 3: (1, 2)}
    with pytest.raises(ValueError, match="replication factor 4 > 3 brokers"):
        round_robin_assignment([1, 2, 3], 1, 4)


def test_render() -> None:
    assert render("12:00:00", STATUS, [TOPIC]).splitlines() == [
        "--- 12:00:00 " + "-" * 60,
        "controller 9000 at http://127.0.0.1:8080, epoch 1; ZooKeeper connected (session 0x100000a962b0000); up 12 s",
        "live brokers [1,2,3]; 1 topics, 2 partitions, 1 reassigning; event queue 0 (p99 3.1 ms)",
        "topic demo (id kqP0cOvlQ5Gx0r5VxD1x3g)",
        "  partition  leader  epoch  replicas  isr  adding  removing",
        "  0          1       3      4,1,2     1,2  4       2",
        "  1          none    0      2,3,1     -    -       -",
    ]


def test_render_without_controller_or_topic() -> None:
    status = decode(
        dict(STATUS_JSON, active_controller=None, zookeeper={"connected": False, "session_id": None}), Status
    )
    lines = render("12:00:00", status, []).splitlines()
    assert lines[1].startswith("no active controller, epoch 1; ZooKeeper DISCONNECTED (session None)")
    assert len(lines) == 3


def test_options() -> None:
    assert parse_options([]) == DemoOptions()
    assert parse_options(["--duration-s", "5", "--brokers", "4", "--keep-running"]) == DemoOptions(
        brokers=4, duration_s=5.0, keep_running=True
    )
    assert parse_options(["--partition-mib", "0", "--replication-mib-s", "10"]) == DemoOptions(
        partition_mib=0, replication_mib_s=10
    )
    assert parse_options(["--secure"]) == DemoOptions(secure=True)
    for bad in (
        ["--brokers", "0"],
        ["--brokers", "3"],  # replication factor 3: nowhere to drain to
        ["--replication-mib-s", "0"],
        ["--duration-s", "0"],
        ["--interval-s", "-1"],
        ["--topic", "a/b"],
    ):
        with pytest.raises(SystemExit):
            parse_options(bad)


# --- plans ------------------------------------------------------------------------------------------

RACKS: dict[int, str | None] = {1: "r0", 2: "r1", 3: "r2", 4: "r0", 5: "r1", 6: "r2"}


def test_replacement_prefers_an_unused_rack_then_the_least_loaded() -> None:
    # [1,2,3] loses 1: racks r1 and r2 stay used, so only rack r0's broker 4 qualifies
    assert replacement([1, 2, 3], 1, RACKS, {}) == 4
    # [1,2] loses 1: r1 stays used; 3, 4 and 6 qualify; the least loaded, then the lowest id
    assert replacement([1, 2], 1, RACKS, {3: 2, 4: 1, 6: 1}) == 4
    assert replacement([1, 2], 1, RACKS, {3: 2, 4: 1, 6: 0}) == 6
    # nothing on another rack: a broker on a used rack after all
    assert replacement([1, 2, 3], 1, RACKS, {}, exclude=[4]) == 5
    # no racks at all: by load
    assert replacement([1, 2], 1, {1: None, 2: None, 3: None, 4: None}, {3: 5}) == 4
    with pytest.raises(ValueError, match=r"no broker can take broker 1's replica of \[1,2,3\]"):
        replacement([1, 2, 3], 1, {1: "a", 2: "a", 3: "a"}, {})


def test_drain_targets_keep_the_order_and_spread_the_load() -> None:
    six = round_robin_assignment(list(RACKS), 6, 3)
    assert drain_targets(six, 1, RACKS) == {0: [4, 2, 3], 4: [5, 6, 4], 5: [6, 4, 2]}
    four = round_robin_assignment([1, 2, 3, 4], 6, 2)  # 0:(1,2) 3:(4,1) 4:(1,2) hold broker 1
    no_racks: dict[int, str | None] = {b: None for b in (1, 2, 3, 4)}
    # loads before: 2:4 3:3 4:2; each pick raises the load of the broker it picks
    assert drain_targets(four, 1, no_racks) == {0: [4, 2], 3: [4, 3], 4: [4, 2]}
    assert drain_targets(four, 9, no_racks) == {}


def test_api_documents() -> None:
    assert msgspec.json.decode(msgspec.json.encode(alter_body("demo", {1: [4, 2], 0: None}))) == {
        "topics": [
            {
                "name": "demo",
                "partitions": [{"partition": 0, "replicas": None}, {"partition": 1, "replicas": [4, 2]}],
            }
        ]
    }
    ok = {"partition": 0, "error_code": 0, "error_name": "NONE", "error_message": None}
    bad = {
        "partition": 1,
        "error_code": 39,
        "error_name": "INVALID_REPLICA_ASSIGNMENT",
        "error_message": "no",
    }

    def alter(error_code: int, responses: list[Any], name: str = "NONE") -> AlterReassignmentsResponse:
        envelope = {"throttle_time_ms": 0, "error_name": name, "error_message": None}
        return decode(
            envelope | {"error_code": error_code, "responses": responses}, AlterReassignmentsResponse
        )

    assert partition_errors(alter(0, [{"name": "t", "partitions": [ok]}])) == []
    assert partition_errors(alter(0, [{"name": "t", "partitions": [ok, bad]}])) == [
        "t-1: INVALID_REPLICA_ASSIGNMENT (no)"
    ]
    assert partition_errors(alter(41, [], "NOT_CONTROLLER")) == ["NOT_CONTROLLER (None)"]

    def moving(partition: int) -> dict[str, Any]:
        return {"partition": partition, "replicas": [1], "adding_replicas": [], "removing_replicas": []} | {
            "target_replicas": [1],
            "original_replicas": [1],
            "source": "api",
            "started_at": None,
            "progress": None,
        }

    def listing(topics: list[Any]) -> ListReassignmentsResponse:
        envelope = {"error_code": 0, "error_name": "NONE", "error_message": None}
        return decode(envelope | {"topics": topics}, ListReassignmentsResponse)

    shown = listing(
        [
            {"name": "b", "partitions": [moving(0)]},
            {"name": "a", "partitions": [moving(2), moving(1)]},
        ]
    )
    assert [tp for tp, _ in listed(shown)] == [("a", 1), ("a", 2), ("b", 0)]
    assert listed(listing([])) == []
    assert assignment_of(TOPIC) == {0: [4, 1, 2], 1: [2, 3, 1]}
    brokers: list[dict[str, Any]] = [
        {"id": b, "rack": rack, "endpoints": [], "broker_epoch": 1} for b, rack in ((1, "r0"), (2, None))
    ]
    assert racks_of(decode({"brokers": brokers, "demoted": {}}, Brokers)) == {1: "r0", 2: None}
    assert fraction_done(None) is None
    assert fraction_done(Progress(0, 0, 0, None)) is None
    assert fraction_done(Progress(200, 50, 0, None)) == 0.25
    assert fraction_done(Progress(200, 300, 0, None)) == 1.0


# --- text ---------------------------------------------------------------------------------------------


def test_small_formats() -> None:
    assert ids([4, 1, 2]) == "4,1,2"
    assert ids([]) == "-"
    assert [size(n) for n in (0, 512, 1536, 200 * 2**20, 3 * 2**30, 2**50)] == [
        "0 B",
        "512 B",
        "1.5 KiB",
        "200.0 MiB",
        "3.0 GiB",
        "1024.0 TiB",
    ]
    assert [seconds(s) for s in (None, 0, 41.6, 60, 125)] == ["?", "0 s", "42 s", "1 min 0 s", "2 min 5 s"]
    assert bar(0) == "[" + "." * 20 + "]"
    assert bar(0.5, width=4) == "[##..]"
    assert bar(2.0, width=4) == "[####]"
    assert replica_moves([1], [4]) == "1 -> 4"
    assert replica_moves([1, 2], [4, 5]) == "1,2 -> 4,5"
    assert replica_moves([], [4]) == "+4"
    assert replica_moves([3], []) == "-3"
    assert replica_moves([], []) == "reorder"


def test_table() -> None:
    assert table([("a", "1"), ("long", "100")], right={1}) == ["  a       1", "  long  100"]
    assert table([("x", ""), ("yy", "")], indent="") == ["x", "yy"]
    assert table([]) == []


def entry(progress: dict[str, Any] | None, partition: int = 0) -> tuple[TopicPartition, Reassignment]:
    moved = None if progress is None else Progress(**progress)
    return ("demo", partition), Reassignment(
        partition, (4, 2, 3, 1), (4,), (1,), (4, 2, 3), (1, 2, 3), "api", None, moved
    )


MOVING = {"bytes_total": 400 * 2**20, "bytes_done": 100 * 2**20, "bytes_per_s": 25 * 2**20, "eta_s": 12}


def test_progress_cells() -> None:
    assert progress_cells(*entry(MOVING)) == (
        "demo-0",
        "1 -> 4",
        "[#####...............]",
        " 25%",
        "100.0 MiB / 400.0 MiB",
        " 25.0 MiB/s",
        "ETA 12 s",
    )
    assert progress_cells(*entry(None))[2:] == (
        "[" + "." * 20 + "]",
        "",
        "",
        "",
        "waiting for the first report",
    )
    stalled = dict(MOVING, bytes_per_s=0, eta_s=None)
    assert progress_cells(*entry(stalled))[5:] == ("      0 B/s", "ETA ?")


def test_render_progress() -> None:
    slow = dict(MOVING, bytes_done=5 * 2**20, bytes_per_s=512 * 1024, eta_s=790)
    assert render_progress("12:00:01", [entry(MOVING), entry(slow, 4)]) == [
        "12:00:01  demo-0  1 -> 4  [#####...............]   25%  100.0 MiB / 400.0 MiB   25.0 MiB/s  ETA 12 s",
        "          demo-4  1 -> 4  [....................]    1%    5.0 MiB / 400.0 MiB  512.0 KiB/s  ETA 13 min 10 s",
    ]
    assert render_progress("12:00:01", []) == ["12:00:01  nothing moving"]


def test_render_load() -> None:
    assert render_load(TOPIC, [1, 2, 3, 5]) == "replicas per broker: 1:2 2:2 3:1 4:1 5:0"


def test_the_options_need_only_the_standard_library() -> None:
    """``scripts/demo.sh`` checks its flags with any Python before installing anything: the
    options module runs without site-packages (``-S``)."""
    root = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").exists())
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-S", "-m", "reassignd.demo.options", "--brokers", "4", "--duraton-s", "1"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=root,
        env=env,
    )
    assert done.returncode == 2
    assert done.stderr == (
        "scripts/demo.sh: error: unknown option --duraton-s; did you mean --duration-s? (see scripts/demo.sh --help)\n"
    )

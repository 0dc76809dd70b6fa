"""The demo's pure parts: the demo topic's assignment and how the cluster state is printed."""

from __future__ import annotations

import pytest

from reassignd.demo import DemoOptions, parse_options, render, round_robin_assignment

STATUS = {
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
TOPIC = {
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
    status = dict(STATUS, active_controller=None, zookeeper={"connected": False, "session_id": None})
    lines = render("12:00:00", status, []).splitlines()
    assert lines[1].startswith("no active controller, epoch 1; ZooKeeper DISCONNECTED (session None)")
    assert len(lines) == 3


def test_options() -> None:
    assert parse_options([]) == DemoOptions()
    assert parse_options(["--duration-s", "5", "--brokers", "4"]) == DemoOptions(brokers=4, duration_s=5.0)
    with pytest.raises(SystemExit):
        parse_options(["--brokers", "0"])

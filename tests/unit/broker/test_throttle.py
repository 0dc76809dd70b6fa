"""Byte-rate limiting and simulation configs of the broker agent: pure, no server."""

from __future__ import annotations

import math

import pytest

from reassignd.broker.settings import BrokerSettings, cluster_settings
from reassignd.broker.sim_config import broker_sim_config, topic_sim_config
from reassignd.broker.throttle import MAX_GRANT, ThrottledReplicas, allocate, allocate_throttled, grant
from reassignd.config import BrokerCommand, ClusterCommand, load_command


def test_allocate_is_water_filling() -> None:
    assert allocate(100, [10, 50, 50]) == [10, 45, 45]
    assert allocate(100, [10, 20]) == [10, 20]
    assert allocate(0, [10, 20]) == [0, 0]
    assert allocate(2, [5, 5, 5]) == [1, 1, 0]
    assert allocate(10, []) == []
    assert grant(math.inf) == MAX_GRANT and grant(-3.0) == 0 and grant(7.9) == 7


def test_throttled_replicas_share_only_the_throttle_budget() -> None:
    shares = allocate_throttled(1000, 100, [500, 500], [True, False])
    assert shares == [100, 500]
    assert allocate_throttled(1000, 10_000, [500, 500], [True, False]) == [500, 500]
    assert allocate_throttled(150, 60, [100, 100, 100], [True, True, False]) == [30, 30, 90]


def test_throttled_replicas_lists() -> None:
    assert not ThrottledReplicas.parse("").covers(0, 1)
    assert ThrottledReplicas.parse("*").covers(7, 3)
    listed = ThrottledReplicas.parse("0:1, 0:2,3:4")
    assert listed.covers(0, 2) and listed.covers(3, 4)
    assert not listed.covers(1, 1)
    with pytest.raises(ValueError):
        ThrottledReplicas.parse("0-1")


def test_topic_sim_config_defaults_and_values() -> None:
    assert topic_sim_config(None).initial_bytes == 0
    assert topic_sim_config(None, 5.0).produce_bytes_per_s == 5.0
    cfg = topic_sim_config(
        {
            "reassignd.sim.initial.bytes": "1048576",
            "reassignd.sim.produce.bytes.per.s": "2048.5",
            "leader.replication.throttled.replicas": "0:1",
            "follower.replication.throttled.replicas": "*",
            "retention.ms": "1000",
        }
    )
    assert (cfg.initial_bytes, cfg.produce_bytes_per_s) == (1048576, 2048.5)
    assert cfg.leader_throttled.covers(0, 1) and cfg.follower_throttled.everything
    bad = topic_sim_config(
        {"reassignd.sim.initial.bytes": "lots", "follower.replication.throttled.replicas": "x"}
    )
    assert bad.initial_bytes == 0 and not bad.follower_throttled.covers(0, 0)
    assert len(bad.problems) == 2


def test_broker_bandwidth_comes_from_its_config_then_the_default_then_the_flag() -> None:
    key = "reassignd.sim.replication.bytes.per.s"
    assert broker_sim_config(None, None, 100.0).replication_bytes_per_s == 100.0
    assert broker_sim_config(None, {key: "50"}, 100.0).replication_bytes_per_s == 50.0
    assert broker_sim_config({key: "7"}, {key: "50"}, 100.0).replication_bytes_per_s == 7.0
    cfg = broker_sim_config(None, {"leader.replication.throttled.rate": "10"}, 100.0)
    assert cfg.leader_throttled_rate == math.inf  # KIP-73 rates only from the broker's own config
    cfg = broker_sim_config({"follower.replication.throttled.rate": "10", key: "-1"}, None, 100.0)
    assert cfg.follower_throttled_rate == 10.0
    assert cfg.replication_bytes_per_s == 100.0 and cfg.problems


def test_cluster_settings_ids_racks_and_ports() -> None:
    base = BrokerSettings(zk_connect="zk:2181", broker_id=0)
    agents = cluster_settings(base, brokers=4, first_id=3, racks=2)
    assert [(s.broker_id, s.rack, s.control_port) for s in agents] == [
        (3, "r0", 0),
        (4, "r1", 0),
        (5, "r0", 0),
        (6, "r1", 0),
    ]
    fixed = cluster_settings(
        BrokerSettings(zk_connect="zk", broker_id=0, control_port=9100, rack="x"), 2, 1, None
    )
    assert [(s.rack, s.control_port) for s in fixed] == [("x", 9100), ("x", 9101)]
    with pytest.raises(ValueError):
        BrokerSettings(zk_connect="zk", broker_id=-1)


def test_the_broker_and_cluster_commands_build_agent_settings_from_flags() -> None:
    one = load_command(
        [
            "broker",
            "--zk",
            "zk:2181/x",
            "--id",
            "4",
            "--rack",
            "r1",
            "--replication-bytes-per-s",
            "1e9",
            "--session-timeout-s",
            "2",
        ],
        {},
    )
    assert isinstance(one, BrokerCommand)
    s = one.settings
    assert (s.zk_connect, s.broker_id, s.rack, s.replication_bytes_per_s, s.session_timeout_s) == (
        "zk:2181/x",
        4,
        "r1",
        1e9,
        2.0,
    )
    many = load_command(
        ["cluster", "--zk", "zk:2181", "--first-id", "1", "--brokers", "3", "--racks", "2"], {}
    )
    assert isinstance(many, ClusterCommand)
    assert [(x.broker_id, x.rack) for x in many.settings] == [(1, "r0"), (2, "r1"), (3, "r0")]

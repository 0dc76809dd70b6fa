"""Flags, environment and TOML file → settings (pure), and the console script's exit codes."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from reassignd.broker.processes import groups
from reassignd.broker.settings import BrokerSettings
from reassignd.config import (
    BrokerCommand,
    ClusterCommand,
    ConfigError,
    ControllerCommand,
    file_values,
    load_command,
    resolve,
)
from reassignd.controller.settings import ControllerSettings
from reassignd.log_setup import LogSettings
from reassignd.options import unknown_flag
from tests.unit import command_line

ZK = "127.0.0.1:2181/kafka"


def controller(
    flags: Mapping[str, object], env: dict[str, str] | None = None, file: Mapping[str, object] | None = None
) -> ControllerSettings:
    command = resolve("controller", flags, env or {}, file or {})
    assert isinstance(command, ControllerCommand)
    return command.settings


# --- precedence -------------------------------------------------------------------------------------


def test_defaults() -> None:
    command = resolve("controller", {"zk": ZK}, {}, {})
    assert command == ControllerCommand(ControllerSettings(zk_connect=ZK), LogSettings("info", "text"))


def test_flag_beats_env_beats_file_beats_default() -> None:
    file = {"controller-id": 1, "events-topic": "from-file", "session-timeout-s": 9}
    env = {"REASSIGND_CONTROLLER_ID": "2", "REASSIGND_EVENTS_TOPIC": "from-env"}
    flags = {"zk": ZK, "controller-id": "3"}
    settings = controller(flags, env, file)
    assert settings.controller_id == 3  # flag
    assert settings.events_topic == "from-env"  # env over file
    assert settings.session_timeout_s == 9.0  # file over default
    assert settings.http_port == 8080  # default
    assert controller({"zk": ZK}, env, file).controller_id == 2
    assert controller({"zk": ZK}, {}, file).controller_id == 1


def test_every_flag_has_an_env_var() -> None:
    env = {
        "REASSIGND_ZK": ZK,
        "REASSIGND_CONTROLLER_ID": "9001",
        "REASSIGND_HTTP": "127.0.0.1:0",
        "REASSIGND_EVENTS_BOOTSTRAP_SERVERS": "k1:9092,k2:9092",
        "REASSIGND_EVENTS_TOPIC": "audit",
        "REASSIGND_SESSION_TIMEOUT_S": "2.5",
        "REASSIGND_LOG_LEVEL": "DEBUG",
        "REASSIGND_LOG_FORMAT": "json",
    }
    command = resolve("controller", {}, env, {})
    assert command == ControllerCommand(
        ControllerSettings(
            zk_connect=ZK,
            controller_id=9001,
            http_host="127.0.0.1",
            http_port=0,
            session_timeout_s=2.5,
            events_bootstrap_servers="k1:9092,k2:9092",
            events_topic="audit",
        ),
        LogSettings("debug", "json"),
    )


def test_file_keys_take_dashes_or_underscores_and_a_table_per_command() -> None:
    document = {
        "zk": ZK,
        "controller_id": 9005,
        "brokers": 6,  # belongs to `cluster`: ignored by `controller`
        "controller": {"http": "[::1]:8081"},
        "cluster": {"racks": 3},
    }
    values = file_values(document, "controller", "reassignd.toml")
    assert values == {"zk": ZK, "controller-id": 9005, "http": "[::1]:8081"}
    settings = controller({}, {}, values)
    assert (settings.controller_id, settings.http_host, settings.http_port) == (9005, "::1", 8081)
    assert file_values(document, "cluster", "f") == {"zk": ZK, "brokers": 6, "racks": 3}


def test_unknown_file_key_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"reassignd\.toml: unknown key 'contoller_id'"):
        file_values({"contoller_id": 1}, "controller", "reassignd.toml")
    with pytest.raises(ConfigError, match=r"reassignd.toml \[broker\]: unknown key 'nope'"):
        file_values({"broker": {"nope": 1}}, "broker", "reassignd.toml")


# --- bad values: one line naming the source ---------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "env", "message"),
    [
        ({}, {}, "missing --zk (or REASSIGND_ZK, or zk in the --config file)"),
        ({"zk": ZK, "controller-id": "abc"}, {}, "--controller-id: expected an integer, got 'abc'"),
        ({"zk": ZK}, {"REASSIGND_CONTROLLER_ID": "-1"}, "REASSIGND_CONTROLLER_ID: must be >= 0, got -1"),
        ({"zk": ZK, "http": "8080"}, {}, "--http: expected HOST:PORT, got '8080'"),
        ({"zk": ZK, "http": "127.0.0.1:70000"}, {}, "--http: invalid port '70000'"),
        ({"zk": "zk1"}, {}, "--zk: expected HOST:PORT, got 'zk1'"),
        ({"zk": "zk1:2181//a"}, {}, "--zk: invalid chroot"),
        ({"zk": ZK, "session-timeout-s": "0"}, {}, "--session-timeout-s: must be > 0, got 0"),
        ({"zk": ZK, "log-format": "xml"}, {}, "--log-format: expected one of text, json, got 'xml'"),
        ({"zk": ZK, "log-level": "loud"}, {}, "--log-level: expected one of debug, info"),
    ],
)
def test_bad_values(flags: dict[str, object], env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve("controller", flags, env, {})
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_auto_leader_rebalance_settings_default_to_kafkas() -> None:
    defaults = controller({"zk": ZK})
    assert defaults.auto_leader_rebalance_enable is True
    assert defaults.leader_imbalance_per_broker_percentage == 10
    assert defaults.leader_imbalance_check_interval_s == 300.0
    env = {
        "REASSIGND_AUTO_LEADER_REBALANCE_ENABLE": "FALSE",
        "REASSIGND_LEADER_IMBALANCE_PER_BROKER_PERCENTAGE": "25",
    }
    file = {"leader-imbalance-check-interval-s": 30, "auto-leader-rebalance-enable": True}
    settings = controller({"zk": ZK}, env, file)
    assert settings.auto_leader_rebalance_enable is False  # env over file
    assert settings.leader_imbalance_per_broker_percentage == 25
    assert settings.leader_imbalance_check_interval_s == 30.0
    assert (
        controller({"zk": ZK}, {}, {"auto-leader-rebalance-enable": False}).auto_leader_rebalance_enable
        is False
    )
    assert controller({"zk": ZK, "auto-leader-rebalance-enable": "on"}).auto_leader_rebalance_enable is True


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"auto-leader-rebalance-enable": "maybe"}, "--auto-leader-rebalance-enable: expected true or false"),
        ({"leader-imbalance-per-broker-percentage": "101"}, "must be <= 100, got 101"),
        ({"leader-imbalance-per-broker-percentage": "-1"}, "must be >= 0, got -1"),
        ({"leader-imbalance-check-interval-s": "0"}, "--leader-imbalance-check-interval-s: must be > 0"),
    ],
)
def test_bad_auto_leader_rebalance_values(flags: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve("controller", {"zk": ZK, **flags}, {}, {})
    assert message in str(caught.value)


def test_bad_file_value_names_the_file_and_key() -> None:
    with pytest.raises(ConfigError, match=r"^c\.toml: controller-id: expected an integer, got True$"):
        resolve("controller", {"zk": ZK}, {}, {"controller-id": True}, "c.toml")


def test_binding_beyond_loopback_needs_tokens(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^refusing to bind 0\.0\.0\.0 without --auth-tokens: "):
        resolve("controller", {"zk": ZK, "http": "0.0.0.0:8080"}, {}, {})
    for loopback in ("127.0.0.1:0", "localhost:8080", "[::1]:8080"):
        controller({"zk": ZK, "http": loopback})
    settings = controller(
        {
            "zk": ZK,
            "http": "0.0.0.0:8080",
            "auth-tokens": "/etc/tokens.toml",
            "http-advertised": "http://reassignd-0.reassignd:8080",
        }
    )
    assert (settings.http_host, settings.auth_tokens_path) == ("0.0.0.0", "/etc/tokens.toml")
    assert settings.http_advertised == "http://reassignd-0.reassignd:8080"


# --- broker and cluster -----------------------------------------------------------------------------


def test_broker_settings() -> None:
    command = resolve(
        "broker",
        {"zk": ZK, "id": "4", "rack": "r1", "replication-bytes-per-s": "1048576"},
        {"REASSIGND_ISR_LINGER_MS": "50", "REASSIGND_CONTROL_PORT": "19092"},
        {"replica-lag-time-max-ms": 1000},
    )
    assert command == BrokerCommand(
        BrokerSettings(
            zk_connect=ZK,
            broker_id=4,
            rack="r1",
            control_port=19092,
            replication_bytes_per_s=1048576.0,
            replica_lag_time_max_ms=1000,
            isr_linger_ms=50,
        ),
        LogSettings(),
    )


def test_broker_needs_an_id() -> None:
    with pytest.raises(ConfigError, match=r"^missing --id \(or REASSIGND_ID, or id in the --config file\)$"):
        resolve("broker", {"zk": ZK}, {}, {})


def test_cluster_ids_and_racks() -> None:
    command = resolve("cluster", {"zk": ZK, "brokers": "4", "first-id": "10", "racks": "3"}, {}, {})
    assert isinstance(command, ClusterCommand)
    assert [(s.broker_id, s.rack, s.control_port) for s in command.settings] == [
        (10, "r0", 0),
        (11, "r1", 0),
        (12, "r2", 0),
        (13, "r0", 0),
    ]
    assert all(s.zk_connect == ZK for s in command.settings)


def test_cluster_control_ports_count_up_from_the_given_one() -> None:
    command = resolve("cluster", {"zk": ZK, "brokers": "3", "control-port": "19090"}, {}, {})
    assert isinstance(command, ClusterCommand)
    assert [(s.broker_id, s.rack, s.control_port) for s in command.settings] == [
        (1, None, 19090),
        (2, None, 19091),
        (3, None, 19092),
    ]
    with pytest.raises(ConfigError, match="do not fit"):
        resolve("cluster", {"zk": ZK, "brokers": "3", "control-port": "65534"}, {}, {})


def test_cluster_processes_split_the_agents_into_groups_of_consecutive_ids() -> None:
    command = resolve("cluster", {"zk": ZK, "brokers": "5", "processes": "2"}, {}, {})
    assert isinstance(command, ClusterCommand)
    assert command.processes == 2
    assert [[s.broker_id for s in g] for g in groups(command.settings, command.processes)] == [
        [1, 2, 3],
        [4, 5],
    ]
    single = resolve("cluster", {"zk": ZK, "brokers": "5"}, {}, {})
    assert isinstance(single, ClusterCommand) and single.processes == 1
    assert [len(g) for g in groups(command.settings, 5)] == [1, 1, 1, 1, 1]
    with pytest.raises(ConfigError, match=r"--processes 6: more processes than --brokers \(5\)"):
        resolve("cluster", {"zk": ZK, "brokers": "5", "processes": "6"}, {}, {})
    with pytest.raises(ConfigError, match="--processes: must be >= 1, got 0"):
        resolve("cluster", {"zk": ZK, "brokers": "5", "processes": "0"}, {}, {})


def test_cluster_refuses_rack_and_racks_together() -> None:
    with pytest.raises(ConfigError, match="not both"):
        resolve("cluster", {"zk": ZK, "brokers": "3", "racks": "3", "rack": "r1"}, {}, {})
    with pytest.raises(ConfigError, match="--brokers: must be >= 1, got 0"):
        resolve("cluster", {"zk": ZK, "brokers": "0"}, {}, {})


# --- the shell: argv, the file, the tokens file -----------------------------------------------------


def test_load_command_reads_argv_env_and_file(tmp_path: Path) -> None:
    config = tmp_path / "reassignd.toml"
    config.write_text(f'zk = "{ZK}"\ncontroller_id = 9001\nlog-level = "warning"\n')
    command = load_command(["controller", "--config", str(config), "--http", "127.0.0.1:0"], {})
    assert isinstance(command, ControllerCommand)
    assert (command.settings.controller_id, command.settings.http_port) == (9001, 0)
    assert command.log == LogSettings("warning", "text")
    # the file may also come from REASSIGND_CONFIG
    from_env = load_command(["controller"], {"REASSIGND_CONFIG": str(config)})
    assert isinstance(from_env, ControllerCommand)
    assert from_env.settings.controller_id == 9001


def test_load_command_checks_the_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^cannot read config file .*missing.toml: No such file"):
        load_command(["controller", "--zk", ZK, "--config", str(tmp_path / "missing.toml")], {})
    bad = tmp_path / "bad.toml"
    bad.write_text("zk = \n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_command(["controller", "--config", str(bad)], {})
    with pytest.raises(ConfigError, match=r"^cannot read tokens file .*tokens.toml: No such file"):
        load_command(["controller", "--zk", ZK, "--auth-tokens", str(tmp_path / "tokens.toml")], {})
    tokens = tmp_path / "tokens.toml"
    tokens.write_text('[tokens."abc"]\nuser = "alice"\nrole = "superuser"\n')
    with pytest.raises(ConfigError, match='\'role\' must be "viewer" or "admin"'):
        load_command(["controller", "--zk", ZK, "--auth-tokens", str(tokens)], {})
    tokens.write_text('[tokens."abc"]\nuser = "alice"\nrole = "admin"\n')
    command = load_command(
        ["controller", "--zk", ZK, "--http", "0.0.0.0:0", "--auth-tokens", str(tokens)],
        {"REASSIGND_HTTP_ADVERTISED": "http://10.0.0.7:8080"},
    )
    assert isinstance(command, ControllerCommand)
    assert command.settings.auth_tokens_path == str(tokens)


# --- the console script, as a process ---------------------------------------------------------------


def reassignd(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return command_line.reassignd(*args, env=env, module="reassignd.cli")


@pytest.mark.parametrize(
    ("command", "flags"),
    [
        (
            "controller",
            [
                "--zk",
                "--controller-id",
                "--http",
                "--auth-tokens",
                "--events-bootstrap-servers",
                "--events-topic",
                "--auto-leader-rebalance-enable",
                "--leader-imbalance-per-broker-percentage",
                "--leader-imbalance-check-interval-s",
            ],
        ),
        ("broker", ["--zk", "--id", "--rack", "--host", "--control-port", "--replication-bytes-per-s"]),
        (
            "cluster",
            ["--zk", "--brokers", "--first-id", "--racks", "--replica-lag-time-max-ms", "--isr-linger-ms"],
        ),
    ],
)
def test_help_of_each_command(command: str, flags: list[str]) -> None:
    done = reassignd(command, "--help")
    assert done.returncode == 0, done.stderr
    for flag in [*flags, "--config", "--session-timeout-s", "--log-level", "--log-format"]:
        assert flag in done.stdout
    assert "REASSIGND_ZK" in done.stdout


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (
            ["controller", "--zk", ZK, "--http", "0.0.0.0:8080"],
            {},
            "reassignd controller: error: refusing to bind 0.0.0.0 without --auth-tokens: ",
        ),
        (
            ["controller", "--zk", ZK, "--auth-tokens", "/nonexistent/tokens.toml"],
            {},
            "reassignd controller: error: cannot read tokens file /nonexistent/tokens.toml",
        ),
        (["broker", "--zk", ZK], {}, "reassignd broker: error: missing --id"),
        (
            ["cluster", "--zk", ZK, "--brokers", "x"],
            {},
            "reassignd cluster: error: --brokers: expected an integer",
        ),
        (
            ["cluster", "--brokers", "3"],
            {"REASSIGND_ZK": "nope"},
            "REASSIGND_ZK: expected HOST:PORT, got 'nope'",
        ),
        (["controller", "--zk", ZK, "--bogus"], {}, "reassignd controller: error: unknown option --bogus"),
        (["admin", "reassign", "--exeucte"], {}, "unknown option --exeucte; did you mean --execute?"),
        ([], {}, "reassignd: error: choose a command"),
    ],
)
def test_bad_configuration_exits_2_with_one_line(args: list[str], env: dict[str, str], message: str) -> None:
    done = reassignd(*args, env=env)
    assert done.returncode == 2
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--execute", "--list"], None),
        (["--exeucte"], "unknown option --exeucte; did you mean --execute?"),
        (["--exec"], "unknown option --exec; did you mean --execute?"),  # never an abbreviation
        (["--list", "--zk=x:1", "--rakc=r1"], "unknown option --rakc; did you mean --rack?"),
        (["--nothing-like-it"], "unknown option --nothing-like-it"),
        (["--", "--anything"], None),
        (["-x", "value"], None),  # single-dash: argparse's
    ],
)
def test_an_unknown_flag_is_named_with_the_closest_known_one(args: list[str], expected: str | None) -> None:
    assert unknown_flag(args, ["--execute", "--list", "--zk", "--rack", "--racks"]) == expected

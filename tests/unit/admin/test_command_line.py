"""One command-line engine for every subcommand: each takes an option as a flag, as its
``REASSIGND_*`` variable and as a key of the ``--config`` file (its subcommand's table), with the
same precedence (flag > environment > file), and refuses an unknown file key the same way."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from reassignd.admin.batch_command import AdminBatchCommand
from reassignd.admin.command_line import AdminReassignCommand
from reassignd.admin.demote_command import AdminDemoteCommand
from reassignd.admin.elect_command import AdminElectCommand
from reassignd.admin.zk_acls_command import AdminZkAclsCommand
from reassignd.config import (
    SUBCOMMANDS,
    BrokerCommand,
    ClusterCommand,
    Command,
    ConfigError,
    ControllerCommand,
    load_command,
)
from reassignd.feeder.command_line import FeedPlanCommand, FeedRunCommand
from reassignd.stream.tail import EventsTailCommand

ZK = "127.0.0.1:2181/kafka"


@dataclass(frozen=True)
class Case:
    """A subcommand's words and what it needs besides the option, the option, the values given
    as flag, variable and file key, and how the resolved command shows the value."""

    argv: tuple[str, ...]
    option: str
    values: tuple[str, str, object]  # flag, environment, file
    seen: Callable[[Command], object]
    expected: tuple[object, object, object]


def _controller(c: Command) -> object:
    assert isinstance(c, ControllerCommand)
    return c.settings.controller_id


def _broker(c: Command) -> object:
    assert isinstance(c, BrokerCommand)
    return c.settings.rack


def _cluster(c: Command) -> object:
    assert isinstance(c, ClusterCommand)
    return c.settings[0].broker_id


def _reassign(c: Command) -> object:
    assert isinstance(c, AdminReassignCommand)
    return c.settings.bootstrap_controller


def _batch(c: Command) -> object:
    assert isinstance(c, AdminBatchCommand)
    return c.settings.bootstrap_controller


def _elect(c: Command) -> object:
    assert isinstance(c, AdminElectCommand)
    return c.settings.bootstrap_controller


def _demote(c: Command) -> object:
    assert isinstance(c, AdminDemoteCommand)
    return c.settings.bootstrap_controller


def _zk_acls(c: Command) -> object:
    assert isinstance(c, AdminZkAclsCommand)
    return c.settings.zk_connect


def _plan(c: Command) -> object:
    assert isinstance(c, FeedPlanCommand)
    return c.values["cluster-file"]


def _run(c: Command) -> object:
    assert isinstance(c, FeedRunCommand)
    return c.values["max-pending"]


def _tail(c: Command) -> object:
    assert isinstance(c, EventsTailCommand)
    return c.settings.bootstrap_servers


URLS = ("http://flag:1", "http://env:1", "http://file:1")
BATCH_VERBS = {
    "submit": ("--batch-file", "{batch_file}"),
    "list": (),
    "describe": ("b1",),
    "pause": ("b1",),
    "resume": ("b1",),
    "stop": ("b1",),
    "rollback": ("b1",),
}

CASES: dict[str, Case] = {
    "controller": Case(("controller", "--zk", ZK), "controller-id", ("3", "2", 1), _controller, (3, 2, 1)),
    "broker": Case(
        ("broker", "--zk", ZK, "--id", "1"),
        "rack",
        ("r-flag", "r-env", "r-file"),
        _broker,
        ("r-flag", "r-env", "r-file"),
    ),
    "cluster": Case(
        ("cluster", "--zk", ZK, "--brokers", "2"), "first-id", ("30", "20", 10), _cluster, (30, 20, 10)
    ),
    "admin reassign": Case(("admin", "reassign", "--list"), "bootstrap-controller", URLS, _reassign, URLS),
    **{
        f"admin batch {verb}": Case(
            ("admin", "batch", verb, *args), "bootstrap-controller", URLS, _batch, URLS
        )
        for verb, args in BATCH_VERBS.items()
    },
    "admin elect": Case(
        ("admin", "elect", "--election-type", "preferred", "--all-topic-partitions"),
        "bootstrap-controller",
        URLS,
        _elect,
        URLS,
    ),
    **{
        f"admin {verb}": Case(("admin", verb, "--broker", "3"), "bootstrap-controller", URLS, _demote, URLS)
        for verb in ("demote", "promote")
    },
    "admin zk-acls": Case(
        ("admin", "zk-acls", "--unsecure"),
        "zk",
        ("flag:1/k", "env:1/k", "file:1/k"),
        _zk_acls,
        ("flag:1/k", "env:1/k", "file:1/k"),
    ),
    "feed plan": Case(
        ("feed", "plan", "--goal", "add:1", "--dry-run"),
        "cluster-file",
        ("f.json", "e.json", "c.json"),
        _plan,
        ("f.json", "e.json", "c.json"),
    ),
    "feed run": Case(
        ("feed", "run", "/plan", "--bootstrap-controller", "http://c:1"),
        "max-pending",
        ("7", "5", 3),
        _run,
        (7, 5, 3),
    ),
    "events tail": Case(
        ("events", "tail"), "bootstrap-servers", ("f:1", "e:1", "c:1"), _tail, ("f:1", "e:1", "c:1")
    ),
}


def test_every_subcommand_has_a_case() -> None:
    assert set(CASES) == {sub.name for sub in SUBCOMMANDS}


def _argv(case: Case, tmp_path: Path) -> list[str]:
    batch_file = tmp_path / "batches.json"
    batch_file.write_text(
        json.dumps({"batch_id": "b1", "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2]}]})
    )
    return [a.format(batch_file=batch_file) for a in case.argv]


@pytest.mark.parametrize("name", sorted(CASES))
def test_flag_beats_environment_beats_file(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    table = name.split(maxsplit=1)[0]
    config = tmp_path / "reassignd.toml"
    config.write_text(f"[{table}]\n{case.option} = {json.dumps(case.values[2])}\n")
    variable = "REASSIGND_" + case.option.replace("-", "_").upper()
    argv = [*_argv(case, tmp_path), "--config", str(config)]
    flag_value, env_value, _ = case.values
    given = {
        "flag": load_command([*argv, f"--{case.option}", flag_value], {variable: env_value}),
        "env": load_command(argv, {variable: env_value}),
        "file": load_command(argv, {}),
    }
    assert [case.seen(given[source]) for source in ("flag", "env", "file")] == list(case.expected)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_file_at_top_level_and_the_config_variable(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    config = tmp_path / "reassignd.toml"
    config.write_text(f"{case.option.replace('-', '_')} = {json.dumps(case.values[2])}\n")
    command = load_command(_argv(case, tmp_path), {"REASSIGND_CONFIG": str(config)})
    assert case.seen(command) == case.expected[2]


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_unknown_file_key_is_refused_by_every_subcommand(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    config = tmp_path / "reassignd.toml"
    config.write_text(
        f"{case.option} = {json.dumps(case.values[2])}\n[{name.split(maxsplit=1)[0]}]\nno-such-key = 1\n"
    )
    with pytest.raises(ConfigError, match=r"unknown key 'no-such-key'"):
        load_command([*_argv(case, tmp_path), "--config", str(config)], {})


def test_a_key_of_another_subcommand_is_left_to_it(tmp_path: Path) -> None:
    config = tmp_path / "reassignd.toml"
    config.write_text('controller-id = 5\nbootstrap-servers = "k:9092"\n[feed]\nmax-pending = 4\n')
    tail = load_command(["events", "tail", "--config", str(config)], {})
    assert _tail(tail) == "k:9092"
    run = load_command(
        ["feed", "run", "/p", "--bootstrap-controller", "http://c:1", "--config", str(config)], {}
    )
    assert _run(run) == 4

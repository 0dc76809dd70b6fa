"""``reassignd admin reassign``'s command line: flags, ``REASSIGND_*``, the ``[admin]`` table, the
verbs' needs, and exit 2 with one line for anything unusable (no server involved)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reassignd.admin.command_line import AdminReassignCommand
from reassignd.admin.settings import ReassignSettings, Verb
from reassignd.config import ConfigError, ControllerCommand, file_values, load_command, resolve_admin_reassign
from reassignd.log_setup import LogSettings
from reassignd.plan_format import Plan, PlanEntry
from tests.unit.command_line import reassignd

URL = "http://127.0.0.1:8080"
PLAN = Plan((PlanEntry("t", 0, (1, 2), ("any", "any")),))


def fake_read(path: str) -> Plan:
    assert path == "plan.json"
    return PLAN


def test_flags_env_and_file_as_for_every_command() -> None:
    command = resolve_admin_reassign(
        Verb.EXECUTE,
        "plan.json",
        {"auth-token": "from-flag"},
        {"REASSIGND_BOOTSTRAP_CONTROLLER": "127.0.0.1:8080", "REASSIGND_AUTH_TOKEN": "from-env"},
        {"request-timeout-s": 5, "zk": "zk:2181/kafka"},
        read_plan=fake_read,
    )
    assert command == AdminReassignCommand(
        ReassignSettings(
            verb=Verb.EXECUTE,
            plan=PLAN,
            plan_path="plan.json",
            bootstrap_controller=URL,
            zk_connect="zk:2181/kafka",
            auth_token="from-flag",
            request_timeout_s=5.0,
        ),
        LogSettings("warning", "text"),
    )


def test_the_verbs_needs_come_before_the_plan_is_read() -> None:
    def unread(path: str) -> Plan:
        raise AssertionError("not read")

    with pytest.raises(ConfigError, match=r"^--rollback needs --zk"):
        resolve_admin_reassign(Verb.ROLLBACK, None, {"bootstrap-controller": URL}, {}, {}, read_plan=unread)
    with pytest.raises(ConfigError, match=r"^--execute needs --bootstrap-controller URL"):
        resolve_admin_reassign(Verb.EXECUTE, "plan.json", {}, {}, {}, read_plan=unread)
    with pytest.raises(ConfigError, match=r"^--bootstrap-controller: expected an http:// or https:// URL"):
        resolve_admin_reassign(Verb.LIST, None, {"bootstrap-controller": "ftp://c"}, {}, {})


def test_one_file_serves_the_daemons_and_the_admin_client(tmp_path: Path) -> None:
    config = tmp_path / "reassignd.toml"
    config.write_text(
        'zk = "zk:2181/kafka"\n'
        'bootstrap-controller = "http://10.0.0.1:8080"\n'
        "[admin]\n"
        'auth_token = "t0k3n"\n'
        "[controller]\n"
        'http = "127.0.0.1:0"\n'
    )
    document = {"zk": "z:1", "admin": {"auth-token": "x"}, "controller": {"http": "127.0.0.1:0"}}
    assert file_values(document, "admin", "f") == {"zk": "z:1", "auth-token": "x"}
    admin = load_command(["admin", "reassign", "--list", "--config", str(config)], {})
    assert isinstance(admin, AdminReassignCommand)
    assert admin.settings == ReassignSettings(
        Verb.LIST, bootstrap_controller="http://10.0.0.1:8080", zk_connect="zk:2181/kafka", auth_token="t0k3n"
    )
    controller = load_command(["controller", "--config", str(config)], {})
    assert isinstance(controller, ControllerCommand)
    assert controller.settings.zk_connect == "zk:2181/kafka"


def test_the_plan_file_is_read_and_checked_at_once(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text('{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}')
    args = ["admin", "reassign", "--bootstrap-controller", URL, "--verify", "--reassignment-json-file"]
    command = load_command([*args, str(plan)], {})
    assert isinstance(command, AdminReassignCommand)
    assert command.settings.plan == PLAN
    assert command.settings.log_dir_timeout_ms == 10_000  # Kafka's --timeout default
    timed = load_command([*args, str(plan), "--timeout", "2500"], {})
    assert isinstance(timed, AdminReassignCommand) and timed.settings.log_dir_timeout_ms == 2500
    plan.write_text('{"version":1,"partitions":[]}')
    with pytest.raises(
        ConfigError, match=r"plan\.json: partitions: Partition reassignment list cannot be empty"
    ):
        load_command([*args, str(plan)], {})
    with pytest.raises(
        ConfigError, match=r"^cannot read --reassignment-json-file .*nope\.json: No such file"
    ):
        load_command([*args, str(tmp_path / "nope.json")], {})


# --- the console script, as a process ---------------------------------------------------------------


def test_help() -> None:
    done = reassignd("admin", "reassign", "--help")
    assert done.returncode == 0, done.stderr
    for flag in (
        *(v.flag for v in Verb),
        "--reassignment-json-file",
        "--bootstrap-controller",
        "--zk",
        "--auth-token",
        "--config",
        "REASSIGND_BOOTSTRAP_CONTROLLER",
    ):
        assert flag in done.stdout
    assert "admin" in reassignd("--help").stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["admin"], "reassignd admin: error: choose a client: reassign"),
        (["admin", "reassign", "--bootstrap-controller", URL], "error: one of the arguments --execute"),
        (
            ["admin", "reassign", "--list", "--cancel-all"],
            "argument --cancel-all: not allowed with argument --list",
        ),
        (
            ["admin", "reassign", "--list"],
            "reassignd admin reassign: error: --list needs --bootstrap-controller",
        ),
        (
            ["admin", "reassign", "--verify", "--bootstrap-controller", URL],
            "--verify needs --reassignment-json-file",
        ),
        (
            ["admin", "reassign", "--remove-cancel"],
            "reassignd admin reassign: error: --remove-cancel needs --zk",
        ),
        (
            [
                "admin",
                "reassign",
                "--execute",
                "--bootstrap-controller",
                URL,
                "--reassignment-json-file",
                "/nope",
            ],
            "reassignd admin reassign: error: cannot read --reassignment-json-file /nope",
        ),
        (
            ["admin", "reassign", "--list", "--bootstrap-controller", URL, "--request-timeout-s", "0"],
            "error: --request-timeout-s: must be > 0",
        ),
    ],
)
def test_bad_arguments_exit_2_with_one_line(args: list[str], message: str) -> None:
    done = reassignd(*args)
    assert done.returncode == 2, done
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stdout == ""


def test_a_bad_plan_exits_2_naming_the_file_and_field(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text('{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,1]}]}')
    done = reassignd(
        "admin",
        "reassign",
        "--cancel",
        "--reassignment-json-file",
        str(plan),
        env={"REASSIGND_BOOTSTRAP_CONTROLLER": URL},
    )
    assert done.returncode == 2
    assert done.stderr == (
        f"reassignd admin reassign: error: {plan}: partitions[0].replicas: Partition replica lists may "
        "not contain duplicate entries: t-0 contains multiple entries for 1\n"
    )


def test_an_unreachable_controller_exits_1_with_one_line() -> None:
    done = reassignd(
        "admin", "reassign", "--list", "--bootstrap-controller", "127.0.0.1:9", "--request-timeout-s", "5"
    )
    assert done.returncode == 1
    assert done.stderr.startswith(
        "reassignd admin reassign: error: cannot reach the controller at http://127.0.0.1:9"
    )
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr

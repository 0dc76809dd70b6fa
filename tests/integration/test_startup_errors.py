"""Every startup failure of every subcommand, as an operator meets it: exit 2 and one line on
stderr naming what and why (the address, the flag, the file), never a traceback unless
``--log-level debug``; a mistyped flag named with the closest known one; an admin client pointed
at the Kafka listener told so."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from reassignd.zk.server import free_port
from tests.integration.harness import Procs, eventually, http_get, two_free_ports

ROOT = Path(__file__).resolve().parents[2]
RUN_TIMEOUT_S = 90.0  # ZooKeeper unreachable: the client gives up after its 10 s request timeout


def reassignd(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m reassignd ARGS`` to its end, stdout and stderr apart."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "reassignd", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"reassignd {' '.join(args)} did not exit within {RUN_TIMEOUT_S} s: {err}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def one_line_error(result: subprocess.CompletedProcess[str], *expected: str) -> str:
    """Exit 2, exactly one line on stderr holding every ``expected`` text, no traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert result.returncode == 2, result.stderr
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port something else listens on, below the ephemeral range, the port after it free as well:
    a two-process cluster's second broker listens there (an ephemeral port's neighbour may be any
    outgoing connection's, and that broker's line came first)."""
    held, port = two_free_ports()
    with held:
        yield port


QUIET = ("--log-level", "warning")  # the daemons' info lines (ZooKeeper retries) left out


# --- the daemons: ports, ZooKeeper ---------------------------------------------------------------------


def test_controller_http_port_in_use(zk_connect: str, taken_port: int) -> None:
    result = reassignd("controller", "--zk", zk_connect, "--http", f"127.0.0.1:{taken_port}", *QUIET)
    line = one_line_error(
        result, f"cannot listen on 127.0.0.1:{taken_port} (--http)", "address already in use"
    )
    assert line.startswith("reassignd controller: error: ")


def test_controller_kafka_listener_port_in_use(zk_connect: str, taken_port: int) -> None:
    result = reassignd(
        "controller",
        "--zk",
        zk_connect,
        "--http",
        f"127.0.0.1:{free_port()}",
        "--kafka-listener",
        f"127.0.0.1:{taken_port}",
        *QUIET,
    )
    one_line_error(
        result, f"cannot listen on 127.0.0.1:{taken_port} (--kafka-listener)", "address already in use"
    )


@pytest.mark.parametrize(
    ("command", "which"),
    [
        ("broker", ("--id", "3")),
        ("cluster", ("--brokers", "1", "--first-id", "3")),
        ("cluster", ("--brokers", "2", "--first-id", "3", "--processes", "2")),  # a child's line
    ],
)
def test_agent_control_port_in_use(
    zk_connect: str, taken_port: int, command: str, which: tuple[str, ...]
) -> None:
    result = reassignd(command, "--zk", zk_connect, *which, "--control-port", str(taken_port), *QUIET)
    line = one_line_error(
        result, f"broker 3 cannot listen on 127.0.0.1:{taken_port} (--control-port)", "address already in use"
    )
    assert line.startswith(f"reassignd {command}: error: ")


@pytest.mark.parametrize(
    "command",
    [
        ("controller", "--http", "127.0.0.1:0", "--session-timeout-s", "2"),
        ("broker", "--id", "1", "--session-timeout-s", "2"),
        ("cluster", "--brokers", "2", "--session-timeout-s", "2"),
        # a KIP-236 verb: its connect timeout is --request-timeout-s
        (
            "admin",
            "reassign",
            "--rollback",
            "--bootstrap-controller",
            "http://127.0.0.1:1",
            "--request-timeout-s",
            "3",
        ),
    ],
)
def test_zookeeper_unreachable(command: tuple[str, ...]) -> None:
    nobody = f"127.0.0.1:{free_port()}"  # nothing listens there
    result = reassignd(*command, "--zk", nobody, *QUIET)
    name = " ".join(command[:2]) if command[0] == "admin" else command[0]
    one_line_error(result, f"reassignd {name}: error: ZooKeeper unreachable (--zk {nobody}): ")


def test_the_traceback_only_with_log_level_debug(zk_connect: str, taken_port: int) -> None:
    result = reassignd(
        "broker", "--zk", zk_connect, "--id", "1", "--control-port", str(taken_port), "--log-level", "debug"
    )
    assert result.returncode == 2
    assert "Traceback" in result.stderr
    assert result.stderr.splitlines()[-1].startswith("reassignd broker: error: broker 1 cannot listen on")


# --- files named by flags, certificates --------------------------------------------------------------


@pytest.fixture
def bad_pem(tmp_path: Path) -> str:
    path = tmp_path / "bad.pem"
    path.write_text("not a certificate\n")
    return str(path)


def test_missing_and_bad_files(tmp_path: Path, bad_pem: str) -> None:
    missing = str(tmp_path / "missing")
    controller = ("controller", "--zk", "127.0.0.1:2181", "--http", "127.0.0.1:0")
    admin = ("--bootstrap-controller", "http://127.0.0.1:1")
    cases: list[tuple[tuple[str, ...], str]] = [
        ((*controller, "--auth-tokens", missing), f"cannot read tokens file {missing}"),
        ((*controller, "--config", missing), f"cannot read config file {missing}"),
        ((*controller, "--tls-cert", bad_pem, "--tls-key", bad_pem), f"cannot load {bad_pem}"),
        ((*controller, "--tls-cert", missing, "--tls-key", missing), f"cannot load {missing}"),
        (
            (
                *controller,
                "--kafka-listener",
                "127.0.0.1:0",
                "--kafka-tls-cert",
                bad_pem,
                "--kafka-tls-key",
                bad_pem,
            ),
            "--kafka-tls-cert/--kafka-tls-key: cannot load",
        ),
        (
            ("broker", "--id", "1", "--zk", "127.0.0.1:2181", "--config", missing),
            f"cannot read config file {missing}",
        ),
        (
            ("admin", "reassign", *admin, "--execute", "--reassignment-json-file", missing),
            f"cannot read --reassignment-json-file {missing}",
        ),
        (
            (
                "admin",
                "reassign",
                "--list",
                "--bootstrap-controller",
                "https://127.0.0.1:1",
                "--ca-file",
                bad_pem,
            ),
            bad_pem,
        ),
        (
            ("admin", "batch", "submit", *admin, "--batch-file", missing),
            f"cannot read --batch-file {missing}",
        ),
        (("feed", "run", missing, *admin), f"cannot read {missing}"),
        (("feed", "plan", "--cluster-file", missing, "--goal", "rebalance:bytes", "--dry-run"), missing),
    ]
    for args, expected in cases:
        one_line_error(
            reassignd(*args),
            f"reassignd {' '.join(args[:2]) if args[0] in ('admin', 'feed') else args[0]}",
            expected,
        )


# --- flags ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("admin", "reassign", "--exeucte"), "unknown option --exeucte; did you mean --execute?"),
        (
            ("admin", "reassign", "--exec"),
            "unknown option --exec; did you mean --execute?",
        ),  # no abbreviations
        (
            ("controller", "--zk", "127.0.0.1:2181", "--htp", "x"),
            "unknown option --htp; did you mean --http?",
        ),
        (("feed", "plan", "--gaol", "rebalance:bytes"), "unknown option --gaol; did you mean --goal?"),
        (
            ("broker", "--zk=127.0.0.1:2181", "--id", "1", "--rakc=r1"),
            "unknown option --rakc; did you mean --rack?",
        ),
    ],
)
def test_an_unknown_flag_is_named_with_the_closest_known_one(args: tuple[str, ...], expected: str) -> None:
    one_line_error(reassignd(*args), expected)


# --- an admin client at the Kafka listener ------------------------------------------------------------------


async def test_bootstrap_controller_at_the_kafka_listener_says_so(procs: Procs) -> None:
    kafka_port = free_port()
    controller = procs.controller(9000, 6.0, "--kafka-listener", f"127.0.0.1:{kafka_port}")

    async def ready() -> bool:
        code, _ = await http_get(controller.url + "/readyz")
        return code == 200

    await eventually(ready, what="controller /readyz")
    result = await asyncio.to_thread(
        reassignd, "admin", "reassign", "--list", "--bootstrap-controller", f"http://127.0.0.1:{kafka_port}"
    )
    assert "Traceback" not in result.stderr
    assert result.stderr.strip() == (
        f"reassignd admin reassign: error: 127.0.0.1:{kafka_port} speaks the Kafka protocol, not reassignd's "
        "HTTP API; give the controller's HTTP address"
    ), result.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--duraton-s", "3"), "unknown option --duraton-s; did you mean --duration-s?"),
        (("--keep",), "unknown option --keep; did you mean --keep-running?"),  # no abbreviations
        (("--brokers", "0"), "counts and --replication-mib-s must be >= 1"),
    ],
)
def test_the_demo_reads_its_flags_like_the_cli(args: tuple[str, ...], expected: str) -> None:
    """``bash scripts/demo.sh ARGS`` checks them before it installs anything (a bad flag costs no
    install), then ``python -m reassignd.demo`` reads them the same way."""
    for command in (["bash", str(ROOT / "scripts" / "demo.sh")], [sys.executable, "-m", "reassignd.demo"]):
        proc = subprocess.run(
            [*command, *args], capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False, cwd=ROOT
        )
        line = one_line_error(
            subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout, proc.stderr), expected
        )
        assert line.startswith("scripts/demo.sh: error: ")
        assert proc.stdout == ""  # nothing installed, nothing started

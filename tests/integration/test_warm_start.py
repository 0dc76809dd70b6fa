"""A warm start (tests/warm_start.py) behaves as ``python -m reassignd`` for what the suites use:
the caller's environment and directory, the log file, the exit code, a session of its own, death
by a signal — and a cold start where the command starts processes of its own."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from reassignd.testing.polling import eventually
from tests import warm_start

pytestmark = [pytest.mark.timeout(60)]


def _start(args: list[str], log: Path, **env: str) -> warm_start.WarmProcess | subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return warm_start.start(args, log, dict(os.environ, **env), out)


def test_the_environment_reaches_the_command_and_its_exit_code_comes_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    log = tmp_path / "out.log"
    # the level from the environment, the error to stderr, i.e. the log; exit code 2
    proc = _start(["controller", "--zk", "127.0.0.1:1"], log, REASSIGND_LOG_LEVEL="bogus")
    assert isinstance(proc, warm_start.WarmProcess) or warm_start.COLD
    assert proc.wait(timeout=30) == 2
    assert "REASSIGND_LOG_LEVEL: expected one of" in log.read_text() and "'bogus'" in log.read_text()
    # a relative path is the caller's directory's
    (tmp_path / "c.toml").write_text('log-level = "loud"\n')
    log2 = tmp_path / "out2.log"
    assert _start(["controller", "--zk", "127.0.0.1:1", "--config", "c.toml"], log2).wait(timeout=30) == 2
    assert "'loud'" in log2.read_text(), log2.read_text()


async def test_a_long_running_command_leads_its_own_session_and_dies_by_the_signal(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    # a controller whose ZooKeeper never answers keeps trying: it runs until signalled
    proc = _start(["controller", "--zk", "127.0.0.1:1", "--http", "127.0.0.1:0"], log)
    try:
        assert os.getsid(proc.pid) == proc.pid and os.getpgid(proc.pid) == proc.pid
        assert proc.poll() is None
        await eventually(lambda: log.stat().st_size > 0, what="the controller's first log line")
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
        assert proc.returncode == -signal.SIGKILL
    finally:
        if isinstance(proc, warm_start.WarmProcess):
            proc.kill_group()  # its leader gone: nothing is signalled (the id may be another's)
            proc.close()
            proc.close()  # twice is harmless
        else:
            proc.kill()
            proc.wait(timeout=10)


def test_a_command_that_starts_processes_starts_cold(tmp_path: Path) -> None:
    assert not warm_start.warm_allowed(["cluster", "--processes", "--brokers", "3"])
    assert warm_start.warm_allowed(["cluster", "--brokers", "3"]) is not warm_start.COLD


def test_a_run_to_the_end_gives_its_stdout_and_stderr_apart() -> None:
    shown = warm_start.run(["admin", "reassign", "--help"], os.environ)
    assert shown.returncode == 0 and shown.stdout.startswith("usage:") and shown.stderr == ""
    refused = warm_start.run(["controller", "--zk", "127.0.0.1:1", "--log-level", "bogus"], os.environ)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.startswith("reassignd controller: error: --log-level: expected one of")

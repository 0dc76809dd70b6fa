"""Component processes started warm: forked from a server that imported the package once.

A cold ``python -m reassignd controller`` spends about 1.5 CPU-seconds importing before it does
anything (aiohttp alone builds its TLS contexts at import); the suites start hundreds of such
processes on a 2-core machine. Here each is forked from a ``multiprocessing`` fork server that has
imported the CLI and the heavy roles already (one per pytest worker, started on first use): the
child is a process of its own (its own session and process group, its own pid, stdout and stderr
to its log file, the caller's environment and working directory), runs the same entry point as
the console script (:func:`reassignd.cli.run`), and dies by the same signals. What is not the
same: the interpreter's start itself (``-m``, ``sys.argv[0]``), which the tests of the console
script check with a cold process (``test_lazy_imports``, the container and CLI tests' own
processes).

The fork server reaps its children, so a pid may be reused once its process has ended; the
handle signals through a pidfd (never another process), and signals the process group only
while its leader lives. Commands that start processes of their own (``cluster --processes``)
are therefore started cold: their group must be killable after the leader is gone.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from multiprocessing import spawn
from multiprocessing.context import ForkServerContext
from pathlib import Path
from typing import Any

# what the fork server imports once: the CLI and the roles the suites start
PRELOAD = [
    "reassignd.cli",
    "reassignd.service",
    "reassignd.broker.agent",
    "reassignd.admin.reassign",
    "reassignd.admin.batch",
    "reassignd.admin.elect",
    "reassignd.admin.demote",
]
# set REASSIGND_COLD_START=1 to start every component as ``python -m reassignd``
COLD = os.environ.get("REASSIGND_COLD_START", "") not in ("", "0")

_context: ForkServerContext | None = None


_preparing = threading.Lock()


def _without_main(name: str) -> dict[str, Any]:
    """multiprocessing's preparation data for a child, without the caller's main module: a child
    would run it again (``__mp_main__``) before anything else — ``bench/faults.py`` and all it
    imports, seconds under load, while the caller waits for the child's session — and ours needs
    nothing of it (its target is in this module)."""
    data: dict[str, Any] = _get_preparation_data(name)
    data.pop("init_main_from_path", None)
    data.pop("init_main_from_name", None)
    return data


_get_preparation_data = spawn.get_preparation_data


def _server() -> ForkServerContext:
    global _context  # noqa: PLW0603 (one fork server per pytest process)
    if _context is None:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        _context = context
    return _context


def warm_allowed(args: Sequence[str]) -> bool:
    """Whether ``args`` may run warm: not when it starts processes of its own."""
    return not COLD and "--processes" not in args


def _child(args: list[str], log_path: str, env: dict[str, str], cwd: str, err_path: str | None) -> None:
    """In the forked child: become a session of its own with the log as stdout and stderr (or
    stderr to a file of its own), the caller's environment and directory, then the console
    script's entry point."""
    os.setsid()
    fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(fd, 1)
    os.close(fd)
    if err_path is not None:
        fd = os.open(err_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.dup2(fd, 2)
        os.close(fd)
    else:
        os.dup2(1, 2)
    sys.stdout = io.TextIOWrapper(open(1, "wb", 0, closefd=False), write_through=True)  # noqa: SIM115
    sys.stderr = io.TextIOWrapper(open(2, "wb", 0, closefd=False), write_through=True)  # noqa: SIM115
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.argv = [sys.argv[0], *args]
    from reassignd.cli import run  # noqa: PLC0415 (imported already by the fork server)

    sys.exit(run(args, os.environ))


class WarmProcess:
    """The part of :class:`subprocess.Popen`'s interface the harness and the tests use, for a
    process forked from the fork server."""

    def __init__(
        self, args: list[str], log_path: Path, env: Mapping[str, str], err_path: Path | None = None
    ) -> None:
        self.args = args
        process = _server().Process(
            target=_child,
            args=(args, str(log_path), dict(env), os.getcwd(), None if err_path is None else str(err_path)),
            daemon=True,
        )
        with _preparing:  # multiprocessing reads the data through the module: swapped for this start only
            spawn.get_preparation_data = _without_main
            try:
                process.start()
            finally:
                spawn.get_preparation_data = _get_preparation_data
        self._process = process
        assert process.pid is not None
        self.pid: int = process.pid
        self._pidfd = os.pidfd_open(self.pid)
        self._await_session()

    def _await_session(self) -> None:
        """Return once the child leads its own session (as ``start_new_session`` does before
        Popen returns), or has ended."""
        deadline = time.monotonic() + 30.0
        while time.monotonic() < deadline:
            try:
                if os.getsid(self.pid) == self.pid:
                    return
            except ProcessLookupError:
                return
            if not self._alive():
                return
            time.sleep(0.001)
        raise RuntimeError(f"reassignd {self.args}: the forked process never started its session")

    @property
    def returncode(self) -> int | None:
        return self._process.exitcode

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        code = self._process.exitcode
        if code is None:
            raise subprocess.TimeoutExpired(["reassignd", *self.args], timeout or 0.0)
        return code

    def _alive(self) -> bool:
        """Whether the process has not ended (its pidfd is not readable yet)."""
        if self._pidfd < 0:
            return False
        readable, _, _ = select.select([self._pidfd], [], [], 0)
        return not readable

    def send_signal(self, sig: int) -> None:
        if self._pidfd < 0:
            return
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(self._pidfd, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def kill_group(self) -> None:
        """SIGKILL to the process group while its leader lives (after that the group id may be
        another's)."""
        if self._alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGKILL)

    def close(self) -> None:
        """Release the pidfd (once: the harness may close a process twice)."""
        if self._pidfd >= 0:
            os.close(self._pidfd)
            self._pidfd = -1


def start(
    args: list[str], log_path: Path, env: Mapping[str, str], log: Any
) -> WarmProcess | subprocess.Popen[bytes]:
    """``python -m reassignd *args``, warm when allowed (see :func:`warm_allowed`)."""
    if warm_allowed(args):
        return WarmProcess(args, log_path, env)
    return subprocess.Popen(
        [sys.executable, "-m", "reassignd", *args],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=dict(env),
        start_new_session=True,
    )


def run(args: list[str], env: Mapping[str, str], timeout_s: float = 60.0) -> subprocess.CompletedProcess[str]:
    """``python -m reassignd *args`` to its end, as :func:`subprocess.run` with ``capture_output``
    and ``text`` gives it (stdin: nothing), warm when allowed."""
    if not warm_allowed(args):
        return subprocess.run(
            [sys.executable, "-m", "reassignd", *args],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            check=False,
        )
    with tempfile.TemporaryDirectory(prefix="reassignd-cli-") as directory:
        out, err = Path(directory) / "stdout", Path(directory) / "stderr"
        proc = WarmProcess(args, out, env, err)
        try:
            code = proc.wait(timeout_s)
        finally:
            proc.kill_group()
            proc.close()
        return subprocess.CompletedProcess(
            args, code, out.read_text(errors="replace"), err.read_text(errors="replace")
        )

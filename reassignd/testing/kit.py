"""The in-process cluster kit: ``reassignd controller``, ``broker`` and ``cluster`` run in the
caller's event loop from the very command lines their processes get — read by the one
command-line engine (:func:`reassignd.config.load_command`) and run by the compositions the CLI
serves (:func:`reassignd.service.run_controller`, :func:`reassignd.broker.agent.run_agents`) — so a
behaviour test skips a cold Python start and an import per component.

What a process has and this has not: a SIGKILL (a crash whose ZooKeeper session is left to
expire), a SIGTERM and its exit code, its own stdout and stderr, its own garbage collector. A test
that needs one of those starts a process; asked for one here, a component raises
:class:`NeedsAProcess`. Each component's log lines (those logged in its tasks) go to its log file.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import logging
import os
from collections.abc import Sequence
from pathlib import Path

from reassignd.broker.agent import run_agents
from reassignd.config import BrokerCommand, ClusterCommand, Command, ControllerCommand, load_command
from reassignd.log_setup import TEXT_FORMAT
from reassignd.service import run_controller

STOP_TIMEOUT_S = 15.0  # a planned stop (a hand-over at most); past it the component is cancelled

# the component a log record comes from: tasks copy the context they are created in, so every
# task a component starts logs under its name (its ZooKeeper session's thread does not)
_COMPONENT: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "reassignd_kit_component", default=None
)


class NeedsAProcess(RuntimeError):
    """What was asked of an in-process component only a process can do."""


class _ComponentLog(logging.Handler):
    def __init__(self, name: str, path: Path) -> None:
        super().__init__(logging.INFO)
        self.component = name
        self.stream = path.open("a", encoding="utf-8")
        self.setFormatter(logging.Formatter(TEXT_FORMAT))

    def emit(self, record: logging.LogRecord) -> None:
        if _COMPONENT.get() != self.component:
            return
        try:
            self.stream.write(self.format(record) + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # closed at teardown
            pass

    def close(self) -> None:
        self.stream.close()
        super().close()


async def _serve(command: Command, stop: asyncio.Event) -> None:
    match command:
        case ControllerCommand(settings=settings):
            await run_controller(settings, stop)
        case BrokerCommand(settings=settings):
            await run_agents([settings], stop)
        case ClusterCommand(settings=cluster, processes=1):
            await run_agents(list(cluster), stop)
        case _:
            raise NeedsAProcess(f"{type(command).__name__} is not served in process")


class InProcessCommand:
    """One serving command run as a task of the running loop until :meth:`stop`. Its surface
    matches a process handle's where it can (``args``, ``log_path``, ``alive``, ``log()``)."""

    def __init__(self, args: Sequence[str], log_path: Path) -> None:
        self.args = list(args)
        self.log_path = log_path
        self.name = log_path.stem
        command = load_command(self.args, os.environ)  # a bad command line raises here (exit 2's case)
        self._stop = asyncio.Event()
        self._handler = _ComponentLog(self.name, log_path)
        package = logging.getLogger("reassignd")
        package.addHandler(self._handler)
        if package.level == logging.NOTSET or package.level > logging.INFO:
            package.setLevel(logging.INFO)  # a process logs at INFO by default: so does this
        token = _COMPONENT.set(self.name)
        try:
            self.task = asyncio.get_running_loop().create_task(_serve(command, self._stop), name=self.name)
        finally:
            _COMPONENT.reset(token)

    @property
    def alive(self) -> bool:
        return not self.task.done()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        raise NeedsAProcess(f"{self.name}: a SIGKILL needs a process (start it with the procs fixture)")

    def terminate(self, timeout_s: float = 15.0) -> int:
        raise NeedsAProcess(f"{self.name}: a SIGTERM and an exit code need a process")

    async def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        """A planned stop, as SIGTERM asks a process (an active controller hands over); past
        ``timeout_s`` the task is cancelled. Whatever it raised is raised here."""
        self._stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(self.task), timeout_s)
        except TimeoutError:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
        finally:
            logging.getLogger("reassignd").removeHandler(self._handler)
            self._handler.close()
            gc.unfreeze()  # a controller freezes what it loaded (gc.freeze): not in a test process

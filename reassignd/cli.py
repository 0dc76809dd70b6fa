"""The ``reassignd`` console script: ``controller``, ``broker``, ``cluster``, ``admin``, ``feed`` and
``events``, every one read by the one command-line engine (:mod:`reassignd.config`).

Exit codes: 0 clean stop (SIGTERM or SIGINT), 2 bad arguments or configuration, or ZooKeeper
refusing the process's SASL credentials (or a ZooKeeper server not trusted over TLS) at startup
(one line on stderr), 1 anything else. A second SIGTERM/SIGINT while stopping cancels the shutdown (exit 1).
``admin`` clients run once: 0 done, 2 bad arguments, 1 a failure (one line on stderr).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from typing import TextIO

import uvloop

from reassignd.admin.batch_command import AdminBatchCommand
from reassignd.admin.command_line import AdminReassignCommand
from reassignd.admin.demote_command import AdminDemoteCommand
from reassignd.admin.elect_command import AdminElectCommand
from reassignd.admin.zk_acls_command import AdminZkAclsCommand
from reassignd.config import (
    BY_NAME,
    BrokerCommand,
    ClusterCommand,
    Command,
    ConfigError,
    ControllerCommand,
    UsageLine,
    load_command,
)
from reassignd.errors import startup_error
from reassignd.feeder.command_line import FeedPlanCommand, FeedRunCommand
from reassignd.log_setup import configure_logging
from reassignd.stream.tail import EventsTailCommand

log = logging.getLogger("reassignd.cli")

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


async def serve(command: Command, stop: asyncio.Event) -> None:
    """Run the subcommand until ``stop`` is set."""
    match command:
        case ControllerCommand(settings=settings):
            from reassignd.service import run_controller  # noqa: PLC0415 (only this role)

            await run_controller(settings, stop)
        case BrokerCommand(settings=settings):
            from reassignd.broker.agent import run_agents  # noqa: PLC0415

            await run_agents([settings], stop)
        case ClusterCommand(settings=cluster, processes=processes) if processes > 1:
            from reassignd.broker.processes import run_agent_processes  # noqa: PLC0415

            await run_agent_processes(cluster, processes, command.log, stop)
        case ClusterCommand(settings=cluster):
            from reassignd.broker.agent import run_agents  # noqa: PLC0415

            await run_agents(list(cluster), stop)
        case (
            AdminReassignCommand()
            | AdminBatchCommand()
            | AdminElectCommand()
            | AdminDemoteCommand()
            | AdminZkAclsCommand()
            | FeedPlanCommand()
            | FeedRunCommand()
            | EventsTailCommand()
        ):
            raise TypeError("clients run once (see run()), not until stopped")


async def serve_until_signalled(command: Command) -> None:
    """SIGTERM/SIGINT set the stop event; a second one cancels this task (a stuck shutdown)."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    task = asyncio.current_task()
    assert task is not None

    def on_signal(sig: signal.Signals) -> None:
        if stop.is_set():
            log.warning("received %s again while stopping; giving up on a clean stop", sig.name)
            task.cancel()
            return
        log.info("received %s, stopping", sig.name)
        stop.set()

    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, on_signal, sig)
    try:
        await serve(command, stop)
    finally:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)


def command_name(argv: Sequence[str]) -> str:
    """The subcommand named by ``argv``, for an error line: its first two words at most
    (``admin batch``, not the batch verb)."""
    words: list[str] = []
    for arg in argv:
        if arg.startswith("-"):
            continue
        candidate = " ".join([*words, arg])
        if not any(name == candidate or name.startswith(candidate + " ") for name in BY_NAME):
            break
        words.append(arg)
    return " ".join(words[:2])


def run(
    argv: Sequence[str], env: Mapping[str, str], out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Every subcommand: one command line read by one engine, then the command run. The one
    place a start that failed (a :class:`~reassignd.errors.StartupError`, from any subcommand)
    becomes its line on stderr and exit 2; the traceback is logged at ``--log-level debug`` only."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        command = load_command(argv, env)
    except UsageLine as e:
        print(str(e), file=err)
        return 2
    except ConfigError as e:
        name = command_name(argv)
        print(f"reassignd{' ' + name if name else ''}: error: {e}", file=err)
        return 2
    except SystemExit as e:  # --help
        return e.code if isinstance(e.code, int) else 0
    configure_logging(command.log)
    try:
        return _run_command(command, argv, out, err)
    except Exception as e:
        startup = startup_error(e)
        if startup is None:
            raise
        log.debug("the start failed", exc_info=e)
        print(f"reassignd {command_name(argv)}: error: {startup}", file=err)
        return 2


def _run_admin(
    command: AdminReassignCommand
    | AdminElectCommand
    | AdminDemoteCommand
    | AdminBatchCommand
    | AdminZkAclsCommand,
    out: TextIO,
    err: TextIO,
) -> int:
    """``reassignd admin ...``: each client's module imported only when it runs."""
    match command:
        case AdminReassignCommand():
            from reassignd.admin.reassign import run_reassign  # noqa: PLC0415 (only this client)

            return run_reassign(command.settings, out, err)
        case AdminElectCommand():
            from reassignd.admin.elect import run_admin_elect  # noqa: PLC0415 (only this client)

            return run_admin_elect(command.settings, out, err)
        case AdminDemoteCommand():
            from reassignd.admin.demote import run_admin_demote  # noqa: PLC0415 (only this client)

            return run_admin_demote(command.settings, out, err)
        case AdminBatchCommand():
            from reassignd.admin.batch import run_batch  # noqa: PLC0415 (only this client)

            return run_batch(command.settings, out, err)
        case AdminZkAclsCommand():
            from reassignd.admin.zk_acls_walk import run_admin_zk_acls  # noqa: PLC0415 (only this client)

            return run_admin_zk_acls(command.settings, out, err)


def _run_command(command: Command, argv: Sequence[str], out: TextIO, err: TextIO) -> int:
    match command:
        case (
            AdminReassignCommand()
            | AdminElectCommand()
            | AdminDemoteCommand()
            | AdminBatchCommand()
            | AdminZkAclsCommand()
        ):
            return _run_admin(command, out, err)
        case FeedPlanCommand():
            return _feed_plan(command, out, err)
        case FeedRunCommand():
            from reassignd.feeder.run import run_feed_run  # noqa: PLC0415 (aiohttp client only when feeding)

            return run_feed_run(command.values, out, err)
        case EventsTailCommand():
            from reassignd.stream.tail import run_tail  # noqa: PLC0415 (aiokafka only when tailing)

            return run_tail(command.settings, out, err)
    try:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(serve_until_signalled(command))
    except (asyncio.CancelledError, KeyboardInterrupt):
        log.error("stopped without a clean shutdown")
        return 1
    except Exception as e:
        if startup_error(e) is not None:
            raise  # run()'s one line
        log.exception("reassignd %s failed", command_name(argv))
        return 1
    log.info("stopped")
    return 0


def _feed_plan(command: FeedPlanCommand, out: TextIO, err: TextIO) -> int:
    """``reassignd feed plan``: 2 with one line for unusable settings, 1 (one line, never a
    traceback) for a bug or an environment problem."""
    from reassignd.feeder.command_line import UsageError  # noqa: PLC0415
    from reassignd.feeder.plan_command import plan_settings, run_plan_command  # noqa: PLC0415

    try:
        settings = plan_settings(command.values)
    except UsageError as e:
        print(f"reassignd feed plan: error: {e}", file=err)
        return 2
    try:
        return run_plan_command(settings, out, err)
    except Exception as e:
        print(
            f"reassignd feed plan: error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
            file=err,
        )
        return 1


def main(argv: Sequence[str] | None = None) -> None:
    sys.exit(run(sys.argv[1:] if argv is None else argv, os.environ))


if __name__ == "__main__":
    main()

"""The ``reassignd`` console script: ``controller``, ``broker``, ``cluster``, ``admin``, ``feed`` and
``events``.

Exit codes: 0 clean stop (SIGTERM or SIGINT), 2 bad arguments or configuration (one line on
stderr), 1 anything else. A second SIGTERM/SIGINT while stopping cancels the shutdown (exit 1).
``admin`` clients run once: 0 done, 2 bad arguments, 1 a failure (one line on stderr).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import Mapping, Sequence

import uvloop

from reassignd.admin.batch_command import AdminBatchCommand
from reassignd.admin.command_line import AdminReassignCommand
from reassignd.admin.elect_command import AdminElectCommand
from reassignd.config import (
    BrokerCommand,
    ClusterCommand,
    Command,
    ConfigError,
    ControllerCommand,
    load_command,
)
from reassignd.log_setup import configure_logging

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
        case ClusterCommand(settings=cluster):
            from reassignd.broker.agent import run_agents  # noqa: PLC0415

            await run_agents(list(cluster), stop)
        case AdminReassignCommand() | AdminBatchCommand() | AdminElectCommand():
            raise TypeError("admin clients run once (see run()), not until stopped")


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
    for i, arg in enumerate(argv):
        if arg in ("controller", "broker", "cluster"):
            return arg
        if arg == "admin":
            return (
                " ".join(argv[i : i + 2])
                if list(argv[i + 1 : i + 2]) in (["reassign"], ["batch"], ["elect"])
                else arg
            )
    return ""


def run(argv: Sequence[str], env: Mapping[str, str]) -> int:
    if list(argv[:1]) == ["feed"]:  # the feeder owns its command line (no pyspark import here)
        from reassignd.feeder.command_line import run_feed  # noqa: PLC0415

        return run_feed(argv[1:], env, sys.stdout, sys.stderr)
    if list(argv[:1]) == ["events"]:  # reads the event topic; its own small command line
        from reassignd.stream.tail import run_events  # noqa: PLC0415

        return run_events(argv[1:])
    try:
        command = load_command(argv, env)
    except ConfigError as e:
        name = command_name(argv)
        print(f"reassignd{' ' + name if name else ''}: error: {e}", file=sys.stderr)
        return 2
    configure_logging(command.log)
    if isinstance(command, AdminReassignCommand):
        from reassignd.admin.reassign import run_reassign  # noqa: PLC0415 (only this client)

        return run_reassign(command.settings, sys.stdout, sys.stderr)
    if isinstance(command, AdminElectCommand):
        from reassignd.admin.elect import run_admin_elect  # noqa: PLC0415 (only this client)

        return run_admin_elect(command.settings, sys.stdout, sys.stderr)
    if isinstance(command, AdminBatchCommand):
        from reassignd.admin.batch import run_batch  # noqa: PLC0415 (only this client)

        return run_batch(command.settings, sys.stdout, sys.stderr)
    try:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(serve_until_signalled(command))
    except (asyncio.CancelledError, KeyboardInterrupt):
        log.error("stopped without a clean shutdown")
        return 1
    except Exception:
        log.exception("reassignd %s failed", command_name(argv))
        return 1
    log.info("stopped")
    return 0


def main(argv: Sequence[str] | None = None) -> None:
    sys.exit(run(sys.argv[1:] if argv is None else argv, os.environ))


if __name__ == "__main__":
    main()

"""``reassignd cluster --processes P``: the agents in P child processes.

Real brokers are separate processes; agents sharing one process share one event loop and one CPU,
and in a big move they, not the controller, set the pace. Each child runs a group of consecutive
broker ids (:func:`groups`) exactly as ``reassignd cluster`` runs them in one process
(:func:`~reassignd.broker.agent.run_agents`).

The parent owns the children's lives: it stops them with SIGTERM when it is stopped (the children
ignore SIGINT, so a terminal's Ctrl-C reaches them once, through the parent), and a child that
exits while the parent runs stops the others and fails the parent. A child whose parent died
without stopping it (SIGKILL) notices within a second and stops cleanly, closing its sessions.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
import sys
from collections.abc import Sequence
from multiprocessing.process import BaseProcess
from multiprocessing.queues import SimpleQueue

import uvloop

from reassignd.broker.agent import run_agents
from reassignd.broker.settings import BrokerSettings
from reassignd.log_setup import LogSettings, configure_logging
from reassignd.zk.errors import ZkAuthFailed, auth_failure_in

log = logging.getLogger(__name__)

POLL_S = 0.2
ORPHAN_CHECK_S = 1.0
STOP_TIMEOUT_S = 20.0
AUTH_REFUSED_EXIT = 2  # a child whose agents ZooKeeper refused at start


def groups(settings: Sequence[BrokerSettings], processes: int) -> list[tuple[BrokerSettings, ...]]:
    """``settings`` in ``min(processes, len(settings))`` groups of consecutive agents, sizes
    differing by one at most (the first groups the larger). Pure."""
    if processes <= 0:
        raise ValueError(f"processes must be > 0, got {processes}")
    n = min(processes, len(settings))
    size, extra = divmod(len(settings), n) if n else (0, 0)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(tuple(settings[start:end]))
        start = end
    return out


def _name(group: Sequence[BrokerSettings]) -> str:
    first, last = group[0].broker_id, group[-1].broker_id
    return f"agents-{first}" if first == last else f"agents-{first}-{last}"


def _child(
    group: tuple[BrokerSettings, ...], log_settings: LogSettings, parent: int, refusals: SimpleQueue[str]
) -> None:
    """A child process: the group's agents until SIGTERM (or the parent's death). ZooKeeper
    refusing the credentials at start: the reason to ``refusals``, exit AUTH_REFUSED_EXIT."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent forwards the stop
    configure_logging(log_settings)

    async def main() -> None:
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)

        async def orphaned() -> None:
            while True:
                await asyncio.sleep(ORPHAN_CHECK_S)
                if os.getppid() != parent:
                    break
            log.warning("the parent process %d is gone: stopping", parent)
            stop.set()

        async with asyncio.TaskGroup() as tg:
            watch = tg.create_task(orphaned(), name="parent-watch")
            try:
                await run_agents(group, stop)
            finally:
                watch.cancel()

    try:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(main())
    except Exception as e:
        refusal = auth_failure_in(e)
        if refusal is None:
            raise
        refusals.put(str(refusal))
        sys.exit(AUTH_REFUSED_EXIT)


async def run_agent_processes(
    settings: Sequence[BrokerSettings], processes: int, log_settings: LogSettings, stop: asyncio.Event
) -> None:
    """Run the agents of ``settings`` in ``processes`` children until ``stop`` is set; raise if
    a child exits before (the others are stopped first) or does not stop cleanly."""
    spawn = multiprocessing.get_context("spawn")  # never fork a process with a running loop
    refusals: SimpleQueue[str] = spawn.SimpleQueue()
    children: list[BaseProcess] = [
        spawn.Process(
            target=_child, args=(group, log_settings, os.getpid(), refusals), name=_name(group), daemon=False
        )
        for group in groups(settings, processes)
    ]
    for child in children:
        child.start()
        log.info("process %d runs %s", child.pid, child.name)
    early: list[BaseProcess] = []
    try:
        while not stop.is_set() and not early:
            try:
                await asyncio.wait_for(stop.wait(), POLL_S)
            except TimeoutError:
                early = [c for c in children if c.exitcode is not None]
    finally:
        for child in children:
            if child.exitcode is None:
                child.terminate()  # SIGTERM: a clean stop
        await asyncio.to_thread(_join, children)
    if early and any(c.exitcode == AUTH_REFUSED_EXIT for c in early) and not refusals.empty():
        raise ZkAuthFailed(refusals.get())  # the CLI's exit 2, one line
    if early:
        raise RuntimeError(
            "agent process exited while the cluster ran: "
            + ", ".join(f"{c.name} (exit code {c.exitcode})" for c in early)
        )
    failed = [c for c in children if c.exitcode != 0]
    if failed:
        raise RuntimeError(
            "agent process did not stop cleanly: "
            + ", ".join(f"{c.name} (exit code {c.exitcode})" for c in failed)
        )


def _join(children: Sequence[BaseProcess]) -> None:
    for child in children:
        child.join(STOP_TIMEOUT_S)
        if child.exitcode is None:
            log.error("%s did not stop within %.0f s: killed", child.name, STOP_TIMEOUT_S)
            child.kill()
            child.join()

"""The demo's third step: a broker is added and another decommissioned by a plan the Spark job
computes (``reassignd feed plan``, a local Spark session), executed as batches (``reassignd feed
run``) with their progress shown. Skipped, with a line saying why, when pyspark is not installed.

On a first run ``scripts/demo.sh`` installs PySpark in the background while the demo starts (its
bootstrap writes the install's process id and log to the file ``REASSIGND_DEMO_FEEDER_INSTALL``
names, and its exit code beside it, ``.reassignd-feeder-rc``, when it ends): the step waits for it.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from reassignd.contracts.cluster import Brokers, Status, Topic
from reassignd.demo.cluster import DemoFailed, LocalCluster, Stopped, say
from reassignd.demo.options import DemoOptions
from reassignd.demo.plan import racks_of
from reassignd.demo.text import render_load, render_topic


async def _reassignd(cluster: LocalCluster, *args: str) -> None:
    """Run a ``reassignd`` command with its output on the demo's; Ctrl-C stops it too."""
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "reassignd", *args)
    stopper = asyncio.ensure_future(cluster.stop.wait())
    try:
        done, _ = await asyncio.wait(
            {asyncio.ensure_future(proc.wait()), stopper}, return_when=asyncio.FIRST_COMPLETED
        )
        if stopper in done:
            proc.terminate()
            await proc.wait()
            raise Stopped
    finally:
        stopper.cancel()
    if proc.returncode != 0:
        raise DemoFailed(f"reassignd {' '.join(args[:2])} exited with {proc.returncode}")


FEEDER_INSTALL_ENV = "REASSIGND_DEMO_FEEDER_INSTALL"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _pending_install(pending: Path) -> tuple[int, str] | None:
    """``PID LOG`` from the bootstrap's file; None when nothing is pending (or it is unreadable)."""
    try:
        pid_text, _, log = pending.read_text().strip().partition(" ")
        return int(pid_text), log
    except (OSError, ValueError):
        return None


async def await_feeder_install(pending: Path, pause: Callable[[float], Awaitable[None]]) -> None:
    """Wait for the bootstrap's background install of the feeder extra, if one is pending.

    ``pending`` holds ``PID LOG``; the install's exit code appears beside it in
    ``.reassignd-feeder-rc``. Raises DemoFailed when the install failed or stopped unfinished."""
    install = _pending_install(pending)
    if install is None:
        return  # the step goes on as the installed packages allow
    pid, log = install
    rc_file = pending.with_name(".reassignd-feeder-rc")
    waiting_since: float | None = None
    while (rc := _read_int(rc_file)) is None:
        if not _alive(pid):
            raise DemoFailed(f"PySpark's install (process {pid}) stopped before it finished; its log: {log}")
        if waiting_since is None:
            waiting_since = time.monotonic()
            say(f"\n(waiting for PySpark's install, started by the bootstrap, to finish; its log: {log})")
        await pause(0.5)
    if rc != 0:
        raise DemoFailed(f"PySpark's install failed (pip exited with {rc}); its log: {log}")
    importlib.invalidate_caches()
    if waiting_since is not None:
        say(f"PySpark installed ({time.monotonic() - waiting_since:.0f} s of waiting)")


async def add_and_decommission(cluster: LocalCluster, options: DemoOptions) -> None:
    pending = os.environ.get(FEEDER_INSTALL_ENV)
    if pending:
        await await_feeder_install(Path(pending), cluster.pause)
    if importlib.util.find_spec("pyspark") is None:
        say("\n(skipping the Spark step: pyspark is not installed; pip install 'reassignd[feeder]')")
        return
    new = options.brokers + 1
    leaving = 2 if options.drain != 2 else 3
    racks = racks_of(await cluster.typed("GET", "/v1/brokers", Brokers))
    rack = racks.get(leaving) or "r0"
    say(f"\n== adding broker {new} (rack {rack}) and decommissioning broker {leaving} with a plan from Spark")
    zk = cluster.zookeeper.connect
    await cluster.start_child(
        f"broker-{new}", ["broker", "--zk", zk, "--id", str(new), "--rack", rack, *cluster.zk_args]
    )
    deadline = time.monotonic() + options.ready_timeout_s
    while new not in (await cluster.typed("GET", "/v1/status", Status)).brokers.live:
        cluster.check_children()
        if time.monotonic() > deadline:
            raise DemoFailed(f"broker {new} did not register")
        await cluster.pause(0.25)
    plan = cluster.log_dir / "plan"
    say(
        f"reassignd feed plan --goal decommission:{leaving} --goal add:{new} --out {plan}  (a local Spark session)"
    )
    await _reassignd(
        cluster, "feed", "plan", "--bootstrap-controller", cluster.url, "--goal", f"decommission:{leaving}",
        "--goal", f"add:{new}", "--out", str(plan), "--master", "local[2]", "--batch-size", "3",
    )  # fmt: skip
    say(f"\nreassignd feed run {plan}  (the batches, under the executor's caps)")
    await _reassignd(
        cluster, "feed", "run", str(plan), "--bootstrap-controller", cluster.url, "--poll-s", str(options.interval_s),
    )  # fmt: skip
    topic = await cluster.typed("GET", f"/v1/topics/{options.topic}", Topic)
    brokers = sorted(racks_of(await cluster.typed("GET", "/v1/brokers", Brokers)))
    say("the assignment now:")
    say("\n".join([*render_topic(topic), render_load(topic, brokers)]))
    if any(leaving in p.replicas for p in topic.partitions):
        raise DemoFailed(f"broker {leaving} still holds replicas of {options.topic}")

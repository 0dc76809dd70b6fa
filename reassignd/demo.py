"""``python -m reassignd.demo``: a whole reassignd cluster on this machine, watched live.

It starts a local ZooKeeper (Debian's package), one controller and a ``reassignd cluster`` of
broker agents as real processes, waits until the controller is ready and every broker is live,
creates a demo topic by writing its znode as Kafka's own tools do, then prints the cluster state
from the HTTP API every couple of seconds until Ctrl-C (or ``--duration-s``), and stops everything
cleanly. Process logs go to a temporary directory, printed at start.

The steps are methods of :class:`Demo` so later demos (a reassignment, a failover) add theirs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import uvloop

from reassignd.log_setup import LogSettings, configure_logging
from reassignd.zk import codec, paths
from reassignd.zk.client import NodeExistsError, ZkClient, ZkSettings
from reassignd.zk.server import LocalZooKeeper, ZooKeeperUnavailable, free_port

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class DemoOptions:
    brokers: int = 3
    racks: int = 3
    topic: str = "demo"
    partitions: int = 6
    replication_factor: int = 3
    interval_s: float = 2.0
    duration_s: float | None = None
    ready_timeout_s: float = 60.0


class DemoFailed(Exception):
    """A step did not succeed; the message says which, in one line."""


class Stopped(Exception):
    """Ctrl-C (or SIGTERM) came while a step was waiting."""


# --- pure: the demo topic's assignment and the state as text ---------------------------------------


def round_robin_assignment(
    broker_ids: Sequence[int], partitions: int, replication_factor: int
) -> dict[int, tuple[int, ...]]:
    """Partition p gets ``replication_factor`` consecutive brokers starting at broker ``p``."""
    ids = sorted(broker_ids)
    if replication_factor > len(ids):
        raise ValueError(f"replication factor {replication_factor} > {len(ids)} brokers")
    return {p: tuple(ids[(p + i) % len(ids)] for i in range(replication_factor)) for p in range(partitions)}


def _ids(values: Sequence[int]) -> str:
    return ",".join(str(v) for v in values) or "-"


def render_status(status: Mapping[str, Any]) -> list[str]:
    active = status.get("active_controller")
    who = f"controller {active['id']} at {active['http']}" if active else "no active controller"
    zk = status["zookeeper"]
    queue = status["event_queue"]
    p99 = queue.get("queue_time_ms", {}).get("p99")
    lines = [
        f"{who}, epoch {status['controller_epoch']}; ZooKeeper {'connected' if zk['connected'] else 'DISCONNECTED'}"
        f" (session {zk['session_id']}); up {status['uptime_s']} s",
        f"live brokers [{_ids(status['brokers']['live'])}]; {status['topics']} topics, {status['partitions']} partitions,"
        f" {status['reassigning_partitions']} reassigning; event queue {queue['size']}"
        + (f" (p99 {p99:.1f} ms)" if isinstance(p99, int | float) else ""),
    ]
    lines += [f"problem: {p['path']}: {p['reason']}" for p in status.get("problems", [])[:3]]
    return lines


def render_topic(topic: Mapping[str, Any]) -> list[str]:
    header = ("partition", "leader", "epoch", "replicas", "isr", "adding", "removing")
    rows = [
        (
            str(p["partition"]),
            str(p["leader"]) if p["leader"] >= 0 else "none",
            str(p["leader_epoch"]),
            _ids(p["replicas"]),
            _ids(p["isr"]),
            _ids(p["adding_replicas"]),
            _ids(p["removing_replicas"]),
        )
        for p in topic["partitions"]
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    table = [
        "  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]
    return [f"topic {topic['name']} (id {topic['topic_id']})", *table]


def render(now: str, status: Mapping[str, Any], topics: Sequence[Mapping[str, Any]]) -> str:
    lines = [f"--- {now} " + "-" * 60, *render_status(status)]
    for topic in topics:
        lines += render_topic(topic)
    return "\n".join(lines)


# --- the shell ----------------------------------------------------------------------------------------


def say(text: str) -> None:
    print(text, flush=True)


class Child:
    """A ``reassignd`` subcommand as a process of its own session (Ctrl-C reaches only the demo,
    which then stops its children in order), logging to a file."""

    def __init__(self, name: str, args: list[str], log_path: Path) -> None:
        self.name = name
        self.args = args
        self.log_path = log_path
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("REASSIGND_")}
        env["PYTHONUNBUFFERED"] = "1"
        with self.log_path.open("ab") as log:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "reassignd",
                *self.args,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )

    @property
    def exited(self) -> int | None:
        return None if self.process is None else self.process.returncode

    def log_tail(self, lines: int = 15) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        return ""

    async def stop(self, timeout_s: float = 15.0) -> int | None:
        """SIGTERM, then SIGKILL after ``timeout_s``; the exit code (None if never started)."""
        if self.process is None:
            return None
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), timeout_s)
            except TimeoutError:
                say(f"{self.name} did not stop within {timeout_s:g} s; killing it")
                with contextlib.suppress(ProcessLookupError):
                    self.process.kill()
                await self.process.wait()
        return self.process.returncode


class Demo:
    def __init__(self, options: DemoOptions, stop: asyncio.Event) -> None:
        self.options = options
        self.stop = stop
        self.log_dir = Path(tempfile.mkdtemp(prefix="reassignd-demo-"))
        self.zookeeper = LocalZooKeeper(log_path=self.log_dir / "zookeeper.log")
        self.http_port = free_port()
        self.url = f"http://127.0.0.1:{self.http_port}"
        self.children: list[Child] = []
        self.reported: set[str] = set()  # children whose failure was already printed
        self.session: aiohttp.ClientSession | None = None

    # steps

    async def start_zookeeper(self) -> None:
        say(f"starting ZooKeeper (logs in {self.log_dir})")
        try:
            await asyncio.to_thread(self.zookeeper.start)
        except ZooKeeperUnavailable as e:
            raise DemoFailed(str(e)) from None
        say(f"ZooKeeper on {self.zookeeper.connect}")

    async def start_processes(self) -> None:
        zk = self.zookeeper.connect
        o = self.options
        await self.start_child(
            "controller", ["controller", "--zk", zk, "--http", f"127.0.0.1:{self.http_port}"]
        )
        await self.start_child(
            "cluster", ["cluster", "--zk", zk, "--brokers", str(o.brokers), "--racks", str(o.racks)]
        )

    async def start_child(self, name: str, args: list[str]) -> Child:
        child = Child(name, args, self.log_dir / f"{name}.log")
        self.children.append(child)
        await child.start()
        say(f"started reassignd {' '.join(args)}")
        return child

    async def wait_until_ready(self) -> list[int]:
        """The controller answers /readyz and sees every broker; returns the live broker ids."""
        say(f"waiting for the controller at {self.url} and {self.options.brokers} brokers")
        deadline = time.monotonic() + self.options.ready_timeout_s
        while True:
            self.check_children()
            ready, _ = await self.get("/readyz", allow_status=(200, 503))
            if ready.get("status") == "ready":
                status, _ = await self.get("/v1/status")
                live: list[int] = status["brokers"]["live"]
                if status["active"] and len(live) >= self.options.brokers:
                    say(f"ready: controller {status['controller_id']} active, brokers {live}")
                    return live
            if time.monotonic() > deadline:
                raise DemoFailed(
                    f"not ready within {self.options.ready_timeout_s:g} s; see the logs in {self.log_dir}"
                )
            if await self.sleep(0.25):
                raise Stopped

    async def create_topic(self, live_brokers: Sequence[int]) -> None:
        """Write ``/brokers/topics/<topic>`` directly, as Kafka's tools did before the admin API."""
        o = self.options
        assignment = round_robin_assignment(
            live_brokers, o.partitions, min(o.replication_factor, len(live_brokers))
        )
        znode = codec.TopicZnode(partitions=assignment, topic_id=codec.new_uuid_base64())
        client = ZkClient(ZkSettings(self.zookeeper.connect))
        await client.start()
        try:
            await client.create(paths.topic(o.topic), codec.encode_topic(znode), make_parents=True)
            say(f"created topic {o.topic}: {o.partitions} partitions on brokers {list(live_brokers)}")
        except NodeExistsError:
            say(f"topic {o.topic} exists already")
        finally:
            await client.close()

    async def watch(self) -> None:
        """Print the cluster state every ``interval_s`` until stopped (or ``duration_s`` passed)."""
        o = self.options
        until = None if o.duration_s is None else time.monotonic() + o.duration_s
        say("watching the cluster; Ctrl-C stops everything")
        while True:
            self.check_children()
            status, _ = await self.get("/v1/status")
            topic, _ = await self.get(f"/v1/topics/{o.topic}", allow_status=(200, 404))
            topics = [topic] if "partitions" in topic else []
            say(render(time.strftime("%H:%M:%S"), status, topics))
            if until is not None and time.monotonic() >= until:
                say(f"{o.duration_s:g} s passed")
                return
            wait_s = o.interval_s if until is None else max(0.0, min(o.interval_s, until - time.monotonic()))
            if await self.sleep(wait_s):
                return

    # plumbing

    async def sleep(self, seconds: float) -> bool:
        """Sleep, or return True at once when stop is set."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stop.wait(), seconds)
        return self.stop.is_set()

    def check_stop(self) -> None:
        if self.stop.is_set():
            raise Stopped

    def check_children(self) -> None:
        for child in self.children:
            if child.exited is not None:
                self.reported.add(child.name)
                raise DemoFailed(
                    f"reassignd {child.name} exited with {child.exited}; last lines:\n{child.log_tail()}"
                )

    async def get(self, path: str, allow_status: Sequence[int] = (200,)) -> tuple[Json, int]:
        """GET a JSON document; a connection error or an unexpected status gives ``({}, 0)``."""
        if self.session is None:
            self.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5))
        try:
            async with self.session.get(self.url + path) as resp:
                if resp.status not in allow_status:
                    return {}, resp.status
                body = await resp.json()
                return (body if isinstance(body, dict) else {}), resp.status
        except (aiohttp.ClientError, TimeoutError):
            return {}, 0

    async def close(self) -> bool:
        """Stop the processes (all at once), then ZooKeeper; True when every process stopped cleanly."""
        if self.session is not None:
            await self.session.close()
        if self.children:
            say("stopping " + ", ".join(c.name for c in self.children))
        codes = await asyncio.gather(*(c.stop() for c in self.children))
        clean = True
        for child, code in zip(self.children, codes, strict=True):
            if code not in (0, None):
                clean = False
                if child.name not in self.reported:
                    say(f"reassignd {child.name} exited with {code}; last lines:\n{child.log_tail()}")
        await asyncio.to_thread(self.zookeeper.stop)
        say(f"stopped; logs are in {self.log_dir}")
        return clean

    async def run(self) -> int:
        code = 0
        try:
            await self.start_zookeeper()
            self.check_stop()
            await self.start_processes()
            live = await self.wait_until_ready()
            await self.create_topic(live)
            self.check_stop()
            await self.watch()
        except Stopped:
            pass
        except DemoFailed as e:
            say(f"demo failed: {e}")
            code = 1
        except Exception:
            say("demo failed:")
            traceback.print_exc()
            code = 1
        finally:
            clean = await self.close()  # also when cancelled: never leave processes behind
        return code if clean else 1


async def run_demo(options: DemoOptions) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        return await Demo(options, stop).run()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def parse_options(argv: Sequence[str]) -> DemoOptions:
    parser = argparse.ArgumentParser(
        prog="python -m reassignd.demo", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    d = DemoOptions()
    parser.add_argument("--brokers", type=int, default=d.brokers, help=f"broker agents (default {d.brokers})")
    parser.add_argument(
        "--racks", type=int, default=d.racks, help=f"racks they spread over (default {d.racks})"
    )
    parser.add_argument("--topic", default=d.topic, help=f"name of the demo topic (default {d.topic})")
    parser.add_argument(
        "--partitions", type=int, default=d.partitions, help=f"its partitions (default {d.partitions})"
    )
    parser.add_argument(
        "--replication-factor",
        type=int,
        default=d.replication_factor,
        help=f"its replication factor (default {d.replication_factor})",
    )
    parser.add_argument(
        "--interval-s",
        type=float,
        default=d.interval_s,
        help=f"seconds between prints (default {d.interval_s:g})",
    )
    parser.add_argument(
        "--duration-s", type=float, default=None, help="stop after this many seconds (default: at Ctrl-C)"
    )
    args = parser.parse_args(argv)
    if min(args.brokers, args.racks, args.partitions, args.replication_factor) < 1 or args.interval_s <= 0:
        parser.error("counts must be >= 1 and --interval-s > 0")
    return DemoOptions(
        brokers=args.brokers,
        racks=args.racks,
        topic=args.topic,
        partitions=args.partitions,
        replication_factor=args.replication_factor,
        interval_s=args.interval_s,
        duration_s=args.duration_s,
    )


def main(argv: Sequence[str] | None = None) -> None:
    options = parse_options(sys.argv[1:] if argv is None else argv)
    # The demo's own output is the printed state; its processes log to files. Only errors here.
    configure_logging(LogSettings(level="error"))
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        sys.exit(runner.run(run_demo(options)))


if __name__ == "__main__":
    main()

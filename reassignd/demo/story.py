"""``python -m reassignd.demo``: a whole reassignd cluster on this machine, moving partitions live.

It starts a local ZooKeeper (Debian's package), one controller and a ``reassignd cluster`` of
broker agents on racks as real processes, and creates a demo topic whose partitions are big enough
(simulated: sizes and rates are configs in ZooKeeper) that moving one takes seconds. Then it drains
broker 1 through the HTTP API, printing each partition's progress until every move is done, and
moves one more partition only to cancel that move half-way. It then stops everything cleanly (or
keeps the cluster running with ``--keep-running``). Ctrl-C or ``--duration-s`` stop it at any
point. Process logs go to a temporary directory, printed at start.

The machinery is in :mod:`reassignd.demo.cluster`, the steps in :mod:`reassignd.demo.steps`, the
decisions and the printing (pure) in :mod:`reassignd.demo.plan` and :mod:`reassignd.demo.text`.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import signal
import sys
import traceback
from collections.abc import Sequence
from typing import Any, NoReturn

import uvloop

from reassignd.demo.cluster import DemoFailed, LocalCluster, Stopped, say
from reassignd.demo.kafka_client import show_stock_client
from reassignd.demo.plan import DemoOptions
from reassignd.demo.spark import add_and_decommission
from reassignd.demo.steps import Steps
from reassignd.log_setup import LogSettings, configure_logging
from reassignd.options import unknown_flag


class Demo:
    def __init__(self, options: DemoOptions, stop: asyncio.Event) -> None:
        self.options = options
        self.stop = stop
        self.cluster = LocalCluster(stop)
        self.steps = Steps(self.cluster, options)
        self.time_up = False

    def end_of_duration(self) -> None:
        self.time_up = True
        self.stop.set()

    async def story(self) -> None:
        o = self.options
        await self.cluster.start_zookeeper()
        zk, port = self.cluster.zookeeper.connect, self.cluster.http_port
        await self.cluster.start_child(
            "controller",
            [
                "controller",
                "--zk",
                zk,
                "--http",
                f"127.0.0.1:{port}",
                "--kafka-listener",
                self.cluster.kafka_address,
                # self-healing on (off by default): a broker gone for a minute has its replicas moved
                "--self-healing",
                "--self-healing-broker-grace-s",
                "60",
            ],
        )
        await self.cluster.start_child(
            "cluster", ["cluster", "--zk", zk, "--brokers", str(o.brokers), "--racks", str(o.racks)]
        )
        live = await self.cluster.wait_until_ready(o.brokers, o.ready_timeout_s)
        await self.steps.create_topic(live)
        await show_stock_client(self.cluster.kafka_address, o.topic)
        await self.steps.drain()
        await self.steps.cancel_half_way()
        await add_and_decommission(self.cluster, o)
        if o.keep_running:
            await self.steps.watch()
        say("\nthe demo is over")

    async def run(self) -> int:
        code = 0
        timer = None
        if self.options.duration_s is not None:
            timer = asyncio.get_running_loop().call_later(self.options.duration_s, self.end_of_duration)
        try:
            await self.story()
        except Stopped:
            say(f"\n{self.options.duration_s:g} s passed" if self.time_up else "\ninterrupted")
        except DemoFailed as e:
            say(f"demo failed: {e}")
            code = 1
        except Exception:
            say("demo failed:")
            traceback.print_exc()
            code = 1
        finally:
            if timer is not None:
                timer.cancel()
            clean = await self.cluster.close()  # also when cancelled: never leave processes behind
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


class _Parser(argparse.ArgumentParser):
    """Flags as the ``reassignd`` command line reads them: never abbreviated, an unknown one named
    with the closest known one, every mistake one line on stderr (exit 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        given = list(sys.argv[1:] if args is None else args)
        known = [flag for flag in self._option_string_actions if flag.startswith("--")]
        problem = unknown_flag(given, known)
        if problem is not None:
            self.error(problem)
        return super().parse_args(given, namespace)


def parse_options(argv: Sequence[str]) -> DemoOptions:
    d = DemoOptions()
    parser = _Parser(
        prog="scripts/demo.sh",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        allow_abbrev=False,
    )

    def add(flag: str, kind: type, default: object, text: str, metavar: str = "N") -> None:
        parser.add_argument(
            flag, type=kind, default=default, metavar=metavar, help=f"{text} (default {default})"
        )

    add("--brokers", int, d.brokers, "broker agents")
    add("--racks", int, d.racks, "racks they spread over")
    add("--topic", str, d.topic, "name of the demo topic", "NAME")
    add("--partitions", int, d.partitions, "its partitions")
    add("--replication-factor", int, d.replication_factor, "its replication factor")
    add("--partition-mib", int, d.partition_mib, "simulated size of each partition, MiB")
    add("--replication-mib-s", int, d.replication_mib_s, "replication bandwidth of each broker, MiB/s")
    add("--interval-s", float, d.interval_s, "seconds between progress prints", "S")
    parser.add_argument(
        "--duration-s", type=float, metavar="S", help="stop after this many seconds (default: at the end)"
    )
    parser.add_argument(
        "--keep-running", action="store_true", help="after the story, keep the cluster up until Ctrl-C"
    )
    args = parser.parse_args(argv)
    counts = (args.brokers, args.racks, args.partitions, args.replication_factor, args.replication_mib_s)
    if min(counts) < 1 or args.partition_mib < 0 or args.interval_s <= 0:
        parser.error("counts and --replication-mib-s must be >= 1, --partition-mib >= 0, --interval-s > 0")
    if args.replication_factor >= args.brokers:
        parser.error("--replication-factor must be below --brokers: the demo empties one broker")
    if not re.fullmatch(r"[a-zA-Z0-9._-]{1,249}", args.topic) or args.topic in (".", ".."):
        parser.error(f"--topic {args.topic!r} is not a valid topic name")
    if args.duration_s is not None and args.duration_s <= 0:
        parser.error("--duration-s must be > 0")
    return DemoOptions(
        brokers=args.brokers,
        racks=args.racks,
        topic=args.topic,
        partitions=args.partitions,
        replication_factor=args.replication_factor,
        partition_mib=args.partition_mib,
        replication_mib_s=args.replication_mib_s,
        interval_s=args.interval_s,
        duration_s=args.duration_s,
        keep_running=args.keep_running,
    )


def main(argv: Sequence[str] | None = None) -> None:
    options = parse_options(sys.argv[1:] if argv is None else argv)
    # The demo's own output is what it prints; its processes log to files. Only errors here.
    configure_logging(LogSettings(level="error"))
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        sys.exit(runner.run(run_demo(options)))

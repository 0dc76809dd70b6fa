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

import asyncio
import signal
import sys
import traceback
from collections.abc import Sequence

import uvloop

from reassignd.demo.cluster import DemoFailed, LocalCluster, Stopped, say
from reassignd.demo.kafka_client import show_stock_client
from reassignd.demo.options import DemoOptions, parse_options
from reassignd.demo.spark import add_and_decommission
from reassignd.demo.steps import Steps
from reassignd.log_setup import LogSettings, configure_logging


class Demo:
    def __init__(self, options: DemoOptions, stop: asyncio.Event) -> None:
        self.options = options
        self.stop = stop
        self.cluster = LocalCluster(stop, secure=options.secure)
        self.steps = Steps(self.cluster, options)
        self.time_up = False

    def end_of_duration(self) -> None:
        self.time_up = True
        self.stop.set()

    async def story(self) -> None:
        o = self.options
        live = await self.start_cluster()
        await self.steps.create_topic(live)
        await show_stock_client(self.cluster.kafka_address, o.topic)
        await self.steps.drain()
        await self.steps.cancel_half_way()
        await add_and_decommission(self.cluster, o)
        if o.keep_running:
            await self.steps.watch()
        say("\nthe demo is over")

    async def start_cluster(self) -> list[int]:
        """ZooKeeper, the controller and the agents, until ready; the live broker ids."""
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
                *self.cluster.zk_args,
            ],
        )
        await self.cluster.start_child(
            "cluster",
            [
                "cluster",
                "--zk",
                zk,
                "--brokers",
                str(o.brokers),
                "--racks",
                str(o.racks),
                *self.cluster.zk_args,
            ],
        )
        return await self.cluster.wait_until_ready(o.brokers, o.ready_timeout_s)

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


def main(argv: Sequence[str] | None = None) -> None:
    options = parse_options(sys.argv[1:] if argv is None else argv)
    # The demo's own output is what it prints; its processes log to files. Only errors here.
    configure_logging(LogSettings(level="error"))
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        sys.exit(runner.run(run_demo(options)))

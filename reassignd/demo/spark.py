"""The demo's third step: a broker is added and another decommissioned by a plan the Spark job
computes (``reassignd feed plan``, a local Spark session), executed as batches (``reassignd feed
run``) with their progress shown. Skipped, with a line saying why, when pyspark is not installed.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import time

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


async def add_and_decommission(cluster: LocalCluster, options: DemoOptions) -> None:
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

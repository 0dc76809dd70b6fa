"""Adaptive concurrency benchmark (issue 26, item 4's second half): one plan, run with fixed caps of
2 and 10 moves per broker and with adaptive concurrency, against the lower bound.

The cluster and the plan are ``bench/makespan.py``'s (a local ZooKeeper, a ``reassignd
controller``, a ``reassignd cluster`` of broker agents on 3 racks; rack-aware moves of one or two
replicas of a share of log-normally sized partitions), and every topic also takes produce traffic
(``--produce-share`` of a broker's bandwidth spread over the partitions it follows), so ordinary
replication competes with the moves. Each way runs on fresh copies of the same topics. Printed per
way: the makespan (the batch's submission to every partition at its target) and its ratio to the
lower bound; the worst count, sampled every ``--sample-s`` from ZooKeeper, of partitions *outside*
the batch with a replica out of their ISR; and, for the adaptive run, the caps it journaled (the
highest a broker reached, the changes up and down).

    python bench/adaptive.py --quick            # 12 brokers, 600 partitions, bound 10 s
    python bench/adaptive.py                    # 24 brokers, 2400 partitions, bound 30 s
    python bench/adaptive.py --adaptive 1:20 --start 2

Reading the figures: fixed 2 is the cautious setting (slow, gentle); fixed 10 the fast one; the
adaptive run should come close to the faster makespan while never having more partitions outside
the batch under-replicated than the cautious one.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))  # makespan.py, next to this file

from makespan import (  # type: ignore[import-not-found]
    RACKS,
    RATE_BYTES_PER_S,
    Shape,
    api_client,
    cluster_ready,
    delete_topics,
    plan_entries,
    planned,
    topic_name,
)
from makespan import (
    create_topics as create_plan_topics,
)

from reassignd.api_client.client import ApiClient
from reassignd.executor import journal
from reassignd.executor import paths as batch_paths
from reassignd.executor.progress import lower_bound_makespan_s
from reassignd.testing.polling import eventually
from reassignd.zk import codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.server import LocalZooKeeper, free_port
from reassignd.zk.values import ZkSettings


async def create_topics(api: ApiClient, run: str, shape: Shape, produce_bytes_per_s: float) -> None:
    """makespan.py's topics, each also producing ``produce_bytes_per_s`` per partition."""
    await create_plan_topics(
        api, run, shape, {"reassignd.sim.produce.bytes.per.s": f"{produce_bytes_per_s:.0f}"}
    )


@dataclass(frozen=True, slots=True)
class Way:
    name: str
    moves_per_broker: int
    adaptive: tuple[int, int] | None = None


@dataclass(slots=True)
class Result:
    way: Way
    makespan_s: float
    worst_under_replicated: int
    max_cap: int
    ups: int
    downs: int


class Watch:
    """Every ``every_s``: the partitions outside the batch with a replica out of their ISR, and the
    batch's journaled caps."""

    def __init__(self, zk: ZkClient, outside: list[tuple[str, int]], batch_id: str, every_s: float) -> None:
        self.zk, self.outside, self.batch_id, self.every_s = zk, outside, batch_id, every_s
        self.worst = 0
        self.max_cap = 0
        self.task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        state_paths = [paths.partition_state(t, p) for t, p in self.outside]
        while True:
            znodes = await self.zk.get_many(state_paths)
            under = 0
            for (t, p), z in zip(self.outside, znodes, strict=True):
                if z is None:
                    continue
                s = codec.decode_partition_state(z.data)
                under += len(s.isr) < self.replicas[(t, p)]
            self.worst = max(self.worst, under)
            head = await self.zk.get_or_none(batch_paths.batch(self.batch_id))
            if head is not None:
                caps = journal.decode_head(head.data).batch.broker_caps
                self.max_cap = max([self.max_cap, *caps.values()])
            await asyncio.sleep(self.every_s)

    def start(self, replicas: dict[tuple[str, int], int]) -> Watch:
        self.replicas = replicas
        self.task = asyncio.get_running_loop().create_task(self._run())
        return self

    def stop(self) -> None:
        assert self.task is not None
        self.task.cancel()


async def cap_changes(api: ApiClient) -> tuple[int, int]:
    _, text = await api.exchange("GET", "/metrics", accept_text=True)
    found = dict(re.findall(r'^reassignd_batch_cap_changes_total\{direction="(\w+)"\} (\S+)$', text, re.M))
    return int(float(found.get("up", 0))), int(float(found.get("down", 0)))


async def run_way(
    api: ApiClient, zk: ZkClient, way: Way, run: str, shape: Shape, args: argparse.Namespace
) -> Result:
    # every partition produces: a broker's followers (2 of RF 3 replicas) take produce_share of it
    produce = args.produce_share * RATE_BYTES_PER_S * shape.brokers / (len(shape.assignment) * 2)
    await create_topics(api, run, shape, produce)
    await asyncio.sleep(3.0)  # every replica created and in the ISR at the agents
    batch_id = f"adaptive-{run}"
    outside = sorted((topic_name(run, t), p) for (t, p) in shape.assignment if (t, p) not in shape.plan)
    replicas = {(topic_name(run, t), p): len(r) for (t, p), r in shape.assignment.items()}
    up0, down0 = await cap_changes(api)
    watch = Watch(zk, outside, batch_id, args.sample_s).start(replicas)
    limits: dict[str, object] = {"moves_per_broker": way.moves_per_broker}
    limits["adaptive"] = None if way.adaptive is None else {"min": way.adaptive[0], "max": way.adaptive[1]}
    entries = plan_entries(run, shape, "largest")
    body = {
        "batch_id": batch_id,
        "partitions": [{"topic": n, "partition": p, "replicas": r} for n, p, r in entries],
        "limits": limits,
    }
    started = time.monotonic()
    answer = await api.submit_batch(body)
    if any(not p.ok for p in answer.partitions):
        raise RuntimeError(f"batch {batch_id}: refusals")

    async def done() -> bool:
        return (await api.batch(batch_id)).state == "completed"

    bound = lower_bound_makespan_s(shape.moves(), shape.size_of(), float(RATE_BYTES_PER_S))
    await eventually(done, 60 * bound + 600, 0.2, f"{way.name} completes")
    makespan = time.monotonic() - started
    watch.stop()
    up1, down1 = await cap_changes(api)
    await delete_topics(api, run, shape)
    return Result(way, makespan, watch.worst, watch.max_cap, up1 - up0, down1 - down0)


async def bench(
    args: argparse.Namespace, zk_connect: str, log_dir: Path, shape: Shape, ways: list[Way]
) -> list[Result]:
    port = free_port()
    common = ["--zk", zk_connect, "--session-timeout-s", "10", "--log-level", "warning"]
    with (log_dir / "controller.log").open("wb") as clog, (log_dir / "cluster.log").open("wb") as alog:
        controller = subprocess.Popen(  # noqa: ASYNC220 (started once, before anything is measured)
            [sys.executable, "-m", "reassignd", "controller", *common, "--http", f"127.0.0.1:{port}",
             "--agent-sample-interval-s", str(args.sample_s)],
            stdout=clog, stderr=subprocess.STDOUT,
        )  # fmt: skip
        agents = subprocess.Popen(  # noqa: ASYNC220
            [sys.executable, "-m", "reassignd", "cluster", *common, "--brokers", str(args.brokers),
             "--racks", str(RACKS), "--replication-bytes-per-s", str(RATE_BYTES_PER_S),
             "--replica-lag-time-max-ms", str(args.replica_lag_ms)],
            stdout=alog, stderr=subprocess.STDOUT,
        )  # fmt: skip
        zk = ZkClient(ZkSettings(zk_connect, session_timeout_s=10.0))
        await zk.start()
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=300)) as http:
                api = api_client(http, f"http://127.0.0.1:{port}")

                await cluster_ready(api, args.brokers)
                bound = lower_bound_makespan_s(shape.moves(), shape.size_of(), float(RATE_BYTES_PER_S))
                results = []
                for i, way in enumerate(ways):
                    r = await run_way(api, zk, way, f"a{i}", shape, args)
                    print(
                        f"  {way.name:<14} {r.makespan_s:7.1f} s  {r.makespan_s / bound:5.2f}× the bound  "
                        f"worst under-replicated outside: {r.worst_under_replicated}"
                        + (f"  caps: max {r.max_cap}, {r.ups} up, {r.downs} down" if way.adaptive else ""),
                        flush=True,
                    )
                    results.append(r)
                return results
        finally:
            await zk.close()
            for proc in (agents, controller):
                proc.terminate()
            for proc in (agents, controller):
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()


def main() -> None:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--brokers", type=int, default=24)
    parser.add_argument("--partitions", type=int, default=2400)
    parser.add_argument("--partitions-per-topic", type=int, default=4)
    parser.add_argument("--move-share", type=float, default=0.6)
    parser.add_argument("--sigma", type=float, default=1.0)
    parser.add_argument("--bound-s", type=float, default=None, help="default 30, quick 10")
    parser.add_argument("--adaptive", default="1:20", help="MIN:MAX of the adaptive run")
    parser.add_argument("--start", type=int, default=2, help="the adaptive run's moves_per_broker")
    parser.add_argument("--produce-share", type=float, default=0.3, help="of a broker's bandwidth")
    parser.add_argument("--replica-lag-ms", type=int, default=3000)
    parser.add_argument("--sample-s", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="12 brokers, 600 partitions, bound 10 s")
    args = parser.parse_args()
    if args.quick:
        args.brokers, args.partitions = min(args.brokers, 12), min(args.partitions, 600)
    low, _, high = args.adaptive.partition(":")
    bounds = (int(low), int(high))
    bound_s = args.bound_s or (10.0 if args.quick else 30.0)
    shape, bound = planned(args, bound_s)
    ways = [
        Way("fixed-2", 2),
        Way("fixed-10", 10),
        Way(f"adaptive-{bounds[0]}:{bounds[1]}", args.start, bounds),
    ]
    log_dir = Path(tempfile.mkdtemp(prefix="adaptive-bench-"))
    print(f"logs: {log_dir}")
    with LocalZooKeeper(quick_jit=False) as server:
        results = asyncio.run(bench(args, f"{server.connect}/adaptive", log_dir, shape, ways))
    print()
    print(f"{'':<14} {'makespan':>9} {'÷ bound':>8} {'worst URP outside':>18}")
    print(f"{'bound':<14} {bound:8.1f}s {1:8.2f}")
    for r in results:
        print(
            f"{r.way.name:<14} {r.makespan_s:8.1f}s {r.makespan_s / bound:8.2f} {r.worst_under_replicated:>18}"
        )


if __name__ == "__main__":
    main()

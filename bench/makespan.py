"""Makespan benchmark (issue 9, item 8): one plan, three ways to run it, against the lower bound.

A local ZooKeeper, a `reassignd controller` and a `reassignd cluster` of 24 broker agents on 3
racks (real processes: the agents in `--agent-processes` (3) of them, so that they do not set the
pace; the agents share each broker's replication bandwidth fairly among its
partitions). Partitions (RF 3, one replica per rack) belong to topics of a few partitions each,
whose sizes are log-normal (``reassignd.sim.initial.bytes`` is per topic). The plan moves a large
share of them: one or two replicas each, to random brokers of the same rack (rack-aware). It is
run three times, each on fresh copies of the same topics (created for the run, deleted after), and
the time from the request to the last partition at its target is printed for:

1. ``single``: one AlterPartitionReassignments with everything (``POST /v1/reassignments``), what
   ``kafka-reassign-partitions --execute`` does;
2. ``cc-5``: one batch (``POST /v1/batches``) capped at 5 concurrent moves in and out per broker
   (Cruise Control's default ``num.concurrent.partition.movements.per.broker``), in plan order;
3. ``executor``: one batch through the executor's scheduler with the best setting found here:
   10 moves in and out per broker, the plan submitted largest partition first (longest processing
   time first; the controller gives the scheduler no sizes, so ``large_first`` would not reorder
   anything, and the order is the plan's, as a feeder would write it). ``--executor-moves-per-
   broker``, ``--executor-order`` and ``--executor-strategy`` try others: with about 80 moves into
   each broker, caps of 10 to 40 came within 1.02–1.08× of the bound whatever the order, a cap of
   5 about 1.16–1.18× (each completion costs a round trip through ZooKeeper and the controller
   before the next move starts, and a move needs a free slot on every broker it adds to *and*
   removes from);

with the lower bound: max over brokers of the bytes it takes in or sends out ÷ its replication
rate (``reassignd.executor.progress.lower_bound_makespan_s``), and each makespan's ratio to it.
Sizes are scaled so that the bound is ``--bound-s`` seconds; one run takes a few minutes.

    python bench/makespan.py                    # 24 brokers, 2400 partitions, bound 30 s
    python bench/makespan.py --quick            # 600 partitions, bound 10 s
    python bench/makespan.py --partitions 4000 --brokers 30 --seed 3

Goal (issue 9): the executor within 1.15× of the lower bound and ≥ 1.5× faster than ``single``.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from reassignd.api_client.client import ApiClient
from reassignd.api_client.errors import ClientError
from reassignd.api_client.shapes import partition_results
from reassignd.contracts.admin import CreateTopicsResponse, DeleteTopicsResponse
from reassignd.executor.progress import broker_bytes, lower_bound_makespan_s
from reassignd.executor.scheduler import MoveShape, move_shape
from reassignd.testing.polling import eventually
from reassignd.zk.server import LocalZooKeeper, free_port

TP = tuple[str, int]  # (topic base name, partition); a run prefixes the name
RACKS = 3
RF = 3
RATE_BYTES_PER_S = 50 * 1024 * 1024  # every broker's replication bandwidth, each direction
CHUNK_TOPICS = 100  # topics per CreateTopics / DeleteTopics request


# --- the cluster's shape and the plan (pure) ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Shape:
    brokers: int
    partitions_per_topic: int
    sizes: Mapping[str, int]  # per topic, bytes of each of its partitions
    assignment: Mapping[TP, tuple[int, ...]]  # replicas, preferred leader first
    plan: Mapping[TP, tuple[int, ...]]  # target replicas of the partitions that move

    def moves(self) -> list[MoveShape]:
        return [move_shape(tp, self.assignment[tp], t, self.assignment[tp][0]) for tp, t in self.plan.items()]

    def size_of(self) -> dict[TP, int]:
        return {tp: self.sizes[tp[0]] for tp in self.plan}


def rack_of(broker: int) -> int:
    """As ``reassignd cluster --first-id 1 --racks 3``: broker i is on rack r<(i - 1) mod 3>."""
    return (broker - 1) % RACKS


def build_shape(
    rng: random.Random, brokers: int, partitions: int, per_topic: int, move_share: float, sigma: float
) -> Shape:
    """Rack-aware replicas (one per rack, random brokers, random preferred leader), log-normal topic
    sizes (median 1 unit, scaled later), and a plan moving ``move_share`` of the partitions: one
    replica (two for a third of them) to a random broker of the same rack not in the set."""
    by_rack: dict[int, list[int]] = {}
    for b in range(1, brokers + 1):
        by_rack.setdefault(rack_of(b), []).append(b)
    topics = [f"t{t:05d}" for t in range(math.ceil(partitions / per_topic))]
    sizes = {t: max(1, round(1_000_000 * rng.lognormvariate(0.0, sigma))) for t in topics}
    assignment: dict[TP, tuple[int, ...]] = {}
    for t in topics:
        for p in range(per_topic):
            replicas = [rng.choice(by_rack[r]) for r in range(RACKS)]
            rng.shuffle(replicas)
            assignment[(t, p)] = tuple(replicas)
    plan: dict[TP, tuple[int, ...]] = {}
    for tp in rng.sample(sorted(assignment), round(move_share * len(assignment))):
        target = list(assignment[tp])
        for i in rng.sample(range(RF), 2 if rng.random() < 1 / 3 else 1):
            choices = [b for b in by_rack[rack_of(target[i])] if b not in target]
            target[i] = rng.choice(choices)
        plan[tp] = tuple(target)
    return Shape(brokers, per_topic, sizes, assignment, plan)


def scaled(shape: Shape, bound_s: float, rate: float) -> Shape:
    """``shape`` with its sizes scaled so that the plan's lower bound is ``bound_s`` at ``rate``."""
    bound = lower_bound_makespan_s(shape.moves(), shape.size_of(), float(rate))
    factor = bound_s / bound
    sizes = {t: max(1, round(s * factor)) for t, s in shape.sizes.items()}
    return Shape(shape.brokers, shape.partitions_per_topic, sizes, shape.assignment, shape.plan)


# --- the processes and the HTTP API (the shell) ------------------------------------------------------


@dataclass(slots=True)
class Cpu:
    """CPU seconds of a process and its children (``reassignd cluster --processes``'s agents),
    from /proc (0 where /proc is missing)."""

    pid: int
    ticks: int = field(default_factory=lambda: os.sysconf("SC_CLK_TCK"))

    def seconds(self) -> float:
        return self._tree(self.pid)

    def _tree(self, pid: int) -> float:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / self.ticks + sum(self._tree(int(c)) for c in children)


def api_client(http: aiohttp.ClientSession, url: str) -> ApiClient:
    """The API client of the controller at ``url`` (the bench's one instance), on ``http``."""
    return ApiClient(http, url, timeout_s=300, follow_active=False)


def topic_name(run: str, t: str) -> str:
    return f"{run}-{t}"


async def create_topics(
    api: ApiClient, run: str, shape: Shape, configs: Mapping[str, str] | None = None
) -> None:
    """The plan's topics, each with its simulated size and ``configs``."""
    topics = sorted(shape.sizes)
    for start in range(0, len(topics), CHUNK_TOPICS):
        body = {
            "timeout_ms": 120_000,
            "topics": [
                {
                    "name": topic_name(run, t),
                    "assignments": {
                        str(p): list(shape.assignment[(t, p)]) for p in range(shape.partitions_per_topic)
                    },
                    "configs": {"reassignd.sim.initial.bytes": str(shape.sizes[t]), **(configs or {})},
                }
                for t in topics[start : start + CHUNK_TOPICS]
            ],
        }
        answer = await api.typed("POST", "/v1/topics", CreateTopicsResponse, body=body)
        errors = [t for t in answer.topics if not t.ok]
        if errors:
            raise RuntimeError(f"CreateTopics: {errors[:3]}")


async def delete_topics(api: ApiClient, run: str, shape: Shape) -> None:
    names = [topic_name(run, t) for t in sorted(shape.sizes)]
    for start in range(0, len(names), CHUNK_TOPICS):
        body = {"timeout_ms": 120_000, "topics": names[start : start + CHUNK_TOPICS]}
        await api.typed("POST", "/v1/topics/delete", DeleteTopicsResponse, body=body)

    async def gone() -> bool:
        return (await api.status()).topics == 0

    await eventually(gone, 120, 0.25, "topics deleted")


ORDERS = ("plan", "largest", "busiest")


def plan_entries(run: str, shape: Shape, order: str) -> list[tuple[str, int, list[int]]]:
    """The plan's moves in ``order``: ``plan`` (as generated), ``largest`` (largest partition first)
    or ``busiest`` (moves touching the most loaded broker first, then largest first: the brokers
    that set the bound start their work first)."""
    tps = list(shape.plan)
    if order == "largest":
        tps.sort(key=lambda tp: -shape.sizes[tp[0]])
    elif order == "busiest":
        moves = {m.tp: m for m in shape.moves()}
        bytes_in, bytes_out = broker_bytes(moves.values(), shape.size_of())

        def load(tp: TP) -> int:
            m = moves[tp]
            loads = [bytes_in.get(b, 0) for b in m.destinations]
            if m.leader is not None:
                loads.append(bytes_out.get(m.leader, 0))
            return max(loads, default=0)

        tps.sort(key=lambda tp: (-load(tp), -shape.sizes[tp[0]]))
    return [(topic_name(run, t), p, list(shape.plan[(t, p)])) for t, p in tps]


async def submit_all_at_once(api: ApiClient, entries: Sequence[tuple[str, int, list[int]]]) -> None:
    topics: dict[str, list[dict[str, Any]]] = {}
    for name, p, replicas in entries:
        topics.setdefault(name, []).append({"partition": p, "replicas": replicas})
    body = {"timeout_ms": 120_000, "topics": [{"name": n, "partitions": ps} for n, ps in topics.items()]}
    errors = [(tp, r) for tp, r in partition_results(await api.alter(body)) if not r.ok]
    if errors:
        raise RuntimeError(f"AlterPartitionReassignments: {errors[:3]}")


async def submit_batch(
    api: ApiClient,
    batch_id: str,
    entries: Sequence[tuple[str, int, list[int]]],
    moves_per_broker: int,
    strategy: list[str],
) -> None:
    body = {
        "batch_id": batch_id,
        "plan_id": "makespan-bench",
        "partitions": [{"topic": n, "partition": p, "replicas": r} for n, p, r in entries],
        "limits": {"moves_per_broker": moves_per_broker},
        "strategy": strategy,
    }
    answer = await api.submit_batch(body)
    errors = [p for p in answer.partitions if not p.ok]
    if errors:
        raise RuntimeError(f"batch {batch_id}: {errors[:3]}")


@dataclass(frozen=True, slots=True)
class Way:
    name: str
    what: str
    moves_per_broker: int | None  # None: one AlterPartitionReassignments with everything
    strategy: tuple[str, ...] = ()
    order: str = "plan"


@dataclass(frozen=True, slots=True)
class Result:
    way: Way
    makespan_s: float
    agents_cpu: float  # the agents' process, in cores (1.0: one core busy all along)
    controller_cpu: float


async def run_way(
    api: ApiClient, way: Way, run: str, shape: Shape, cpus: tuple[Cpu, Cpu], timeout_s: float
) -> Result:
    """Fresh topics, the plan run ``way``, the time until every partition is at its target."""
    await create_topics(api, run, shape)
    await asyncio.sleep(2.0)  # every replica created and in the ISR at the agents
    entries = plan_entries(run, shape, way.order)
    cpu_before = [c.seconds() for c in cpus]
    started = time.monotonic()
    if way.moves_per_broker is None:
        await submit_all_at_once(api, entries)
    else:
        await submit_batch(api, f"makespan-{run}", entries, way.moves_per_broker, list(way.strategy))

    async def finished() -> bool:
        if (await api.status()).reassigning_partitions > 0:
            return False
        if way.moves_per_broker is None:
            return True
        batch = await api.batch(f"makespan-{run}")
        if batch.state not in ("running", "pending", "completed"):
            raise RuntimeError(f"batch makespan-{run} ended {batch.state}")
        return batch.state == "completed"

    await eventually(finished, timeout_s, 0.2, f"{way.name} completes")
    makespan = time.monotonic() - started
    cpu_after = [c.seconds() for c in cpus]
    await delete_topics(api, run, shape)
    agents, controller = ((a - b) / makespan for a, b in zip(cpu_after, cpu_before, strict=True))
    return Result(way, makespan, agents, controller)


async def bench(
    args: argparse.Namespace, zk_connect: str, log_dir: Path, shape: Shape, ways: list[Way]
) -> list[Result]:
    port = free_port()
    common = ["--zk", zk_connect, "--session-timeout-s", "10", "--log-level", "warning"]
    with (log_dir / "controller.log").open("wb") as clog, (log_dir / "cluster.log").open("wb") as alog:
        controller = subprocess.Popen(  # noqa: ASYNC220 (started once, before anything is measured)
            [sys.executable, "-m", "reassignd", "controller", *common, "--http", f"127.0.0.1:{port}"],
            stdout=clog, stderr=subprocess.STDOUT,
        )  # fmt: skip
        agents = subprocess.Popen(  # noqa: ASYNC220
            [sys.executable, "-m", "reassignd", "cluster", *common, "--brokers", str(args.brokers),
             "--racks", str(RACKS), "--replication-bytes-per-s", str(RATE_BYTES_PER_S),
             *(["--processes", str(args.agent_processes)] if args.agent_processes > 1 else [])],
            stdout=alog, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            timeout = aiohttp.ClientTimeout(total=300)
            async with aiohttp.ClientSession(timeout=timeout) as http:
                api = api_client(http, f"http://127.0.0.1:{port}")

                await cluster_ready(api, args.brokers)
                results = []
                bound = lower_bound_makespan_s(shape.moves(), shape.size_of(), float(RATE_BYTES_PER_S))
                for i, way in enumerate(ways):
                    result = await run_way(
                        api, way, f"r{i}", shape, (Cpu(agents.pid), Cpu(controller.pid)), 20 * bound + 120
                    )
                    print(
                        f"  {way.name:<9} {result.makespan_s:7.1f} s  {result.makespan_s / bound:5.2f}× the bound"
                        f"   (agents {result.agents_cpu:.2f} cores, controller {result.controller_cpu:.2f})",
                        flush=True,
                    )
                    results.append(result)
                return results
        finally:
            for proc in (agents, controller):
                proc.terminate()
            for proc in (agents, controller):
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()


def planned(args: argparse.Namespace, bound_s: float) -> tuple[Shape, float]:
    """The plan the arguments ask for (seed, brokers, partitions, partitions per topic, move
    share, sigma), scaled so that its lower bound is ``bound_s``; described on stdout."""
    shape = scaled(
        build_shape(
            random.Random(args.seed),
            args.brokers,
            args.partitions,
            args.partitions_per_topic,
            args.move_share,
            args.sigma,
        ),
        bound_s,
        RATE_BYTES_PER_S,
    )
    bound = lower_bound_makespan_s(shape.moves(), shape.size_of(), float(RATE_BYTES_PER_S))
    describe(shape, bound)
    return shape, bound


async def cluster_ready(api: ApiClient, brokers: int) -> None:
    """Wait for an active controller that sees ``brokers`` live brokers."""

    async def ready() -> bool:
        try:
            status = await api.status()
        except ClientError:
            return False
        return status.active and len(status.brokers.live) == brokers

    await eventually(ready, 60, 0.25, f"the controller and {brokers} brokers")


def describe(shape: Shape, bound: float) -> None:
    sizes = shape.size_of()
    moved = broker_bytes(shape.moves(), sizes)[0]
    total = sum(moved.values())
    part_sizes = sorted(shape.sizes[t] for t, _ in shape.assignment)
    mib = 1024 * 1024
    print(
        f"cluster: {shape.brokers} brokers on {RACKS} racks, {len(shape.assignment):,} partitions "
        f"({len(shape.sizes)} topics × {shape.partitions_per_topic}, RF {RF}), "
        f"replication {RATE_BYTES_PER_S / mib:.0f} MiB/s per broker each way"
    )
    print(
        f"sizes (log-normal): median {part_sizes[len(part_sizes) // 2] / mib:.1f} MiB, "
        f"p99 {part_sizes[int(len(part_sizes) * 0.99)] / mib:.1f} MiB, max {part_sizes[-1] / mib:.1f} MiB"
    )
    adds = sum(len(m.destinations) for m in shape.moves())
    print(
        f"plan: {len(shape.plan):,} partitions move ({adds:,} replicas added), {total / mib / 1024:.1f} GiB copied, "
        f"busiest broker {max(moved.values()) / mib:.0f} MiB in (mean {total / len(moved) / mib:.0f})"
    )
    print(f"lower bound: {bound:.1f} s (max over brokers of bytes in or out ÷ its rate)")


def main() -> None:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--brokers", type=int, default=24, help="broker agents (3 racks)")
    parser.add_argument(
        "--agent-processes",
        type=int,
        default=3,
        help="the agents run in this many processes (reassignd cluster --processes; 1: one process)",
    )
    parser.add_argument("--partitions", type=int, default=2400)
    parser.add_argument("--partitions-per-topic", type=int, default=4)
    parser.add_argument(
        "--move-share", type=float, default=0.6, help="share of the partitions the plan moves"
    )
    parser.add_argument("--sigma", type=float, default=1.0, help="log-normal sigma of topic sizes")
    parser.add_argument(
        "--bound-s", type=float, default=None, help="lower bound to scale sizes to (default 30, quick 10)"
    )
    parser.add_argument("--executor-moves-per-broker", type=int, default=10)
    parser.add_argument(
        "--executor-order", choices=ORDERS, default="largest", help="the batch's partition order"
    )
    parser.add_argument(
        "--executor-strategy",
        action="append",
        default=None,
        help="the batch's strategy (repeat; none by default)",
    )
    parser.add_argument(
        "--only", choices=["single", "cc-5", "executor"], action="append", help="run only these"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="600 partitions, bound 10 s: about a minute")
    args = parser.parse_args()
    if args.quick:
        args.partitions = min(args.partitions, 600)
    args.executor_strategy = args.executor_strategy or []
    bound_s = args.bound_s or (10.0 if args.quick else 30.0)
    if args.brokers < 2 * RACKS:
        parser.error(f"--brokers must be at least {2 * RACKS} (a move needs a free broker on the rack)")
    shape, bound = planned(args, bound_s)
    ways = [
        Way("single", "one AlterPartitionReassignments with everything", None),
        Way("cc-5", "batch, 5 moves per broker, plan order", 5),
        Way(
            "executor",
            f"batch, {args.executor_moves_per_broker} moves per broker, "
            f"strategy [{', '.join(args.executor_strategy)}], {args.executor_order} order",
            args.executor_moves_per_broker,
            tuple(args.executor_strategy),
            args.executor_order,
        ),
    ]
    ways = [w for w in ways if not args.only or w.name in args.only]
    log_dir = Path(tempfile.mkdtemp(prefix="makespan-bench-"))
    print(f"logs: {log_dir}")
    print("makespans (request to every partition at its target; fresh topics each):")
    with LocalZooKeeper(quick_jit=False) as server:
        results = asyncio.run(bench(args, f"{server.connect}/makespan", log_dir, shape, ways))
    by_name = {r.way.name: r for r in results}
    print()
    print(f"{'':<9} {'makespan':>9} {'÷ bound':>8}   how")
    print(f"{'bound':<9} {bound:8.1f}s {1:8.2f}   max over brokers of bytes in or out ÷ rate")
    for r in results:
        print(f"{r.way.name:<9} {r.makespan_s:8.1f}s {r.makespan_s / bound:8.2f}   {r.way.what}")
    if "executor" in by_name and "single" in by_name:
        speedup = by_name["single"].makespan_s / by_name["executor"].makespan_s
        print(f"executor vs single: {speedup:.2f}× faster (goal ≥ 1.5×); executor ÷ bound goal ≤ 1.15")


if __name__ == "__main__":
    main()

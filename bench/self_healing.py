"""Self-healing benchmark (issue 26, item 4): an agent killed, its replicas re-placed unasked.

A local ZooKeeper, a `reassignd controller` with ``--self-healing`` and a grace of ``--grace-s``
(5 s), a `reassignd cluster` of 11 agents on 3 racks and a 12th agent in a process of its own
(rack r2), every broker replicating at ``RATE`` each way. ``--partitions`` partitions (3,000, RF 3,
one replica per rack) in topics of 4 partitions whose sizes are log-normal (skewed: a few topics
are much larger than the median). The 12th agent is SIGKILLed; its ZooKeeper session expires, the
controller records the loss, waits the grace, plans the lost replicas' new places (the planner's
decommission placement, rack-aware: they all go to the other brokers of rack r2) and runs them as
a batch. Printed:

- the time from the loss the controller recorded (its ``lost_at_ms``, the session's expiry as the
  controller saw it) to full replication (the healing batch completed, nothing reassigning, every
  partition with 3 replicas in its ISR, none on the lost broker);
- the lower bound: the lost replicas' bytes ÷ the receiving brokers' bandwidth (the brokers the
  plan put them on, each at ``RATE``), plus the grace; and the plan's own bound (max over brokers
  of the bytes it takes in or sends out ÷ ``RATE``, ``executor.progress.lower_bound_makespan_s``);
- the ratio (time − grace) ÷ bound. Goal (issue 26): time ≤ 1.2 × bound + grace.

Sizes are scaled so that the bound is ``--bound-s`` seconds.

    python bench/self_healing.py                  # 12 agents, 3,000 partitions, bound 20 s
    python bench/self_healing.py --quick          # 600 partitions, bound 8 s
    python bench/self_healing.py --moves-per-broker 25   # the controller's --batch-moves-per-broker
    python bench/self_healing.py --adaptive 5:40         # its --batch-adaptive-moves-per-broker
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import aiohttp

from reassignd.api_client.client import ApiClient
from reassignd.api_client.errors import ClientError
from reassignd.contracts.admin import CreateTopicsResponse
from reassignd.contracts.cluster import Partition
from reassignd.executor.progress import lower_bound_makespan_s
from reassignd.executor.scheduler import move_shape
from reassignd.testing.polling import eventually
from reassignd.zk.server import LocalZooKeeper, free_port

TP = tuple[str, int]
RACKS = 3
RF = 3
PER_TOPIC = 4
RATE = 50 * 1024 * 1024  # every broker's replication bandwidth, each direction
CHUNK_TOPICS = 100
MIB = 1024 * 1024


def rack_of(broker: int) -> str:
    """As ``reassignd cluster --first-id 1 --racks 3``: broker i is on rack r<(i - 1) mod 3>."""
    return f"r{(broker - 1) % RACKS}"


def build(
    rng: random.Random, brokers: int, partitions: int, sigma: float
) -> tuple[dict[str, int], dict[TP, tuple[int, ...]]]:
    """Topic sizes (log-normal, median 1 unit) and rack-aware replicas (one per rack, random
    brokers, random preferred leader)."""
    by_rack: dict[str, list[int]] = {}
    for b in range(1, brokers + 1):
        by_rack.setdefault(rack_of(b), []).append(b)
    topics = [f"h{t:05d}" for t in range(math.ceil(partitions / PER_TOPIC))]
    sizes = {t: max(1, round(1_000_000 * rng.lognormvariate(0.0, sigma))) for t in topics}
    assignment: dict[TP, tuple[int, ...]] = {}
    for t in topics:
        for p in range(PER_TOPIC):
            replicas = [rng.choice(by_rack[r]) for r in sorted(by_rack)]
            rng.shuffle(replicas)
            assignment[(t, p)] = tuple(replicas)
    return sizes, assignment


def issue_bound_s(lost_bytes: int, receivers: int) -> float:
    return lost_bytes / (max(1, receivers) * RATE)


def scale(
    sizes: Mapping[str, int], assignment: Mapping[TP, tuple[int, ...]], lost: int, bound_s: float
) -> dict[str, int]:
    """Sizes scaled so that the lost replicas' bytes ÷ the bandwidth of the lost broker's rack
    mates (where a rack-aware heal puts them) is ``bound_s``."""
    mates = sum(
        1 for b in {x for r in assignment.values() for x in r} if rack_of(b) == rack_of(lost) and b != lost
    )
    lost_bytes = sum(sizes[t] for (t, _p), r in assignment.items() if lost in r)
    factor = bound_s * mates * RATE / lost_bytes
    return {t: max(1, round(s * factor)) for t, s in sizes.items()}


async def create_topics(
    api: ApiClient, sizes: Mapping[str, int], assignment: Mapping[TP, tuple[int, ...]]
) -> None:
    topics = sorted(sizes)
    for start in range(0, len(topics), CHUNK_TOPICS):
        body = {
            "timeout_ms": 120_000,
            "topics": [
                {
                    "name": t,
                    "assignments": {str(p): list(assignment[(t, p)]) for p in range(PER_TOPIC)},
                    "configs": {"reassignd.sim.initial.bytes": str(sizes[t])},
                }
                for t in topics[start : start + CHUNK_TOPICS]
            ],
        }
        answer = await api.typed("POST", "/v1/topics", CreateTopicsResponse, body=body)
        errors = [t for t in answer.topics if not t.ok]
        if errors:
            raise RuntimeError(f"CreateTopics: {errors[:3]}")


async def read_topics(api: ApiClient, names: list[str]) -> dict[TP, Partition]:
    out: dict[TP, Partition] = {}
    sem = asyncio.Semaphore(16)

    async def one(name: str) -> None:
        async with sem:
            topic = await api.topic(name)
        for partition, p in topic.items():
            out[(name, partition)] = p

    await asyncio.gather(*(one(n) for n in names))
    return out


def fully_replicated(partitions: Mapping[TP, Partition], lost: int) -> bool:
    return all(
        len(p.replicas) == RF
        and lost not in p.replicas
        and set(p.isr) == set(p.replicas)
        and not p.adding_replicas
        and not p.removing_replicas
        for p in partitions.values()
    )


def spawn(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "reassignd", *args], stdout=out, stderr=subprocess.STDOUT
        )


async def bench(args: argparse.Namespace, zk_connect: str, log_dir: Path) -> None:  # noqa: PLR0915 (one story)
    rng = random.Random(args.seed)
    lost = args.brokers
    sizes, assignment = build(rng, args.brokers, args.partitions, args.sigma)
    sizes = scale(sizes, assignment, lost, args.bound_s)
    hosted = {tp for tp, r in assignment.items() if lost in r}
    part_sizes = sorted(sizes[t] for t, _ in assignment)
    print(
        f"cluster: {args.brokers} agents on {RACKS} racks (broker {lost} on {rack_of(lost)}, in a process of "
        f"its own), {len(assignment):,} partitions (RF {RF}), replication {RATE / MIB:.0f} MiB/s per broker"
    )
    print(
        f"sizes (log-normal, sigma {args.sigma}): median {part_sizes[len(part_sizes) // 2] / MIB:.2f} MiB, "
        f"p99 {part_sizes[int(len(part_sizes) * 0.99)] / MIB:.1f} MiB, max {part_sizes[-1] / MIB:.1f} MiB; "
        f"broker {lost} hosts {len(hosted)} replicas, {sum(sizes[t] for t, _ in hosted) / MIB / 1024:.2f} GiB"
    )
    port = free_port()
    common = ["--zk", zk_connect, "--log-level", "warning"]
    controller_args = [
        "controller", *common, "--session-timeout-s", "10", "--http", f"127.0.0.1:{port}",
        "--self-healing", "--self-healing-broker-grace-s", str(args.grace_s), "--agent-sample-interval-s", "1",
    ]  # fmt: skip
    if args.moves_per_broker is not None:
        controller_args += ["--batch-moves-per-broker", str(args.moves_per_broker)]
    if args.adaptive is not None:
        controller_args += ["--batch-adaptive-moves-per-broker", args.adaptive]
    controller = spawn(controller_args, log_dir / "controller.log")
    agents = spawn(
        ["cluster", *common, "--session-timeout-s", "10", "--brokers", str(args.brokers - 1), "--racks",
         str(RACKS), "--replication-bytes-per-s", str(RATE)],
        log_dir / "cluster.log",
    )  # fmt: skip
    victim = spawn(
        ["broker", *common, "--session-timeout-s", str(args.session_timeout_s), "--id", str(lost), "--rack",
         rack_of(lost), "--replication-bytes-per-s", str(RATE)],
        log_dir / "victim.log",
    )  # fmt: skip
    procs = [victim, agents, controller]
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=300)) as http:
            api = ApiClient(http, f"http://127.0.0.1:{port}", timeout_s=300, follow_active=False)

            async def ready() -> bool:
                try:
                    status = await api.status()
                except ClientError:
                    return False
                return status.active and len(status.brokers.live) == args.brokers

            await eventually(ready, 60, 0.25, f"the controller and {args.brokers} brokers")
            await create_topics(api, sizes, assignment)
            names = sorted(sizes)

            async def in_sync() -> bool:
                parts = await read_topics(api, names)
                return len(parts) == len(assignment) and all(
                    set(p.isr) == set(p.replicas) for p in parts.values()
                )

            await eventually(in_sync, 120, 0.5, "every replica in its ISR")
            killed = time.time()
            victim.send_signal(signal.SIGKILL)
            victim.wait()
            print(f"broker {lost} killed (SIGKILL); its session expires after {args.session_timeout_s} s")

            async def recorded() -> int | None:
                healing = (await api.status()).self_healing
                found = [b for b in healing.brokers if b.broker_id == lost] if healing else []
                return found[0].lost_at_ms if found else None

            lost_at_ms = await eventually(recorded, 60, 0.1, "the loss recorded")
            lost_at = lost_at_ms / 1000
            print(f"loss recorded {lost_at - killed:.1f} s after the kill; grace {args.grace_s} s")

            async def batch_id() -> str | None:
                batches = (await api.batches()).batches
                ids = [b.batch_id for b in batches if b.batch_id.startswith(f"self-healing-broker-{lost}-")]
                return ids[0] if ids else None

            heal = await eventually(batch_id, args.grace_s + 60, 0.1, "the healing batch")
            submitted = time.time()
            print(f"batch {heal} submitted {submitted - lost_at:.1f} s after the loss")

            async def healed() -> dict[TP, Partition] | None:
                batch = await api.batch(heal)
                if batch.state != "completed":
                    if batch.state not in ("pending", "running"):
                        raise RuntimeError(f"batch {heal} ended {batch.state}")
                    return None
                parts = await read_topics(api, names)
                return parts if fully_replicated(parts, lost) else None

            after = await eventually(healed, 40 * args.bound_s + 120, 0.2, "full replication")
            done = time.time()
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
    moved = {tp: tuple(after[tp].replicas) for tp in hosted}
    unchanged = all(tuple(after[tp].replicas) == r for tp, r in assignment.items() if tp not in hosted)
    receivers = {b for tp, r in moved.items() for b in r if b not in assignment[tp]}
    distinct = all(len({rack_of(b) for b in r}) == RF for r in moved.values())
    lost_bytes = sum(sizes[t] for t, _ in hosted)
    bound = issue_bound_s(lost_bytes, len(receivers))
    shapes = [move_shape(tp, assignment[tp], moved[tp], assignment[tp][0]) for tp in hosted]
    plan_bound = lower_bound_makespan_s(shapes, {tp: sizes[tp[0]] for tp in hosted}, float(RATE))
    took = done - lost_at
    print()
    print(
        f"healed: {len(moved)} partitions moved to brokers {sorted(receivers)}, racks distinct: {distinct}, "
        f"nothing else moved: {unchanged}"
    )
    print(
        f"lower bound: {lost_bytes / MIB / 1024:.2f} GiB ÷ ({len(receivers)} receivers × {RATE / MIB:.0f} MiB/s) = {bound:.1f} s"
    )
    print(f"plan's bound (max over brokers of bytes in or out ÷ rate): {plan_bound:.1f} s")
    print(f"loss to full replication: {took:.1f} s  (bound + grace {bound + args.grace_s:.1f} s)")
    print(
        f"(time − grace) ÷ bound = {(took - args.grace_s) / bound:.2f}; time ÷ (1.2 × bound + grace) = "
        f"{took / (1.2 * bound + args.grace_s):.2f} (goal ≤ 1)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--brokers", type=int, default=12, help="agents (3 racks); the last is killed")
    parser.add_argument("--partitions", type=int, default=3000)
    parser.add_argument("--sigma", type=float, default=1.0, help="log-normal sigma of topic sizes")
    parser.add_argument(
        "--bound-s", type=float, default=None, help="lower bound to scale sizes to (20; quick 8)"
    )
    parser.add_argument("--grace-s", type=float, default=5.0)
    parser.add_argument("--session-timeout-s", type=float, default=4.0, help="the killed agent's")
    parser.add_argument(
        "--moves-per-broker",
        type=int,
        default=None,
        help="the controller's --batch-moves-per-broker (default 5)",
    )
    parser.add_argument(
        "--adaptive",
        default=None,
        metavar="MIN:MAX",
        help="the controller's --batch-adaptive-moves-per-broker",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="600 partitions, bound 8 s")
    args = parser.parse_args()
    if args.quick:
        args.partitions = min(args.partitions, 600)
    args.bound_s = args.bound_s or (8.0 if args.quick else 20.0)
    if args.brokers < 2 * RACKS:
        parser.error(f"--brokers must be at least {2 * RACKS}")
    log_dir = Path(tempfile.mkdtemp(prefix="self-healing-bench-"))
    print(f"logs: {log_dir}")
    with LocalZooKeeper(quick_jit=False) as server:
        asyncio.run(bench(args, f"{server.connect}/self-healing", log_dir))


if __name__ == "__main__":
    main()

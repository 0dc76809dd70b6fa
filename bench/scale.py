"""How the controller's costs grow with the partitions: 10k, 50k, 100k, 200k (500k with --huge).

For each size a fresh local ZooKeeper gets the partitions as `failover.py` writes them (RF 3 on
brokers 1-3, leaders spread over the three), brokers 1-4 register, each with its own ZooKeeper
session, and a `reassignd controller` process starts. Measured, per size:

- **failover**: election won to ready (the sum of the phases the controller logs), against the
  raw pipelined read of the same znodes in the same run (best of 3);
- **RSS**: the controller's resident memory once ready (`/proc`), per partition;
- **broker failure** (after the move): broker 3 (leading about a third of the partitions) closes its session, so
  its registration goes as at a session expiry; the time until every partition it led has a new
  leader in ZooKeeper (polled: every 50 ms a sample of 200 of them, then a read of them all to
  confirm), and the controller's handling time of that event (its /metrics);
- **10% move**: one `POST /v1/reassignments` moves a tenth of the partitions' first replica to
  broker 4; the benchmark plays broker 4's part in ZooKeeper (it joins each ISR and writes an ISR
  change notification, as a broker that caught up does). The controller's CPU seconds from the
  request to the last move complete (`/proc`), per 1,000 partitions moved.

The brokers are registrations without agents (their control endpoint refuses connections, as in
`failover.py` and `event_load.py`): what is measured is the controller. Then every figure per
partition and, for each curve, the exponent of the power law fitted to it (least squares in
log-log; 1.0 is linear).

    python bench/scale.py                     # 10k, 50k, 100k, 200k
    python bench/scale.py --sizes 10000 50000 # some sizes only
    python bench/scale.py --huge              # 500k too (about 1 GiB more for ZooKeeper)

Goals (issue 24): every curve linear or better (exponent ≤ 1.05), RSS ≤ 1.5 KiB per partition,
a broker failure's new leaders written within 1 s of the session expiry at 200k partitions.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp
from event_load import cpu_seconds, event_times, rss_mib
from failover import BROKERS, populate, raw_read_s

from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import BadVersionError
from reassignd.zk.server import LocalZooKeeper, free_port
from reassignd.zk.values import ZkSettings

PARTITIONS_PER_TOPIC = 100
FAILING = 3  # the broker whose session ends
MOVE_TO = 4
SAMPLE = 200
POLL_S = 0.05
ISR_BATCH = 500
BROKERS_CHANGED = "BrokersChanged"  # the event kind in the controller's /metrics  # partitions per ISR change notification written for broker 4


@dataclass
class Figures:
    partitions: int
    raw_read_s: float
    failover_s: float
    rss_mib: float
    failure_s: float  # session closed -> every partition it led has a new leader (polled)
    failure_event_ms: float  # the controller's handling of that broker change (/metrics)
    move_cpu_s: float  # the controller's CPU, request -> every move complete
    move_s: float
    moved: int
    stalls_ms: dict[str, float]  # the worst loop stall by the event in hand (/metrics)


def session(connect: str) -> ZkClient:
    return ZkClient(ZkSettings(connect, session_timeout_s=30.0, request_timeout_s=300.0))


async def register(connect: str, broker: int) -> ZkClient:
    """Broker ``broker``'s registration in a session of its own (closing it ends the broker)."""
    zk = session(connect)
    await zk.start()
    endpoints = (codec.Endpoint("PLAINTEXT", "127.0.0.1", 9092), codec.Endpoint("CONTROL", "127.0.0.1", 1))
    reg = codec.BrokerRegistration(broker, "127.0.0.1", 9092, endpoints)
    await zk.create(paths.broker(broker), codec.encode_broker(reg), ephemeral=True)
    return zk


async def get_json(http: aiohttp.ClientSession, url: str) -> dict[str, object]:
    async with http.get(url) as resp:
        return dict(await resp.json())


async def handled(http: aiohttp.ClientSession, url: str, kind: str) -> tuple[float, float]:
    """How many events of ``kind`` the controller handled, and in how many ms (its /metrics)."""
    async with http.get(url + "/metrics") as resp:
        return event_times(await resp.text()).get(kind, (0.0, 0.0))


async def worst_stalls(http: aiohttp.ClientSession, url: str) -> dict[str, float]:
    """The worst event-loop stall by the event in hand (``none``: between events), from /metrics."""
    head = 'reassignd_controller_loop_stall_worst_ms{during="'
    async with http.get(url + "/metrics") as resp:
        text = await resp.text()
    return {
        line[len(head) :].split('"')[0]: float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith(head)
    }


async def leaders(zk: ZkClient, state_paths: list[str]) -> list[int]:
    return [codec.decode_partition_state(z.data).leader if z else -1 for z in await zk.get_many(state_paths)]


async def broker_failure(
    zk: ZkClient, broker_zk: ZkClient, http: aiohttp.ClientSession, url: str, led: list[str]
) -> tuple[float, float]:
    """Close the failing broker's session; seconds until every partition it led has another
    leader in ZooKeeper, and the controller's handling time of the change (ms)."""
    sample = random.Random(1).sample(led, min(SAMPLE, len(led)))
    count_before, ms_before = await handled(http, url, BROKERS_CHANGED)
    await broker_zk.close()
    closed = time.perf_counter()
    while True:
        if FAILING not in await leaders(zk, sample) and FAILING not in await leaders(zk, led):
            took = time.perf_counter() - closed
            break
        await asyncio.sleep(POLL_S)
    while True:  # the event's metric is updated when its handler returns
        count, ms = await handled(http, url, BROKERS_CHANGED)
        if count > count_before:
            return took, ms - ms_before
        await asyncio.sleep(POLL_S)


async def join_isr(zk: ZkClient, moving: list[tuple[str, int]]) -> None:
    """Broker 4, caught up: into the ISR of every moving partition (conditional writes, read
    again on a conflict with the controller), then ISR change notifications naming them."""
    pending = list(moving)
    sem = asyncio.Semaphore(256)
    while pending:
        znodes = await zk.get_many([paths.partition_state(t, p) for t, p in pending])
        conflicts: list[tuple[str, int]] = []

        async def write(
            tp: tuple[str, int], data: bytes, version: int, conflicts: list[tuple[str, int]] = conflicts
        ) -> None:
            async with sem:
                try:
                    await zk.set(paths.partition_state(*tp), data, version)
                except BadVersionError:
                    conflicts.append(tp)

        writes = []
        for tp, z in zip(pending, znodes, strict=True):
            assert z is not None
            state = codec.decode_partition_state(z.data)
            if MOVE_TO in state.isr:
                continue
            fresh = codec.PartitionState(
                state.leader, state.leader_epoch, state.controller_epoch, (*state.isr, MOVE_TO)
            )
            writes.append(write(tp, codec.encode_partition_state(fresh), z.stat.version))
        await asyncio.gather(*writes)
        pending = conflicts
    for i in range(0, len(moving), ISR_BATCH):
        data = admin_codec.encode_isr_change(tuple(moving[i : i + ISR_BATCH]))
        await zk.create(paths.ISR_CHANGE_PREFIX, data, sequential=True)


async def move(
    zk: ZkClient, http: aiohttp.ClientSession, url: str, pid: int, topics: int, n: int
) -> tuple[float, float, int]:
    """A tenth of the partitions: replica r0 -> broker 4. Returns (controller CPU s, wall s, moved)."""
    moving = [(f"bench-{t:04d}", p) for t in range(topics) for p in range(PARTITIONS_PER_TOPIC)][: n // 10]
    by_topic: dict[str, list[dict[str, object]]] = {}
    for t, p in moving:
        replicas = [BROKERS[(p + i) % 3] for i in range(3)]
        by_topic.setdefault(t, []).append({"partition": p, "replicas": [MOVE_TO, *replicas[1:]]})
    body = {"topics": [{"name": t, "partitions": parts} for t, parts in by_topic.items()]}
    cpu_before = cpu_seconds(pid)
    started = time.perf_counter()
    async with http.post(url + "/v1/reassignments", json=body) as resp:
        answer = await resp.read()
        assert resp.status == 200, answer[:300]
    await join_isr(zk, moving)
    while True:
        status = await get_json(http, url + "/v1/status")
        if status.get("reassigning_partitions") == 0:
            break
        await asyncio.sleep(POLL_S)
    return cpu_seconds(pid) - cpu_before, time.perf_counter() - started, len(moving)


def failover_phases(log: str) -> float:
    """The failover's time: the sum of the phases of the controller's last "controller ready"."""
    line = [ln for ln in log.splitlines() if "controller ready:" in ln][-1]
    return sum(float(s) for s in re.findall(r" (\d+\.\d+)s", line.split(";", 1)[1]))


async def one_size(server: LocalZooKeeper, n: int) -> Figures:
    connect = f"{server.connect}/scale"
    topics = n // PARTITIONS_PER_TOPIC
    zk = session(connect)
    await zk.start()
    brokers: dict[int, ZkClient] = {}
    controller: subprocess.Popen[bytes] | None = None
    try:
        started = time.perf_counter()
        state_paths = await populate(zk, topics, PARTITIONS_PER_TOPIC)
        print(f"  {n:,} partitions written in {time.perf_counter() - started:.1f} s", flush=True)
        for b in (*BROKERS, MOVE_TO):
            brokers[b] = await register(connect, b)
        topic_paths = [paths.topic(f"bench-{t:04d}") for t in range(topics)]
        raw = min([await raw_read_s(zk, topic_paths, state_paths) for _ in range(3)])
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        log = Path(tempfile.mkdtemp(prefix="scale-bench-")) / "controller.log"
        with log.open("wb") as out:
            controller = subprocess.Popen(  # noqa: ASYNC220 (setup)
                [sys.executable, "-m", "reassignd", "controller", "--zk", connect, "--http", f"127.0.0.1:{port}",
                 "--session-timeout-s", "30", "--events-progress-interval-s", "0"],
                stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=600)) as http:
            deadline = time.monotonic() + 600
            while True:
                try:
                    status = await get_json(http, url + "/v1/status")
                    if status.get("active") and status.get("partitions") == n:
                        break
                except (aiohttp.ClientError, OSError):
                    pass
                if time.monotonic() > deadline or controller.poll() is not None:
                    raise RuntimeError(f"controller not ready; see {log}")
                await asyncio.sleep(0.2)
            failover = failover_phases(log.read_text())
            await asyncio.sleep(2.0)  # the first requests' buffers released
            rss = rss_mib(controller.pid)
            cpu, wall, moved = await move(zk, http, url, controller.pid, topics, n)
            # then broker 3 fails (after the move: a move keeping broker 3 could not complete)
            led = [
                path
                for path, leader in zip(state_paths, await leaders(zk, state_paths), strict=True)
                if leader == FAILING
            ]
            failure_s, failure_ms = await broker_failure(zk, brokers.pop(FAILING), http, url, led)
            stalls = await worst_stalls(http, url)
    finally:
        if controller is not None:
            controller.terminate()
            controller.wait(timeout=60)
        for client in brokers.values():
            await client.close()
        await zk.close()
    return Figures(n, raw, failover, rss, failure_s, failure_ms, cpu, wall, moved, stalls)


def exponent(xs: list[float], ys: list[float]) -> float:
    """The slope of log(y) against log(x), least squares: y ~ x^slope."""
    lx, ly = [math.log(x) for x in xs], [math.log(max(y, 1e-9)) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sum((a - mx) ** 2 for a in lx)


def report(rows: list[Figures]) -> None:
    print(
        "\npartitions   raw read  failover (ratio)   RSS MiB (KiB/p)   failure s (event ms)   10% move: CPU s (per 1k) wall s"
    )
    for r in rows:
        print(
            f"{r.partitions:>10,}  {r.raw_read_s:>7.2f}s  {r.failover_s:>7.2f}s ({r.failover_s / r.raw_read_s:4.1f}x)"
            f"  {r.rss_mib:>7.0f} ({1024 * r.rss_mib / r.partitions:5.2f})"
            f"   {r.failure_s:>8.2f} ({r.failure_event_ms:>8.0f})"
            f"   {r.move_cpu_s:>8.2f} ({1000 * r.move_cpu_s / r.moved:.3f})  {r.move_s:>6.1f}"
        )
    print("\nper partition:")
    for r in rows:
        n = r.partitions
        print(
            f"{n:>10,}: failover {1e6 * r.failover_s / n:.1f} µs, raw read {1e6 * r.raw_read_s / n:.1f} µs, "
            f"RSS {1024 * 1024 * r.rss_mib / n:,.0f} B, failure {1e6 * r.failure_s / n:.2f} µs, "
            f"move {1e6 * r.move_cpu_s / r.moved:.0f} µs CPU per partition moved"
        )
    print("\nworst event-loop stall, ms, by the event in hand (goal: ≤ 100 ms for every event and answer):")
    for r in rows:
        worst = sorted(r.stalls_ms.items(), key=lambda item: -item[1])[:5]
        print(f"{r.partitions:>10,}: " + ", ".join(f"{during} {ms:,.0f}" for during, ms in worst))
    if len(rows) < 2:
        return
    xs = [float(r.partitions) for r in rows]
    curves = {
        "failover": [r.failover_s for r in rows],
        "raw read (the floor)": [r.raw_read_s for r in rows],
        "controller RSS": [r.rss_mib for r in rows],
        "broker failure to new leaders": [r.failure_s for r in rows],
        "broker failure event handling": [r.failure_event_ms for r in rows],
        "10% move controller CPU": [r.move_cpu_s for r in rows],
    }
    print("\nfitted exponents (goal ≤ 1.05):")
    for name, ys in curves.items():
        e = exponent(xs, ys)
        print(f"  {name:<32} {e:.2f}  {'reached' if e <= 1.05 else 'NOT reached'}")
    top, bottom = rows[-1], rows[0]
    marginal = 1024 * (top.rss_mib - bottom.rss_mib) / (top.partitions - bottom.partitions)
    print(
        f"RSS growth from {bottom.partitions:,} to {top.partitions:,} partitions: {marginal:.2f} KiB per partition "
        "(the interpreter's fixed ~60 MiB left out)"
    )
    print(
        f"RSS per partition at {top.partitions:,}: {1024 * top.rss_mib / top.partitions:.2f} KiB (goal ≤ 1.5 KiB); "
        f"broker failure to new leaders at {top.partitions:,}: {top.failure_s:.2f} s (goal ≤ 1 s at 200,000)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000, 100_000, 200_000])
    parser.add_argument("--huge", action="store_true", help="add 500,000 partitions")
    args = parser.parse_args()
    sizes = sorted({*args.sizes, *([500_000] if args.huge else [])})
    rows = []
    for n in sizes:
        print(f"{n:,} partitions:", flush=True)
        with LocalZooKeeper(quick_jit=False) as server:
            rows.append(asyncio.run(one_size(server, n)))
        print(f"  {rows[-1]}", flush=True)
    report(rows)


if __name__ == "__main__":
    main()

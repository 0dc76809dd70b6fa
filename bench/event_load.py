"""Event-queue benchmark: a steady mix of events against a controller with 100,000 partitions.

A `reassignd controller` process (its own ZooKeeper) loads TOPICS × PARTITIONS partitions (RF 3,
three registered brokers, as `failover.py` writes them); then, for `--duration-s` seconds, this
process generates `--rate` events per second, mixed as a busy cluster would:

- 40 % ISR change notifications (a sequential `/isr_change_notification/isr_change_` znode naming
  one partition, as a broker writes it);
- 40 % API reads (`GET /v1/status`, `GET /v1/topics/<t>`);
- 15 % API writes (`POST /v1/reassignments` of a partition to its current replicas: a full trip
  through the event queue; Kafka's algorithm still completes such a "move" at once, bumping the
  leader epoch and rewriting the topic znode);
- 5 % broker changes (a broker registering or leaving).

Beside the load, `--readers` (50) concurrent readers in a process of their own each loop on
`GET /v1/status` or `GET /v1/reassignments` (half each) while `--moving` (10,000) partitions are
mid-reassignment (waiting for a broker that never registers, as `failover.py` writes them): the
p50/p99 of both are printed (goal ≤ 20 ms while the 1,000 events/s run).

Printed: the events generated per second, the HTTP answer's p50/p99 (client side), the time an
event waits in the controller's queue (p50/p99 of its recent events, from `GET /v1/status`,
sampled every second: the median of the samples' p50 and the worst p99), the controller's RSS
before and after, the CPU share of the controller and of this generator (one Python process: when
it nears a full core, it limits the rate and its own lag inflates the HTTP figures), and the events
the controller handled by kind with their mean handling time (its /metrics). The baseline, from the same run: the same reads against an idle controller.

    python bench/event_load.py                          # 1,000 topics × 100 partitions, 1,000/s, 60 s
    python bench/event_load.py --topics 100 --duration-s 20
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path

import aiohttp
from failover import BROKERS, populate, register_brokers

from reassignd.api_client.client import ApiClient
from reassignd.api_client.errors import ClientError
from reassignd.contracts.cluster import Status
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.server import LocalZooKeeper, free_port
from reassignd.zk.values import ZkSettings


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def event_times(metrics: str) -> dict[str, tuple[float, float]]:
    """Per event kind: (count, total ms), from the controller's Prometheus text."""
    found: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0])
    for line in metrics.splitlines():
        for suffix, index in (("_count{", 0), ("_sum{", 1)):
            head = "reassignd_controller_event_time_ms" + suffix
            if line.startswith(head):
                kind = line[len(head) :].split('"')[1]
                found[kind][index] = float(line.rsplit(" ", 1)[1])
    return {k: (v[0], v[1]) for k, v in found.items()}


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else 0.0


class Load:
    def __init__(
        self, url: str, zk: ZkClient, topics: int, partitions: int, seed: int, moving: int = 0
    ) -> None:
        self.url, self.zk, self.topics, self.partitions = url, zk, topics, partitions
        self.still = -(-moving // partitions)  # the first topic without a partition moving
        self.rng = random.Random(seed)
        self.http_ms: list[float] = []
        self.sent = 0
        self.errors = 0
        self.why: collections.Counter[str] = collections.Counter()
        self.extra_broker = False
        self.broker_lock = asyncio.Lock()

    def _tp(self) -> tuple[str, int]:
        return f"bench-{self.rng.randrange(self.topics):04d}", self.rng.randrange(self.partitions)

    async def _http(
        self, session: aiohttp.ClientSession, method: str, path: str, body: object = None
    ) -> None:
        started = time.perf_counter()
        try:
            async with session.request(method, self.url + path, json=body) as resp:
                await resp.read()
                if resp.status != 200:
                    self.errors += 1
                    self.why[f"{method} {path.split('/')[2]}: HTTP {resp.status}"] += 1
        except (aiohttp.ClientError, TimeoutError) as e:
            self.errors += 1
            self.why[type(e).__name__] += 1
            return
        self.http_ms.append((time.perf_counter() - started) * 1000)

    async def one(self, session: aiohttp.ClientSession) -> None:
        kind = self.rng.random()
        self.sent += 1
        try:
            if kind < 0.40:
                data = admin_codec.encode_isr_change((self._tp(),))
                await self.zk.create(paths.ISR_CHANGE_PREFIX, data, sequential=True)
            elif kind < 0.80:
                path = "/v1/status" if self.rng.random() < 0.5 else f"/v1/topics/{self._tp()[0]}"
                await self._http(session, "GET", path)
            elif kind < 0.95:
                t, p = self._tp()
                if self.still < self.topics:  # not a moving partition: its move would end
                    t = f"bench-{self.rng.randrange(self.still, self.topics):04d}"
                replicas = [BROKERS[(p + i) % 3] for i in range(3)]
                body = {"topics": [{"name": t, "partitions": [{"partition": p, "replicas": replicas}]}]}
                await self._http(session, "POST", "/v1/reassignments", body)
            else:
                await self._toggle_broker()
        except Exception as e:  # a benchmark counts failures, it does not stop on them
            self.errors += 1
            self.why[type(e).__name__] += 1

    async def _toggle_broker(self) -> None:
        broker = 99
        async with self.broker_lock:  # one registration change at a time, as one broker would
            if self.extra_broker:
                await self.zk.delete(paths.broker(broker))
            else:
                endpoints = (codec.Endpoint("PLAINTEXT", "127.0.0.1", 9092),)
                reg = codec.BrokerRegistration(broker, "127.0.0.1", 9092, endpoints)
                await self.zk.create(paths.broker(broker), codec.encode_broker(reg), ephemeral=True)
            self.extra_broker = not self.extra_broker


READ_PATHS = ("/v1/status", "/v1/reassignments")


async def read_loop(url: str, readers: int, duration_s: float) -> dict[str, list[float]]:
    """``readers`` tasks, each reading one of READ_PATHS in a loop (half each) for ``duration_s``;
    the answers' times in ms by path (errors counted under "<path> errors")."""
    times: dict[str, list[float]] = collections.defaultdict(list)
    end = time.monotonic() + duration_s
    connector = aiohttp.TCPConnector(limit=readers)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30), connector=connector) as session:

        async def reader(path: str) -> None:
            while time.monotonic() < end:
                started = time.perf_counter()
                try:
                    async with session.get(url + path) as resp:
                        await resp.read()
                        ok = resp.status == 200
                except (aiohttp.ClientError, TimeoutError):
                    ok = False
                times[path if ok else f"{path} errors"].append((time.perf_counter() - started) * 1000)

        await asyncio.gather(*(reader(READ_PATHS[i % 2]) for i in range(readers)))
    return dict(times)


def _readers_process(url: str, readers: int, duration_s: float, out: Connection) -> None:
    """The readers in a process of their own (the load generator's loop lag stays out of them)."""
    out.send(asyncio.run(read_loop(url, readers, duration_s)))
    out.close()


async def status(session: aiohttp.ClientSession, url: str) -> Status:
    return await ApiClient(session, url, timeout_s=30, follow_active=False).status()


async def queue_sample(session: aiohttp.ClientSession, url: str) -> tuple[float, float] | None:
    """The queue wait's (p50, p99) in ms from /v1/status; None if not answered within 30 s."""
    try:
        q = (await status(session, url)).event_queue.queue_time_ms
    except ClientError:
        return None
    return float(q["p50"]), float(q["p99"])


async def wait_ready(session: aiohttp.ClientSession, url: str, args: argparse.Namespace, log: Path) -> None:
    """Until the controller is active with every partition loaded and the moves in flight."""
    deadline = time.monotonic() + 120
    while True:
        try:
            s = await status(session, url)
            if (
                s.active
                and s.partitions == args.topics * args.partitions
                and s.reassigning_partitions == args.moving
            ):
                return
        except ClientError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"controller not ready; see {log}")
        await asyncio.sleep(0.2)


def print_reads(args: argparse.Namespace, read_ms: dict[str, list[float]]) -> None:
    if args.readers:
        print(
            f"{args.readers} concurrent readers, {args.moving:,} partitions moving (goal: p99 ≤ 20 ms for both):"
        )
        for path in READ_PATHS:
            times = read_ms.get(path, [])
            print(
                f"  GET {path}: {len(times):,} answers, p50 {pct(times, 0.5):.1f} ms, p99 {pct(times, 0.99):.1f} ms, "
                f"{len(read_ms.get(path + ' errors', []))} errors"
            )


async def run(server: LocalZooKeeper, args: argparse.Namespace) -> None:
    connect = f"{server.connect}/queue-bench"
    zk = ZkClient(ZkSettings(connect, session_timeout_s=30.0, request_timeout_s=120.0))
    await zk.start()
    await populate(zk, args.topics, args.partitions, args.moving)
    await register_brokers(zk)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = Path(tempfile.mkdtemp(prefix="queue-bench-")) / "controller.log"
    with log.open("wb") as out:
        controller = subprocess.Popen(  # noqa: ASYNC220 (setup)
            [sys.executable, "-m", "reassignd", "controller", "--zk", connect, "--http", f"127.0.0.1:{port}",
             "--events-progress-interval-s", "0"],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
            await wait_ready(session, url, args, log)
            rss_before = rss_mib(controller.pid)
            idle = Load(url, zk, args.topics, args.partitions, args.seed)
            for _ in range(200):  # the baseline: reads against the idle controller
                await idle._http(session, "GET", "/v1/status")
            load = Load(url, zk, args.topics, args.partitions, args.seed, args.moving)
            tasks: set[asyncio.Task[None]] = set()
            sampling: list[asyncio.Task[tuple[float, float] | None]] = []
            readers = None
            if args.readers:
                receive, send = multiprocessing.Pipe(duplex=False)
                readers = multiprocessing.get_context("spawn").Process(
                    target=_readers_process, args=(url, args.readers, args.duration_s, send), name="readers"
                )
                readers.start()
            cpu_at_start, ctl_cpu_at_start = time.process_time(), cpu_seconds(controller.pid)
            started = time.monotonic()
            next_sample = started + 1.0
            tick = 0.01
            while time.monotonic() - started < args.duration_s:
                due = int((time.monotonic() - started) * args.rate) - load.sent
                for _ in range(max(0, due)):
                    task = asyncio.create_task(load.one(session))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
                if time.monotonic() >= next_sample:  # sampled aside: a slow answer stalls no event
                    next_sample += 1.0
                    sampling.append(asyncio.create_task(queue_sample(session, url)))
                await asyncio.sleep(tick)
            await asyncio.gather(*tasks, return_exceptions=True)
            samples = await asyncio.gather(*sampling)
            missed = sum(1 for sample in samples if sample is None)
            queue_p50 = [sample[0] for sample in samples if sample is not None]
            queue_p99 = [sample[1] for sample in samples if sample is not None]
            elapsed = time.monotonic() - started
            read_ms: dict[str, list[float]] = {}
            if readers is not None:
                read_ms = await asyncio.to_thread(receive.recv)
                await asyncio.to_thread(readers.join, 60)
            rss_after = rss_mib(controller.pid)
            own_cpu_s = time.process_time() - cpu_at_start
            ctl_cpu_s = cpu_seconds(controller.pid) - ctl_cpu_at_start
            async with session.get(url + "/metrics") as resp:
                by_event = event_times(await resp.text())
    finally:
        controller.terminate()
        controller.wait(timeout=30)
        await zk.close()

    print(
        f"controller: {args.topics * args.partitions:,} partitions; load {load.sent / elapsed:,.0f} events/s for {elapsed:.0f} s"
    )
    print(f"  errors: {load.errors} {dict(load.why.most_common(5))}")
    print(f"HTTP answer: p50 {pct(load.http_ms, 0.5):.1f} ms, p99 {pct(load.http_ms, 0.99):.1f} ms "
          f"(idle baseline: p50 {pct(idle.http_ms, 0.5):.1f} ms, p99 {pct(idle.http_ms, 0.99):.1f} ms)")  # fmt: skip
    print(f"queue wait: p50 {statistics.median(queue_p50) if queue_p50 else 0:.1f} ms (median of 1 s samples), "
          f"p99 {max(queue_p99, default=0):.1f} ms (worst sample); {missed} samples unanswered")  # fmt: skip
    print_reads(args, read_ms)
    print(f"controller RSS: {rss_before:.0f} MiB before, {rss_after:.0f} MiB after")
    print(f"CPU: controller {100 * ctl_cpu_s / elapsed:.0f}% of a core, this load generator "
          f"{100 * own_cpu_s / elapsed:.0f}% (near 100%: it, not the controller, limits the rate)")  # fmt: skip
    print("events handled (whole run, from /metrics): kind, count, mean ms, share of handling time")
    total_ms = sum(ms for _, ms in by_event.values()) or 1.0
    for kind, (count, ms) in sorted(by_event.items(), key=lambda kv: -kv[1][1])[:8]:
        print(f"  {kind:<28} {count:>8,.0f} {ms / max(count, 1):>8.2f} {100 * ms / total_ms:>5.1f}%")


def main() -> None:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--topics", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--rate", type=int, default=1000, help="events per second")
    parser.add_argument("--duration-s", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--readers", type=int, default=50, help="concurrent status readers (0: none)")
    parser.add_argument("--moving", type=int, default=10_000, help="partitions mid-reassignment")
    args = parser.parse_args()
    with LocalZooKeeper(quick_jit=False) as server:
        asyncio.run(run(server, args))


if __name__ == "__main__":
    main()

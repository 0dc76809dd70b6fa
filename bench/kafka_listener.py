"""Kafka listener benchmark: reads per second and latency over the Kafka protocol against the same
reads over HTTP, in the same run, at 100,000 partitions with 10 concurrent clients.

A `reassignd controller` process (its own ZooKeeper) loads TOPICS × PARTITIONS partitions (RF 3,
three registered brokers, `--reassigning` of them moving to a broker that never comes, as
`failover.py` writes them) and runs with `--http` and `--kafka-listener`. Then, phase by phase,
`--clients` clients (each one connection, requests back to back) send for `--phase-s` seconds:

- Metadata of one random topic (what `describe_topics` sends) against `GET /v1/topics/<t>`;
- ListPartitionReassignments of everything against `GET /v1/reassignments`;
- Metadata of every topic (every partition) against `GET /v1/topics` (the list).

Printed per phase: requests per second, p50 and p99 latency (client side, response decoded).
The clients run in this one Python process (kafka-python's codec decodes Kafka answers, the JSON
parser HTTP ones); its CPU share is printed too: near a full core, the client limits the rate.

    python bench/kafka_listener.py                        # 1,000 topics × 100 partitions
    python bench/kafka_listener.py --topics 100 --phase-s 3
"""

from __future__ import annotations

import argparse
import asyncio
import random
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
from failover import populate, register_brokers
from kafka.protocol.admin import ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from reassignd.api_client.client import ApiClient
from reassignd.api_client.errors import ClientError
from reassignd.zk.client import ZkClient
from reassignd.zk.server import LocalZooKeeper, free_port
from reassignd.zk.values import ZkSettings


class KafkaConnection:
    """One connection, one request at a time, kafka-python's message classes for the codec."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.correlation_id = 0

    @classmethod
    async def open(cls, host: str, port: int) -> KafkaConnection:
        reader, writer = await asyncio.open_connection(host, port)
        return cls(reader, writer)

    async def call(self, request: Any, response_class: Any, version: int) -> Any:
        self.correlation_id += 1
        request.API_VERSION = version
        request.with_header(correlation_id=self.correlation_id, client_id="bench")
        self.writer.write(request.encode(header=True, framed=True))
        (size,) = struct.unpack(">i", await self.reader.readexactly(4))
        payload = await self.reader.readexactly(size)
        return response_class.decode(payload, version=version, header=True)

    async def close(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


async def phase(
    name: str, clients: int, seconds: float, make: Callable[[int], Awaitable[Callable[[], Awaitable[None]]]]
) -> tuple[str, float, float, float]:
    latencies: list[float] = []
    calls = [await make(i) for i in range(clients)]
    cpu_start = time.process_time()
    started = time.monotonic()

    async def loop(call: Callable[[], Awaitable[None]]) -> None:
        while time.monotonic() - started < seconds:
            t0 = time.perf_counter()
            await call()
            latencies.append((time.perf_counter() - t0) * 1000)

    await asyncio.gather(*(loop(c) for c in calls))
    elapsed = time.monotonic() - started
    cpu = (time.process_time() - cpu_start) / elapsed
    rate = len(latencies) / elapsed
    print(
        f"{name:<48} {rate:>9.0f}/s   p50 {pct(latencies, 0.5):>8.1f} ms   p99 {pct(latencies, 0.99):>8.1f} ms"
        f"   client CPU {cpu:.0%}"
    )
    return name, rate, pct(latencies, 0.5), pct(latencies, 0.99)


async def run(server: LocalZooKeeper, args: argparse.Namespace) -> None:
    connect = f"{server.connect}/kafka-bench"
    zk = ZkClient(ZkSettings(connect, session_timeout_s=30.0, request_timeout_s=120.0))
    await zk.start()
    topics = await populate_topics(zk, args)
    await register_brokers(zk)
    http_port, kafka_port = free_port(), free_port()
    url = f"http://127.0.0.1:{http_port}"
    log = Path(tempfile.mkdtemp(prefix="kafka-bench-")) / "controller.log"
    with log.open("wb") as out:
        controller = subprocess.Popen(  # noqa: ASYNC220 (setup)
            [sys.executable, "-m", "reassignd", "controller", "--zk", connect, "--http", f"127.0.0.1:{http_port}",
             "--kafka-listener", f"127.0.0.1:{kafka_port}", "--events-progress-interval-s", "0"],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    rng = random.Random(args.seed)
    connections: list[KafkaConnection] = []
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as session:
            await wait_ready(session, url, args.topics * args.partitions, log)
            print(
                f"{args.topics} topics × {args.partitions} partitions, {args.reassigning} reassigning;"
                f" {args.clients} clients, {args.phase_s:g} s per phase"
            )

            async def kafka(version: int, request: Callable[[], Any], response: Any) -> Any:
                async def make(_: int) -> Callable[[], Awaitable[None]]:
                    conn = await KafkaConnection.open("127.0.0.1", kafka_port)
                    connections.append(conn)

                    async def call() -> None:
                        answer = await conn.call(request(), response, version)
                        assert getattr(answer, "error_code", 0) == 0

                    return call

                return make

            def http(path: Callable[[], str]) -> Any:
                async def make(_: int) -> Callable[[], Awaitable[None]]:
                    async def call() -> None:
                        async with session.get(url + path()) as resp:
                            assert resp.status == 200
                            await resp.json()

                    return call

                return make

            def one_topic() -> Any:
                return MetadataRequest(
                    topics=[MetadataRequest.MetadataRequestTopic(name=rng.choice(topics))],
                    allow_auto_topic_creation=False,
                )

            def list_all() -> Any:
                return ListPartitionReassignmentsRequest(timeout_ms=30000, topics=None)

            def all_topics() -> Any:
                return MetadataRequest(topics=None, allow_auto_topic_creation=False)

            rows = [
                await phase("Kafka Metadata (one topic) v12", args.clients, args.phase_s,
                            await kafka(12, one_topic, MetadataResponse)),
                await phase("HTTP GET /v1/topics/<t>", args.clients, args.phase_s,
                            http(lambda: f"/v1/topics/{rng.choice(topics)}")),
                await phase("Kafka ListPartitionReassignments v0 (all)", args.clients, args.phase_s,
                            await kafka(0, list_all, ListPartitionReassignmentsResponse)),
                await phase("HTTP GET /v1/reassignments", args.clients, args.phase_s, http(lambda: "/v1/reassignments")),
                await phase("Kafka Metadata (every topic) v12", args.clients, args.phase_s,
                            await kafka(12, all_topics, MetadataResponse)),
                await phase("HTTP GET /v1/topics (the list)", args.clients, args.phase_s, http(lambda: "/v1/topics")),
            ]  # fmt: skip
            for (kname, krate, _, _), (hname, hrate, _, _) in zip(rows[0::2], rows[1::2], strict=True):
                print(f"  {kname} / {hname}: {krate / hrate:.2f}× the HTTP rate")
    finally:
        for conn in connections:
            await conn.close()
        controller.terminate()
        controller.wait(timeout=30)
        await zk.close()


async def populate_topics(zk: ZkClient, args: argparse.Namespace) -> list[str]:
    await populate(zk, args.topics, args.partitions, args.reassigning)
    return [f"bench-{t:04d}" for t in range(args.topics)]


async def wait_ready(session: aiohttp.ClientSession, url: str, partitions: int, log: Path) -> None:
    deadline = time.monotonic() + 180
    while True:
        try:
            s = await ApiClient(session, url, timeout_s=30, follow_active=False).status()
            if s.active and s.partitions == partitions:
                return
        except ClientError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"controller not ready; see {log}")
        await asyncio.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--topics", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--reassigning", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--phase-s", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    server = LocalZooKeeper(quick_jit=False).start()
    try:
        asyncio.run(run(server, args))
    finally:
        server.stop()


if __name__ == "__main__":
    main()

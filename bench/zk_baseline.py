"""ZooKeeper client baseline: what the ZkClient wrapper does per second against one server.

Measures, with reassignd's own client wrapper (``reassignd.zk.client.ZkClient``):

- pipelined single-op writes (creates, then setData on them) with many requests in flight,
- multi writes (50-op multis, several in flight) and one large fenced_multi (split and pipelined
  by the client),
- pipelined single reads (``get``) with many in flight,
- bulk reads with ``get_many`` (ZooKeeper 3.6+ multiRead batches, pipelined).

    python bench/zk_baseline.py                  # starts its own local ZooKeeper
    python bench/zk_baseline.py --zk 127.0.0.1:2181 -n 100000

The ``measure_*`` coroutines are the baseline other benchmarks compare against; each returns
operations per second.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

import uvloop

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reassignd.zk.client import ZkClient
from reassignd.zk.server import LocalZooKeeper
from reassignd.zk.values import Create, Fence, SetData, ZkSettings

# A partition state znode, the controller's most numerous read.
STATE = b'{"version":1,"leader":1,"leader_epoch":3,"controller_epoch":5,"isr":[1,2,3]}'
IN_FLIGHT = 512

T = TypeVar("T")


async def _run_window(items: Iterable[T], work: Callable[[T], Awaitable[object]], in_flight: int) -> None:
    """Run ``work(item)`` for every item with at most ``in_flight`` running at once."""
    iterator = iter(items)

    async def worker() -> None:
        for item in iterator:
            await work(item)

    async with asyncio.TaskGroup() as tg:
        for i in range(in_flight):
            tg.create_task(worker(), name=f"bench-worker-{i}")


def node_paths(root: str, n: int) -> list[str]:
    return [f"{root}/n{i:07d}" for i in range(n)]


async def measure_pipelined_writes(
    client: ZkClient, n: int, *, root: str = "/zk-baseline/writes", in_flight: int = IN_FLIGHT
) -> float:
    """Create ``n`` znodes under ``root`` (deleted first) with single creates, ``in_flight`` at a
    time. Returns creates per second; the znodes stay for the read measurements."""
    await client.delete_recursive(root)
    await client.ensure_path(root)
    started = time.perf_counter()
    await _run_window(node_paths(root, n), lambda p: client.create(p, STATE), in_flight)
    return n / (time.perf_counter() - started)


async def measure_pipelined_sets(
    client: ZkClient, paths: Sequence[str], *, in_flight: int = IN_FLIGHT
) -> float:
    """setData (version -1) on every path, ``in_flight`` at a time. Returns sets per second."""
    started = time.perf_counter()
    await _run_window(paths, lambda p: client.set(p, STATE, -1), in_flight)
    return len(paths) / (time.perf_counter() - started)


async def measure_multi_writes(
    client: ZkClient,
    n: int,
    *,
    ops_per_multi: int = 50,
    root: str = "/zk-baseline/multi",
    in_flight: int = 64,
) -> float:
    """Create ``n`` znodes with ``ops_per_multi``-op multis, ``in_flight`` multis at a time.
    Returns ops (znodes created) per second."""
    await client.delete_recursive(root)
    await client.ensure_path(root)
    paths = node_paths(root, n)
    batches = [paths[i : i + ops_per_multi] for i in range(0, n, ops_per_multi)]
    started = time.perf_counter()
    await _run_window(batches, lambda batch: client.multi([Create(p, STATE) for p in batch]), in_flight)
    return n / (time.perf_counter() - started)


async def measure_fenced_multi(
    client: ZkClient, paths: Sequence[str], *, fence_path: str = "/zk-baseline"
) -> float:
    """One fenced_multi setting every path (the client splits it into bounded multis and
    pipelines them). Returns ops per second."""
    stat = await client.exists(fence_path)
    if stat is None:
        raise RuntimeError(f"{fence_path} is missing")
    started = time.perf_counter()
    await client.fenced_multi(Fence(fence_path, stat.version), [SetData(p, STATE, -1) for p in paths])
    return len(paths) / (time.perf_counter() - started)


async def measure_pipelined_reads(
    client: ZkClient, paths: Sequence[str], *, in_flight: int = IN_FLIGHT
) -> float:
    """``get`` every path, ``in_flight`` at a time. Returns reads per second."""
    started = time.perf_counter()
    await _run_window(paths, client.get, in_flight)
    return len(paths) / (time.perf_counter() - started)


async def measure_get_many(client: ZkClient, paths: Sequence[str]) -> float:
    """One ``get_many`` over every path (multiRead batches, pipelined). Returns reads per second."""
    started = time.perf_counter()
    found = await client.get_many(paths)
    elapsed = time.perf_counter() - started
    if any(z is None for z in found):
        raise RuntimeError("get_many: some znodes are missing")
    return len(paths) / elapsed


async def run(connect: str, n: int, repeat: int) -> dict[str, float]:
    client = ZkClient(ZkSettings(connect, session_timeout_s=10.0, request_timeout_s=60.0))
    await client.start()
    figures: dict[str, float] = {}

    def record(name: str, value: float) -> None:
        figures[name] = max(figures.get(name, 0.0), value)

    try:
        for _ in range(repeat):
            record("pipelined creates/s", await measure_pipelined_writes(client, n))
            paths = node_paths("/zk-baseline/writes", n)
            record("pipelined sets/s", await measure_pipelined_sets(client, paths))
            record("multi writes (50-op multis) ops/s", await measure_multi_writes(client, n))
            record("fenced_multi (split, pipelined) ops/s", await measure_fenced_multi(client, paths))
            record("pipelined single reads/s", await measure_pipelined_reads(client, paths))
            record("get_many (multiRead) reads/s", await measure_get_many(client, paths))
        await client.delete_recursive("/zk-baseline")
    finally:
        await client.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--zk", help="connect string (default: start a local ZooKeeper)")
    parser.add_argument("-n", type=int, default=20_000, help="znodes per measurement (default 20,000)")
    parser.add_argument("--repeat", type=int, default=2, help="runs; the best figure is printed")
    parser.add_argument("--uvloop", action="store_true", help="run on uvloop")
    args = parser.parse_args()
    if args.uvloop:
        uvloop.install()
    chroot = f"/bench-{uuid.uuid4().hex[:8]}"
    if args.zk:
        figures = asyncio.run(run(args.zk.rstrip("/") + chroot, args.n, args.repeat))
    else:
        with LocalZooKeeper(quick_jit=False) as server:
            figures = asyncio.run(run(server.connect + chroot, args.n, args.repeat))
    width = max(map(len, figures))
    for name, value in figures.items():
        print(f"{name:<{width}}  {value:>10,.0f}")


__all__ = [
    "measure_fenced_multi",
    "measure_get_many",
    "measure_multi_writes",
    "measure_pipelined_reads",
    "measure_pipelined_sets",
    "measure_pipelined_writes",
    "node_paths",
]

if __name__ == "__main__":
    main()

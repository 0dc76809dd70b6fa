"""Reassignment benchmark: move every replica of TOPICS × PARTITIONS partitions (RF 3).

A `reassignd cluster` of 6 broker agents with instant catch-up (empty logs, fast replication), in
`--agent-processes` processes (3), hosts the partitions on brokers 1-3; one request moves them all to brokers 4-6. The controller
runs in this process so its writes can be counted. Printed:

- controller ZooKeeper write ops per partition (phase U, A, B and the topic znodes), and all
  ZooKeeper transactions per partition (zxid delta, agents' ISR writes included);
- time from the request to every LeaderAndIsr delivered, and to every partition complete;
- the baseline, measured in the same run: the same number of raw pipelined single writes
  (one setData per partition) with the project's client, and the ratio to it;
- the ZooKeeper floor (the transactions the move needed ÷ the raw setData rate of this run) and
  the completion's ratio to it; the controller's and the agents' CPU seconds per 1,000 partitions.

    python bench/reassign.py                     # 100 topics × 100 partitions, own ZooKeeper
    python bench/reassign.py --topics 20

Goal (reassignment issue): ≤ 3 ZooKeeper writes per partition amortized, ≤ 2× the baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from zk_baseline import measure_pipelined_sets, measure_pipelined_writes, node_paths

from reassignd.controller.model.requests import AlterReassignments
from reassignd.testing.controller import in_process_controller
from reassignd.testing.polling import eventually
from reassignd.zk import codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.server import LocalZooKeeper, four_letter_word
from reassignd.zk.values import Create, ZkSettings

SOURCE = (1, 2, 3)
TARGET = (4, 5, 6)


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of ``pid`` and its children (``reassignd cluster --processes``'s agents)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return cpu_s(pid) + sum(tree_cpu_s(int(c)) for c in children)


def zxid(port: int) -> int:
    text = four_letter_word(port, b"srvr").decode()
    match = re.search(r"Zxid: (0x[0-9a-f]+)", text)
    assert match is not None
    return int(match.group(1), 16)


async def znode_versions(zk: ZkClient, topics: list[str], partitions: int) -> int:
    """The sum of the topic and partition-state znodes' versions: the writes they have seen."""
    znode_paths = [paths.topic(t) for t in topics]
    znode_paths += [paths.partition_state(t, p) for t in topics for p in range(partitions)]
    return sum(z.stat.version for z in await zk.get_many(znode_paths) if z is not None)


async def run(server: LocalZooKeeper, topics: int, partitions: int, processes: int) -> None:
    connect = f"{server.connect}/reassign-bench"
    zk = ZkClient(ZkSettings(connect, session_timeout_s=30.0, request_timeout_s=120.0))
    await zk.start()
    for p in paths.PERSISTENT_PATHS:
        await zk.ensure_path(p)
    n = topics * partitions
    write_rate = await measure_pipelined_writes(zk, n, root="/bench-baseline")
    set_rate = await measure_pipelined_sets(zk, node_paths("/bench-baseline", n))
    baseline_s = n / set_rate
    print(
        f"baseline: {n:,} pipelined creates at {write_rate:,.0f}/s, setData at {set_rate:,.0f}/s ({baseline_s:.2f}s)"
    )

    stack = contextlib.AsyncExitStack()
    running = await stack.enter_async_context(
        in_process_controller(connect, http=False, session_timeout_s=30.0, request_timeout_s=120.0)
    )
    controller = running.controller
    log_dir = tempfile.mkdtemp(prefix="reassign-bench-")
    with open(os.path.join(log_dir, "cluster.log"), "wb") as log:  # noqa: ASYNC230 (setup, not a hot path)
        agents = subprocess.Popen(  # noqa: ASYNC220
            [sys.executable, "-m", "reassignd", "cluster", "--zk", connect, "--brokers", "6",
             *(["--processes", str(processes)] if processes > 1 else []),
             "--replication-bytes-per-s", "100000000000", "--isr-linger-ms", "50"],
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        await eventually(
            lambda: controller.ctx is not None and len(controller.ctx.brokers) == 6,
            60,
            0.01,
            "a benchmark step",
        )
        ops = []
        for t in range(topics):
            name = f"bench-{t:03d}"
            znode = codec.TopicZnode({p: SOURCE for p in range(partitions)})
            ops.append(Create(paths.topic(name), codec.encode_topic(znode)))
        await zk.multi(ops)
        await eventually(
            lambda: controller.ctx is not None and len(controller.ctx.states) == n,
            120,
            0.01,
            "a benchmark step",
        )
        await eventually(controller.channel.idle, 120, 0.01, "a benchmark step")
        await asyncio.sleep(1.0)  # let the agents settle (all replicas created and in sync)

        assert controller.parts is not None
        writer = controller.parts.writer
        names = [f"bench-{t:03d}" for t in range(topics)]
        versions_before = await znode_versions(zk, names, partitions)
        ops_before, zxid_before = writer.ops_written, zxid(server.port)
        cpu_controller, cpu_agents = time.process_time(), tree_cpu_s(agents.pid)
        request = AlterReassignments(
            tuple(((f"bench-{t:03d}", p), TARGET) for t in range(topics) for p in range(partitions))
        )
        started = time.perf_counter()
        result = await controller.api.alter_reassignments(request)
        answered = time.perf_counter() - started
        assert all(r.error_code == 0 for r in result.results)
        await eventually(controller.channel.idle, 300, 0.01, "a benchmark step")
        sent = time.perf_counter() - started
        await eventually(
            lambda: controller.ctx is not None and not controller.ctx.reassigning,
            600,
            0.01,
            "a benchmark step",
        )
        done = time.perf_counter() - started
        ops_after, zxid_after = writer.ops_written, zxid(server.port)
        cpu_controller = time.process_time() - cpu_controller
        cpu_agents = tree_cpu_s(agents.pid) - cpu_agents
        znode_writes = await znode_versions(zk, names, partitions) - versions_before
    finally:
        agents.terminate()
        agents.wait(timeout=30)
        await stack.aclose()
        await zk.close()

    print(f"partitions moved: {n:,} ({topics} topics × {partitions}, RF 3, {SOURCE} -> {TARGET})")
    print(f"controller ZooKeeper write ops per partition: {(ops_after - ops_before) / n:.2f} (goal ≤ 3)")
    print(
        f"all ZooKeeper transactions per partition (agents' ISR writes included): {(zxid_after - zxid_before) / n:.2f}"
    )
    print(f"request answered (persisted, replicas told to start): {answered:.2f}s")
    print(f"request -> all LeaderAndIsr delivered: {sent:.2f}s")
    print(f"request -> all partitions complete: {done:.2f}s")
    print(f"ratio complete / raw pipelined writes of {n:,} znodes: {done / baseline_s:.2f}x (goal ≤ 2x)")
    floor_s = (zxid_after - zxid_before) / set_rate
    print(
        f"ZooKeeper floor: {zxid_after - zxid_before:,} transactions at the raw rate {set_rate:,.0f}/s = "
        f"{floor_s:.2f}s; completion / floor: {done / floor_s:.2f}x"
    )
    # Multis put many writes in one transaction, so the transaction floor understates ZooKeeper's
    # work: the same floor counted in znode writes (the topic and state znodes' version steps,
    # whoever wrote them), each at the raw setData rate
    ops_floor_s = znode_writes / set_rate
    print(
        f"ZooKeeper floor by writes: {znode_writes:,} znode writes ({znode_writes / n:.2f} per partition) "
        f"at {set_rate:,.0f}/s = {ops_floor_s:.2f}s; completion / floor: {done / ops_floor_s:.2f}x"
    )
    print(
        f"CPU per 1,000 partitions moved: controller {1000 * cpu_controller / n:.3f}s "
        f"(this process: the controller and the bench's own client), agents {1000 * cpu_agents / n:.3f}s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--topics", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument(
        "--agent-processes",
        type=int,
        default=3,
        help="the six agents run in this many processes (reassignd cluster --processes; 1: one process)",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    gc.set_threshold(20_000, *gc.get_threshold()[1:])  # as reassignd.service does
    with LocalZooKeeper(quick_jit=False) as server:
        asyncio.run(run(server, args.topics, args.partitions, args.agent_processes))


if __name__ == "__main__":
    main()

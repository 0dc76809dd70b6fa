"""Failover benchmark: time from winning the election to the controller being ready.

Populates ZooKeeper with TOPICS × PARTITIONS partitions (topic znodes and partition state
znodes, leaders on a few registered brokers), then starts a controller in this process and
reports how long its failover took (election won → context loaded, partitions online,
LeaderAndIsr/UpdateMetadata queued, snapshot published). The baseline, measured in the same run
on the same znodes with the same client wrapper, is the raw time to read them all with
pipelined reads (multiRead batches, as fast as the client goes).

Then the same again with 10% of the partitions mid-reassignment (AR/RR in their topic znodes, half
of them in the legacy /admin/reassign_partitions znode too; ``--reassigning N``).

    python bench/failover.py                       # 1,000 topics × 100 partitions, own ZooKeeper
    python bench/failover.py --topics 100 --zk 127.0.0.1:2181/bench

Kafka's ZK controller needs about 17 s for 100k partitions; the goal here is ≤ 5 s.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import time
import uuid

from reassignd.testing.controller import in_process_controller
from reassignd.zk import codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.server import LocalZooKeeper
from reassignd.zk.values import Create, ZkSettings

BROKERS = (1, 2, 3)
MOVING_TO = 4  # not registered: the reassignments in flight wait for it


async def populate(zk: ZkClient, topics: int, partitions: int, reassigning: int = 0) -> list[str]:
    """Write the topic and state znodes with 50-op multis, many in flight. Returns state paths.
    The first ``reassigning`` partitions are mid-reassignment (one replica moving to broker 4: AR
    and RR set in their topic znode, as Kafka writes them), half of them also listed in the legacy
    ``/admin/reassign_partitions`` znode."""
    for p in paths.PERSISTENT_PATHS:
        await zk.ensure_path(p)
    ops: list[Create] = []
    state_paths = []
    legacy: list[dict[str, object]] = []
    moving = 0
    for t in range(topics):
        name = f"bench-{t:04d}"
        assignment = {p: tuple(BROKERS[(p + i) % 3] for i in range(3)) for p in range(partitions)}
        full, adding, removing = dict(assignment), {}, {}
        for p, replicas in assignment.items():
            if moving >= reassigning:
                break
            target = (MOVING_TO, *replicas[1:])
            full[p] = (*target, replicas[0])  # RS = TRS + ORS, as Kafka orders it
            adding[p], removing[p] = (MOVING_TO,), (replicas[0],)
            if moving % 2 == 0:
                legacy.append({"topic": name, "partition": p, "replicas": list(target)})
            moving += 1
        ops.append(
            Create(
                paths.topic(name),
                codec.encode_topic(
                    codec.TopicZnode(full, adding, removing, topic_id=codec.new_uuid_base64())
                ),
            )
        )
        ops.append(Create(paths.topic_partitions(name)))
        for p, replicas in assignment.items():
            ops.append(Create(paths.partition(name, p)))
            state = codec.PartitionState(replicas[0], 0, 1, replicas)
            path = paths.partition_state(name, p)
            state_paths.append(path)
            ops.append(Create(path, codec.encode_partition_state(state)))
    sem = asyncio.Semaphore(64)

    async def send(chunk: list[Create]) -> None:
        async with sem:
            await zk.multi(chunk)

    await asyncio.gather(*(send(ops[i : i + 50]) for i in range(0, len(ops), 50)))
    if legacy:
        body = json.dumps({"version": 1, "partitions": legacy}, separators=(",", ":")).encode()
        await zk.create(paths.REASSIGN_PARTITIONS, body)
    return state_paths


async def register_brokers(zk: ZkClient) -> None:
    for b in BROKERS:
        reg = codec.BrokerRegistration(
            b,
            "127.0.0.1",
            9092,
            (codec.Endpoint("PLAINTEXT", "127.0.0.1", 9092), codec.Endpoint("CONTROL", "127.0.0.1", 1)),
        )
        await zk.create(paths.broker(b), codec.encode_broker(reg), ephemeral=True)


async def raw_read_s(zk: ZkClient, topic_paths: list[str], state_paths: list[str]) -> float:
    started = time.perf_counter()
    await zk.get_many(topic_paths)
    await zk.get_many(state_paths)
    return time.perf_counter() - started


async def run(connect: str, topics: int, partitions: int, reassigning: int = 0) -> None:
    zk = ZkClient(ZkSettings(connect, session_timeout_s=30.0, request_timeout_s=120.0))
    await zk.start()
    try:
        started = time.perf_counter()
        state_paths = await populate(zk, topics, partitions, reassigning)
        print(
            f"\npopulated {len(state_paths):,} partitions, {reassigning:,} of them mid-reassignment "
            f"({(reassigning + 1) // 2:,} also in /admin/reassign_partitions), in {time.perf_counter() - started:.1f}s"
        )
        await register_brokers(zk)
        topic_paths = [paths.topic(f"bench-{t:04d}") for t in range(topics)]
        baselines = [await raw_read_s(zk, topic_paths, state_paths) for _ in range(3)]
        baseline = min(baselines)
        async with in_process_controller(
            connect, http=False, session_timeout_s=30.0, request_timeout_s=120.0
        ) as running:
            controller = running.controller
            while controller.last_failover_s is None:  # noqa: ASYNC110 (a benchmark's poll)
                await asyncio.sleep(0.05)
        snap = controller.snapshot()
        failover = controller.last_failover_s
        print(
            f"partitions loaded by the controller: {snap.partition_count:,} ({len(snap.reassignments):,} reassigning)"
        )
        print(f"raw pipelined read of the same znodes (best of 3): {baseline:.2f}s")
        print(f"failover (election won -> ready): {failover:.2f}s")
        print(f"ratio failover / raw read: {failover / baseline:.2f}x")
        print(
            f"goal ≤ 5 s for 100k partitions (Kafka ~17 s): {'reached' if failover <= 5 else 'not reached'}"
        )
    finally:
        await zk.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--zk", help="connect string (default: start a local ZooKeeper)")
    parser.add_argument("--topics", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument(
        "--reassigning",
        type=int,
        default=None,
        help="partitions mid-reassignment in the second run (default 10%%)",
    )
    args = parser.parse_args()
    moving = args.reassigning if args.reassigning is not None else args.topics * args.partitions // 10
    logging.basicConfig(level=logging.WARNING)
    gc.set_threshold(20_000, *gc.get_threshold()[1:])  # as reassignd.service does
    for name in (
        "reassignd.controller.runtime.controller",
        "reassignd.controller.runtime.term",  # the election and the load
        "reassignd.controller.runtime.failover",
    ):
        logging.getLogger(name).setLevel(logging.INFO)
    for reassigning in (0, moving):  # the same cluster at rest, then with moves in flight
        if args.zk:
            asyncio.run(
                run(f"{args.zk}/failover-{uuid.uuid4().hex[:8]}", args.topics, args.partitions, reassigning)
            )
            continue
        with LocalZooKeeper(quick_jit=False) as server:
            asyncio.run(run(f"{server.connect}/failover", args.topics, args.partitions, reassigning))


if __name__ == "__main__":
    main()

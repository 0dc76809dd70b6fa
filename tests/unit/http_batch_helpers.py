"""Helpers of the HTTP batch tests: a fixed clock, a cluster view and running batches."""

from __future__ import annotations

from dataclasses import replace

from reassignd.controller.model.snapshot import BrokerView, PartitionView, ReassignmentView, TopicView
from reassignd.executor.model import (
    Batch,
    BatchMove,
    BatchMoveState,
    BatchSpec,
    BatchState,
    Limits,
    PartitionSpec,
)
from reassignd.testing.fake_view import ACTIVE

MiB = 1024**2


NOV_23_10H_MS = 1_795_428_000_000  # 2026-11-23T10:00:00Z


def topic(name: str, *replicas: tuple[int, ...]) -> TopicView:
    """Partition p has ``replicas[p]``, its first replica leading, all in sync."""
    return TopicView(
        name, None, tuple(PartitionView(p, r, r[0], 0, r, (), ()) for p, r in enumerate(replicas))
    )


BROKERS = {b: BrokerView(b, None, (f"PLAINTEXT://h:{9090 + b}",), 1000 + b) for b in range(1, 7)}


CLUSTER = replace(
    ACTIVE,
    brokers=BROKERS,
    topics={"orders": topic("orders", (1, 2, 3), (1, 2, 3), (2, 3, 1), (3, 1, 2))},
)


def fixed_clock() -> int:
    return NOV_23_10H_MS


def running_batch(started_ms: int) -> Batch:
    spec = BatchSpec(
        "b1",
        tuple(PartitionSpec("orders", p, (4, 5, 6)) for p in range(4)),
        Limits(5, 100, 100),
        plan_id="p",
        throttle_bytes_per_s=1000,
    )
    batch = Batch(
        spec,
        BatchState.RUNNING,
        NOV_23_10H_MS,
        NOV_23_10H_MS + 1500,
        {
            ("orders", 0): BatchMove((4, 5, 6), (1, 2, 3), BatchMoveState.RUNNING, started_ms),
            ("orders", 1): BatchMove((4, 5, 6), (1, 2, 3), BatchMoveState.RUNNING, started_ms),
            ("orders", 2): BatchMove((4, 5, 6), (2, 3, 1), BatchMoveState.PENDING),
            ("orders", 3): BatchMove(
                (4, 5, 6), (3, 1, 2), BatchMoveState.COMPLETED, started_ms, started_ms + 1
            ),
        },
        broker_throttles={5: {}, 4: {}},
        topic_throttles={"orders": {}},
    )
    return batch


def moving(
    tp: tuple[str, int], original: tuple[int, ...], target: tuple[int, ...], leader: int
) -> ReassignmentView:
    adding = tuple(b for b in target if b not in original)
    removing = tuple(b for b in original if b not in target)
    replicas = target + removing
    return ReassignmentView(*tp, replicas, adding, removing, target, original, "batch", NOV_23_10H_MS, leader)

"""Helpers of the HTTP batch tests: a fixed clock, a cluster view and running batches."""

from __future__ import annotations

from dataclasses import replace

from reassignd.controller.model.snapshot import (
    BrokerView,
    PartitionView,
    ReassignmentView,
    TopicView,
)
from reassignd.executor.model import (
    Batch,
    BatchMove,
    BatchMoveEnd,
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
    entries = tuple(PartitionSpec("orders", p, (4, 5, 6)) for p in range(4))
    spec = BatchSpec(
        "b1",
        entries,
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
            ("orders", 0): BatchMove(entries[0], (1, 2, 3), started_at_ms=started_ms),
            ("orders", 1): BatchMove(entries[1], (1, 2, 3), started_at_ms=started_ms),
            ("orders", 2): BatchMove(entries[2], (2, 3, 1)),
            ("orders", 3): BatchMove(
                entries[3], (3, 1, 2), BatchMoveEnd.COMPLETED, started_ms, started_ms + 1
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


FULL = {
    "batch_id": "plan-7f3a-0001",
    "plan_id": "plan-7f3a",
    "priority": 2,
    "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [4, 5, 6], "expected_replicas": [1, 2, 3]},
        {"topic": "orders", "partition": 1, "replicas": [1, 2, 4]},
    ],
    "throttle_bytes_per_s": 52428800,
    "limits": {"moves_per_broker": 3, "moves_in_cluster": 100, "leader_moves_per_broker": 7},
    "strategy": ["postpone_under_replicated", "small_first"],
}


MALFORMED: list[tuple[bytes, str]] = [
    (b"", "request body: invalid JSON"),
    (b"[]", "request body: expected a JSON object, got an array"),
    (b"{}", "partitions: missing required field"),
    (b'{"partitions": [], "partitions": []}', "partitions: duplicate field"),
    (b'{"partitions": [], "mode": "stop"}', "mode: unknown field"),
    (b'{"partitions": {}}', "partitions: expected an array, got an object"),
    (b'{"partitions": [1]}', "partitions[0]: expected an object, got an integer"),
    (b'{"partitions": [{"topic": "t", "partition": 0}]}', "partitions[0].replicas: missing required field"),
    (
        b'{"partitions": [{"topic": "t", "partition": 0, "replicas": null}]}',
        "partitions[0].replicas: expected a list of integers, got null",
    ),
    (
        b'{"partitions": [{"topic": 1, "partition": 0, "replicas": [1]}]}',
        "partitions[0].topic: expected a string, got an integer",
    ),
    (
        b'{"partitions": [{"topic": "t", "partition": -1, "replicas": [1]}]}',
        "partitions[0].partition: -1 is out of range (0..2147483647)",
    ),
    (
        b'{"partitions": [{"topic": "t", "partition": "0", "replicas": [1]}]}',
        "partitions[0].partition: expected a non-negative integer, got a string",
    ),
    (
        b'{"partitions": [{"topic": "t", "partition": 0, "replicas": [1], "expected_replicas": [true]}]}',
        "partitions[0].expected_replicas: expected a list of integers or null; item 0 is a boolean",
    ),
    (
        b'{"partitions": [{"topic": "t", "partition": 0, "replicas": [1], "log_dirs": [3]}]}',
        "partitions[0].log_dirs[0]: expected a string",
    ),
    (b'{"partitions": [], "batch_id": ""}', "batch_id: expected 1-249 characters"),
    (b'{"partitions": [], "batch_id": "a/b"}', "batch_id: expected 1-249 characters"),
    (b'{"partitions": [], "batch_id": ".."}', "batch_id: expected 1-249 characters"),
    (b'{"partitions": [], "batch_id": null}', "batch_id: expected a string, got null"),
    (('{"partitions": [], "batch_id": "' + "a" * 250 + '"}').encode(), "batch_id: expected 1-249 characters"),
    (b'{"partitions": [], "plan_id": 7}', "plan_id: expected a string, got an integer"),
    (
        ('{"partitions": [], "plan_id": "' + "p" * 1001 + '"}').encode(),
        "plan_id: expected at most 1000 characters, got 1001",
    ),
    (b'{"partitions": [], "priority": 1.5}', "priority: expected an integer, got a number"),
    (b'{"partitions": [], "priority": null}', "priority: expected an integer, got null"),
    (b'{"partitions": [], "priority": 2147483648}', "priority: 2147483648 is out of range"),
    (
        b'{"partitions": [], "throttle_bytes_per_s": 0}',
        "throttle_bytes_per_s: 0 is out of range (1..9223372036854775807)",
    ),
    (
        b'{"partitions": [], "throttle_bytes_per_s": "50MB"}',
        "throttle_bytes_per_s: expected an integer, got a string",
    ),
    (b'{"partitions": [], "limits": null}', "limits: expected an object, got null"),
    (b'{"partitions": [], "limits": {"moves_per_broker": 0}}', "limits.moves_per_broker: 0 is out of range"),
    (b'{"partitions": [], "limits": {"cluster": 5}}', "limits.cluster: unknown field"),
    (
        b'{"partitions": [], "limits": {"leader_moves_per_broker": true}}',
        "limits.leader_moves_per_broker: expected an integer, got a boolean",
    ),
    (
        b'{"partitions": [], "limits": {"adaptive": {"min": 5, "max": 2}}}',
        "limits.adaptive: max (2) must be at least min (5)",
    ),
    (
        b'{"partitions": [], "limits": {"adaptive": {"min": 0, "max": 2}}}',
        "limits.adaptive.min: 0 is out of range",
    ),
    (
        b'{"partitions": [], "limits": {"adaptive": {"min": 1}}}',
        "limits.adaptive.max: missing required field",
    ),
    (
        b'{"partitions": [], "limits": {"adaptive": [1, 2]}}',
        "limits.adaptive: expected an object, got an array",
    ),
    (b'{"partitions": [], "strategy": "small_first"}', "strategy: expected an array, got a string"),
    (
        b'{"partitions": [], "strategy": ["fast_first"]}',
        "strategy[0]: expected one of small_first, large_first, postpone_under_replicated, spread_brokers",
    ),
    (
        b'{"partitions": [], "strategy": ["spread_brokers", "spread_brokers"]}',
        "strategy[1]: spread_brokers is listed twice",
    ),
    (
        b'{"partitions": [], "strategy": ["small_first", "large_first"]}',
        "strategy: cannot hold both small_first and large_first",
    ),
]

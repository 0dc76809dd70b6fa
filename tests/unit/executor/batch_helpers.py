"""Helpers of the executor tests: moves, batch specs, a submitted batch and a simulated cluster."""

from __future__ import annotations

from reassignd.controller.reassignment.validation import validate_target
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.errors import ReassigndError
from reassignd.executor.model import Batch, BatchSpec, Limits, PartitionSpec
from reassignd.executor.submit import submit
from reassignd.topic_partition import Replicas, TopicPartition

LIMITS = Limits(moves_per_broker=5, moves_in_cluster=100, leader_moves_per_broker=100)


LIVE = (1, 2, 3, 4, 5, 6)


class Cluster:
    """Current replicas per partition, and AlterPartitionReassignments' validator over them."""

    def __init__(self, replicas: dict[TopicPartition, Replicas]) -> None:
        self.replicas = replicas

    def current(self, tp: TopicPartition) -> Replicas | None:
        return self.replicas.get(tp)

    def validate(self, p: PartitionSpec) -> ReassigndError | None:
        current = self.replicas.get(p.tp)
        assignment = None if current is None else ReplicaAssignment(current)
        return validate_target(p.replicas, assignment, LIVE, topic_deleting=False)


def cluster() -> Cluster:
    replicas: dict[TopicPartition, tuple[int, ...]] = {("orders", p): (1, 2, 3) for p in range(4)}
    return Cluster(replicas | {("logs", 0): (3, 5, 6)})


def spec(*partitions: PartitionSpec, batch_id: str = "b-1", **fields: object) -> BatchSpec:
    return BatchSpec(batch_id, partitions, LIMITS, **fields)  # type: ignore[arg-type]


def move(p: int, target: Replicas = (4, 5, 6), expected: Replicas | None = (1, 2, 3)) -> PartitionSpec:
    return PartitionSpec("orders", p, target, expected)


def submitted(s: BatchSpec, c: Cluster | None = None, batches: dict[str, Batch] | None = None) -> Batch:
    c = c or cluster()
    return submit(s, batches or {}, c.current, c.validate, now_ms=1000).batch

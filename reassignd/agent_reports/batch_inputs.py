"""What a batch's status needs from the broker agents: each move's partition size and each
running move's progress. Pure: the snapshot and the agents' reports in, the two maps
:func:`reassignd.executor.progress.batch_status` takes out.

- A partition's **size** is its leader's log end offset (the leader's own report); a partition
  whose leader did not report has no size (it counts 0 bytes until one does).
- A running move's **progress** is the one ``GET /v1/reassignments`` shows for its partition
  (:func:`reassignd.agent_reports.progress.reassignment_progress`), as long as the partition is still being
  moved to the move's target; in its dir phase (JBOD), the bytes its pinned replicas' future
  replicas copied (:func:`reassignd.executor.dir_moves.dir_progress`); otherwise the status
  estimates it from the size.

The agents asked are the leaders of the batches' partitions and the adding replicas of their
moves in flight; fetching the reports is :mod:`reassignd.agent_reports.fetch`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from reassignd.agent_reports.progress import ReplicaKey, involved_brokers, reassignment_progress
from reassignd.control.replicas_report import ReplicaInfo
from reassignd.controller.model.snapshot import ClusterSnapshot, PartitionView, ReassignmentView
from reassignd.executor.dir_moves import Places, dir_progress
from reassignd.executor.model import Batch, BatchMove, BatchMoveState
from reassignd.executor.progress import MoveProgress
from reassignd.topic_partition import TopicPartition

_SIZED = (
    BatchMoveState.PENDING,
    BatchMoveState.RUNNING,
    BatchMoveState.COMPLETED,
)  # the others count nowhere


@dataclass(frozen=True, slots=True)
class BatchInputs:
    progress: dict[TopicPartition, MoveProgress]
    sizes: dict[TopicPartition, int]


def partition_view(snapshot: ClusterSnapshot, tp: TopicPartition) -> PartitionView | None:
    topic = snapshot.topics.get(tp[0])
    if topic is None:
        return None
    parts = topic.partitions  # sorted by id, usually 0..n-1
    if 0 <= tp[1] < len(parts) and parts[tp[1]].partition == tp[1]:
        return parts[tp[1]]
    return next((p for p in parts if p.partition == tp[1]), None)


def _leader(snapshot: ClusterSnapshot, tp: TopicPartition) -> int | None:
    view = partition_view(snapshot, tp)
    return None if view is None or view.leader < 0 else view.leader


def _moving_to_target(
    snapshot: ClusterSnapshot, tp: TopicPartition, move: BatchMove
) -> ReassignmentView | None:
    """The partition's reassignment in flight, if it is this move's."""
    r = snapshot.reassignments.get(tp)
    return r if r is not None and r.target_replicas == move.target else None


def at_target(snapshot: ClusterSnapshot, tp: TopicPartition, move: BatchMove) -> bool:
    """Whether the partition sits at the move's target replicas, with no reassignment in flight
    (a move that pins log dirs is then in its dir phase)."""
    view = partition_view(snapshot, tp)
    return view is not None and tp not in snapshot.reassignments and tuple(view.replicas) == move.target


def leaders_of(snapshot: ClusterSnapshot, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
    """Each partition's leader, for those that have one."""
    return {tp: leader for tp in tps if (leader := _leader(snapshot, tp)) is not None}


def leader_sizes(
    leaders: Mapping[TopicPartition, int], replicas: Mapping[ReplicaKey, ReplicaInfo]
) -> dict[TopicPartition, int]:
    """Each partition's size: its leader's log end offset, where the leader reported it."""
    return {
        tp: max(0, report.log_end_offset)
        for tp, leader in leaders.items()
        if (report := replicas.get((leader, *tp))) is not None
    }


def brokers_to_ask(batches: Iterable[Batch], snapshot: ClusterSnapshot) -> set[int]:
    brokers: set[int] = set()
    for batch in batches:
        for tp, move in batch.moves.items():
            if move.state not in _SIZED:
                continue
            if (leader := _leader(snapshot, tp)) is not None:
                brokers.add(leader)
            if (
                move.state is BatchMoveState.RUNNING
                and (r := _moving_to_target(snapshot, tp, move)) is not None
            ):
                brokers |= involved_brokers([r])
            if move.state is BatchMoveState.RUNNING and move.pinned and at_target(snapshot, tp, move):
                brokers.update(move.pinned)  # their future replicas are the dir phase's progress
    return brokers


def batch_inputs(
    batch: Batch,
    snapshot: ClusterSnapshot,
    replicas: Mapping[ReplicaKey, ReplicaInfo],
    places: Places | None = None,
) -> BatchInputs:
    """``places`` (:func:`reassignd.executor.dir_moves.places_of` of the same reports) gives the
    progress of moves in their dir phase: the bytes their future replicas copied."""
    progress: dict[TopicPartition, MoveProgress] = {}
    sizes: dict[TopicPartition, int] = {}
    for tp, move in batch.moves.items():
        if move.state not in _SIZED:
            continue
        leader = _leader(snapshot, tp)
        if leader is not None and (report := replicas.get((leader, *tp))) is not None:
            sizes[tp] = max(0, report.log_end_offset)
        if move.state is BatchMoveState.RUNNING and (r := _moving_to_target(snapshot, tp, move)) is not None:
            p = reassignment_progress(r, replicas)
            if p is not None:
                progress[tp] = MoveProgress(p.bytes_done, p.bytes_total, float(p.bytes_per_s))
        elif (
            move.state is BatchMoveState.RUNNING
            and places is not None
            and move.pinned
            and at_target(snapshot, tp, move)
        ):
            d = dir_progress(tp, move, places, sizes.get(tp, 0))
            added = len(set(move.target) - set(move.origins)) * sizes.get(tp, 0)  # copied before
            progress[tp] = MoveProgress(added + d.bytes_done, added + d.bytes_total, 0.0)
    return BatchInputs(progress, sizes)

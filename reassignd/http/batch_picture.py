"""A batch's picture (``GET /v1/batches/{batch_id}/picture.svg``): every broker's load before the
batch and once its moves are done, drawn by :mod:`reassignd.plan_picture`. Pure: the batch, the
cluster's topics and the partitions' sizes in, the figures (and the document) out.

- **before**: each of the batch's partitions on the replicas it had before its move (the move's
  ``previous``), every other partition on its replicas before any move in flight (RS − AR);
- **after**: the same, but the batch's pending, running and completed moves on their target
  (a cancelled or failed move stays where it was).

Bytes count each replica at its partition's size (its leader's log end offset, as the batch's
status takes it, else the size recorded when the batch was submitted; a partition of unknown size
counts 0 and the subtitle says how many); leaders are preferred leaders (the first replica), as
the planner counts them. Every registered broker has a group, so an empty new broker shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from reassignd.controller.model.snapshot import TopicView
from reassignd.executor.model import Batch, BatchMoveState
from reassignd.plan_picture import Holder, HolderLoad, loads_of, plan_svg
from reassignd.topic_partition import Replicas, TopicPartition

_LANDS = frozenset({BatchMoveState.PENDING, BatchMoveState.RUNNING, BatchMoveState.COMPLETED})


@dataclass(frozen=True, slots=True)
class BatchLoads:
    before: dict[Holder, HolderLoad]
    after: dict[Holder, HolderLoad]
    unsized: int  # partitions counted at 0 bytes: no size known


def batch_loads(
    batch: Batch,
    topics: Mapping[str, TopicView],
    sizes: Mapping[TopicPartition, int],
    brokers: Iterable[int] = (),
) -> BatchLoads:
    before: list[tuple[Replicas, int]] = []
    after: list[tuple[Replicas, int]] = []
    unsized = 0
    for name in sorted(topics):
        for p in topics[name].partitions:
            tp = (name, p.partition)
            move = batch.moves.get(tp)
            size = sizes.get(tp)
            if size is None and move is not None:
                size = move.size_bytes
            if size is None:
                unsized += 1
                size = 0
            if move is None:
                replicas = tuple(p.original)
                before.append((replicas, size))
                after.append((replicas, size))
            else:
                before.append((move.original_replicas, size))
                after.append((move.target if move.state in _LANDS else move.original_replicas, size))
    empty = {Holder(b): HolderLoad() for b in brokers}
    return BatchLoads(empty | loads_of(before), empty | loads_of(after), unsized)


def batch_svg(batch: Batch, loads: BatchLoads) -> str:
    spec = batch.spec
    moving = sum(1 for m in batch.moves.values() if m.state in _LANDS)
    parts = [f"{batch.state.value}", f"{moving} of {len(batch.moves)} moves landing"]
    if spec.plan_id:
        parts.insert(0, f"plan {spec.plan_id}")
    if loads.unsized:
        parts.append(f"{loads.unsized} partitions of unknown size count 0 bytes")
    return plan_svg(f"batch {spec.batch_id}", loads.before, loads.after, "; ".join(parts))

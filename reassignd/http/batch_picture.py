"""A batch's picture (``GET /v1/batches/{batch_id}/picture.svg``): every broker's load before the
batch and once its moves are done, drawn by :mod:`reassignd.plan_picture`. Pure: the batch, the
cluster's topics and the partitions' sizes in, the figures (and the document) out.

- **before**: each of the batch's partitions on the replicas it had before its move (the move's
  ``origins``), every other partition on its replicas before any move in flight (RS − AR);
- **after**: the same, but the batch's pending, running and completed moves on their target
  (a cancelled or failed move stays where it was).

Bytes count each replica at its partition's size (its leader's log end offset, as the batch's
status takes it, else the size recorded when the batch was submitted; a partition of unknown size
counts 0 and the subtitle says how many); leaders are preferred leaders (the first replica), as
the planner counts them. Every registered broker has a group, so an empty new broker shows.

A broker whose agent reports several log dirs (JBOD) is drawn per dir: a replica counts in the dir
its agent reports it in, a replica a move pins in its pinned dir once the move lands (and, before,
in the dir the batch recorded when it asked), a replica not hosted yet in ``any``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from reassignd.controller.model.snapshot import TopicView
from reassignd.executor.dir_moves import Places
from reassignd.executor.model import ANY_LOG_DIR, Batch, BatchMove, BatchMoveState
from reassignd.plan_picture import NONE, Holder, HolderLoad, loads_of, plan_svg
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
    dirs: Mapping[int, Iterable[str]] | None = None,
    places: Places | None = None,
) -> BatchLoads:
    """``dirs``: each broker's log dirs as its agent reports them, ``places`` where its replicas
    are (both from the agents' reports; brokers with several dirs are drawn per dir)."""
    several = {b: tuple(ds) for b, ds in (dirs or {}).items() if len(tuple(ds)) > 1}
    before: list[tuple[Replicas, int]] = []
    after: list[tuple[Replicas, int]] = []
    placed: list[tuple[Holder, int, bool, bool]] = []  # holder, size, leader?, after?
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
                then = now = replicas
            else:
                then = move.origins
                now = move.target if move.state in _LANDS else move.origins
                before.append((then, size))
                after.append((now, size))
            for phase, replicas in ((False, then), (True, now)):
                for i, b in enumerate(replicas):
                    if b in several:
                        d = _dir_of(b, tp, move, phase, places or {})
                        placed.append((Holder(b, d), size, i == 0, phase))
    empty = {Holder(b): HolderLoad() for b in brokers if b not in several}
    empty |= {Holder(b, d): HolderLoad() for b, ds in several.items() for d in ds}
    out_before = {h: v for h, v in loads_of(before).items() if h.broker not in several}
    out_after = {h: v for h, v in loads_of(after).items() if h.broker not in several}
    for holder, size, leader, phase in placed:
        side = out_after if phase else out_before
        v = side.get(holder, NONE)
        side[holder] = HolderLoad(v.size_bytes + size, v.replicas + 1, v.leaders + leader)
    return BatchLoads(empty | out_before, empty | out_after, unsized)


def _dir_of(b: int, tp: TopicPartition, move: BatchMove | None, after: bool, places: Places) -> str:
    """The dir broker ``b``'s replica counts in, before the batch or once its move lands."""
    if move is not None and move.state in _LANDS:
        pinned = move.pinned.get(b)
        if after and pinned is not None:
            return pinned
        if not after and move.original_log_dirs is not None and b in move.target:
            was = dict(zip(move.target, move.original_log_dirs, strict=True)).get(b, ANY_LOG_DIR)
            if was != ANY_LOG_DIR:
                return was
    place = places.get((b, *tp))
    if place is None or place.log_dir is None:
        return ANY_LOG_DIR
    return place.log_dir


def batch_svg(batch: Batch, loads: BatchLoads) -> str:
    spec = batch.spec
    moving = sum(1 for m in batch.moves.values() if m.state in _LANDS)
    parts = [f"{batch.state.value}", f"{moving} of {len(batch.moves)} moves landing"]
    if spec.plan_id:
        parts.insert(0, f"plan {spec.plan_id}")
    if loads.unsized:
        parts.append(f"{loads.unsized} partitions of unknown size count 0 bytes")
    return plan_svg(f"batch {spec.batch_id}", loads.before, loads.after, "; ".join(parts))

"""A new controller's view of a journaled batch: what its moves became while no controller
watched, and what is left to do. Pure.

The journal is written before the topic znodes, both when a move starts (so its origins, the
journal's ``previous``, are durable before anything moves) and when a batch stops (so a stop is
never lost).
A crash between the two writes leaves one of these, each read from the partition as ZooKeeper has
it now (:class:`ObservedPartition`):

- a ``running`` move whose partition moves to its target: still running (phases U/A/B resume it);
- a ``running`` move whose partition sits at its target: completed — unless it pins log dirs:
  then it is in (or enters) its dir phase, which the agents' reports end (``dir_moves.py``);
- a ``running`` move whose partition sits at its origins: its start never reached
  the topic znode, so it is ``pending`` again (started once, by the scheduler, later);
- a ``running`` move whose partition is elsewhere: someone else moved it, ``cancelled``;
- a ``pending`` move whose partition already moves to its target: ``running``;
- a move of a partition that no longer exists: ``failed``;
- a started move a stop cancelled whose partition still moves to its target: a :class:`Revert`
  to make (a move that never started is not reverted: whoever moves it now, it is not the batch).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from reassignd.executor.lifecycle import Revert, moves_cancelled, moves_completed, moves_failed
from reassignd.executor.model import Batch, BatchMove, BatchMoveState, BatchState
from reassignd.topic_partition import Replicas, TopicPartition


@dataclass(frozen=True, slots=True)
class ObservedPartition:
    replicas: Replicas  # RS, in order
    target: Replicas | None = None  # TRS of the reassignment in flight; None when not moving


Observe = Callable[[TopicPartition], ObservedPartition | None]

GONE = "the partition no longer exists"
MOVED_ELSEWHERE = "the partition was moved outside the batch"


def reconcile(batch: Batch, observe: Observe, now_ms: int) -> tuple[Batch, tuple[Revert, ...]]:
    completed: list[TopicPartition] = []
    cancelled: dict[TopicPartition, str | None] = {}
    failed: dict[TopicPartition, str] = {}
    restarted: dict[TopicPartition, BatchMove] = {}
    reverts: list[Revert] = []
    stopped = batch.state in (BatchState.STOPPED, BatchState.ROLLED_BACK)
    for tp, move in batch.moves.items():
        if move.state not in (BatchMoveState.PENDING, BatchMoveState.RUNNING, BatchMoveState.CANCELLED):
            continue
        seen = observe(tp)
        if move.state is BatchMoveState.CANCELLED:
            started = move.started_at_ms is not None
            if stopped and started and seen is not None and seen.target == move.target:
                reverts.append(Revert(tp[0], tp[1], move.origins, move.target))
        elif seen is None:
            failed[tp] = GONE
        elif move.state is BatchMoveState.PENDING:
            if seen.target == move.target:
                restarted[tp] = dataclasses.replace(move, started_at_ms=now_ms)
        elif seen.target == move.target:
            pass
        elif seen.target is None and seen.replicas == move.target:
            if not move.pinned:  # a dir phase ends when the agents report it (dir_moves.py)
                completed.append(tp)
        elif seen.target is None and seen.replicas == move.origins:
            restarted[tp] = dataclasses.replace(move, started_at_ms=None)
        else:
            cancelled[tp] = MOVED_ELSEWHERE
    if restarted:
        moves = {**batch.moves, **restarted}
        running = any(m.state is BatchMoveState.RUNNING for m in moves.values())
        state = BatchState.RUNNING if batch.state is BatchState.PENDING and running else batch.state
        batch = dataclasses.replace(batch, moves=moves, state=state, updated_ms=max(batch.updated_ms, now_ms))
    batch = moves_completed(batch, completed, now_ms)
    batch = moves_cancelled(batch, cancelled, now_ms)
    batch = moves_failed(batch, failed, now_ms)
    return batch, tuple(reverts)

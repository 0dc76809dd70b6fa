"""A batch's moves between the log dirs of a broker (JBOD): submitted as moves, journaled as asked
before any agent is asked, asked only when the agents' reports show neither the replica in its
dir nor its future replica on the way, completed when they arrive, rolled back to their previous
dirs, capped like other moves, reconciled after a failover."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from reassignd.control.log_dir_moves import LogDirMove
from reassignd.control.replicas_report import FutureInfo, LogDirInfo, ReplicaInfo, ReplicasReport
from reassignd.executor.dir_moves import Place, decide, places_of, reverse_dirs
from reassignd.executor.journal import decode_batch, encode_batch
from reassignd.executor.lifecycle import dirs_asked, moves_completed, moves_started, rollback, stop
from reassignd.executor.model import (
    Batch,
    BatchMove,
    BatchMoveState,
    BatchState,
    Limits,
    PartitionSpec,
    spec_error,
)
from reassignd.executor.progress import move_bytes
from reassignd.executor.recovery import ObservedPartition, reconcile
from reassignd.executor.scheduler import choose_moves, dir_shape, queue_of
from reassignd.topic_partition import TopicPartition
from tests.unit.executor.batch_helpers import Cluster, spec, submitted

TP = ("orders", 0)


def dir_move(p: int = 0, dirs: tuple[str, ...] = ("/d2", "any", "any")) -> PartitionSpec:
    return PartitionSpec("orders", p, (1, 2, 3), (1, 2, 3), dirs)


def at_target(tp: TopicPartition, move: BatchMove) -> bool:
    return True


def running(batch: Batch, *tps: TopicPartition) -> Batch:
    return moves_started(batch, {tp: batch.moves[tp].origins for tp in tps}, 2000)


def test_a_dir_only_partition_is_a_pending_move_and_any_pins_nothing() -> None:
    b = submitted(spec(dir_move(0), dir_move(1, ("any", "any", "any"))))
    assert b.moves[TP].state is BatchMoveState.PENDING
    assert b.moves[TP].pinned == {1: "/d2"}
    assert b.moves[("orders", 1)].state is BatchMoveState.COMPLETED  # nothing to do
    assert move_bytes(b.moves[TP], 100) == 100
    assert spec_error(spec(dir_move(0, ("/d2",)))) is not None  # one dir per replica
    assert spec_error(spec(dir_move(0, ("d2", "any", "any")))) is not None  # absolute paths


def test_asked_only_after_being_journaled_then_checked_against_the_report() -> None:
    b = running(submitted(spec(dir_move(0))), TP)
    places: dict[tuple[int, str, int], Place] = {(1, *TP): Place("/d1")}
    first = decide([b], at_target, places, frozenset({1}), {TP: 100})
    assert first.asking == {"b-1": {TP: ("/d1", "any", "any")}} and not first.ask  # journal first
    b = dirs_asked(b, first.asking["b-1"], 3000)
    assert b.moves[TP].dirs_asked_ms == 3000 and b.moves[TP].original_log_dirs == ("/d1", "any", "any")
    # the journal survives a failover with what it says (slow decoding path for log_dirs)
    znodes = encode_batch(b)
    b = decode_batch(znodes.head, znodes.chunks, znodes.throttles)
    assert b.moves[TP].dirs_asked_ms == 3000 and b.moves[TP].pinned == {1: "/d2"}
    second = decide([b], at_target, places, frozenset({1}), {TP: 100})
    assert second.ask == {1: (LogDirMove("orders", 0, "/d2"),)} and not second.asking
    # on its way: not asked again, progress from the future replica
    moving = {(1, *TP): Place("/d1", "/d2", 40)}
    third = decide([b], at_target, moving, frozenset({1}), {TP: 100})
    assert not third.ask and not third.done and third.progress[TP].bytes_done == 40
    # an agent that did not answer: nothing decided for it
    assert not decide([b], at_target, moving, frozenset(), {TP: 100})
    arrived = decide([b], at_target, {(1, *TP): Place("/d2")}, frozenset({1}), {TP: 100})
    assert arrived.done == {"b-1": frozenset({TP})}
    assert moves_completed(b, arrived.done["b-1"], 4000).state is BatchState.COMPLETED


def test_a_failover_keeps_a_dir_phase_running_and_a_rollback_moves_back() -> None:
    b = dirs_asked(running(submitted(spec(dir_move(0))), TP), {TP: ("/d1", "any", "any")}, 3000)
    again, reverts = reconcile(b, lambda tp: ObservedPartition((1, 2, 3)), 5000)
    assert again.moves[TP].state is BatchMoveState.RUNNING and not reverts  # not pending, not done
    done = moves_completed(b, [TP], 4000)
    assert reverse_dirs(done.moves[TP]) == ("/d1", "any", "any")
    c = Cluster({TP: (1, 2, 3)})
    outcome = rollback(done, {"b-1": done}, c.current, c.validate, 5000)
    back = outcome.reverse.batch
    assert back.spec.partitions == (PartitionSpec("orders", 0, (1, 2, 3), (1, 2, 3), ("/d1", "any", "any")),)
    assert back.moves[TP].state is BatchMoveState.PENDING


def test_a_stop_abandons_the_copies_on_their_way_only() -> None:
    b = dirs_asked(
        running(submitted(spec(dir_move(0), dir_move(1))), TP, ("orders", 1)),
        {
            TP: ("/d1", "any", "any"),
            ("orders", 1): ("/d1", "any", "any"),
        },
        3000,
    )
    stopped, _ = stop(b, 4000)
    places = {(1, *TP): Place("/d1", "/d2", 10), (1, "orders", 1): Place("/d2")}
    round_ = decide([stopped], at_target, places, frozenset({1}), {})
    assert round_.ask == {1: (LogDirMove("orders", 0, "/d1"),)} and not round_.done


def test_dir_moves_take_the_brokers_caps() -> None:
    one = Limits(moves_per_broker=1, moves_in_cluster=100, leader_moves_per_broker=100)
    b = submitted(dataclasses.replace(spec(*(dir_move(p) for p in range(3))), limits=one))
    queue = queue_of(b, dir_shape)
    assert queue is not None and len(queue.pending) == 3
    starts = choose_moves((), [queue], 100, {}, ())
    assert [s.tp for s in starts] == [TP]  # broker 1 copies one replica between its dirs at a time
    assert choose_moves([dir_shape(TP, b.moves[TP])], [queue], 100, {}, ()) == ()  # one in flight


def test_places_from_reports() -> None:
    report = ReplicasReport(
        1,
        (ReplicaInfo("orders", 0, True, 100, 0, 0.0, True, "/d1"),),
        log_dirs=(
            LogDirInfo("/d1", 100, 1000, 900),
            LogDirInfo("/d2", 30, 1000, 970, (FutureInfo("orders", 0, 30, 70),)),
        ),
    )
    places: Mapping[tuple[int, str, int], Place] = places_of({1: report})
    assert places == {(1, "orders", 0): Place("/d1", "/d2", 30)}

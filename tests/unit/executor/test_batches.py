"""A batch's life as the executor's pure core decides it: submission with its per-partition
refusals and idempotency, then moves starting and ending, pause, resume, stop, rollback, and a new
controller reconciling a journaled batch with what ZooKeeper shows."""

from __future__ import annotations

import dataclasses

import pytest

from reassignd.errors import ReassigndError
from reassignd.executor.errors import BatchIdInUse, BatchStateError
from reassignd.executor.lifecycle import (
    Revert,
    moves_cancelled,
    moves_completed,
    moves_failed,
    moves_started,
    pause,
    resume,
    rollback,
    stop,
    throttles_recorded,
    throttles_restored,
)
from reassignd.executor.model import (
    BatchMoveState,
    BatchSpec,
    BatchState,
    Limits,
    PartitionSpec,
    Strategy,
    canonical_body,
    capped,
)
from reassignd.executor.recovery import GONE, MOVED_ELSEWHERE, ObservedPartition, reconcile
from reassignd.executor.submit import partition_outcomes, submit
from tests.unit.executor.batch_helpers import LIMITS, Cluster, cluster, move, spec, submitted

# --- submission ----------------------------------------------------------------------------------


def test_a_batch_is_accepted_pending_with_its_previous_replicas() -> None:
    batch = submitted(spec(move(0), move(1, (2, 3, 4))))
    assert batch.state is BatchState.PENDING
    assert [m.state for m in batch.moves.values()] == [BatchMoveState.PENDING, BatchMoveState.PENDING]
    assert batch.moves[("orders", 0)].origins == (1, 2, 3)
    assert [o.error_code for o in partition_outcomes(batch)] == [0, 0]


def test_stale_plan_refuses_only_that_partition_and_order_counts() -> None:
    c = cluster()
    c.replicas[("orders", 1)] = (2, 1, 3)  # same brokers, another order: still stale
    batch = submitted(spec(move(0), move(1)), c)
    outcomes = partition_outcomes(batch)
    assert [o.error_code for o in outcomes] == [0, 10002]
    assert outcomes[1].error_message == "orders-1 has replicas [2, 1, 3], the plan expected [1, 2, 3]"
    assert list(batch.moves) == [("orders", 0)]


def test_alter_reassignments_validation_comes_first() -> None:
    batch = submitted(
        spec(move(0, (4, 4, 5)), move(1, (4, 9, 5)), PartitionSpec("nope", 0, (1, 2, 3), (1, 2, 3)))
    )
    assert [o.error_code for o in partition_outcomes(batch)] == [39, 39, 3]
    assert batch.state is BatchState.COMPLETED  # nothing accepted: created, and done


def test_conflict_with_a_pending_or_running_move_of_another_batch() -> None:
    first = submitted(spec(move(0), move(1)))
    first = moves_started(first, {("orders", 0): (1, 2, 3)}, 2000)
    second = submitted(spec(move(0), move(1), move(2), batch_id="b-2"), batches={"b-1": first})
    assert [o.error_code for o in partition_outcomes(second)] == [10003, 10003, 0]
    # once the first batch's move completed, the partition is free again
    done = moves_completed(first, [("orders", 0)], 3000)
    third = submitted(spec(move(0, (1, 2, 4)), batch_id="b-3"), batches={"b-1": done})
    assert [o.error_code for o in partition_outcomes(third)] == [0]


def test_a_paused_batch_still_holds_its_partitions() -> None:
    first = pause(submitted(spec(move(0))), 1500)
    second = submitted(spec(move(0), batch_id="b-2"), batches={"b-1": first})
    assert [o.error_code for o in partition_outcomes(second)] == [10003]


def test_same_id_and_body_answers_the_same_batch() -> None:
    c = cluster()
    s = spec(move(0), move(1), plan_id="p", strategy=(Strategy.SMALL_FIRST,))
    first = submit(s, {}, c.current, c.validate, 1000)
    # the same body with its partitions listed in another order is the same body
    again = dataclasses.replace(s, partitions=tuple(reversed(s.partitions)))
    second = submit(again, {"b-1": first.batch}, c.current, c.validate, 9000)
    assert first.created and not second.created
    assert second.batch is first.batch


@pytest.mark.parametrize(
    "change",
    [
        {"priority": 1},
        {"plan_id": "other"},
        {"throttle_bytes_per_s": 1},
        {"strategy": (Strategy.LARGE_FIRST,)},
        {"limits": Limits(1, 1, 1)},
        {"partitions": (move(0), move(1, (4, 6, 5)))},
    ],
)
def test_same_id_with_another_body_is_409_batch_id_in_use(change: dict[str, object]) -> None:
    c = cluster()
    s = spec(move(0), move(1), plan_id="p")
    first = submit(s, {}, c.current, c.validate, 1000).batch
    with pytest.raises(BatchIdInUse) as e:
        submit(dataclasses.replace(s, **change), {"b-1": first}, c.current, c.validate, 2000)  # type: ignore[arg-type]
    assert (e.value.error_code, e.value.error_name) == (10004, "BATCH_ID_IN_USE")
    assert canonical_body(s) != canonical_body(dataclasses.replace(s, **change))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (spec(move(0), move(0)), "partition orders-0 is listed twice"),
        (spec(move(0), batch_id="a/b"), "batch_id 'a/b' must be"),
        (spec(move(0), batch_id=".."), "batch_id '..' must be"),
        (BatchSpec("b", (move(0),), Limits(0, 1, 1)), "limits.moves_per_broker must be at least 1"),
        (spec(strategy=(Strategy.SMALL_FIRST, Strategy.LARGE_FIRST)), "both small_first and large_first"),
        (spec(plan_id="p" * 1001), "plan_id must be at most 1000 characters"),
    ],
)
def test_a_bad_spec_is_refused_whole(bad: BatchSpec, reason: str) -> None:
    with pytest.raises(ReassigndError) as e:
        submitted(bad)
    assert e.value.error_code == 42
    assert reason in str(e.value.message)


def test_a_partition_already_at_its_target_is_done_at_once() -> None:
    batch = submitted(spec(move(0, (1, 2, 3))))
    assert batch.moves[("orders", 0)].state is BatchMoveState.COMPLETED
    assert batch.state is BatchState.COMPLETED


def test_long_error_messages_are_cut_for_the_journal() -> None:
    assert capped("x" * 10) == "x" * 10
    cut = capped("é" * 1000)
    assert cut is not None and cut.endswith("...") and len(cut.encode()) <= 320


# --- moves and control ---------------------------------------------------------------------------


def test_moves_run_and_the_batch_completes() -> None:
    batch = submitted(spec(move(0), move(1)))
    batch = moves_started(batch, {("orders", 0): (1, 2, 3)}, 2000)
    assert batch.state is BatchState.RUNNING
    assert batch.moves[("orders", 0)].started_at_ms == 2000
    with pytest.raises(ValueError, match="no pending move"):
        moves_started(batch, {("orders", 0): (1, 2, 3)}, 2001)  # never started twice
    batch = moves_completed(batch, [("orders", 0)], 3000)
    batch = moves_started(batch, {("orders", 1): (1, 2, 3)}, 3000)
    batch = moves_completed(batch, [("orders", 1), ("orders", 3)], 4000)  # a stranger is ignored
    assert batch.state is BatchState.COMPLETED
    assert batch.counts()[BatchMoveState.COMPLETED] == 2
    assert batch.updated_ms == 4000


def test_a_failed_move_fails_the_batch_once_all_ended() -> None:
    batch = moves_started(submitted(spec(move(0), move(1))), {("orders", 0): (1, 2, 3)}, 2000)
    batch = moves_failed(batch, {("orders", 0): "broker 4 is gone"}, 2500)
    assert batch.state is BatchState.RUNNING
    batch = moves_cancelled(batch, {("orders", 1): "re-targeted by the API"}, 2600)
    assert batch.state is BatchState.FAILED
    assert batch.moves[("orders", 0)].error_message == "broker 4 is gone"


def test_pause_starts_nothing_and_resume_goes_on() -> None:
    batch = pause(submitted(spec(move(0), move(1))), 1500)
    assert batch.state is BatchState.PAUSED
    assert pause(batch, 1600) is batch
    with pytest.raises(ValueError, match="starts no move"):
        moves_started(batch, {("orders", 0): (1, 2, 3)}, 1700)
    assert resume(batch, 1800).state is BatchState.PENDING
    running = pause(moves_started(resume(batch, 1800), {("orders", 0): (1, 2, 3)}, 1900), 2000)
    # a paused batch's move in flight still completes; the batch waits for its pending one
    running = moves_completed(running, [("orders", 0)], 2100)
    assert running.state is BatchState.PAUSED
    assert resume(running, 2200).state is BatchState.RUNNING


def test_control_requests_the_state_does_not_allow() -> None:
    done = submitted(spec(move(0, (1, 2, 3))))
    for request in (pause, resume):
        with pytest.raises(BatchStateError, match="batch b-1 is completed: cannot"):
            request(done, 2000)
    with pytest.raises(BatchStateError):
        stop(done, 2000)


def test_stop_drops_pending_and_reverts_running_to_their_exact_order() -> None:
    c = cluster()
    c.replicas[("logs", 0)] = (3, 5, 6)
    batch = submitted(spec(move(0), PartitionSpec("logs", 0, (3, 6, 4), (3, 5, 6)), move(1)), c)
    batch = moves_started(batch, {("orders", 0): (1, 2, 3), ("logs", 0): (3, 5, 6)}, 2000)
    batch = moves_completed(batch, [("orders", 0)], 2500)
    stopped, reverts = stop(batch, 3000)
    assert stopped.state is BatchState.STOPPED
    assert reverts == (Revert("logs", 0, (3, 5, 6), (3, 6, 4)),)  # not [3, 6, 5]: Kafka's RS − AR
    assert {tp: m.state for tp, m in stopped.moves.items()} == {
        ("orders", 0): BatchMoveState.COMPLETED,
        ("logs", 0): BatchMoveState.CANCELLED,
        ("orders", 1): BatchMoveState.CANCELLED,
    }
    assert stop(stopped, 4000) == (stopped, ())


def test_rollback_reverses_completed_moves_in_their_original_order() -> None:
    c = Cluster({("t", p): r for p, r in enumerate([(3, 5, 6), (6, 1, 2), (2, 4, 1), (5, 3, 4)])})
    s = BatchSpec(
        "b-1",
        tuple(PartitionSpec("t", p, t) for p, t in enumerate([(3, 6, 4), (1, 2, 5), (4, 5, 6), (3, 4, 5)])),
        LIMITS,
        plan_id="p",
        priority=3,
        throttle_bytes_per_s=1024,
        strategy=(Strategy.SMALL_FIRST,),
    )
    batch = submit(s, {}, c.current, c.validate, 1000).batch
    batch = moves_started(batch, {("t", p): c.replicas[("t", p)] for p in (0, 1, 2)}, 2000)
    batch = moves_completed(batch, [("t", 1), ("t", 0)], 3000)
    c.replicas.update({("t", 0): (3, 6, 4), ("t", 1): (1, 2, 5)})
    outcome = rollback(batch, {"b-1": batch}, c.current, c.validate, 4000)
    assert outcome.reverts == (Revert("t", 2, (2, 4, 1), (4, 5, 6)),)  # the running move
    assert outcome.batch.state is BatchState.ROLLED_BACK
    assert outcome.batch.rollback_batch_id == "b-1.rollback"
    reverse = outcome.reverse.batch
    assert reverse.rollback_of == "b-1"
    assert reverse.spec.partitions == (
        PartitionSpec("t", 0, (3, 5, 6), (3, 6, 4)),
        PartitionSpec("t", 1, (6, 1, 2), (1, 2, 5)),
    )
    assert (reverse.spec.limits, reverse.spec.priority, reverse.spec.throttle_bytes_per_s) == (
        LIMITS,
        3,
        1024,
    )
    assert reverse.spec.strategy == s.strategy and reverse.state is BatchState.PENDING
    # asked again: the same reverse batch
    batches = {"b-1": outcome.batch, reverse.batch_id: reverse}
    again = rollback(outcome.batch, batches, c.current, c.validate, 5000)
    assert again.reverse.batch is reverse and not again.reverse.created


def test_rollback_of_a_partition_changed_since_is_stale() -> None:
    c = cluster()
    batch = moves_started(submitted(spec(move(0)), c), {("orders", 0): (1, 2, 3)}, 2000)
    batch = moves_completed(batch, [("orders", 0)], 3000)
    c.replicas[("orders", 0)] = (4, 6, 5)  # an operator re-ordered it since
    reverse = rollback(batch, {"b-1": batch}, c.current, c.validate, 4000).reverse.batch
    assert [o.error_code for o in partition_outcomes(reverse)] == [10002]


def test_owned_throttles_keep_the_first_value_they_replaced() -> None:
    batch = submitted(spec(move(0)))
    batch = throttles_recorded(batch, {4: {"leader.replication.throttled.rate": None}}, {"orders": {}}, 2000)
    batch = throttles_recorded(batch, {4: {"leader.replication.throttled.rate": "10"}}, {}, 2100)
    assert batch.broker_throttles == {4: {"leader.replication.throttled.rate": None}}
    batch = throttles_restored(batch, {4}, {"orders"}, 3000)
    assert (batch.broker_throttles, batch.topic_throttles, batch.updated_ms) == ({}, {}, 3000)


# --- recovery ------------------------------------------------------------------------------------


def test_reconcile_after_a_crash() -> None:
    batch = submitted(spec(*(move(p) for p in range(4)), PartitionSpec("logs", 0, (3, 5, 4), (3, 5, 6))))
    batch = moves_started(batch, {("orders", p): (1, 2, 3) for p in range(4)}, 2000)
    seen = {
        ("orders", 0): ObservedPartition((4, 5, 6, 1, 2, 3), target=(4, 5, 6)),  # still moving
        ("orders", 1): ObservedPartition((4, 5, 6)),  # completed meanwhile
        ("orders", 2): ObservedPartition((1, 2, 3)),  # its start never reached the topic znode
        ("orders", 3): ObservedPartition((2, 3, 1)),  # moved by someone else
        # ("logs", 0) is gone
    }
    after, reverts = reconcile(batch, seen.get, 5000)
    assert reverts == ()
    assert {tp: m.state for tp, m in after.moves.items()} == {
        ("orders", 0): BatchMoveState.RUNNING,
        ("orders", 1): BatchMoveState.COMPLETED,
        ("orders", 2): BatchMoveState.PENDING,
        ("orders", 3): BatchMoveState.CANCELLED,
        ("logs", 0): BatchMoveState.FAILED,
    }
    assert after.moves[("orders", 2)].started_at_ms is None
    assert after.moves[("orders", 3)].error_message == MOVED_ELSEWHERE
    assert after.moves[("logs", 0)].error_message == GONE


def test_reconcile_makes_the_reverts_a_stop_left_undone() -> None:
    batch = moves_started(submitted(spec(move(0), move(1))), {("orders", 0): (1, 2, 3)}, 2000)
    stopped, reverts = stop(batch, 3000)
    moving = ObservedPartition((4, 5, 6, 1, 2, 3), (4, 5, 6))
    # orders-1 never started: whoever moves it to the same target now, it is not this batch
    again, redo = reconcile(stopped, {("orders", 0): moving, ("orders", 1): moving}.get, 9000)
    assert again == stopped and redo == reverts == (Revert("orders", 0, (1, 2, 3), (4, 5, 6)),)
    assert reconcile(stopped, {("orders", 0): ObservedPartition((1, 2, 3))}.get, 9000) == (stopped, ())

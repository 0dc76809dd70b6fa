"""Event records, the event log (numbering, history, resume, subscribers), SSE framing and the
records a write's before and after make."""

from __future__ import annotations

import json
from collections.abc import Iterable

import pytest

from reassignd.contracts.records import (
    RECORD_CLASSES,
    TYPES,
    Audit,
    BatchStateChanged,
    BatchSubmitted,
    BrokerLost,
    BrokerRegistered,
    ControllerElected,
    ReassignmentCompleted,
    ReassignmentStarted,
    Record,
    TopicCreated,
    TopicDeleted,
    record_fields,
    record_type,
)
from reassignd.controller.effects.record_changes import assignment_changes, state_changes
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.stream import sse
from reassignd.stream.record_log import RecordLog
from reassignd.stream.records import Filters, make_record, parse_id
from reassignd.zk.codec import PartitionState

NOV_24 = 1_795_478_400_000  # 2026-11-24T00:00:00Z


def a_log(history: int = 100) -> RecordLog:
    clock = iter(range(NOV_24, NOV_24 + 10_000))
    return RecordLog(history, clock_ms=lambda: next(clock))


def test_a_record_is_its_fields_with_type_time_epoch_and_sequence() -> None:
    log = a_log()
    log.start_epoch(7)
    r = log.emit(ReassignmentStarted("orders", 3, (1, 2, 3), (4, 5, 6)))
    assert r.id == "7-1" and r.key == "orders-3"
    assert json.loads(r.to_json()) == {
        "type": "reassignment_started",
        "time": "2026-11-24T00:00:00.000Z",
        "controller_epoch": 7,
        "sequence": 1,
        "topic": "orders",
        "partition": 3,
        "original_replicas": [1, 2, 3],
        "target_replicas": [4, 5, 6],
    }
    assert log.emit(BatchSubmitted("b-1", None, "pending", 1, 0)).key == "b-1"
    assert log.emit(TopicDeleted("orders")).key == "orders"
    assert log.emit(ControllerElected(9000, 7)).key is None


def test_the_union_is_closed_and_every_type_distinct() -> None:
    assert len(TYPES) == len(RECORD_CLASSES) == 28
    assert "something_happened" not in TYPES


def test_an_audit_record_naming_a_reserved_field_is_refused() -> None:
    named = Audit(None, "http", "POST /v1/x", None, "c", "::1", named={"sequence": 3})
    with pytest.raises(ValueError, match="sequence"):
        make_record(named, 0, 1, 1)
    assert make_record(Audit(None, "http", "POST /v1/x", None, "c", "::1"), 0, 1, 1).type == "audit"


def test_the_log_keeps_the_typed_record_and_encodes_it_once_at_the_edge() -> None:
    log = a_log()
    change = ReassignmentStarted("orders", 3, (1, 2, 3), (4, 5, 6))
    r = log.emit(change)
    assert r.record is change and next(iter(log)).record is change
    framed = sse.frame(r)
    assert framed == sse.frame(r) and r.json in framed
    assert r.json is r.json  # encoded once, for every stream and the Kafka sender


def test_sequences_count_each_epoch_from_one_without_gaps() -> None:
    log = a_log()
    log.start_epoch(3)
    ids = [log.emit(BrokerLost(b, False)).id for b in (1, 2)]
    log.start_epoch(3)  # the same term again: no restart
    ids.append(log.emit(BrokerLost(3, False)).id)
    log.start_epoch(4)
    ids.append(log.emit(ControllerElected(9000, 4)).id)
    assert ids == ["3-1", "3-2", "3-3", "4-1"]


def test_resume_from_the_history_and_a_gap_when_it_no_longer_reaches() -> None:
    log = a_log(history=3)
    log.start_epoch(1)
    for b in range(5):
        log.emit(BrokerLost(b, False))  # 1-1 .. 1-5; 1-3 .. 1-5 kept
    after, complete = log.since(1, 3)
    assert [r.id for r in after] == ["1-4", "1-5"] and complete
    after, complete = log.since(1, 1)
    assert [r.id for r in after] == ["1-3", "1-4", "1-5"] and not complete
    log.start_epoch(2)
    log.emit(ControllerElected(9000, 2))
    after, complete = log.since(1, 5)
    assert [r.id for r in after] == ["2-1"] and complete
    assert log.since(2, 1) == ([], True)


async def test_subscribers_get_every_record_and_a_slow_one_is_closed() -> None:
    log = a_log()
    log.start_epoch(1)
    fast, slow = log.subscribe(), log.subscribe(maxsize=2)
    for b in range(3):
        log.emit(BrokerRegistered(b, None, 1))
    assert [fast.queue.get_nowait().sequence for _ in range(3)] == [1, 2, 3]  # type: ignore[union-attr]
    assert slow.closed and slow.queue.get_nowait() is None  # the end of its stream
    log.emit(BrokerRegistered(9, None, 1))
    assert slow.queue.empty()


def test_a_failing_sink_does_not_stop_the_log() -> None:
    log = a_log()
    seen: list[str] = []

    def broken(_: object) -> None:
        raise RuntimeError("boom")

    log.sinks += [broken, lambda r: seen.append(r.id)]
    log.emit(TopicDeleted("t"))
    assert seen == ["0-1"] and len(log.history) == 1


def test_filters_and_ids() -> None:
    log = a_log()
    moved = log.emit(ReassignmentCompleted("orders", 1, (1,), (2,), (2,)))
    batch = log.emit(BatchStateChanged("b-1", "running", "pending"))
    assert Filters().accepts(moved) and Filters().accepts(batch)
    assert Filters(types=frozenset({"batch_state_changed"})).accepts(batch)
    assert not Filters(types=frozenset({"batch_state_changed"})).accepts(moved)
    assert Filters(topics=frozenset({"orders"})).accepts(moved)
    assert not Filters(topics=frozenset({"orders"})).accepts(batch)
    assert Filters(batches=frozenset({"b-1"})).accepts(batch) and not Filters(
        batches=frozenset({"b-2"})
    ).accepts(batch)
    # an audit record's filters read what it named
    audited = log.emit(Audit(None, "http", "POST /v1/x", None, "c", "::1", named={"topic": "orders"}))
    assert Filters(topics=frozenset({"orders"})).accepts(audited) and audited.key == "orders"
    assert not Filters(batches=frozenset({"b-1"})).accepts(audited)
    assert parse_id("12-345") == (12, 345)
    assert parse_id("12") is None and parse_id("a-1") is None and parse_id("-1-2") is None


def test_sse_framing() -> None:
    log = a_log()
    log.start_epoch(2)
    r = log.emit(TopicCreated("t", 3, 2))
    assert sse.frame(r) == (
        b'id: 2-1\nevent: topic_created\ndata: {"type":"topic_created","time":"2026-11-24T00:00:00.000Z",'
        b'"controller_epoch":2,"sequence":1,"topic":"t","partitions":3,"replication_factor":2}\n\n'
    )
    assert sse.heartbeat().startswith(b":") and sse.heartbeat().endswith(b"\n\n")
    gap = sse.gap_frame("1-4", "2-1").decode()
    assert gap.startswith("event: gap\ndata: ") and json.loads(gap.split("data: ")[1]) == {
        "type": "gap",
        "last_event_id": "1-4",
        "first_available": "2-1",
    }


def ra(
    replicas: tuple[int, ...], adding: tuple[int, ...] = (), removing: tuple[int, ...] = ()
) -> ReplicaAssignment:
    return ReplicaAssignment(replicas, adding, removing)


def kinds(changes: Iterable[Record]) -> list[str]:
    return [record_type(c) for c in changes]


def test_assignment_changes_name_what_happened() -> None:
    tp = ("t", 0)
    moving = ra((4, 1, 2, 3), adding=(4,), removing=(3,))  # [1,2,3] moving to [4,1,2]
    assert kinds(assignment_changes(tp, ra((1, 2, 3)), moving)) == ["reassignment_started"]
    [started] = assignment_changes(tp, ra((1, 2, 3)), moving)
    assert isinstance(started, ReassignmentStarted)
    assert started.original_replicas == moving.origins
    assert started.target_replicas == moving.target_replicas
    elsewhere = ra((5, 1, 2, 3), adding=(5,), removing=(3,))
    assert kinds(assignment_changes(tp, moving, elsewhere)) == ["reassignment_retargeted"]
    assert kinds(assignment_changes(tp, moving, moving.completed())) == ["reassignment_completed"]
    assert kinds(assignment_changes(tp, moving, ra(moving.origins))) == ["reassignment_cancelled"]
    kept = ra((1, 2, 3, 4))  # stopped: the in-sync adding replica 4 stays
    assert kinds(assignment_changes(tp, moving, kept)) == ["reassignment_stopped"]
    assert kinds(assignment_changes(tp, ra((1, 2)), ra((2, 1)))) == []  # a reorder is no reassignment
    assert kinds(assignment_changes(tp, None, ra((1, 2)))) == []  # a new partition: its topic's record


def test_state_changes_name_leader_and_isr_changes() -> None:
    tp = ("t", 0)
    before = PartitionState(1, 5, 2, (1, 2, 3))
    assert kinds(state_changes(tp, before, PartitionState(2, 6, 2, (2, 3)))) == [
        "leader_changed",
        "isr_changed",
    ]
    assert kinds(state_changes(tp, before, PartitionState(1, 5, 2, (1, 2)))) == ["isr_changed"]
    assert kinds(state_changes(tp, before, PartitionState(1, 6, 3, (1, 2, 3)))) == []
    [leader] = state_changes(tp, before, PartitionState(2, 6, 2, (1, 2, 3)))
    assert record_fields(leader) == {
        "topic": "t",
        "partition": 0,
        "leader": 2,
        "previous_leader": 1,
        "leader_epoch": 6,
    }  # no "by": the controller's own change
    [by_broker] = state_changes(tp, before, PartitionState(2, 6, 2, (1, 2, 3)), by="broker")
    assert record_fields(by_broker)["by"] == "broker"

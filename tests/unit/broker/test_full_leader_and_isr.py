"""The agent's handling of full LeaderAndIsr sets (KIP-516's ``type: full``), driven as pure code:
a complete set deletes exactly the hosted replicas it does not name; anything less deletes
nothing."""

from __future__ import annotations

from reassignd.broker.state import ReplicaManager
from reassignd.control.protocol import (
    ControlResponse,
    FullSet,
    Header,
    LeaderAndIsrRequest,
    StopReplicaPartition,
    StopReplicaRequest,
    WirePartitionState,
)
from reassignd.control.wire import STALE_BROKER_EPOCH, STALE_CONTROLLER_EPOCH

BROKER = 1
EPOCH = 1001  # the broker epoch
TP = tuple[str, int]


def manager() -> ReplicaManager:
    mgr = ReplicaManager(BROKER, replication_bytes_per_s=1e9, now=0.0)
    mgr.broker_epoch = EPOCH
    return mgr


def ws(topic: str, p: int, *, epoch: int = 1, controller_epoch: int = 7) -> WirePartitionState:
    return WirePartitionState(topic, p, controller_epoch, BROKER, epoch, (BROKER,), 0, (BROKER, 2))


def incremental(*tps: TP, controller_epoch: int = 7, epoch: int = 1) -> LeaderAndIsrRequest:
    return LeaderAndIsrRequest(
        Header(9000, controller_epoch, EPOCH), tuple(ws(t, p, epoch=epoch) for t, p in tps)
    )


def chunk(
    set_id: int,
    total: int,
    *tps: TP,
    controller_epoch: int = 7,
    broker_epoch: int = EPOCH,
    epoch: int = 1,
    without: tuple[TP, ...] = (),
    kept: tuple[str, ...] = (),
) -> LeaderAndIsrRequest:
    return LeaderAndIsrRequest(
        Header(9000, controller_epoch, broker_epoch),
        tuple(ws(t, p, epoch=epoch, controller_epoch=controller_epoch) for t, p in tps),
        (),
        FullSet(set_id, total, kept),
        without,
    )


def hosting(*tps: TP) -> ReplicaManager:
    mgr = manager()
    assert mgr.leader_and_isr(incremental(*tps), 0.0).error_code == 0
    assert set(mgr.replicas) == set(tps)
    return mgr


A0, A1, B0, GONE0, GONE1 = ("a", 0), ("a", 1), ("b", 0), ("gone", 0), ("gone", 1)


def test_a_complete_set_deletes_exactly_the_replicas_it_does_not_name() -> None:
    mgr = hosting(A0, A1, GONE0, GONE1)
    response = mgr.leader_and_isr(chunk(1, 3, A0, A1, B0, epoch=2), 1.0)
    assert response.error_code == 0
    assert response.full_complete is True
    assert response.deleted_replicas == (GONE0, GONE1)
    assert set(mgr.replicas) == {A0, A1, B0}
    assert mgr.replicas[A0].leader_epoch == 2  # states applied as an incremental request would
    report = mgr.report(1.0)
    assert (report.full_requests_completed, report.stray_replicas_deleted) == (1, 2)
    wire = response.to_json()
    assert wire["full_complete"] is True
    assert wire["deleted_replicas"] == [{"topic": "gone", "partition": 0}, {"topic": "gone", "partition": 1}]
    assert ControlResponse.from_json(wire) == response


def test_named_partitions_with_stale_epochs_or_without_state_and_kept_topics_stay() -> None:
    mgr = hosting(A0, A1, GONE0, ("broken", 0))
    response = mgr.leader_and_isr(chunk(1, 2, A0, without=(A1,), kept=("broken",)), 1.0)
    assert [e.error_code for e in response.partition_errors] == [STALE_CONTROLLER_EPOCH]  # A0's epoch 1 again
    assert response.deleted_replicas == (GONE0,)
    assert set(mgr.replicas) == {A0, A1, ("broken", 0)}


def test_chunks_complete_the_set_only_once_every_partition_was_named() -> None:
    mgr = hosting(A0, A1, B0, GONE0)
    first = mgr.leader_and_isr(chunk(5, 3, A0), 1.0)
    assert (first.full_complete, first.deleted_replicas) == (False, ())
    resent = mgr.leader_and_isr(chunk(5, 3, A0), 1.0)  # a resend counts nothing twice
    assert resent.full_complete is False
    second = mgr.leader_and_isr(chunk(5, 3, B0, without=(A1,)), 1.0)
    assert (second.full_complete, second.deleted_replicas) == (True, (GONE0,))
    assert set(mgr.replicas) == {A0, A1, B0}
    # a resent chunk of the completed set deletes nothing, even what arrived since
    assert mgr.leader_and_isr(incremental(GONE1), 2.0).error_code == 0
    again = mgr.leader_and_isr(chunk(5, 3, B0), 2.0)
    assert (again.full_complete, again.deleted_replicas) == (True, ())
    assert GONE1 in mgr.replicas
    assert mgr.full_requests_completed == 1


def test_an_incomplete_set_deletes_nothing_and_a_newer_set_discards_it() -> None:
    mgr = hosting(A0, A1, GONE0)
    mgr.leader_and_isr(chunk(1, 2, A0), 1.0)  # its second chunk never comes (dropped, or the
    assert set(mgr.replicas) == {A0, A1, GONE0}  # controller died)
    newer = mgr.leader_and_isr(chunk(2, 2, A1), 1.0)
    assert newer.full_complete is False  # set 1's A0 does not count towards set 2
    late = mgr.leader_and_isr(chunk(1, 2, A1), 1.0)  # a chunk of the replaced set is ignored
    assert (late.full_complete, late.deleted_replicas) == (False, ())
    assert set(mgr.replicas) == {A0, A1, GONE0}
    done = mgr.leader_and_isr(chunk(2, 2, A0), 1.0)
    assert (done.full_complete, done.deleted_replicas) == (True, (GONE0,))


def test_a_new_controller_or_broker_epoch_starts_a_new_set() -> None:
    mgr = hosting(A0, A1, GONE0)
    mgr.leader_and_isr(chunk(9, 2, A0), 1.0)
    response = mgr.leader_and_isr(chunk(1, 2, A1, controller_epoch=8), 1.0)  # lower id, newer epoch
    assert response.full_complete is False
    done = mgr.leader_and_isr(chunk(1, 2, A0, controller_epoch=8, epoch=2), 1.0)
    assert (done.full_complete, done.deleted_replicas) == (True, (GONE0,))


def test_a_full_request_from_a_stale_controller_or_broker_epoch_deletes_nothing() -> None:
    mgr = hosting(A0, GONE0)
    assert mgr.leader_and_isr(incremental(A1, controller_epoch=8), 0.0).error_code == 0
    stale = mgr.leader_and_isr(chunk(1, 1, A0, epoch=5), 1.0)  # controller epoch 7 < 8
    assert stale.error_code == STALE_CONTROLLER_EPOCH and stale.deleted_replicas == ()
    wrong = mgr.leader_and_isr(chunk(2, 1, A0, controller_epoch=8, broker_epoch=EPOCH - 1), 1.0)
    assert wrong.error_code == STALE_BROKER_EPOCH and wrong.deleted_replicas == ()
    assert set(mgr.replicas) == {A0, A1, GONE0}
    assert mgr.pending_full is None and mgr.full_requests_completed == 0
    # a stale chunk cannot complete a current set either
    mgr.leader_and_isr(chunk(3, 2, A0, controller_epoch=8, epoch=6), 1.0)
    mgr.leader_and_isr(chunk(3, 2, A1, epoch=6), 1.0)
    assert set(mgr.replicas) == {A0, A1, GONE0}


def test_replicas_created_or_deleted_while_a_set_is_incomplete() -> None:
    mgr = hosting(A0, GONE0, GONE1)
    mgr.leader_and_isr(chunk(1, 2, A0), 1.0)
    assert mgr.leader_and_isr(incremental(B0), 1.0).error_code == 0  # sent after the set was built
    stop = StopReplicaRequest(Header(9000, 7, EPOCH), (StopReplicaPartition("gone", 1, -1, True),))
    assert mgr.stop_replica(stop, 1.0).error_code == 0
    done = mgr.leader_and_isr(chunk(1, 2, A1), 1.0)
    assert done.deleted_replicas == (GONE0,)  # B0 kept, GONE1 already gone
    assert set(mgr.replicas) == {A0, A1, B0}


def test_an_empty_set_deletes_everything_and_an_inconsistent_one_nothing() -> None:
    mgr = hosting(A0, GONE0)
    over = mgr.leader_and_isr(chunk(1, 1, A0, A1), 1.0)  # names 2 of an announced 1
    assert (over.full_complete, over.deleted_replicas) == (False, ())
    assert set(mgr.replicas) == {A0, A1, GONE0}
    empty = mgr.leader_and_isr(chunk(2, 0), 1.0)
    assert (empty.full_complete, empty.deleted_replicas) == (True, (A0, A1, GONE0))
    assert not mgr.replicas and not mgr.led and not mgr.followed

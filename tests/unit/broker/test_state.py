"""The agent's replica manager and replication between agents, driven as pure code: two managers
exchange fetch requests directly, with simulated time."""

from __future__ import annotations

from reassignd.broker.bandwidth import BURST_S
from reassignd.broker.isr_plan import isr_conflicted, isr_written, plan_isr_updates
from reassignd.broker.replica import ReplicaRole
from reassignd.broker.replication import fetch_leaders, serve_fetch
from reassignd.broker.sim_config import BrokerSimConfig, topic_sim_config
from reassignd.broker.state import ReplicaManager, control_url
from reassignd.control.fetch import (
    FENCED_LEADER_EPOCH,
    NOT_LEADER_OR_FOLLOWER,
    UNKNOWN_LEADER_EPOCH,
    FetchPartition,
    FetchRequest,
)
from reassignd.control.protocol import (
    Header,
    LeaderAndIsrRequest,
    LiveBroker,
    StopReplicaPartition,
    StopReplicaRequest,
    UpdateMetadataRequest,
    WirePartitionState,
)
from reassignd.control.wire import STALE_BROKER_EPOCH, STALE_CONTROLLER_EPOCH, UNKNOWN_TOPIC_OR_PARTITION
from reassignd.zk.codec import PartitionState
from tests.unit.broker.state_helpers import (
    LAG_S,
    TP,
    GiB,
    cluster,
    fetch_round,
    header,
    lai,
    manager,
    pstate,
    run,
)


def codes(response: object) -> list[int]:
    return [e.error_code for e in response.partition_errors]  # type: ignore[attr-defined]


def test_stale_broker_epoch_and_stale_controller_epoch() -> None:
    mgr = manager(1)
    stale_broker = LeaderAndIsrRequest(Header(9000, 7, 999), (pstate(),))
    assert mgr.leader_and_isr(stale_broker, 0.0).error_code == STALE_BROKER_EPOCH
    assert mgr.controller_epoch == -1  # a refused request teaches nothing
    assert mgr.leader_and_isr(lai(mgr, pstate(), controller_epoch=7), 0.0).error_code == 0
    response = mgr.leader_and_isr(lai(mgr, pstate(epoch=2), controller_epoch=6), 0.0)
    assert response.error_code == STALE_CONTROLLER_EPOCH
    assert codes(response) == [STALE_CONTROLLER_EPOCH]
    assert mgr.replicas[TP].leader_epoch == 1
    unregistered = ReplicaManager(3, replication_bytes_per_s=1, now=0.0)
    um = UpdateMetadataRequest(Header(9000, 7, 0), (), ())
    assert unregistered.update_metadata(um, 0.0).error_code == STALE_BROKER_EPOCH


def test_leader_epoch_must_be_newer_and_the_broker_a_replica() -> None:
    mgr = manager(1)
    assert codes(mgr.leader_and_isr(lai(mgr, pstate(epoch=3)), 0.0)) == [0]
    assert codes(mgr.leader_and_isr(lai(mgr, pstate(epoch=3)), 1.0)) == [STALE_CONTROLLER_EPOCH]  # resend
    assert codes(mgr.leader_and_isr(lai(mgr, pstate(epoch=2)), 1.0)) == [STALE_CONTROLLER_EPOCH]
    other = pstate(leader=2, epoch=1, replicas=(2, 3), isr=(2, 3))
    not_mine = WirePartitionState("t", 5, 7, 2, 1, (2,), 0, (2, 3))
    assert codes(mgr.leader_and_isr(lai(mgr, not_mine), 1.0)) == [UNKNOWN_TOPIC_OR_PARTITION]
    assert ("t", 5) not in mgr.replicas
    assert codes(mgr.leader_and_isr(lai(mgr, other), 1.0)) == [STALE_CONTROLLER_EPOCH]  # epoch checked first
    assert mgr.replicas[TP].leader_epoch == 3


def test_stop_replica_stops_or_deletes_and_is_idempotent() -> None:
    mgr = manager(2)
    mgr.leader_and_isr(lai(mgr, pstate(epoch=4, isr=(1, 2))), 0.0)
    assert fetch_leaders(mgr) == {1}

    def stop(epoch: int, delete: bool) -> list[int]:
        req = StopReplicaRequest(header(mgr), (StopReplicaPartition("orders", 0, epoch, delete),))
        return codes(mgr.stop_replica(req, 1.0))

    assert stop(3, delete=False) == [FENCED_LEADER_EPOCH]
    assert stop(4, delete=False) == [0]
    assert mgr.replicas[TP].role is ReplicaRole.STOPPED and fetch_leaders(mgr) == set()
    assert [r.topic for r in mgr.report(1.0).replicas] == ["orders"]
    assert stop(-2, delete=True) == [0]
    assert TP not in mgr.replicas and mgr.report(1.0).replicas == ()
    assert stop(4, delete=True) == [0]  # a resend after a lost response


def test_update_metadata_teaches_live_brokers_endpoints_and_the_followers_isr() -> None:
    mgr = manager(2)
    mgr.leader_and_isr(lai(mgr, pstate(isr=(1,))), 0.0)
    live = (
        LiveBroker(1, "r0", ("PLAINTEXT://h1:9092", "CONTROL://h1:19092")),
        LiveBroker(2, None, ("PLAINTEXT://h2:9093",)),
    )
    um = UpdateMetadataRequest(header(mgr), (pstate(isr=(1, 2), partition_epoch=1),), live)
    assert mgr.update_metadata(um, 1.0).error_code == 0
    assert mgr.live_brokers == frozenset({1, 2})
    assert mgr.endpoints == {1: "http://h1:19092", 2: "http://h2:9093"}
    assert mgr.replicas[TP].in_isr and mgr.replicas[TP].partition_epoch == 1
    assert control_url(["SSL://x:1"]) is None
    assert LiveBroker.from_json({"broker_id": 1, "host": "h", "port": 9}).endpoints[1] == "CONTROL://h:9"


def test_a_new_follower_starts_empty_catches_up_and_the_leader_adds_it_to_the_isr() -> None:
    leader, follower = cluster(initial=100 * GiB, rate=1000 * GiB)
    assert follower.replicas[TP].log_end_offset == 0
    assert leader.replicas[TP].log_end_offset == 100 * GiB
    now = run(leader, follower, 0.5)
    assert follower.replicas[TP].log_end_offset == 100 * GiB
    updates = plan_isr_updates(leader, now, LAG_S)
    assert [(u.tp, u.isr, u.partition_epoch, u.controller_epoch) for u in updates] == [(TP, (1, 2), 0, 7)]
    isr_written(leader, updates[0], version=1)
    assert leader.replicas[TP].isr == (1, 2) and leader.replicas[TP].partition_epoch == 1
    assert plan_isr_updates(leader, now, LAG_S) == []
    fetch_round(leader, follower, now + 0.1)
    report = {r.topic: r for r in follower.report(now + 0.1).replicas}
    assert report["orders"].in_isr and report["orders"].lag_bytes == 0 and not report["orders"].leader


def test_transfer_is_bounded_by_the_replication_bandwidth() -> None:
    leader, follower = cluster(initial=10_000_000, rate=100_000)
    run(leader, follower, 10.0)
    moved = follower.replicas[TP].log_end_offset
    # 10 s at 100 kB/s, plus at most one burst (BURST_S) from the full bucket at start
    assert 900_000 <= moved <= 100_000 * (10 + BURST_S)
    assert follower.report(10.0).replicas[0].fetch_bytes_per_s > 50_000


def test_a_slow_follower_stays_out_of_the_isr_until_its_bandwidth_is_raised() -> None:
    leader, follower = cluster(initial=1_000_000, produce=10_000, rate=5_000)
    now = run(leader, follower, 5.0)
    assert plan_isr_updates(leader, now, LAG_S) == []
    assert follower.replicas[TP].lag_bytes > 1_000_000
    follower.set_broker_config(BrokerSimConfig(replication_bytes_per_s=10 * GiB), now)
    leader.set_broker_config(BrokerSimConfig(replication_bytes_per_s=10 * GiB), now)
    now = run(leader, follower, now + 1.0, start=now)
    assert [u.isr for u in plan_isr_updates(leader, now, LAG_S)] == [(1, 2)]


def test_the_follower_throttle_applies_to_listed_replicas_outside_the_isr_only() -> None:
    leader, follower = cluster(initial=10_000_000, rate=10 * GiB)
    throttled = topic_sim_config(
        {"reassignd.sim.initial.bytes": "10000000", "follower.replication.throttled.replicas": "0:2"}
    )
    follower.set_topic_config("orders", throttled, 0.0)
    follower.set_broker_config(BrokerSimConfig(10 * GiB, follower_throttled_rate=100_000), 0.0)
    now = run(leader, follower, 5.0)
    assert 400_000 <= follower.replicas[TP].log_end_offset <= 600_000
    follower.set_topic_config(
        "orders", topic_sim_config({"follower.replication.throttled.replicas": "0:3"}), now
    )
    run(leader, follower, now + 0.5, start=now)
    assert follower.replicas[TP].log_end_offset == 10_000_000


def test_the_leader_throttle_applies_to_its_listed_replicas() -> None:
    leader, follower = cluster(initial=10_000_000, rate=10 * GiB)
    leader.set_topic_config(
        "orders",
        topic_sim_config(
            {"reassignd.sim.initial.bytes": "1", "leader.replication.throttled.replicas": "0:1"}
        ),
        0.0,
    )
    leader.set_broker_config(BrokerSimConfig(10 * GiB, leader_throttled_rate=200_000), 0.0)
    run(leader, follower, 5.0)
    assert 900_000 <= follower.replicas[TP].log_end_offset <= 200_000 * (5 + BURST_S)


def test_a_lagging_follower_leaves_the_isr_and_a_dead_one_at_once() -> None:
    leader, _ = cluster(initial=1000)
    leader.leader_and_isr(lai(leader, pstate(epoch=2, isr=(1, 2))), 0.0)
    assert plan_isr_updates(leader, LAG_S, LAG_S) == []
    assert [u.isr for u in plan_isr_updates(leader, LAG_S + 0.5, LAG_S)] == [(1,)]
    um = UpdateMetadataRequest(header(leader), (), (LiveBroker(1, None, ("CONTROL://h:1",)),))
    leader.update_metadata(um, 1.0)
    assert [u.isr for u in plan_isr_updates(leader, 1.0, LAG_S)] == [(1,)]


def test_an_isr_write_conflict_is_retried_only_by_the_same_leader_epoch() -> None:
    leader, _ = cluster(initial=0)
    leader.leader_and_isr(lai(leader, pstate(epoch=2, isr=(1, 2))), 0.0)
    [update] = plan_isr_updates(leader, 100.0, LAG_S)
    assert isr_conflicted(leader, update, PartitionState(1, 2, 8, (1, 2)), version=5)
    assert leader.replicas[TP].partition_epoch == 5 and leader.replicas[TP].controller_epoch == 8
    [retry] = plan_isr_updates(leader, 100.0, LAG_S)
    assert (retry.partition_epoch, retry.controller_epoch) == (5, 8)
    assert not isr_conflicted(leader, retry, PartitionState(2, 3, 8, (2,)), version=6)
    assert plan_isr_updates(leader, 100.0, LAG_S) == []


def test_the_leader_refuses_fetches_it_cannot_serve() -> None:
    leader, _ = cluster(initial=1000)

    def fetch(epoch: int, replica_id: int = 2, partition: int = 0) -> int:
        req = FetchRequest(replica_id, (FetchPartition("orders", partition, epoch, 0, 100),))
        return serve_fetch(leader, req, 1.0).partitions[0].error_code

    assert fetch(0) == FENCED_LEADER_EPOCH
    assert fetch(2) == UNKNOWN_LEADER_EPOCH
    assert fetch(1, replica_id=3) == NOT_LEADER_OR_FOLLOWER
    assert fetch(1, partition=1) == NOT_LEADER_OR_FOLLOWER
    assert fetch(1) == 0


def test_a_leader_grows_and_reports() -> None:
    leader, _ = cluster(initial=1000, produce=100.0)
    [info] = leader.report(10.0).replicas
    assert (info.leader, info.log_end_offset, info.lag_bytes, info.in_isr) == (True, 2000, 0, True)

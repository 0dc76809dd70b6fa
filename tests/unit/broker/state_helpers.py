"""Helpers of the broker agent's state tests: a cluster, headers, partition states and a manager run."""

from __future__ import annotations

from reassignd.broker.replication import apply_fetch, fetch_request, serve_fetch
from reassignd.broker.sim_config import topic_sim_config
from reassignd.broker.state import ReplicaManager
from reassignd.control.protocol import Header, LeaderAndIsrRequest, WirePartitionState

GiB = 1024**3


TP = ("orders", 0)


LAG_S = 30.0


def manager(broker_id: int, rate: float = 100 * 1024**2) -> ReplicaManager:
    mgr = ReplicaManager(broker_id, replication_bytes_per_s=rate, now=0.0)
    mgr.broker_epoch = 1000 + broker_id
    return mgr


def header(mgr: ReplicaManager, controller_epoch: int = 7) -> Header:
    assert mgr.broker_epoch is not None
    return Header(9000, controller_epoch, mgr.broker_epoch)


def pstate(
    *,
    leader: int = 1,
    epoch: int = 1,
    isr: tuple[int, ...] = (1,),
    replicas: tuple[int, ...] = (1, 2),
    is_new: bool = False,
    partition_epoch: int = 0,
) -> WirePartitionState:
    return WirePartitionState("orders", 0, 7, leader, epoch, isr, partition_epoch, replicas, is_new=is_new)


def lai(mgr: ReplicaManager, *states: WirePartitionState, controller_epoch: int = 7) -> LeaderAndIsrRequest:
    return LeaderAndIsrRequest(header(mgr, controller_epoch), states)


def cluster(
    initial: int, produce: float = 0.0, rate: float = 100 * 1024**2
) -> tuple[ReplicaManager, ReplicaManager]:
    """Broker 1 leads orders-0 (created with ``initial`` bytes); broker 2 is an adding replica."""
    leader, follower = manager(1, rate), manager(2, rate)
    config = topic_sim_config(
        {"reassignd.sim.initial.bytes": str(initial), "reassignd.sim.produce.bytes.per.s": str(produce)}
    )
    for mgr in (leader, follower):
        mgr.set_topic_config("orders", config, 0.0)
    leader.leader_and_isr(lai(leader, pstate(isr=(1,), is_new=True)), 0.0)
    follower.leader_and_isr(lai(follower, pstate(isr=(1,), is_new=True)), 0.0)
    return leader, follower


def fetch_round(leader: ReplicaManager, follower: ReplicaManager, now: float) -> None:
    request = fetch_request(follower, leader.broker_id, now)
    assert request is not None
    apply_fetch(follower, leader.broker_id, request, serve_fetch(leader, request, now), now)


def run(
    leader: ReplicaManager, follower: ReplicaManager, until: float, start: float = 0.0, step: float = 0.1
) -> float:
    now = start
    while now < until - 1e-9:
        now = round(now + step, 6)
        fetch_round(leader, follower, now)
    return now

"""ISR changes as the partition leader, the pure part: which partitions get which ISR, and what a
write's outcome does to memory. isr.py does the ZooKeeper writes and notifications."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from reassignd.broker import replica as rm
from reassignd.broker.replica import Role, TopicPartition
from reassignd.broker.state import ReplicaManager
from reassignd.zk.codec import PartitionState


@dataclass(frozen=True, slots=True)
class IsrUpdate:
    """Set the state znode of ``tp`` to ``isr`` at version ``partition_epoch``."""

    tp: TopicPartition
    leader: int
    leader_epoch: int
    partition_epoch: int
    controller_epoch: int  # kept from the state the leader learned
    isr: tuple[int, ...]

    @property
    def state(self) -> PartitionState:
        return PartitionState(self.leader, self.leader_epoch, self.controller_epoch, self.isr)


def plan_isr_updates(
    mgr: ReplicaManager,
    now: float,
    lag_max_s: float,
    tps: Iterable[TopicPartition] | None = None,
    in_flight: frozenset[TopicPartition] = frozenset(),
) -> list[IsrUpdate]:
    """The ISR writes the leader wants for ``tps`` (default: every partition it leads)."""
    candidates = mgr.replicas.keys() if tps is None else tps
    updates = []
    for tp in sorted(set(candidates) - in_flight):
        r = mgr.replicas.get(tp)
        if r is None or r.role is not Role.LEADER or r.isr_fenced:
            continue
        r = mgr.grown(r, now)
        isr = rm.desired_isr(r, mgr.broker_id, now, lag_max_s, mgr.live_brokers)
        if set(isr) != set(r.isr):
            updates.append(
                IsrUpdate(tp, mgr.broker_id, r.leader_epoch, r.partition_epoch, r.controller_epoch, isr)
            )
    return updates


def _current(mgr: ReplicaManager, update: IsrUpdate) -> rm.Replica | None:
    r = mgr.replicas.get(update.tp)
    if r is None or r.role is not Role.LEADER or r.leader_epoch != update.leader_epoch:
        return None
    return r


def isr_written(mgr: ReplicaManager, update: IsrUpdate, version: int) -> None:
    """The write succeeded (new znode version ``version``): commit it to memory, unless a newer
    LeaderAndIsr arrived meanwhile (the controller then already knows better)."""
    r = _current(mgr, update)
    if r is not None and r.partition_epoch == update.partition_epoch:
        mgr.replicas[update.tp] = rm.with_isr(r, update.isr, version, mgr.broker_id)


def isr_conflicted(
    mgr: ReplicaManager, update: IsrUpdate, zk_state: PartitionState | None, version: int
) -> bool:
    """The write hit a version conflict and the znode was re-read (``None``: gone). Adopt it if this
    agent still leads the same epoch (True: retry), else stop changing this ISR (False)."""
    r = _current(mgr, update)
    if r is None:
        return False
    if zk_state is None:
        mgr.replicas[update.tp] = rm.with_zk_state(
            r,
            mgr.broker_id,
            leader=-1,
            leader_epoch=-1,
            controller_epoch=r.controller_epoch,
            isr=r.isr,
            version=-1,
        )
        return False
    adopted = rm.with_zk_state(
        r,
        mgr.broker_id,
        leader=zk_state.leader,
        leader_epoch=zk_state.leader_epoch,
        controller_epoch=zk_state.controller_epoch,
        isr=zk_state.isr,
        version=version,
    )
    mgr.replicas[update.tp] = adopted
    return not adopted.isr_fenced

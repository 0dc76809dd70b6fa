"""Pure partition-state decisions of Kafka's partition state machine.

Leader election (first live ISR member in assignment order), ISR shrink on broker failure (never
to empty), and the initial state of a new partition. Each returns the new state, or ``None`` when
nothing changes. Writing it (fenced, at the known partition epoch) is the shell's job.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from reassignd.zk.codec import PartitionState

NO_LEADER = -1


def initial_state(
    replicas: Sequence[int], live: Collection[int], controller_epoch: int
) -> PartitionState | None:
    """A new partition: leader = first live replica, ISR = live replicas, leader epoch 0.
    ``None`` when no replica is live (the partition stays new until one appears)."""
    live_replicas = tuple(r for r in replicas if r in live)
    if not live_replicas:
        return None
    return PartitionState(live_replicas[0], 0, controller_epoch, live_replicas)


def offline_election(
    replicas: Sequence[int],
    state: PartitionState,
    live: Collection[int],
    controller_epoch: int,
    *,
    unclean: bool = False,
) -> PartitionState | None:
    """Elect a leader for a partition whose leader is not live (Kafka's
    offlinePartitionLeaderElection): the first replica in assignment order that is live and in
    the ISR; with ``unclean``, any live replica. ``None`` when the leader is live or no
    candidate exists."""
    if state.leader != NO_LEADER and state.leader in live:
        return None
    candidates = [r for r in replicas if r in live and r in state.isr]
    if candidates:
        leader = candidates[0]
        isr = tuple(r for r in state.isr if r in live)
    elif unclean:
        live_replicas = [r for r in replicas if r in live]
        if not live_replicas:
            return None
        leader = live_replicas[0]
        isr = (leader,)
    else:
        return None
    return PartitionState(leader, state.leader_epoch + 1, controller_epoch, isr)


def after_broker_failure(
    replicas: Sequence[int],
    state: PartitionState,
    live: Collection[int],
    controller_epoch: int,
    *,
    unclean: bool = False,
) -> PartitionState | None:
    """The state after some brokers died: a new leader if the leader died (first live ISR member
    in assignment order), dead replicas out of the ISR — but the ISR never becomes empty: when
    nobody in it is live, the leader becomes −1 and the ISR keeps one member (the last leader if
    it was in the ISR, the way Kafka's one-by-one removal ends). ``None`` when nothing changes."""
    live_isr = tuple(r for r in state.isr if r in live)
    leader_live = state.leader != NO_LEADER and state.leader in live
    if leader_live and live_isr == state.isr:
        return None
    if leader_live:
        return PartitionState(state.leader, state.leader_epoch + 1, controller_epoch, live_isr or state.isr)
    elected = offline_election(replicas, state, live, controller_epoch, unclean=unclean)
    if elected is not None:
        return elected
    if not state.isr:
        kept: tuple[int, ...] = ()
    elif state.leader in state.isr:
        kept = (state.leader,)
    else:
        kept = (state.isr[0],)
    if state.leader == NO_LEADER and kept == state.isr:
        return None
    return PartitionState(NO_LEADER, state.leader_epoch + 1, controller_epoch, kept)

"""Pure partition-state decisions of Kafka's partition state machine.

Leader election (first live ISR member in assignment order; with unclean election allowed, the
first live replica when no ISR member lives), ISR shrink on broker failure (never to empty), and
the initial state of a new partition. Each returns the new state, or ``None`` when nothing
changes. Writing it (fenced, at the known partition epoch) is the shell's job, as is reading
whether the topic allows unclean elections (only for partitions where
:func:`needs_unclean_election` says it matters).
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


def needs_unclean_election(replicas: Sequence[int], state: PartitionState, live: Collection[int]) -> bool:
    """Whether only an unclean election could give this partition a leader now: its leader is not
    live, no replica is both live and in the ISR (an ISR member that is no longer a replica — a
    cancel took it out — does not count), and some replica is live (Kafka's
    partitionsWithNoLiveInSyncReplicas, narrowed to those with a candidate)."""
    if state.leader != NO_LEADER and state.leader in live:
        return False
    if any(r in live and r in state.isr for r in replicas):
        return False
    return any(r in live for r in replicas)


def is_unclean_election(before: PartitionState, after: PartitionState) -> bool:
    """Whether ``after`` elected a leader from outside ``before``'s ISR (data may be lost)."""
    return after.leader not in (NO_LEADER, before.leader, *before.isr)


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
    the ISR; with ``unclean``, when no ISR member is live, the first live replica, whose ISR is
    then itself alone (Kafka's leaderForOffline). ``None`` when the leader is live or no
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
    it was in the ISR, the way Kafka's one-by-one removal ends) — unless ``unclean`` elects a live
    replica from outside the ISR. ``None`` when nothing changes."""
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

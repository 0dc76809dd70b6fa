"""The replica model, pure: one partition's log on one agent, as leader or follower.

Sizes are bytes (log start/end offsets count bytes), time is an injected ``now`` in seconds.
Every function returns a new :class:`Replica`; nothing here does I/O or reads a clock.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping

import msgspec
from msgspec.structs import replace

from reassignd.broker.isr_decision import (
    UNKNOWN_OFFSET,
    FollowerView,
    IsrView,
    decide_isr,
    lag_deadline_s,
)
from reassignd.control.protocol import WirePartitionState
from reassignd.topic_partition import TopicPartition

RATE_WINDOW_S = 1.0  # time constant of the fetch-rate estimate


class ReplicaRole(enum.Enum):
    LEADER = "leader"
    FOLLOWER = "follower"
    STOPPED = "stopped"  # StopReplica without delete: the log stays, nothing is fetched or served


class RateMeter(msgspec.Struct, frozen=True, gc=False):
    """An exponentially decaying byte-rate estimate (time constant RATE_WINDOW_S)."""

    value: float = 0.0
    at_s: float = 0.0

    def rate(self, now: float) -> float:
        return self.value * math.exp(-max(0.0, now - self.at_s) / RATE_WINDOW_S)

    def record(self, n: int, now: float) -> RateMeter:
        return RateMeter(self.rate(now) + n / RATE_WINDOW_S, max(now, self.at_s))


class FollowerProgress(msgspec.Struct, frozen=True, gc=False):
    """What the leader knows of one follower in the current leader epoch (Kafka's remote replica
    state; :func:`became` resets it at each new leader epoch)."""

    log_end_offset: int = UNKNOWN_OFFSET  # its fetch position (UNKNOWN_OFFSET: no fetch this epoch)
    last_caught_up_s: float | None = None
    last_fetch_s: float | None = None
    last_fetch_leader_leo: int | None = None
    caught_up: bool = False  # its latest fetch had everything the leader had at its previous fetch
    # its latest fetch reached the leader's high watermark (and the epoch's start offset) as the
    # leader had it when the fetch came: it may join the ISR, and holds the high watermark back
    # meanwhile (Kafka's maximal ISR while an expansion is pending)
    reached_hw: bool = False

    def fetched(
        self, fetch_offset: int, leader_leo: int, now: float, reached_hw: bool = False
    ) -> FollowerProgress:
        """Kafka's rule: caught up now if it asked from the leader's end; caught up as of its
        previous fetch if it asked from where the leader's end was then."""
        caught_at = self.last_caught_up_s
        caught_up = True
        if fetch_offset >= leader_leo:
            caught_at = now
        elif (
            self.last_fetch_leader_leo is not None
            and self.last_fetch_s is not None
            and fetch_offset >= self.last_fetch_leader_leo
        ):
            caught_at = self.last_fetch_s if caught_at is None else max(caught_at, self.last_fetch_s)
        else:
            caught_up = False
        return FollowerProgress(fetch_offset, caught_at, now, leader_leo, caught_up, reached_hw)


class Replica(msgspec.Struct, frozen=True):
    """One partition's replica on this agent. A msgspec struct, as its parts are: the agents
    replace one on every fetch, ISR and LeaderAndIsr change (building one is about 10x cheaper
    than a frozen dataclass; the agents' CPU sets the pace of a large move)."""

    topic: str
    partition: int
    role: ReplicaRole
    leader: int  # the leader's broker id (-1: none)
    leader_epoch: int
    partition_epoch: int  # the state znode's version, as last learned
    controller_epoch: int  # of the partition state, kept when the leader rewrites the ISR
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    log_end_offset: int
    log_start_offset: int = 0
    high_watermark: int = 0
    grown_at_s: float = 0.0
    growth_carry: float = 0.0
    followers: Mapping[int, FollowerProgress] = msgspec.field(default_factory=dict)  # as leader
    leader_log_end_offset: int = 0  # as follower: the leader's end at the last fetch
    in_isr: bool = False  # as follower: what the leader (or the controller) last said
    fetch_meter: RateMeter = msgspec.field(default_factory=RateMeter)
    isr_fenced: bool = False  # as leader: the known state version is stale; wait for the controller
    epoch_start_offset: int = 0  # as leader: its log end when its leader epoch began

    @property
    def tp(self) -> TopicPartition:
        return (self.topic, self.partition)

    @property
    def lag_bytes(self) -> int:
        return (
            0 if self.role is ReplicaRole.LEADER else max(0, self.leader_log_end_offset - self.log_end_offset)
        )


def initial_log_end_offset(state: WirePartitionState, broker_id: int, initial_bytes: int) -> int:
    """Size of a replica this agent has never seen: a new replica in the ISR (topic
    creation) and a leader start at the topic's initial size; any other starts empty."""
    if state.is_new:
        return initial_bytes if broker_id in state.isr else 0
    return initial_bytes if state.leader == broker_id else 0


def became(
    known: Replica | None, state: WirePartitionState, broker_id: int, initial_bytes: int, now: float
) -> Replica:
    """Apply a (newer) LeaderAndIsr partition state. A leader's growth must be settled first."""
    leo = (
        known.log_end_offset if known is not None else initial_log_end_offset(state, broker_id, initial_bytes)
    )
    is_leader = state.leader == broker_id
    was_leader = known is not None and known.role is ReplicaRole.LEADER
    followers: dict[int, FollowerProgress] = {}
    if is_leader:  # always a new leader epoch (older or equal ones are refused before)
        previous = known.followers if was_leader and known is not None else {}
        for b in state.replicas:
            if b != broker_id:
                followers[b] = _reset_progress(previous.get(b), b in state.isr, was_leader, now)
    role = ReplicaRole.LEADER if is_leader else ReplicaRole.FOLLOWER
    return Replica(
        topic=state.topic,
        partition=state.partition,
        role=role,
        leader=state.leader,
        leader_epoch=state.leader_epoch,
        partition_epoch=state.partition_epoch,
        controller_epoch=state.controller_epoch,
        replicas=state.replicas,
        isr=state.isr,
        log_end_offset=leo,
        log_start_offset=known.log_start_offset if known is not None else 0,
        high_watermark=_high_watermark(role, leo, 0, state.isr, followers, broker_id),
        grown_at_s=known.grown_at_s if was_leader and known is not None else now,
        growth_carry=known.growth_carry if was_leader and known is not None else 0.0,
        followers=followers,
        leader_log_end_offset=known.leader_log_end_offset if known is not None else 0,
        in_isr=broker_id in state.isr,
        fetch_meter=known.fetch_meter if known is not None else RateMeter(0.0, now),
        epoch_start_offset=leo if is_leader else 0,
    )


def _reset_progress(
    previous: FollowerProgress | None, in_isr: bool, re_elected: bool, now: float
) -> FollowerProgress:
    """Kafka's resetReplicaState at a new leader epoch: an ISR member gets a full lag window from
    now (its position kept if this broker led before, for the high watermark); any other follower
    starts unknown, so that only its fetches in this epoch can bring it into the ISR."""
    if not in_isr:
        return FollowerProgress()
    position = previous.log_end_offset if re_elected and previous is not None else UNKNOWN_OFFSET
    return FollowerProgress(position, now, now if re_elected else None, None, True, False)


def grown(replica: Replica, now: float, produce_bytes_per_s: float) -> Replica:
    """A leader's log after producing at ``produce_bytes_per_s`` until ``now``."""
    if replica.role is not ReplicaRole.LEADER or now <= replica.grown_at_s or produce_bytes_per_s <= 0:
        return replica  # (at rate 0 the carry is < 1 byte: nothing to settle)
    produced = produce_bytes_per_s * (now - replica.grown_at_s) + replica.growth_carry
    whole = int(produced)
    return replace(
        replica, log_end_offset=replica.log_end_offset + whole, growth_carry=produced - whole, grown_at_s=now
    )


def record_fetch(
    replica: Replica, follower: int, fetch_offset: int, now: float, broker_id: int
) -> tuple[Replica, int]:
    """The leader sees ``follower`` fetch from ``fetch_offset`` (its log end; one past the
    leader's end means it must truncate). Returns the replica and the follower's effective offset."""
    offset = max(0, min(fetch_offset, replica.log_end_offset))
    # Kafka's isFollowerInSync, against the high watermark before this fetch moves it
    reached = offset >= replica.high_watermark and offset >= replica.epoch_start_offset
    progress = (replica.followers.get(follower) or FollowerProgress()).fetched(
        offset, replica.log_end_offset, now, reached
    )
    followers = {**replica.followers, follower: progress}
    hw = _high_watermark(
        replica.role, replica.log_end_offset, replica.high_watermark, replica.isr, followers, broker_id
    )
    return replace(replica, followers=followers, high_watermark=hw), offset


def fetched(replica: Replica, n_bytes: int, leader_leo: int, in_isr: bool, now: float) -> Replica:
    """A follower received ``n_bytes`` from its fetch offset; the leader's end is ``leader_leo``."""
    base = min(replica.log_end_offset, leader_leo)  # truncate to the leader's log if longer
    return replace(
        replica,
        log_end_offset=min(base + max(0, n_bytes), leader_leo),
        leader_log_end_offset=leader_leo,
        in_isr=in_isr,
        fetch_meter=replica.fetch_meter.record(max(0, n_bytes), now),
    )


def stopped(replica: Replica) -> Replica:
    return replace(replica, role=ReplicaRole.STOPPED, followers={}, in_isr=False)


def credited(progress: FollowerProgress | None, seen_s: float | None) -> FollowerProgress | None:
    """``progress`` with an implicit fetch at ``seen_s`` applied: a session fetch that did not need
    to list the partition because the follower was at the leader's end (see sessions.py)."""
    if seen_s is None:
        return progress
    base = progress if progress is not None else FollowerProgress()
    caught_s, fetch_s = base.last_caught_up_s, base.last_fetch_s
    return replace(
        base,
        last_caught_up_s=seen_s if caught_s is None else max(caught_s, seen_s),
        last_fetch_s=seen_s if fetch_s is None else max(fetch_s, seen_s),
        caught_up=True,
    )


def _caught_up_s(progress: FollowerProgress | None, seen_s: float | None) -> float | None:
    """``credited(progress, seen_s).last_caught_up_s``, without building it."""
    caught_s = None if progress is None else progress.last_caught_up_s
    if seen_s is None:
        return caught_s
    return seen_s if caught_s is None else max(caught_s, seen_s)


def isr_view(
    replica: Replica,
    broker_id: int,
    live: frozenset[int] | None,
    seen: Mapping[int, float] | None = None,
) -> IsrView:
    """What the leader ``replica`` knows, for :func:`isr_decision.decide_isr`. ``seen``: followers
    known to be at the leader's end as of a session fetch (:func:`credited`)."""
    seen = seen or {}
    followers = {}
    for b, progress in replica.followers.items():
        caught_up_s = _caught_up_s(progress, seen.get(b))
        followers[b] = FollowerView(progress.log_end_offset, caught_up_s)
    return IsrView(
        leader=broker_id,
        replicas=replica.replicas,
        isr=replica.isr,
        zk_version=replica.partition_epoch,
        high_watermark=replica.high_watermark,
        log_end_offset=replica.log_end_offset,
        epoch_start_offset=replica.epoch_start_offset,
        followers=followers,
        live=live,
        version_stale=replica.isr_fenced,
    )


def desired_isr(
    replica: Replica,
    broker_id: int,
    now: float,
    lag_max_s: float,
    live: frozenset[int] | None,
    seen: Mapping[int, float] | None = None,
) -> tuple[int, ...]:
    """The ISR the leader wants now (its current one when nothing changes): isr_decision.py's
    rules. ``live`` is None until the controller told us."""
    if replica.role is not ReplicaRole.LEADER:
        return replica.isr
    change = decide_isr(isr_view(replica, broker_id, live, seen), now, lag_max_s)
    return replica.isr if change is None else change.isr


def isr_deadline(
    replica: Replica, broker_id: int, now: float, lag_max_s: float, seen: Mapping[int, float] | None = None
) -> float | None:
    """When the ISR may next shrink for lag if nothing else happens (None: it cannot): the first
    time an ISR follower's last caught-up time falls out of the ``lag_max_s`` window."""
    if replica.role is not ReplicaRole.LEADER or replica.isr_fenced:
        return None
    return lag_deadline_s(isr_view(replica, broker_id, None, seen), now, lag_max_s)


def settled(replica: Replica, seen: Mapping[int, float]) -> Replica:
    """``replica`` with the implicit session fetches of ``seen`` recorded in its follower progress
    (before a change that ends them: a new leader epoch, or a log that starts growing)."""
    if not seen or replica.role is not ReplicaRole.LEADER:
        return replica
    followers = dict(replica.followers)
    for b, seen_s in seen.items():
        progress = credited(followers.get(b), seen_s)
        if progress is not None:
            followers[b] = replace(progress, last_fetch_leader_leo=replica.log_end_offset)
    return replace(replica, followers=followers)


def with_isr(replica: Replica, isr: tuple[int, ...], partition_epoch: int, broker_id: int) -> Replica:
    """After the leader wrote ``isr`` to ZooKeeper (new znode version ``partition_epoch``)."""
    updated = replace(replica, isr=isr, partition_epoch=partition_epoch, followers=_left(replica, isr))
    return _with_high_watermark(updated, broker_id)


def _left(replica: Replica, isr: tuple[int, ...]) -> Mapping[int, FollowerProgress]:
    """``replica``'s followers, those that leave the ISR for ``isr`` no longer counted as having
    reached the high watermark (it moves past them; only a new fetch can bring them back)."""
    gone = [b for b in replica.isr if b not in isr and b in replica.followers]
    if not gone:
        return replica.followers
    followers = dict(replica.followers)
    for b in gone:
        followers[b] = replace(followers[b], reached_hw=False)
    return followers


def with_zk_state(
    replica: Replica,
    broker_id: int,
    *,
    leader: int,
    leader_epoch: int,
    controller_epoch: int,
    isr: tuple[int, ...],
    version: int,
) -> Replica:
    """After an ISR write hit a version conflict and the leader re-read the state znode: adopt it
    if this agent is still leader of the same epoch, otherwise stop changing the ISR."""
    if leader != broker_id or leader_epoch != replica.leader_epoch:
        return replace(replica, isr_fenced=True)
    updated = replace(
        replica,
        isr=isr,
        partition_epoch=version,
        controller_epoch=controller_epoch,
        followers=_left(replica, isr),
    )
    return _with_high_watermark(updated, broker_id)


def _high_watermark(
    role: ReplicaRole,
    log_end_offset: int,
    high_watermark: int,
    isr: tuple[int, ...],
    followers: Mapping[int, FollowerProgress],
    broker_id: int,
) -> int:
    """A leader's high watermark: up to the slowest member of the maximal ISR, the ISR and the
    followers about to join it (never backwards, never past its end)."""
    if role is ReplicaRole.LEADER:
        low = log_end_offset
        for b in isr:
            if b != broker_id:
                progress = followers.get(b)
                end = progress.log_end_offset if progress is not None else 0
                low = min(low, end)
        for b, progress in followers.items():
            if progress.reached_hw and b not in isr:
                low = min(low, progress.log_end_offset)
        high_watermark = max(high_watermark, low)
    return min(high_watermark, log_end_offset)


def _with_high_watermark(replica: Replica, broker_id: int) -> Replica:
    hw = _high_watermark(
        replica.role,
        replica.log_end_offset,
        replica.high_watermark,
        replica.isr,
        replica.followers,
        broker_id,
    )
    return replica if hw == replica.high_watermark else replace(replica, high_watermark=hw)

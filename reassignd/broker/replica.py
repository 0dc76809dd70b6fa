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

from reassignd.control.protocol import WirePartitionState
from reassignd.topic_partition import TopicPartition

RATE_WINDOW_S = 1.0  # time constant of the fetch-rate estimate


class Role(enum.Enum):
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
    """What the leader knows of one follower (Kafka's remote replica state)."""

    log_end_offset: int = 0
    last_caught_up_s: float | None = None
    last_fetch_s: float | None = None
    last_fetch_leader_leo: int | None = None
    caught_up: bool = False  # its latest fetch had everything the leader had at its previous fetch

    def fetched(self, fetch_offset: int, leader_leo: int, now: float) -> FollowerProgress:
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
        return FollowerProgress(fetch_offset, caught_at, now, leader_leo, caught_up)


class Replica(msgspec.Struct, frozen=True):
    """One partition's replica on this agent. A msgspec struct, as its parts are: the agents
    replace one on every fetch, ISR and LeaderAndIsr change (building one is about 10x cheaper
    than a frozen dataclass; the agents' CPU sets the pace of a large move)."""

    topic: str
    partition: int
    role: Role
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
    isr_fenced: bool = False  # as leader: ZooKeeper has a newer leader epoch; wait for the controller

    @property
    def tp(self) -> TopicPartition:
        return (self.topic, self.partition)

    @property
    def lag_bytes(self) -> int:
        return 0 if self.role is Role.LEADER else max(0, self.leader_log_end_offset - self.log_end_offset)


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
    was_leader = known is not None and known.role is Role.LEADER
    followers: dict[int, FollowerProgress] = {}
    if is_leader:
        previous = known.followers if was_leader and known is not None else {}
        for b in state.replicas:
            if b == broker_id:
                continue
            progress = previous.get(b) or FollowerProgress()
            if b in state.isr and (progress.last_caught_up_s is None or not was_leader):
                # Kafka's makeLeader: ISR members get a full lag window from now
                progress = replace(progress, last_caught_up_s=now)
            followers[b] = progress
    role = Role.LEADER if is_leader else Role.FOLLOWER
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
    )


def grown(replica: Replica, now: float, produce_bytes_per_s: float) -> Replica:
    """A leader's log after producing at ``produce_bytes_per_s`` until ``now``."""
    if replica.role is not Role.LEADER or now <= replica.grown_at_s or produce_bytes_per_s <= 0:
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
    progress = (replica.followers.get(follower) or FollowerProgress()).fetched(
        offset, replica.log_end_offset, now
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
    return replace(replica, role=Role.STOPPED, followers={}, in_isr=False)


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


def desired_isr(
    replica: Replica,
    broker_id: int,
    now: float,
    lag_max_s: float,
    live: frozenset[int] | None,
    seen: Mapping[int, float] | None = None,
) -> tuple[int, ...]:
    """The ISR the leader wants: drop followers that lag more than ``lag_max_s`` or whose broker is
    gone (``live`` is None until the controller told us), add caught-up followers; never empty.
    ``seen``: followers known to be at the leader's end as of a session fetch (:func:`credited`)."""
    if replica.role is not Role.LEADER or replica.isr_fenced:
        return replica.isr
    seen = seen or {}

    def alive(b: int) -> bool:
        return live is None or b in live

    def lagging(b: int) -> bool:
        caught_up_s = _caught_up_s(replica.followers.get(b), seen.get(b))
        return caught_up_s is None or now - caught_up_s > lag_max_s

    keep = [b for b in replica.isr if b == broker_id or (alive(b) and not lagging(b))]
    for b in replica.replicas:
        if b in keep or b == broker_id or not alive(b):
            continue
        progress = credited(replica.followers.get(b), seen.get(b))
        if progress is None or not progress.caught_up:
            continue
        if progress.last_fetch_s is not None and now - progress.last_fetch_s <= lag_max_s:
            keep.append(b)
    return tuple(keep) if keep else replica.isr


def isr_deadline(
    replica: Replica, broker_id: int, now: float, lag_max_s: float, seen: Mapping[int, float] | None = None
) -> float | None:
    """When the ISR may next shrink for lag if nothing else happens (None: it cannot): the first
    time an ISR follower's last caught-up time falls out of the ``lag_max_s`` window."""
    if replica.role is not Role.LEADER or replica.isr_fenced:
        return None
    seen = seen or {}
    deadline: float | None = None
    for b in replica.isr:
        if b == broker_id:
            continue
        caught_up_s = _caught_up_s(replica.followers.get(b), seen.get(b))
        due = now if caught_up_s is None else caught_up_s + lag_max_s
        deadline = due if deadline is None else min(deadline, due)
    return deadline


def settled(replica: Replica, seen: Mapping[int, float]) -> Replica:
    """``replica`` with the implicit session fetches of ``seen`` recorded in its follower progress
    (before a change that ends them: a new leader epoch, or a log that starts growing)."""
    if not seen or replica.role is not Role.LEADER:
        return replica
    followers = dict(replica.followers)
    for b, seen_s in seen.items():
        progress = credited(followers.get(b), seen_s)
        if progress is not None:
            followers[b] = replace(progress, last_fetch_leader_leo=replica.log_end_offset)
    return replace(replica, followers=followers)


def with_isr(replica: Replica, isr: tuple[int, ...], partition_epoch: int, broker_id: int) -> Replica:
    """After the leader wrote ``isr`` to ZooKeeper (new znode version ``partition_epoch``)."""
    return _with_high_watermark(replace(replica, isr=isr, partition_epoch=partition_epoch), broker_id)


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
    updated = replace(replica, isr=isr, partition_epoch=version, controller_epoch=controller_epoch)
    return _with_high_watermark(updated, broker_id)


def _high_watermark(
    role: Role,
    log_end_offset: int,
    high_watermark: int,
    isr: tuple[int, ...],
    followers: Mapping[int, FollowerProgress],
    broker_id: int,
) -> int:
    """A leader's high watermark: up to the slowest ISR member (never backwards, never past its end)."""
    if role is Role.LEADER:
        low = log_end_offset
        for b in isr:
            if b != broker_id:
                progress = followers.get(b)
                end = progress.log_end_offset if progress is not None else 0
                low = min(low, end)
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

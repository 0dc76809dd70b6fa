"""The leader's ISR decision, pure: Kafka's ISR rules (ZooKeeper mode, ``Partition.scala``'s
maybeExpandIsr / maybeShrinkIsr / isFollowerInSync) as one function of what the leader knows.

- A follower joins the ISR only through its own fetches in the current leader epoch: its fetch
  position (its log end as of its latest fetch) must have reached the leader's high watermark and
  the offset at which this leader epoch started. Registering, being live, or the controller
  listing it as a replica never adds it; neither does what it fetched in an earlier epoch (the
  shell resets that at each new leader epoch, as Kafka's makeLeader does). It must also be
  caught up within the lag time, or the next review would drop it again (a stricter rule than
  Kafka's, which may add such a follower and shrink it at its next check).
- An ISR follower leaves when it has not been caught up to the leader's log end for more than
  ``replica.lag.time.max.ms``, fetching or not (or, a liberty of ours, as soon as its broker is known to be gone:
  the controller shrinks that ISR anyway, and a shrink is always safe).
- The leader stays in the ISR; only replicas of the assignment are ever added.
- The change is a write at the partition state version the leader knows (from its last
  LeaderAndIsr, or its own last write). A leader whose known version was found stale (the
  write hit BADVERSION: the controller wrote the state meanwhile) decides nothing until the
  controller's next LeaderAndIsr (Kafka: the cached zkVersion is stale, updates are skipped).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

UNKNOWN_OFFSET = -1  # no fetch from this follower in the current leader epoch (Kafka's UnknownOffset)


@dataclass(frozen=True, slots=True)
class FollowerView:
    """What the leader knows of one follower in the current leader epoch."""

    fetch_position: int = UNKNOWN_OFFSET  # its log end as of its latest fetch
    last_caught_up_s: float | None = None  # when it last had everything the leader had


@dataclass(frozen=True, slots=True)
class IsrView:
    """One led partition, as its leader sees it now."""

    leader: int
    replicas: tuple[int, ...]  # the assignment
    isr: tuple[int, ...]  # as last written (by the controller or by this leader)
    zk_version: int  # of the partition state znode holding ``isr``
    high_watermark: int
    log_end_offset: int
    epoch_start_offset: int = 0  # the leader's log end when its leader epoch began
    followers: Mapping[int, FollowerView] = field(default_factory=dict)
    live: frozenset[int] | None = None  # brokers known to be live (None: not told yet)
    version_stale: bool = False  # a write hit BADVERSION: wait for the controller's LeaderAndIsr


@dataclass(frozen=True, slots=True)
class IsrChange:
    """Write ``isr`` to the partition state, conditional on ``expected_version``."""

    isr: tuple[int, ...]
    expected_version: int


def in_sync_to_join(view: IsrView, follower: int) -> bool:
    """Kafka's isFollowerInSync: a fetch in this epoch reached the high watermark and the epoch's
    start offset."""
    f = view.followers.get(follower)
    if f is None or f.fetch_position == UNKNOWN_OFFSET:
        return False
    return f.fetch_position >= view.high_watermark and f.fetch_position >= view.epoch_start_offset


def out_of_sync(view: IsrView, follower: int, now_s: float, lag_max_s: float) -> bool:
    """Not caught up to the leader's log end within the lag time. (Kafka also keeps a follower
    whose last position equals the leader's end, fetching or not; we drop one whose fetches
    stopped, as before: its caught-up time only moves with its fetches.)"""
    f = view.followers.get(follower)
    return f is None or f.last_caught_up_s is None or now_s - f.last_caught_up_s > lag_max_s


def decide_isr(view: IsrView, now_s: float, lag_max_s: float) -> IsrChange | None:
    """The ISR the leader writes now, or ``None`` (nothing to change, or not its to change)."""
    if view.version_stale or view.zk_version < 0:
        return None

    def alive(b: int) -> bool:
        return view.live is None or b in view.live

    keep = [view.leader]
    for b in view.isr:
        if b != view.leader and b not in keep and alive(b) and not out_of_sync(view, b, now_s, lag_max_s):
            keep.append(b)
    for b in view.replicas:
        if (
            b not in keep
            and b not in view.isr
            and alive(b)
            and in_sync_to_join(view, b)
            and not out_of_sync(view, b, now_s, lag_max_s)
        ):
            keep.append(b)
    if set(keep) == set(view.isr):
        return None
    return IsrChange(tuple(keep), view.zk_version)


def lag_deadline_s(view: IsrView, now_s: float, lag_max_s: float) -> float | None:
    """When an ISR follower may next fall out for lag if nothing else happens (None: never)."""
    deadline: float | None = None
    for b in view.isr:
        if b == view.leader:
            continue
        f = view.followers.get(b)
        caught_up_s = None if f is None else f.last_caught_up_s
        due = now_s if caught_up_s is None else caught_up_s + lag_max_s
        deadline = due if deadline is None else min(deadline, due)
    return deadline

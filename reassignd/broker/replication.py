"""Replication between agents, the pure part: what a follower asks its leader for, what the leader
serves within its bandwidth and KIP-73 throttles, and what the follower does with the answer.

Functions of a :class:`ReplicaManager` and an injected ``now``; the HTTP round trip is fetcher.py's.
The functions here handle one fetch of explicitly listed partitions (a sessionless fetch lists
every partition followed from that leader); sessions.py builds incremental fetch sessions on them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from reassignd.broker import replica as rm
from reassignd.broker.protocol import (
    FENCED_LEADER_EPOCH,
    NONE,
    NOT_LEADER_OR_FOLLOWER,
    UNKNOWN_LEADER_EPOCH,
    FetchedPartition,
    FetchPartition,
    FetchRequest,
    FetchResponse,
)
from reassignd.broker.replica import Replica, Role, TopicPartition
from reassignd.broker.state import ReplicaManager
from reassignd.broker.throttle import allocate_throttled, grant

SKIPPED = -1  # apply_answer: the partition changed while the fetch was in flight
REFUSED = -2  # apply_answer: the leader answered an error code


def fetch_leaders(mgr: ReplicaManager) -> set[int]:
    """Brokers this agent's followers fetch from."""
    return set(mgr.followed)


def fetching_from(mgr: ReplicaManager, r: Replica | None, leader: int) -> bool:
    return (
        r is not None and r.role is Role.FOLLOWER and r.leader == leader and leader not in (-1, mgr.broker_id)
    )


def _follower_throttled(mgr: ReplicaManager, r: Replica) -> bool:
    return not r.in_isr and mgr.topic_config(r.topic).follower_throttled.covers(r.partition, mgr.broker_id)


def fetch_partitions(
    mgr: ReplicaManager, followed: Sequence[Replica], now: float
) -> tuple[FetchPartition, ...]:
    """What to ask for ``followed``, the inbound budget split fairly (every partition is asked for,
    even with 0 bytes, so the leader sees it keep up)."""
    shares = allocate_throttled(
        grant(mgr.bandwidth.inbound.available(now)),
        grant(mgr.bandwidth.follower_throttle.available(now)),
        [max(0, r.leader_log_end_offset - r.log_end_offset) for r in followed],
        [_follower_throttled(mgr, r) for r in followed],
        spread_leftover=True,
    )
    return tuple(
        FetchPartition(r.topic, r.partition, r.leader_epoch, r.log_end_offset, share)
        for r, share in zip(followed, shares, strict=True)
    )


def fetch_request(mgr: ReplicaManager, leader: int, now: float) -> FetchRequest | None:
    """A sessionless fetch: every partition followed from ``leader``."""
    tps = mgr.followed.get(leader)
    if not tps:
        return None
    return FetchRequest(mgr.broker_id, fetch_partitions(mgr, [mgr.replicas[tp] for tp in sorted(tps)], now))


def refusal(mgr: ReplicaManager, r: Replica | None, follower: int, leader_epoch: int) -> int:
    """The error code for a fetch of ``r`` by ``follower`` at ``leader_epoch`` (NONE: served)."""
    if r is None or r.role is not Role.LEADER or follower not in r.replicas:
        return NOT_LEADER_OR_FOLLOWER
    if leader_epoch < r.leader_epoch:
        return FENCED_LEADER_EPOCH
    if leader_epoch > r.leader_epoch:
        return UNKNOWN_LEADER_EPOCH
    return NONE


def served(
    mgr: ReplicaManager, r: Replica, follower: int, fetch_offset: int, now: float
) -> tuple[Replica, int]:
    """As leader: record ``follower``'s fetch of ``r`` from ``fetch_offset``; the replica (grown,
    stored) and the follower's effective offset."""
    r, offset = rm.record_fetch(mgr.grown(r, now), follower, fetch_offset, now, mgr.broker_id)
    mgr.put(r)
    if follower not in r.isr and r.followers[follower].caught_up:
        mgr.isr_candidates.add(r.tp)
    return r, offset


def serve_partitions(
    mgr: ReplicaManager, follower: int, partitions: Iterable[FetchPartition], now: float
) -> list[FetchedPartition]:
    """As leader: record each follower's progress and serve bytes within the outbound bandwidth and
    the leader throttle (which applies to listed replicas whose follower is outside the ISR)."""
    results: list[FetchedPartition | None] = []  # None: served, filled in below
    serving: list[tuple[int, Replica, int, bool]] = []  # (index in results, replica, need, throttled)
    for p in partitions:
        r = mgr.replicas.get((p.topic, p.partition))
        code = refusal(mgr, r, follower, p.leader_epoch)
        if code != NONE or r is None:
            results.append(FetchedPartition(p.topic, p.partition, code))
            continue
        r, offset = served(mgr, r, follower, p.fetch_offset, now)
        throttled = follower not in r.isr and mgr.topic_config(r.topic).leader_throttled.covers(
            r.partition, mgr.broker_id
        )
        serving.append((len(results), r, min(max(0, p.max_bytes), r.log_end_offset - offset), throttled))
        results.append(None)
    if not serving:
        return [a for a in results if a is not None]
    shares = allocate_throttled(
        grant(mgr.bandwidth.outbound.available(now)),
        grant(mgr.bandwidth.leader_throttle.available(now)),
        [need for _, _, need, _ in serving],
        [throttled for _, _, _, throttled in serving],
    )
    for (index, r, _, _), share in zip(serving, shares, strict=True):
        results[index] = FetchedPartition(
            r.topic, r.partition, NONE, share, r.log_end_offset, r.high_watermark, follower in r.isr
        )
    throttled_served = sum(s for (_, _, _, throttled), s in zip(serving, shares, strict=True) if throttled)
    bw = mgr.bandwidth
    mgr.bandwidth = replace(
        bw,
        outbound=bw.outbound.take(sum(shares), now),
        leader_throttle=bw.leader_throttle.take(throttled_served, now),
    )
    return [a for a in results if a is not None]


def serve_fetch(mgr: ReplicaManager, request: FetchRequest, now: float) -> FetchResponse:
    """As leader, a sessionless fetch: every listed partition is answered."""
    return FetchResponse(NONE, tuple(serve_partitions(mgr, request.replica_id, request.partitions, now)))


class Received:
    """Bytes a follower received in one fetch, for its bandwidth buckets."""

    def __init__(self) -> None:
        self.total = 0
        self.throttled = 0

    def charge(self, mgr: ReplicaManager, now: float) -> None:
        bw = mgr.bandwidth
        mgr.bandwidth = replace(
            bw,
            inbound=bw.inbound.take(self.total, now),
            follower_throttle=bw.follower_throttle.take(self.throttled, now),
        )


def apply_answer(
    mgr: ReplicaManager,
    leader: int,
    p: FetchPartition,
    answer: FetchedPartition | None,
    received: Received,
    now: float,
) -> int:
    """As follower: take what the leader sent for ``p``. Returns the bytes taken, SKIPPED (no
    answer, or the partition changed while the fetch was in flight) or REFUSED (an error code)."""
    tp = (p.topic, p.partition)
    r = mgr.replicas.get(tp)
    if answer is None or r is None or not fetching_from(mgr, r, leader):
        return SKIPPED
    if r.leader_epoch != p.leader_epoch or r.log_end_offset != p.fetch_offset:
        return SKIPPED
    if answer.error_code != NONE:
        return REFUSED
    n = min(max(0, answer.bytes), p.max_bytes)
    unchanged = (answer.log_end_offset, answer.in_isr) == (r.leader_log_end_offset, r.in_isr)
    if n == 0 and unchanged and r.log_end_offset <= answer.log_end_offset:
        return 0  # nothing new (and a fetch rate meter decays by itself)
    if _follower_throttled(mgr, r):
        received.throttled += n
    received.total += n
    mgr.put(rm.fetched(r, n, answer.log_end_offset, answer.in_isr, now))
    return n


def answers_by_partition(response: FetchResponse) -> Mapping[TopicPartition, FetchedPartition]:
    return {(a.topic, a.partition): a for a in response.partitions}


def apply_fetch(
    mgr: ReplicaManager, leader: int, request: FetchRequest, response: FetchResponse, now: float
) -> list[TopicPartition]:
    """As follower: take what the leader sent. Partitions whose state changed while the fetch was in
    flight are skipped. Returns the partitions the leader refused (an error code)."""
    refused = []
    received = Received()
    answers = answers_by_partition(response)
    for p in request.partitions:
        tp = (p.topic, p.partition)
        if apply_answer(mgr, leader, p, answers.get(tp), received, now) == REFUSED:
            refused.append(tp)
    received.charge(mgr, now)
    return refused

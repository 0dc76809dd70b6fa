"""Replication between agents, the pure part: what a follower asks its leader for, what the leader
serves within its bandwidth and KIP-73 throttles, and what the follower does with the answer.

Functions of a :class:`ReplicaManager` and an injected ``now``; the HTTP round trip is fetcher.py's.
"""

from __future__ import annotations

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


def fetch_leaders(mgr: ReplicaManager) -> set[int]:
    """Brokers this agent's followers fetch from."""
    return {r.leader for r in mgr.replicas.values() if _fetching(mgr, r)}


def _fetching(mgr: ReplicaManager, r: Replica) -> bool:
    return r.role is Role.FOLLOWER and r.leader >= 0 and r.leader != mgr.broker_id


def _follower_throttled(mgr: ReplicaManager, r: Replica) -> bool:
    return not r.in_isr and mgr.topic_config(r.topic).follower_throttled.covers(r.partition, mgr.broker_id)


def fetch_request(mgr: ReplicaManager, leader: int, now: float) -> FetchRequest | None:
    """One fetch for every partition followed from ``leader``, the inbound budget split fairly
    (every partition is asked for, even with 0 bytes, so the leader sees it keep up)."""
    followed = sorted(
        (r for r in mgr.replicas.values() if _fetching(mgr, r) and r.leader == leader), key=lambda r: r.tp
    )
    if not followed:
        return None
    shares = allocate_throttled(
        grant(mgr.bandwidth.inbound.available(now)),
        grant(mgr.bandwidth.follower_throttle.available(now)),
        [max(0, r.leader_log_end_offset - r.log_end_offset) for r in followed],
        [_follower_throttled(mgr, r) for r in followed],
        spread_leftover=True,
    )
    return FetchRequest(
        mgr.broker_id,
        tuple(
            FetchPartition(r.topic, r.partition, r.leader_epoch, r.log_end_offset, share)
            for r, share in zip(followed, shares, strict=True)
        ),
    )


def serve_fetch(mgr: ReplicaManager, request: FetchRequest, now: float) -> FetchResponse:
    """As leader: record each follower's progress and serve bytes within the outbound bandwidth and
    the leader throttle (which applies to listed replicas whose follower is outside the ISR)."""
    follower = request.replica_id
    results: list[FetchedPartition] = []
    served: list[tuple[int, Replica, int, bool]] = []  # (index in results, replica, need, throttled)
    for p in request.partitions:
        r = mgr.replicas.get((p.topic, p.partition))
        code = NONE
        if r is None or r.role is not Role.LEADER or follower not in r.replicas:
            code = NOT_LEADER_OR_FOLLOWER
        elif p.leader_epoch < r.leader_epoch:
            code = FENCED_LEADER_EPOCH
        elif p.leader_epoch > r.leader_epoch:
            code = UNKNOWN_LEADER_EPOCH
        if code != NONE or r is None:
            results.append(FetchedPartition(p.topic, p.partition, code))
            continue
        r, offset = rm.record_fetch(mgr.grown(r, now), follower, p.fetch_offset, now, mgr.broker_id)
        mgr.replicas[r.tp] = r
        if follower not in r.isr and r.followers[follower].caught_up:
            mgr.isr_candidates.add(r.tp)
        throttled = follower not in r.isr and mgr.topic_config(r.topic).leader_throttled.covers(
            r.partition, mgr.broker_id
        )
        served.append((len(results), r, min(max(0, p.max_bytes), r.log_end_offset - offset), throttled))
        results.append(FetchedPartition(p.topic, p.partition, NONE))
    shares = allocate_throttled(
        grant(mgr.bandwidth.outbound.available(now)),
        grant(mgr.bandwidth.leader_throttle.available(now)),
        [need for _, _, need, _ in served],
        [throttled for _, _, _, throttled in served],
    )
    for (index, r, _, _), share in zip(served, shares, strict=True):
        results[index] = FetchedPartition(
            r.topic, r.partition, NONE, share, r.log_end_offset, r.high_watermark, follower in r.isr
        )
    throttled_served = sum(s for (_, _, _, throttled), s in zip(served, shares, strict=True) if throttled)
    bw = mgr.bandwidth
    mgr.bandwidth = replace(
        bw,
        outbound=bw.outbound.take(sum(shares), now),
        leader_throttle=bw.leader_throttle.take(throttled_served, now),
    )
    return FetchResponse(NONE, tuple(results))


def apply_fetch(
    mgr: ReplicaManager, leader: int, request: FetchRequest, response: FetchResponse, now: float
) -> list[TopicPartition]:
    """As follower: take what the leader sent. Partitions whose state changed while the fetch was in
    flight are skipped. Returns the partitions the leader refused (an error code)."""
    refused = []
    received = throttled_received = 0
    answers = {(a.topic, a.partition): a for a in response.partitions}
    for p in request.partitions:
        tp = (p.topic, p.partition)
        r = mgr.replicas.get(tp)
        answer = answers.get(tp)
        if answer is None or r is None or not _fetching(mgr, r) or r.leader != leader:
            continue
        if r.leader_epoch != p.leader_epoch or r.log_end_offset != p.fetch_offset:
            continue
        if answer.error_code != NONE:
            refused.append(tp)
            continue
        n = min(max(0, answer.bytes), p.max_bytes)
        if _follower_throttled(mgr, r):
            throttled_received += n
        received += n
        mgr.replicas[tp] = rm.fetched(r, n, answer.log_end_offset, answer.in_isr, now)
    bw = mgr.bandwidth
    mgr.bandwidth = replace(
        bw,
        inbound=bw.inbound.take(received, now),
        follower_throttle=bw.follower_throttle.take(throttled_received, now),
    )
    return refused

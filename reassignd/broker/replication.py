"""Replication between agents, the pure part: what a follower asks its leader for, what the leader
serves within its bandwidth and KIP-73 throttles, and what the follower does with the answer.

Functions of a :class:`ReplicaManager` and an injected ``now``; the HTTP round trip is fetcher.py's.
The functions here handle one fetch of explicitly listed partitions (a sessionless fetch lists
every partition followed from that leader); sessions.py builds incremental fetch sessions on them.

Bandwidth is shared per partition, not per fetch (bandwidth.py): the follower asks, for each
partition, the credit it earned in the inbound bucket since its last fetch (its fair share of the
broker's bandwidth in, among every partition behind, whichever leader serves it), and gives back
what the leader did not send; the leader serves each (partition, follower) at most the credit it
earned in the outbound bucket (its fair share of the bandwidth out, among every follower behind).
Each side tells its bucket the lags it learns, so that only partitions behind share the rate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from reassignd.broker import replica as rm
from reassignd.broker.bandwidth import Take
from reassignd.broker.replica import Replica, ReplicaRole
from reassignd.broker.state import ReplicaManager, ServedKey
from reassignd.broker.throttle import MAX_GRANT
from reassignd.control.fetch import (
    FENCED_LEADER_EPOCH,
    NOT_LEADER_OR_FOLLOWER,
    UNKNOWN_LEADER_EPOCH,
    FetchedPartition,
    FetchPartition,
    FetchRequest,
    FetchResponse,
)
from reassignd.control.wire import NONE
from reassignd.topic_partition import TopicPartition

GROWTH_WINDOW_S = 0.5  # a growing log's demand counts this much growth beyond its known lag
SKIPPED = -1  # apply_answer: the partition changed while the fetch was in flight
REFUSED = -2  # apply_answer: the leader answered an error code


def fetch_leaders(mgr: ReplicaManager) -> set[int]:
    """Brokers this agent's followers fetch from."""
    return set(mgr.followed)


def fetching_from(mgr: ReplicaManager, r: Replica | None, leader: int) -> bool:
    return (
        r is not None
        and r.role is ReplicaRole.FOLLOWER
        and r.leader == leader
        and leader not in (-1, mgr.broker_id)
    )


def demand(mgr: ReplicaManager, topic: str, lag: int) -> int:
    """Bytes a partition ``lag`` bytes behind wants: its lag, plus what its leader will have grown
    by the time the fetch spends the credit (else a follower of a growing log, asking only for the
    lag it knew, would stay one fetch behind and out of the ISR)."""
    return max(0, lag) + int(mgr.topic_config(topic).produce_bytes_per_s * GROWTH_WINDOW_S)


def follower_throttled(mgr: ReplicaManager, r: Replica) -> bool:
    return not r.in_isr and mgr.topic_config(r.topic).follower_throttled.covers(r.partition, mgr.broker_id)


def fetch_partitions(
    mgr: ReplicaManager, followed: Sequence[Replica], now: float
) -> tuple[FetchPartition, ...]:
    """What to ask for ``followed``: each partition's credit in the inbound bucket, plus an even
    split of what no partition behind could use (every partition is asked for, even with 0 bytes,
    so the leader sees it keep up)."""
    bucket = mgr.inbound
    flags = [follower_throttled(mgr, r) for r in followed]
    for r, throttled in zip(followed, flags, strict=True):
        bucket.want(r.tp, demand(mgr, r.topic, r.lag_bytes), throttled, now)
    bucket.advance(now)
    shares = bucket.take([Take(r.tp, MAX_GRANT, t) for r, t in zip(followed, flags, strict=True)])
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
    if r is None or r.role is not ReplicaRole.LEADER or follower not in r.replicas:
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
    if follower not in r.isr and r.followers[follower].reached_hw:  # it may join the ISR
        mgr.isr_candidates.add(r.tp)
    return r, offset


def serve_partitions(
    mgr: ReplicaManager, follower: int, partitions: Iterable[FetchPartition], now: float
) -> list[FetchedPartition]:
    """As leader: record each follower's progress and serve each partition its credit in the
    outbound bucket (the leader throttle covers listed replicas whose follower is outside the ISR)."""
    results: list[FetchedPartition | None] = []  # None: served, filled in below
    serving: list[tuple[int, Replica, int, bool]] = []  # (index in results, replica, lag, throttled)
    asks: list[Take[ServedKey]] = []
    bucket = mgr.outbound
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
        lag = r.log_end_offset - offset
        bucket.want((r.tp, follower), demand(mgr, r.topic, lag), throttled, now)
        serving.append((len(results), r, lag, throttled))
        asks.append(Take((r.tp, follower), min(max(0, p.max_bytes), lag), throttled))
        results.append(None)
    if not serving:
        return [a for a in results if a is not None]
    bucket.advance(now)
    shares = bucket.take(asks)
    for (index, r, lag, throttled), share in zip(serving, shares, strict=True):
        bucket.want((r.tp, follower), demand(mgr, r.topic, lag - share), throttled, now)
        results[index] = FetchedPartition(
            r.topic, r.partition, NONE, share, r.log_end_offset, r.high_watermark, follower in r.isr
        )
    return [a for a in results if a is not None]


def serve_fetch(mgr: ReplicaManager, request: FetchRequest, now: float) -> FetchResponse:
    """As leader, a sessionless fetch: every listed partition is answered."""
    return FetchResponse(NONE, tuple(serve_partitions(mgr, request.replica_id, request.partitions, now)))


def apply_answer(
    mgr: ReplicaManager, leader: int, p: FetchPartition, answer: FetchedPartition | None, now: float
) -> int:
    """As follower: take what the leader sent for ``p``, and give the inbound bucket back what was
    granted but not sent. Returns the bytes taken, SKIPPED (no answer, or the partition changed
    while the fetch was in flight) or REFUSED (an error code)."""
    n = _take_answer(mgr, leader, p, answer, now)
    tp = (p.topic, p.partition)
    r = mgr.replicas.get(tp)
    throttled = r is not None and follower_throttled(mgr, r)
    if r is not None and fetching_from(mgr, r, leader):
        mgr.inbound.want(tp, demand(mgr, r.topic, r.lag_bytes), throttled, now)
    mgr.inbound.refund(tp, p.max_bytes - max(0, n), throttled)
    return n


def _take_answer(
    mgr: ReplicaManager, leader: int, p: FetchPartition, answer: FetchedPartition | None, now: float
) -> int:
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
    mgr.put(rm.fetched(r, n, answer.log_end_offset, answer.in_isr, now))
    return n


def fetch_failed(mgr: ReplicaManager, request: FetchRequest) -> None:
    """As follower: nothing of ``request`` arrived; what it was granted goes back."""
    for p in request.partitions:
        tp = (p.topic, p.partition)
        r = mgr.replicas.get(tp)
        mgr.inbound.refund(tp, p.max_bytes, r is not None and follower_throttled(mgr, r))


def answers_by_partition(response: FetchResponse) -> Mapping[TopicPartition, FetchedPartition]:
    return {(a.topic, a.partition): a for a in response.partitions}


def apply_fetch(
    mgr: ReplicaManager, leader: int, request: FetchRequest, response: FetchResponse, now: float
) -> list[TopicPartition]:
    """As follower: take what the leader sent. Partitions whose state changed while the fetch was in
    flight are skipped. Returns the partitions the leader refused (an error code)."""
    refused = []
    answers = answers_by_partition(response)
    for p in request.partitions:
        tp = (p.topic, p.partition)
        if apply_answer(mgr, leader, p, answers.get(tp), now) == REFUSED:
            refused.append(tp)
    return refused

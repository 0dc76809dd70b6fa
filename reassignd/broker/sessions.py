"""Incremental fetch sessions between a follower and a leader agent (Kafka's KIP-227, simplified).
Pure: functions of a :class:`ReplicaManager`, a session and an injected ``now``.

A follower's fetches from one leader form a session. Its first request (epoch 0) starts it; each
request lists only the partitions that need it: at first every followed one, then those behind the
leader's end, those that received bytes last time, and those whose state changed here (newly
followed, new leader epoch, truncation), at most MAX_PARTITIONS_PER_FETCH at a time, longest
waiting first. Partitions that left the session are named in ``forgotten``. A partition the leader
refused (not leader yet, or an epoch differs) is listed again after REFUSED_BACKOFF_S (Kafka's
replica.fetch.backoff.ms), or as soon as the leader reports it can serve it. A failed fetch
restarts the session (the next request has epoch 0), and so does an answer
FETCH_SESSION_ID_NOT_FOUND or INVALID_FETCH_SESSION_EPOCH (the leader restarted, or the follower's
view of the session is not the leader's).

The leader remembers each follower's session (``ReplicaManager.sessions``) and answers every listed
partition, plus the unlisted ones its follower can use news of: its ISR membership changed, a
refused one can be served now, or the log grew beyond the follower's end (the follower lists them
at its next fetch, to get the bytes). One it cannot serve any more is not
reported: the follower waits for its own LeaderAndIsr, as in Kafka. An unlisted partition is one
the follower has all of: fetching it again would be fetching from the leader's end, so the leader
counts it caught up as of the session's latest fetch (``ReplicaManager.seen``), exactly when Kafka's
leader would have. So an idle, caught-up follower costs nothing per fetch and stays in the ISR
while its session lives (an idle session fetches every ~0.5 s, see fetcher.py); a follower whose
fetches stop drops out after ``replica.lag.time.max.ms`` as before.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from reassignd.broker import replica as rm
from reassignd.broker.replication import (
    REFUSED,
    SKIPPED,
    answers_by_partition,
    apply_answer,
    demand,
    fetch_partitions,
    fetching_from,
    follower_throttled,
    refusal,
    serve_fetch,
    serve_partitions,
    served,
)
from reassignd.broker.state import LeaderSession, ReplicaManager
from reassignd.control.fetch import (
    FETCH_SESSION_ID_NOT_FOUND,
    INVALID_FETCH_SESSION_EPOCH,
    FetchedPartition,
    FetchRequest,
    FetchResponse,
)
from reassignd.control.wire import NONE
from reassignd.int_limits import INT32_MAX
from reassignd.topic_partition import TopicPartition

MAX_EPOCH = INT32_MAX
REFUSED_BACKOFF_S = 1.0
MAX_PARTITIONS_PER_FETCH = 2000  # more wait for the next fetches, oldest first


def next_epoch(epoch: int) -> int:
    """Kafka's session epochs: 0 starts a session, then 1, 2, ... wrapping to 1."""
    return 1 if epoch >= MAX_EPOCH else epoch + 1


# --- the follower's side ---------------------------------------------------------------------------


@dataclass(slots=True)
class FollowerSession:
    """A follower's fetch session with one leader."""

    leader: int
    session_id: int
    epoch: int = 0  # of the next request; 0: a full one (the session restarts)
    known: dict[TopicPartition, int] = field(default_factory=dict)  # in it, with the epoch listed
    active: dict[TopicPartition, None] = field(default_factory=dict)  # to list, oldest first
    retry: dict[TopicPartition, float] = field(default_factory=dict)  # refused: list again at

    def restart(self) -> None:
        """After a failed fetch: the next request lists everything."""
        self.epoch = 0


@dataclass(frozen=True, slots=True)
class FetchOutcome:
    refused: tuple[TopicPartition, ...] = ()
    busy: bool = True  # something moved, or will: fetch again soon


def session_request(mgr: ReplicaManager, s: FollowerSession, now: float) -> FetchRequest | None:
    """The next fetch of the session (None: nothing to fetch or to tell the leader)."""
    followed = mgr.followed.get(s.leader, set())
    dirty = mgr.fetch_dirty.pop(s.leader, set())
    forgotten: list[TopicPartition] = []
    if s.epoch == 0:
        if not followed:
            return None
        s.active = dict.fromkeys(sorted(followed))
        s.retry.clear()
    else:
        if not followed and not s.known:
            return None
        for tp in dirty:
            s.retry.pop(tp, None)
        if s.retry:
            due = [tp for tp, at in s.retry.items() if at <= now]
            for tp in due:
                del s.retry[tp]
            dirty.update(due)
        s.active.update(dict.fromkeys(sorted(dirty)))
        for tp in [tp for tp in s.active if tp not in followed]:
            del s.active[tp]
        # a partition leaves the session only through a change here, which marked it dirty
        forgotten = sorted(tp for tp in dirty if tp in s.known and tp not in followed)
    listed = sorted(itertools.islice(s.active, MAX_PARTITIONS_PER_FETCH))
    for tp in listed:
        del s.active[tp]
    replicas = [mgr.replicas[tp] for tp in listed]
    return FetchRequest(
        mgr.broker_id,
        fetch_partitions(mgr, replicas, now),
        session_id=s.session_id,
        session_epoch=s.epoch,
        forgotten=tuple(forgotten),
    )


def apply_session_fetch(
    mgr: ReplicaManager, s: FollowerSession, request: FetchRequest, response: FetchResponse, now: float
) -> FetchOutcome:
    """Take the leader's answer to ``request`` (built by :func:`session_request` for ``s``)."""
    if response.error_code != NONE:
        s.restart()
        return FetchOutcome()
    if request.session_epoch == 0:
        s.known.clear()
    for tp in request.forgotten:
        s.known.pop(tp, None)
    for p in request.partitions:
        s.known[(p.topic, p.partition)] = p.leader_epoch
    s.epoch = next_epoch(request.session_epoch)
    answers = answers_by_partition(response)
    refused: list[TopicPartition] = []
    listed: set[TopicPartition] = set()
    for p in request.partitions:
        tp = (p.topic, p.partition)
        listed.add(tp)
        n = apply_answer(mgr, s.leader, p, answers.get(tp), now)
        r = mgr.replicas.get(tp)
        if n == REFUSED:
            refused.append(tp)
            s.retry[tp] = now + REFUSED_BACKOFF_S
        elif n == SKIPPED or n > 0 or (r is not None and r.leader_log_end_offset > r.log_end_offset):
            s.active[tp] = None  # list it again (after those waiting longer)
        # else at the leader's end: quiet until the leader says otherwise
    for tp, answer in answers.items():
        if tp not in listed:
            _heard(mgr, s, tp, answer, refused, now)
    busy = bool(request.partitions or response.partitions or s.active or s.retry)
    return FetchOutcome(tuple(refused), busy=busy)


def _heard(
    mgr: ReplicaManager,
    s: FollowerSession,
    tp: TopicPartition,
    answer: FetchedPartition,
    refused: list[TopicPartition],
    now: float,
) -> None:
    """An unlisted partition the leader reports on (its log grew, or its state changed there)."""
    r = mgr.replicas.get(tp)
    if r is None or not fetching_from(mgr, r, s.leader) or s.known.get(tp) != r.leader_epoch:
        return  # changed here meanwhile: listed at the next fetch anyway
    if answer.error_code != NONE:
        refused.append(tp)
        s.active.pop(tp, None)
        s.retry.setdefault(tp, now + REFUSED_BACKOFF_S)
        return
    if (answer.log_end_offset, answer.in_isr) != (r.leader_log_end_offset, r.in_isr):
        r = rm.fetched(r, 0, answer.log_end_offset, answer.in_isr, now)
        mgr.put(r)
        lag = demand(mgr, r.topic, r.lag_bytes)
        mgr.inbound.want(tp, lag, follower_throttled(mgr, r), now)  # credit before its listing
    if s.retry.pop(tp, None) is not None or r.leader_log_end_offset > r.log_end_offset:
        s.active[tp] = None  # refused before, served now: fetch it for real


# --- the leader's side -----------------------------------------------------------------------------


def serve(mgr: ReplicaManager, request: FetchRequest, now: float) -> FetchResponse:
    """As leader: a fetch, in a session or not."""
    if request.session_id is None:
        return serve_fetch(mgr, request, now)
    follower = request.replica_id
    s = mgr.sessions.get(follower)
    if request.session_epoch == 0:
        s = LeaderSession(request.session_id, 0, now)
        mgr.sessions[follower] = s
    elif s is None or s.session_id != request.session_id:
        return FetchResponse(FETCH_SESSION_ID_NOT_FOUND)
    elif request.session_epoch != next_epoch(s.epoch):
        return FetchResponse(INVALID_FETCH_SESSION_EPOCH)
    for tp in request.forgotten:
        s.partitions.pop(tp, None)
        s.unserved.discard(tp)
        s.dirty.discard(tp)
    listed = set()
    for p in request.partitions:
        tp = (p.topic, p.partition)
        s.partitions[tp] = p.leader_epoch
        listed.add(tp)
    results = serve_partitions(mgr, follower, request.partitions, now)
    for a in results:
        if a.error_code == NONE:
            s.unserved.discard((a.topic, a.partition))
        else:
            s.unserved.add((a.topic, a.partition))
    pending = sorted(s.dirty - listed)  # reported at most MAX_PARTITIONS_PER_FETCH at a time
    report = set(pending[:MAX_PARTITIONS_PER_FETCH])
    s.dirty = set(pending[MAX_PARTITIONS_PER_FETCH:])
    growing = mgr.growing
    if len(growing) <= len(s.partitions):
        grown = {tp for tp in growing if tp in s.partitions and tp not in listed}
    else:
        grown = {tp for tp in s.partitions if tp in growing and tp not in listed}
    for tp in sorted(report | grown):
        answer = _unlisted(mgr, s, follower, tp, tp in report, now)
        if answer is not None:
            results.append(answer)
    s.epoch = request.session_epoch
    s.last_fetch_s = now
    return FetchResponse(NONE, tuple(results))


def _unlisted(
    mgr: ReplicaManager, s: LeaderSession, follower: int, tp: TopicPartition, changed: bool, now: float
) -> FetchedPartition | None:
    """An unlisted partition of the session: the follower is still where it last fetched from. A
    growing log records that as a fetch (Kafka's caught-up rule needs the leader's end at each one);
    the answer (no bytes) tells the follower of a change or of new data. A partition the leader
    cannot serve (any more) is not reported: its follower can only wait for its own LeaderAndIsr
    (Kafka's follower does not learn of leader changes from fetches either); one refused at its
    latest listing is reported once it can be served, so that its follower lists it again."""
    r = mgr.replicas.get(tp)
    code = refusal(mgr, r, follower, s.partitions[tp])
    if code != NONE or r is None:
        s.unserved.add(tp)  # no credit for it (a listing will be answered with the error)
        return None
    progress = r.followers.get(follower)
    offset = 0 if progress is None else progress.log_end_offset
    if tp in s.unserved:
        if not changed:
            return None
        r = mgr.grown(r, now)
    elif tp in mgr.growing:
        r, offset = served(mgr, r, follower, offset, now)
    else:
        r = mgr.grown(r, now)
    if not changed and r.log_end_offset <= offset:
        return None
    return FetchedPartition(tp[0], tp[1], NONE, 0, r.log_end_offset, r.high_watermark, follower in r.isr)

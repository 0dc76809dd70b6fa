"""Fair replication bandwidth (issue 9, item 6), pure: the max-min fair split, the fair bucket over
time, and agents' replica managers exchanging fetches in simulated time."""

from __future__ import annotations

import json
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reassignd.broker.bandwidth import FairBucket, Take
from reassignd.broker.isr_plan import plan_isr_updates
from reassignd.broker.sessions import FollowerSession, apply_session_fetch, serve, session_request
from reassignd.broker.sim_config import BrokerSimConfig, topic_sim_config
from reassignd.broker.state import ReplicaManager
from reassignd.broker.throttle import MAX_GRANT, allocate, allocate_throttled
from reassignd.control.fetch import FetchRequest, FetchResponse
from reassignd.control.protocol import Header, LeaderAndIsrRequest, WirePartitionState

needs_st = st.lists(st.integers(0, 10**6), max_size=30)


# --- the fair-share function ------------------------------------------------------------------------


@given(st.integers(0, 3 * 10**6), needs_st)
def test_allocate_is_max_min_fair(budget: int, needs: list[int]) -> None:
    shares = allocate(budget, needs)
    assert all(0 <= s <= n for s, n in zip(shares, needs, strict=True))  # never more than its demand
    assert sum(shares) <= budget  # never more than the rate
    assert sum(shares) == min(budget, sum(needs))  # nothing wasted while someone wants more
    # the minimum share is maximal: a partition that got less than it wanted got (to the byte)
    # as much as anyone, so no share can grow without shrinking one that is not larger
    top = max(shares, default=0)
    assert all(s >= top - 1 for s, n in zip(shares, needs, strict=True) if s < n)


@given(
    st.integers(0, 3 * 10**6),
    st.integers(0, 3 * 10**6),
    st.lists(st.tuples(st.integers(0, 10**6), st.booleans()), max_size=30),
)
def test_allocate_throttled_is_max_min_fair_under_both_budgets(
    budget: int, throttle_budget: int, asks: list[tuple[int, bool]]
) -> None:
    needs = [n for n, _ in asks]
    flags = [t for _, t in asks]
    shares = allocate_throttled(budget, throttle_budget, needs, flags)
    assert all(0 <= s <= n for s, n in zip(shares, needs, strict=True))
    assert sum(shares) <= budget
    throttled = [s for s, t in zip(shares, flags, strict=True) if t]
    assert sum(throttled) <= throttle_budget
    total_full = sum(shares) == budget
    throttle_full = sum(throttled) == min(budget, throttle_budget)
    top = max(shares, default=0)
    top_throttled = max(throttled, default=0)
    for s, n, t in zip(shares, needs, flags, strict=True):
        if s == n:
            continue
        # every partition short of its demand is held back by a full budget in which it has
        # (to the byte) the largest share
        by_total = total_full and s >= top - 1
        by_throttle = t and throttle_full and s >= top_throttled - 1
        assert by_total or by_throttle, (shares, needs, flags)


# --- the bucket over time ---------------------------------------------------------------------------


def simulate(
    bucket: FairBucket[int],
    lags: dict[int, int],
    periods: dict[int, float],
    until: float,
    throttled: frozenset[int] = frozenset(),
) -> dict[int, int]:
    """Each key fetches every ``periods[key]`` seconds (first at a random phase), asking for its
    lag; returns the bytes each received."""
    rng = random.Random(7)
    next_at = {k: rng.uniform(0, p) for k, p in periods.items()}
    got = dict.fromkeys(lags, 0)
    while True:
        key = min(next_at, key=lambda k: next_at[k])
        now = next_at[key]
        if now > until:
            return got
        next_at[key] = now + periods[key]
        left = lags[key] - got[key]
        bucket.want(key, left, key in throttled, now)
        bucket.advance(now)
        [n] = bucket.take([Take(key, left, key in throttled)])
        got[key] += n
        bucket.want(key, left - n, key in throttled, now)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(2, 12),
    st.lists(st.sampled_from([0.05, 0.1, 0.15, 0.25, 0.4]), min_size=12, max_size=12),
)
def test_keys_behind_get_the_same_rate_however_often_they_fetch(n: int, periods: list[float]) -> None:
    rate, until = 1_000_000.0, 20.0
    bucket: FairBucket[int] = FairBucket(rate, math.inf, 0.0)
    got = simulate(bucket, dict.fromkeys(range(n), 10**12), dict(enumerate(periods[:n])), until)
    fair = rate * until / n
    assert sum(got.values()) <= rate * until + bucket.capacity  # the rate holds
    assert sum(got.values()) >= 0.95 * rate * until  # and nothing is wasted
    for key, n_bytes in got.items():
        assert abs(n_bytes - fair) <= 0.05 * fair + bucket.capacity / n, (key, n_bytes, fair)


def test_a_key_with_a_small_lag_takes_it_and_the_others_share_the_rest() -> None:
    rate = 1_000_000.0
    bucket: FairBucket[int] = FairBucket(rate, math.inf, 0.0)
    got = simulate(bucket, {0: 100_000, 1: 10**12, 2: 10**12}, {0: 0.1, 1: 0.1, 2: 0.2}, 10.0)
    assert got[0] == 100_000
    assert got[1] + got[2] >= 0.95 * (10 * rate - 100_000)
    assert abs(got[1] - got[2]) <= 0.05 * got[1]


def test_throttled_keys_share_the_throttle_and_the_others_the_rest() -> None:
    rate, throttle = 1_000_000.0, 100_000.0
    bucket: FairBucket[int] = FairBucket(rate, throttle, 0.0)
    lags = dict.fromkeys(range(4), 10**12)
    got = simulate(bucket, lags, dict.fromkeys(range(4), 0.1), 10.0, throttled=frozenset({0, 1}))
    assert got[0] + got[1] <= 10 * throttle + bucket.throttle_capacity
    assert got[0] == pytest.approx(got[1], rel=0.05)
    assert got[2] == pytest.approx(got[3], rel=0.05)
    assert got[2] + got[3] >= 0.95 * 10 * (rate - throttle)


def test_a_key_whose_fetches_stop_hoards_nothing() -> None:
    rate = 1_000_000.0
    bucket: FairBucket[int] = FairBucket(rate, math.inf, 0.0)
    for key in range(4):
        bucket.want(key, 10**12, False, 0.0)
    got = 0
    for step in range(1, 101):  # keys 1-3 fetch for 10 s; key 0 never does
        now = step * 0.1
        for key in (1, 2, 3):
            bucket.want(key, 10**12, False, now)
            bucket.advance(now)
            got += bucket.take([Take(key, MAX_GRANT, False)])[0]
    assert bucket.credits.get(0, 0) == 0  # forgotten after stale_s, its credit back in the pool
    assert 0 not in bucket.wants
    # while it was still counted (2 s), it held at most its share of the burst
    assert got >= 10 * rate - bucket.stale_s * rate / 4 - bucket.capacity


@given(
    st.lists(
        st.tuples(
            st.floats(0.0, 0.3),  # time step
            st.integers(0, 5),  # key
            st.integers(0, 3 * 10**6),  # its lag
            st.booleans(),  # throttled
            st.integers(0, 10**6),  # bytes of its grant given back
        ),
        max_size=60,
    )
)
def test_the_bucket_never_grants_more_than_its_rates(
    ops: list[tuple[float, int, int, bool, int]],
) -> None:
    rate, throttle = 1_000_000.0, 300_000.0
    bucket: FairBucket[int] = FairBucket(rate, throttle, 0.0)
    now = 0.0
    used = used_throttled = 0
    for step, key, lag, throttled, unused in ops:
        now += step
        bucket.want(key, lag, throttled, now)
        bucket.advance(now)
        [n] = bucket.take([Take(key, lag, throttled)])
        assert 0 <= n <= lag
        back = min(unused, n)
        bucket.refund(key, back, throttled)
        used += n - back
        used_throttled += n - back if throttled else 0
        assert all(c >= 0 for c in bucket.credits.values())
        assert bucket.pool >= -1e-6
        # what moved never exceeds the burst plus the rate since the start (throttle likewise)
        assert used <= bucket.capacity + rate * now + 1
        assert used_throttled <= bucket.throttle_capacity + throttle * now + 1


def test_a_partition_whose_lag_is_unknown_gets_at_most_a_round_of_what_is_left() -> None:
    bucket: FairBucket[int] = FairBucket(1000.0, math.inf, 0.0)
    assert bucket.take([Take(1, MAX_GRANT, False), Take(2, MAX_GRANT, False)]) == [25, 25]
    bucket.want(1, 10**9, False, 0.0)  # its lag is known now: it gets its credit, nothing else
    assert bucket.take([Take(1, MAX_GRANT, False)]) == [0]
    bucket.advance(0.1)  # the first round after a quiet spell: a round's worth, not the burst
    assert bucket.take([Take(1, MAX_GRANT, False)]) == [50]
    bucket.advance(0.2)  # then what came in while it wanted bytes
    assert bucket.take([Take(1, MAX_GRANT, False)]) == [100]


def test_a_key_that_starts_wanting_bytes_gets_a_share_without_waiting_a_round() -> None:
    bucket: FairBucket[int] = FairBucket(1000.0, math.inf, 0.0)
    bucket.want(1, 10**9, False, 1.0)
    bucket.advance(1.0)
    bucket.advance(1.01)  # within the round: nothing new
    assert set(bucket.credits) == {1}
    bucket.want(2, 10**9, False, 1.02)  # a move starts: its key joins
    bucket.advance(1.02)
    assert bucket.take([Take(2, MAX_GRANT, False)])[0] > 0


def test_rates_change_live() -> None:
    bucket: FairBucket[int] = FairBucket(1000.0, math.inf, 0.0)
    bucket.want(1, 10**9, False, 0.0)
    bucket.advance(1.0)
    bucket.with_rates(10**6, math.inf, 1.0)
    bucket.advance(1.1)
    bucket.advance(1.2)
    assert bucket.take([Take(1, MAX_GRANT, False)])[0] >= 150_000
    unlimited: FairBucket[int] = FairBucket(math.inf, math.inf, 0.0)
    assert unlimited.take([Take(1, 12345, False)]) == [12345]
    unlimited.want(1, 12345, False, 0.0)
    unlimited.advance(0.1)
    assert unlimited.take([Take(1, 12345, False)]) == [12345]


# --- agents' replica managers, driven directly --------------------------------------------------------

SIZE = 100_000_000


def manager(broker_id: int, rate: float) -> ReplicaManager:
    mgr = ReplicaManager(broker_id, replication_bytes_per_s=rate, now=0.0)
    mgr.broker_epoch = 100 + broker_id
    mgr.set_topic_config("t", topic_sim_config({"reassignd.sim.initial.bytes": str(SIZE)}), 0.0)
    return mgr


def lai(mgr: ReplicaManager, placements: dict[int, tuple[int, int]]) -> None:
    """Partition p of topic t led by ``placements[p][0]`` and added on ``placements[p][1]``."""
    assert mgr.broker_epoch is not None
    states = tuple(
        WirePartitionState("t", p, 7, leader, 1, (leader,), 0, (leader, follower), is_new=True)
        for p, (leader, follower) in placements.items()
        if mgr.broker_id in (leader, follower)
    )
    mgr.leader_and_isr(LeaderAndIsrRequest(Header(9000, 7, mgr.broker_epoch), states), 0.0)


def wire(request: FetchRequest) -> FetchRequest:
    return FetchRequest.from_json(json.loads(json.dumps(request.to_json())))


def replicate(
    placements: dict[int, tuple[int, int]], rates: dict[int, float], until: float
) -> dict[int, int]:
    """Every follower fetches from every leader it follows every 0.1 s, each session at its own
    phase; the bytes each partition's adding replica has after ``until`` seconds."""
    managers = {b: manager(b, rate) for b, rate in rates.items()}
    for mgr in managers.values():
        lai(mgr, placements)
    sessions = {(f, lead): FollowerSession(lead, 1 + 10 * f + lead) for lead, f in set(placements.values())}
    rng = random.Random(3)
    next_at = {link: rng.uniform(0.0, 0.1) for link in sessions}
    while True:
        link = min(next_at, key=lambda k: next_at[k])
        now = next_at[link]
        if now > until:
            break
        next_at[link] = now + 0.1
        follower, leader = managers[link[0]], managers[link[1]]
        request = session_request(follower, sessions[link], now)
        if request is not None:
            response = serve(leader, wire(request), now)
            response = FetchResponse.from_json(json.loads(json.dumps(response.to_json())))
            apply_session_fetch(follower, sessions[link], request, response, now)
    return {p: managers[f].replicas[("t", p)].log_end_offset for p, (_, f) in placements.items()}


def assert_fair(done: dict[int, int], moved: float) -> None:
    """``moved`` bytes in all (within 2 %: the rate holds and nothing is wasted), split evenly
    within 5 %."""
    assert 0.98 * moved <= sum(done.values()) <= 1.02 * moved
    mean = sum(done.values()) / len(done)
    assert all(abs(n - mean) <= 0.05 * mean for n in done.values()), done


def test_partitions_copied_from_unevenly_loaded_leaders_progress_alike() -> None:
    """Broker 9 copies 1 partition from leader 1, 2 from leader 2 and 6 from leader 3: each gets a
    ninth of its bandwidth in (shared per leader, partition 0 would get a third)."""
    leaders = [1, 2, 2, 3, 3, 3, 3, 3, 3]
    placements = {p: (lead, 9) for p, lead in enumerate(leaders)}
    rate = 9_000_000.0
    assert_fair(replicate(placements, {1: 1e12, 2: 1e12, 3: 1e12, 9: rate}, 10.0), rate * 10.0)


def test_partitions_served_to_unevenly_loaded_followers_progress_alike() -> None:
    """Leader 1 serves 1 partition to broker 2, 2 to broker 3 and 6 to broker 4: each gets a ninth
    of its bandwidth out."""
    followers = [2, 3, 3, 4, 4, 4, 4, 4, 4]
    placements = {p: (1, f) for p, f in enumerate(followers)}
    rate = 9_000_000.0
    assert_fair(replicate(placements, {1: rate, 2: 1e12, 3: 1e12, 4: 1e12}, 10.0), rate * 10.0)


def test_the_follower_throttle_is_shared_fairly_too() -> None:
    leaders = [1, 2, 2, 2]
    placements = {p: (lead, 9) for p, lead in enumerate(leaders)}
    managers_rate = {1: 1e12, 2: 1e12, 9: 1e12}
    throttled = topic_sim_config(
        {"reassignd.sim.initial.bytes": str(SIZE), "follower.replication.throttled.replicas": "*"}
    )
    # the same as replicate(), with broker 9's follower throttle at 4 MB/s
    managers = {b: manager(b, r) for b, r in managers_rate.items()}
    managers[9].set_topic_config("t", throttled, 0.0)
    managers[9].set_broker_config(BrokerSimConfig(1e12, follower_throttled_rate=4_000_000), 0.0)
    for mgr in managers.values():
        lai(mgr, placements)
    sessions = {lead: FollowerSession(lead, lead) for lead in (1, 2)}
    for step in range(100):
        for lead, phase in ((1, 0.0), (2, 0.037)):
            now = step * 0.1 + phase + 0.01
            request = session_request(managers[9], sessions[lead], now)
            assert request is not None
            response = serve(managers[lead], request, now)
            apply_session_fetch(managers[9], sessions[lead], request, response, now)
    done = {p: managers[9].replicas[("t", p)].log_end_offset for p in range(4)}
    assert_fair(done, 4_000_000 * 10)


def test_a_growing_partition_in_sync_stays_in_sync_while_moves_saturate_its_follower() -> None:
    """Broker 2 follows g-0 in its ISR (the log grows 10 kB/s) while copying 5 large partitions
    through its 1 MB/s: g-0 keeps up (its demand counts the growth), the moves share the rest."""
    leader, follower = manager(1, 1e12), manager(2, 1_000_000)
    growing = topic_sim_config(
        {"reassignd.sim.initial.bytes": "1000", "reassignd.sim.produce.bytes.per.s": "10000"}
    )
    in_sync = WirePartitionState("g", 0, 7, 1, 1, (1, 2), 0, (1, 2), is_new=True)
    for mgr in (leader, follower):
        mgr.set_topic_config("g", growing, 0.0)
        lai(mgr, {p: (1, 2) for p in range(5)})
        assert mgr.broker_epoch is not None
        mgr.leader_and_isr(LeaderAndIsrRequest(Header(9000, 7, mgr.broker_epoch), (in_sync,)), 0.0)
    session = FollowerSession(1, 1)
    now = 0.0
    for _ in range(400):
        now = round(now + 0.1, 6)
        request = session_request(follower, session, now)
        assert request is not None
        apply_session_fetch(follower, session, request, serve(leader, request, now), now)
    assert plan_isr_updates(leader, now, 30.0) == []  # nobody left the ISR after 40 s
    assert follower.replicas[("g", 0)].lag_bytes <= 2 * 10_000 * 0.1
    moved = [follower.replicas[("t", p)].log_end_offset for p in range(5)]
    assert sum(moved) >= 0.95 * (40 * 1_000_000 - 40 * 10_000)
    assert max(moved) - min(moved) <= 0.05 * max(moved)

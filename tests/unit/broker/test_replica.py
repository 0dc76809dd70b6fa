"""The replica model: pure functions of values and an injected ``now``."""

from __future__ import annotations

import pytest

from reassignd.broker import replica as rm
from reassignd.broker.replica import FollowerProgress, RateMeter, ReplicaRole
from reassignd.control.protocol import WirePartitionState

ME = 1
LAG_S = 30.0


def state(
    *,
    leader: int = ME,
    epoch: int = 1,
    isr: tuple[int, ...] = (1, 2, 3),
    replicas: tuple[int, ...] = (1, 2, 3),
    is_new: bool = False,
    partition_epoch: int = 0,
) -> WirePartitionState:
    return WirePartitionState(
        topic="orders",
        partition=0,
        controller_epoch=7,
        leader=leader,
        leader_epoch=epoch,
        isr=isr,
        partition_epoch=partition_epoch,
        replicas=replicas,
        is_new=is_new,
    )


@pytest.mark.parametrize(
    ("s", "expected"),
    [
        (state(leader=2, is_new=True), 500),  # topic creation: every replica in the ISR starts full
        (state(leader=2, isr=(2, 3), replicas=(2, 3, 1), is_new=True), 0),  # a reassignment's adding replica
        (state(leader=2), 0),  # never seen, follower (agent restart): starts empty and catches up
        (state(leader=ME), 500),  # never seen, leader
    ],
)
def test_a_replica_never_seen_starts_per_the_rules(s: WirePartitionState, expected: int) -> None:
    assert rm.initial_log_end_offset(s, ME, initial_bytes=500) == expected
    assert rm.became(None, s, ME, 500, now=0.0).log_end_offset == expected


def test_a_known_replica_keeps_its_log_across_epochs() -> None:
    r = rm.became(None, state(leader=2), ME, 500, now=0.0)
    r = rm.fetched(r, 300, leader_leo=1000, in_isr=False, now=1.0)
    r2 = rm.became(r, state(leader=ME, epoch=2, is_new=True), ME, 500, now=2.0)
    assert (r2.role, r2.log_end_offset, r2.leader_epoch) == (ReplicaRole.LEADER, 300, 2)


def test_leaders_grow_at_the_produce_rate_with_fractions_carried() -> None:
    r = rm.became(None, state(), ME, 0, now=0.0)
    r = rm.grown(r, 0.25, produce_bytes_per_s=10.0)
    assert r.log_end_offset == 2
    r = rm.grown(r, 0.5, produce_bytes_per_s=10.0)
    assert r.log_end_offset == 5
    r = rm.grown(r, 0.5, produce_bytes_per_s=10.0)  # no time passed
    assert r.log_end_offset == 5
    follower = rm.became(None, state(leader=2), ME, 0, now=0.0)
    assert rm.grown(follower, 100.0, 10.0).log_end_offset == 0


def test_follower_progress_is_kafkas_last_caught_up_rule() -> None:
    p = FollowerProgress().fetched(fetch_offset=0, leader_leo=100, now=1.0)
    assert not p.caught_up and p.last_caught_up_s is None
    p = p.fetched(fetch_offset=100, leader_leo=150, now=2.0)  # had what the leader had at t=1
    assert p.caught_up and p.last_caught_up_s == 1.0
    p = p.fetched(fetch_offset=150, leader_leo=150, now=3.0)  # at the leader's end now
    assert p.caught_up and p.last_caught_up_s == 3.0
    p = p.fetched(fetch_offset=160, leader_leo=400, now=4.0)  # had everything the leader had at t=3
    assert p.caught_up and p.last_caught_up_s == 3.0
    p = p.fetched(fetch_offset=200, leader_leo=600, now=5.0)  # fell behind the leader's end at t=4
    assert not p.caught_up and p.last_caught_up_s == 3.0


def test_becoming_leader_gives_isr_members_a_full_lag_window() -> None:
    r = rm.became(None, state(isr=(1, 2), replicas=(1, 2, 3)), ME, 1000, now=50.0)
    assert r.followers[2].last_caught_up_s == 50.0
    assert r.followers[3].last_caught_up_s is None
    assert rm.desired_isr(r, ME, 50.0 + LAG_S, LAG_S, live=None) == (1, 2)
    assert rm.desired_isr(r, ME, 50.0 + LAG_S + 0.1, LAG_S, live=None) == (1,)


def test_the_leader_adds_a_caught_up_follower_and_drops_a_dead_one() -> None:
    r = rm.became(None, state(isr=(1, 2), replicas=(1, 2, 3)), ME, 1000, now=0.0)
    r, offset = rm.record_fetch(r, 3, fetch_offset=0, now=1.0, broker_id=ME)
    assert offset == 0 and rm.desired_isr(r, ME, 1.0, LAG_S, None) == (1, 2)
    r, _ = rm.record_fetch(r, 3, fetch_offset=1000, now=2.0, broker_id=ME)
    assert rm.desired_isr(r, ME, 2.0, LAG_S, None) == (1, 2, 3)
    assert rm.desired_isr(r, ME, 2.0, LAG_S, live=frozenset({1, 3})) == (1, 3)


def test_the_isr_always_holds_the_leader_and_a_fenced_leader_changes_nothing() -> None:
    r = rm.became(None, state(isr=(2,), replicas=(1, 2)), ME, 0, now=0.0)  # leader not in its ISR
    assert rm.desired_isr(r, ME, 1000.0, LAG_S, live=frozenset({1})) == (1,)
    r = rm.became(None, state(isr=(1, 2)), ME, 0, now=0.0)
    fenced = rm.with_zk_state(r, ME, leader=2, leader_epoch=5, controller_epoch=7, isr=(2,), version=9)
    assert fenced.isr_fenced
    assert rm.desired_isr(fenced, ME, 1000.0, LAG_S, None) == (1, 2)
    adopted = rm.with_zk_state(r, ME, leader=ME, leader_epoch=1, controller_epoch=8, isr=(1,), version=9)
    assert (adopted.isr, adopted.partition_epoch, adopted.controller_epoch, adopted.isr_fenced) == (
        (1,),
        9,
        8,
        False,
    )


def test_a_follower_longer_than_its_leader_truncates() -> None:
    r = rm.became(None, state(leader=2), ME, 0, now=0.0)
    r = rm.fetched(r, 800, leader_leo=800, in_isr=True, now=1.0)
    r = rm.became(r, state(leader=3, epoch=2), ME, 0, now=2.0)
    r = rm.fetched(r, 0, leader_leo=500, in_isr=False, now=3.0)
    assert (r.log_end_offset, r.lag_bytes, r.in_isr) == (500, 0, False)


def test_the_high_watermark_follows_the_slowest_isr_member() -> None:
    r = rm.became(None, state(isr=(1, 2), replicas=(1, 2)), ME, 1000, now=0.0)
    assert r.high_watermark == 0
    r, _ = rm.record_fetch(r, 2, fetch_offset=600, now=1.0, broker_id=ME)
    assert r.high_watermark == 600
    r = rm.with_isr(r, (1,), partition_epoch=1, broker_id=ME)
    assert r.high_watermark == 1000


def test_the_fetch_rate_estimate_converges_and_decays() -> None:
    meter = RateMeter()
    now = 0.0
    for _ in range(100):  # 10 s of 1000 B every 0.1 s
        now += 0.1
        meter = meter.record(1000, now)
    assert meter.rate(now) == pytest.approx(10_000, rel=0.1)
    assert meter.rate(now + 10) < 10

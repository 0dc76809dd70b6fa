"""The quota manager: buckets per entity, request order, quota changes, idle expiry, metrics."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from reassignd.quotas.entities import DEFAULT, QuotaIdentity
from reassignd.quotas.manager import QuotaManager, response_throttle_ms
from reassignd.quotas.metrics import QuotaMetrics
from reassignd.quotas.token_bucket import Admission
from tests.unit.quotas.manager_helpers import manager

pytestmark = pytest.mark.timeout(60)

OK = Admission(admitted=True, throttle_ms=0)


def test_unconfigured_entities_are_unlimited() -> None:
    m = manager({("bob", None): 1.0})
    assert m.charge_in_order("alice", "app", [10_000, 10_000], now_s=0.0) == [OK, OK]
    assert m.snapshot(0.0) == ()  # no bucket for an unlimited entity
    assert m.throttle_ms("alice", "app", 0.0) == 0


def test_worked_example_through_the_manager() -> None:
    """KIP-599: R = 10, window 10 × 1 s → 90, 90 admitted, the third 90 rejected (8000 ms)."""
    m = manager({("alice", None): 10.0})
    result = m.charge_in_order("alice", "app", [90, 90, 90], now_s=0.0)
    assert result == [OK, OK, Admission(admitted=False, throttle_ms=8000)]
    assert m.throttle_ms("alice", "app", 5.0) == 3000
    (snap,) = m.snapshot(5.0)
    assert (snap.entity, snap.config_key) == (QuotaIdentity("alice", None), ("alice", None))
    assert (snap.tokens, snap.rate_per_s, snap.burst) == (-30.0, 10.0, 100.0)
    assert (snap.throttle_ms, snap.last_throttle_ms, snap.rejected_topics) == (3000, 8000, 1)
    assert snap.mutation_rate_per_s == 18.0  # 180 admitted over the 10 s window
    assert m.snapshot(30.0)[0].mutation_rate_per_s == 0.0


def test_topics_are_charged_in_request_order() -> None:
    m = manager({("alice", None): 1.0})  # B = 10
    assert m.charge_in_order("alice", "app", [3, 20, 1, 0], now_s=0.0) == [
        OK,
        OK,  # K = 7 ≥ 0: admitted, K = −13
        Admission(False, 13000),
        Admission(False, 13000),  # a zero charge (delete of an unknown topic) waits too
    ]
    m2 = manager({("alice", None): 1.0})
    assert m2.charge_in_order("alice", "app", [20, 3], now_s=0.0) == [OK, Admission(False, 10000)]


def test_client_ids_of_a_user_share_its_bucket_defaults_do_not() -> None:
    m = manager({("alice", None): 1.0, (DEFAULT, None): 1.0})
    assert m.admit("alice", "app", 10, 0.0) == OK
    assert m.admit("alice", "cli", 1, 0.0) == OK  # the same bucket, at K = 0: admitted, K = −1
    assert m.admit("alice", "web", 1, 0.0) == Admission(False, 1000)
    assert m.admit("bob", "app", 10, 0.0) == OK  # bob: a bucket of his own under <default>
    assert m.admit("carol", "app", 10, 0.0) == OK
    assert {s.entity for s in m.snapshot(0.0)} == {
        QuotaIdentity("alice", None),
        QuotaIdentity("bob", None),
        QuotaIdentity("carol", None),
    }


def test_quota_change_keeps_tokens_capped_at_the_new_burst() -> None:
    m = manager({("alice", None): 10.0})  # B = 100
    m.admit("alice", "app", 10, 0.0)  # K = 90
    m.set_quotas({("alice", None): 1.0})  # B = 10
    assert m.snapshot(0.0)[0].tokens == 10.0
    m.admit("alice", "app", 40, 0.0)  # K = −30
    m.set_quotas({("alice", None): 3.0, ("bob", None): 1.0})
    assert m.throttle_ms("alice", "app", 0.0) == 10000  # K carried over, the new rate
    assert m.admit("alice", "app", 1, 0.0) == Admission(False, 10000)


def test_quota_change_moves_a_bucket_to_the_entitys_new_quota_or_drops_it() -> None:
    m = manager({("alice", None): 1.0, (DEFAULT, None): 5.0})
    m.admit("alice", "app", 30, 0.0)  # K = −20 under alice's own quota
    m.set_quotas({(DEFAULT, None): 5.0})  # alice's own quota removed: <default> applies to her bucket
    (snap,) = m.snapshot(0.0)
    assert (snap.config_key, snap.rate_per_s, snap.tokens) == ((DEFAULT, None), 5.0, -20.0)
    m.set_quotas({(None, DEFAULT): 5.0})  # no user quota at all: the user bucket goes
    assert m.snapshot(0.0) == ()
    assert m.admit("alice", "app", 55, 0.0) == OK  # charged to a fresh, full client-id bucket
    assert m.snapshot(0.0)[0].entity == QuotaIdentity(None, "app")


def test_a_new_more_specific_quota_gets_a_full_bucket_of_its_own() -> None:
    m = manager({("alice", None): 1.0})
    m.admit("alice", "app", 30, 0.0)
    m.set_quotas({("alice", None): 1.0, ("alice", "app"): 2.0})
    assert m.admit("alice", "app", 22, 0.0) == OK  # (alice, app): B = 20, full
    assert m.admit("alice", "cli", 1, 0.0) == Admission(False, 20000)  # still alice's own


def test_idle_buckets_are_dropped_and_start_full_again() -> None:
    m = manager({("alice", None): 1.0})
    m.admit("alice", "app", 10_000, 0.0)  # K = −9990
    assert m.admit("alice", "app", 1, 3599.0) == Admission(False, 6_391_000)
    assert m.snapshot(3599.0 + 3599.9) != ()
    assert m.snapshot(3599.0 + 3600.0) == ()  # idle for an hour (a rejection counts as use)
    assert m.admit("alice", "app", 10, 3599.0 + 3600.0) == OK  # full again
    assert m.snapshot(7199.0)[0].tokens == 0.0
    m.admit("alice", "app", 5, 7199.0)
    assert m.expire_idle(7199.0 + 3600) == [QuotaIdentity("alice", None)]


def test_invalid_configuration_and_charges() -> None:
    m = QuotaManager()
    assert m.burst(10.0) == 110.0  # the defaults: 11 windows of 1 s
    with pytest.raises(ValueError, match="finite"):
        m.set_quotas({("alice", None): -1.0})
    with pytest.raises(ValueError, match="cannot charge"):
        m.admit("alice", "app", -1, 0.0)
    with pytest.raises(ValueError, match="positive"):
        QuotaManager(window_num=0)


def test_response_throttle_time() -> None:
    rejected = [OK, Admission(False, 8000), Admission(False, 7500)]
    assert response_throttle_ms(rejected, charged_at_s=10.0, now_s=10.0) == 7500  # the last one
    assert response_throttle_ms(rejected, charged_at_s=10.0, now_s=12.5) == 5000
    assert response_throttle_ms(rejected, charged_at_s=10.0, now_s=30.0) == 0
    assert response_throttle_ms([OK, OK], charged_at_s=10.0, now_s=10.0) == 0  # even if K < 0


def test_metrics_follow_the_snapshot() -> None:
    registry = CollectorRegistry()
    metrics = QuotaMetrics(registry)
    m = manager({("alice", None): 10.0, (None, DEFAULT): 1.0})
    m.charge_in_order("alice", "app", [90, 90, 90], now_s=0.0)
    m.admit("bob", "web", 2, 0.0)
    metrics.update(m.snapshot(5.0))

    def value(name: str, user: str, client_id: str) -> float | None:
        return registry.get_sample_value(name, {"user": user, "client_id": client_id})

    assert value("reassignd_quota_tokens", "alice", "") == -30.0
    assert value("reassignd_quota_throttle_time_ms", "alice", "") == 8000.0
    assert value("reassignd_quota_mutation_rate", "alice", "") == 18.0
    assert value("reassignd_quota_controller_mutation_rate", "alice", "") == 10.0
    assert value("reassignd_quota_rejected_topics", "alice", "") == 1.0
    assert value("reassignd_quota_tokens", "", "web") == 10.0  # 8 left, refilled to B = 10 by 5 s
    m.set_quotas({(None, DEFAULT): 1.0})
    metrics.update(m.snapshot(5.0))
    assert value("reassignd_quota_tokens", "alice", "") is None  # dropped bucket, gone series


_charges = st.lists(
    st.tuples(st.sampled_from(["alice", "bob"]), st.integers(0, 50), st.floats(0.0, 5.0)), max_size=50
)


@given(charges=_charges)
def test_every_bucket_stays_within_its_burst(charges: list[tuple[str, int, float]]) -> None:
    m = manager({("alice", None): 2.0, (DEFAULT, None): 1.0}, window_num=5)
    now = 0.0
    for user, n, advance in charges:
        now += advance
        before = {s.entity: s.tokens for s in m.snapshot(now)}
        admission = m.admit(user, "app", n, now)
        after = {s.entity: s.tokens for s in m.snapshot(now)}
        entity = QuotaIdentity(user, None)
        assert admission.throttle_ms >= 0
        if not admission.admitted:
            assert after[entity] == before[entity] < 0
        for s in m.snapshot(now):
            assert s.tokens <= s.burst

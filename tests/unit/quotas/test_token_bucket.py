"""The KIP-599 token bucket in strict mode: Kafka's published numbers, then properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reassignd.quotas.token_bucket import (
    THROTTLE_MS_MAX,
    Admission,
    TokenBucket,
    burst,
    throttle_ms_for,
)

pytestmark = pytest.mark.timeout(60)


def test_burst_is_rate_times_window() -> None:
    assert burst(10.0, 11, 1.0) == 110.0  # the defaults: B = 11·R
    assert burst(5.0, 20, 1.0) == 100.0
    assert burst(10.0, 10, 1.0) == 100.0


def test_kip_example_sequence_100_40_45_minus_5() -> None:
    """R = 5, B = 100: a new bucket is full; 60 leaves 40; a second later 45; 50 leaves −5."""
    bucket = TokenBucket(5.0, 100.0)
    assert bucket.tokens == 100.0
    assert bucket.try_admit(60, now_s=0.0) == Admission(admitted=True, throttle_ms=0)
    assert bucket.tokens == 40.0
    bucket.refill(1.0)
    assert bucket.tokens == 45.0
    assert bucket.try_admit(50, now_s=1.0).admitted
    assert bucket.tokens == -5.0
    assert bucket.throttle_ms(1.0) == 1000  # −(−5) / 5 s


def test_quotas_md_worked_example_strict() -> None:
    """R = 10, window 10 × 1 s (B = 100): 90 → K = 10; 90 admitted (10 ≥ 0) → −80, throttle 0;
    90 rejected with 8000 ms; 5 s later the throttle reads 3000 ms."""
    bucket = TokenBucket(10.0, burst(10.0, 10, 1.0))
    first = bucket.try_admit(90, now_s=0.0)
    assert (first, bucket.tokens, bucket.throttle_ms(0.0)) == (Admission(True, 0), 10.0, 0)
    second = bucket.try_admit(90, now_s=0.0)
    assert (second, bucket.tokens) == (Admission(True, 0), -80.0)
    third = bucket.try_admit(90, now_s=0.0)
    assert third == Admission(admitted=False, throttle_ms=8000)
    assert bucket.tokens == -80.0  # a rejection leaves K alone
    assert bucket.throttle_ms(5.0) == 3000


def test_kafka_javadoc_burst_of_560() -> None:
    """TokenBucket.java: Q = 5, B = 500; a burst of 560 leaves −60: wait 12 s."""
    bucket = TokenBucket(5.0, 500.0)
    assert bucket.try_admit(560, now_s=0.0).admitted
    assert bucket.tokens == -60.0
    assert bucket.try_admit(1, now_s=0.0) == Admission(False, 12000)
    assert bucket.try_admit(1, now_s=12.0).admitted  # back at exactly 0: admitted


def test_zero_tokens_exactly_is_admitted_and_no_k_ge_n_rule() -> None:
    bucket = TokenBucket(1.0, 10.0)
    assert bucket.try_admit(10, now_s=0.0).admitted
    assert bucket.tokens == 0.0
    assert bucket.try_admit(1000, now_s=0.0).admitted  # K = 0 ≥ 0, even for 1000 > K
    assert bucket.tokens == -1000.0
    assert not bucket.try_admit(0, now_s=0.0).admitted  # even a zero charge waits while K < 0


def test_refill_caps_at_burst_and_ignores_a_clock_stepping_back() -> None:
    bucket = TokenBucket(2.0, 10.0)
    bucket.try_admit(10, now_s=100.0)
    bucket.refill(102.0)
    assert bucket.tokens == 4.0
    bucket.refill(101.0)  # backwards: nothing added, not rewound
    assert (bucket.tokens, bucket.last_update_s) == (4.0, 102.0)
    bucket.refill(1000.0)
    assert bucket.tokens == 10.0


def test_rate_change_takes_effect_at_the_next_refill_capped_at_the_new_burst() -> None:
    bucket = TokenBucket(10.0, 110.0)
    bucket.try_admit(10, now_s=0.0)  # K = 100
    bucket.set_rate(1.0, 11.0)
    assert bucket.tokens == 100.0  # unchanged until the next refill
    bucket.refill(0.0)
    assert bucket.tokens == 11.0
    negative = TokenBucket(1.0, 11.0)
    negative.try_admit(31, now_s=0.0)  # K = −20
    negative.set_rate(4.0, 44.0)
    assert negative.throttle_ms(0.0) == 5000  # −(−20) / 4: the new rate, K carried over
    assert negative.try_admit(1, now_s=2.0) == Admission(False, 3000)


def test_throttle_rounds_half_up_like_java_and_is_bounded() -> None:
    assert throttle_ms_for(-0.0025, 1.0) == 3  # 2.5 ms → 3 (Math.round), not 2 (banker's)
    assert throttle_ms_for(-1.0, 3.0) == 333
    assert throttle_ms_for(5.0, 1.0) == 0
    assert throttle_ms_for(-1.0, 0.0) == THROTTLE_MS_MAX  # a zero rate never refills
    assert throttle_ms_for(-1e300, 1e-300) == THROTTLE_MS_MAX


def test_zero_rate_admits_once_then_throttles_for_ever() -> None:
    bucket = TokenBucket(0.0, 0.0)
    assert bucket.try_admit(3, now_s=0.0).admitted  # K = 0 ≥ 0, as in Kafka
    assert bucket.try_admit(3, now_s=1e6) == Admission(False, THROTTLE_MS_MAX)


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError, match="finite"):
        TokenBucket(-1.0, 10.0)
    with pytest.raises(ValueError, match="finite"):
        TokenBucket(float("nan"), 10.0)
    with pytest.raises(ValueError, match="cannot charge"):
        TokenBucket(1.0, 1.0).try_admit(-1, now_s=0.0)


# --- properties ----------------------------------------------------------------------------------

_rates = st.floats(min_value=0.01, max_value=1e4, allow_nan=False)
_windows = st.integers(min_value=1, max_value=30)
_steps = st.lists(
    st.tuples(
        st.floats(min_value=0.0, max_value=100.0, allow_nan=False),  # time advance, s
        st.integers(min_value=0, max_value=10_000),  # charge
        st.one_of(st.none(), _rates),  # a rate change before the charge
    ),
    max_size=40,
)


@given(rate=_rates, window=_windows, steps=_steps)
def test_tokens_never_exceed_burst_rejections_keep_k_throttle_non_negative(
    rate: float, window: int, steps: list[tuple[float, int, float | None]]
) -> None:
    bucket = TokenBucket(rate, burst(rate, window, 1.0))
    now = 0.0
    for advance, charge, new_rate in steps:
        now += advance
        if new_rate is not None:
            bucket.set_rate(new_rate, burst(new_rate, window, 1.0))
        before = bucket.tokens_at(now)
        admission = bucket.try_admit(charge, now)
        assert bucket.tokens <= bucket.burst
        assert admission.throttle_ms >= 0
        assert bucket.throttle_ms(now) >= 0
        if admission.admitted:
            assert before >= 0
            assert admission.throttle_ms == 0
            assert bucket.tokens == before - charge
        else:
            assert before < 0
            assert bucket.tokens == before  # a rejection never changes K
            assert admission.throttle_ms == throttle_ms_for(before, bucket.rate_per_s)


@given(rate=st.floats(1.0, 1e4), k=st.floats(min_value=-1e6, max_value=-1e-3), wait_s=st.floats(0.0, 1e6))
def test_throttle_is_the_wait_until_tokens_reach_zero(rate: float, k: float, wait_s: float) -> None:
    """After waiting the throttle time the bucket admits again (within rounding of 1 ms)."""
    bucket = TokenBucket(rate, rate * 11)
    bucket.tokens, bucket.last_update_s = k, 0.0
    throttle_s = bucket.throttle_ms(0.0) / 1000.0
    assert bucket.tokens_at(throttle_s + 0.0005 + 1e-9 * throttle_s) >= -1e-9 * max(1.0, -k)
    if wait_s < throttle_s - 0.001:
        assert not bucket.try_admit(0, wait_s).admitted

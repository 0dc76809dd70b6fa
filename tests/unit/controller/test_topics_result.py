"""throttle_time_ms is what is left to wait when the answer goes out (controller/model/requests.py)."""

from __future__ import annotations

from reassignd.controller.model.requests import TopicOutcome, TopicsResult


def test_the_time_the_answer_took_is_taken_off_the_throttle() -> None:
    decided = TopicsResult((TopicOutcome("t", 89),), throttle_time_ms=2_000, decided_at_s=100.0)
    assert decided.answered_at(100.0).throttle_time_ms == 2_000
    assert decided.answered_at(100.75).throttle_time_ms == 1_250
    assert decided.answered_at(103.0).throttle_time_ms == 0  # never below 0
    later = decided.answered_at(101.0)
    assert later.answered_at(101.5).throttle_time_ms == 500  # counted once, from the last answer


def test_no_throttle_stays_none() -> None:
    plain = TopicsResult((TopicOutcome("t"),))
    assert plain.answered_at(5.0) is plain

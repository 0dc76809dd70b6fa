"""The stall watch measures how long the event loop was held, and names the event in hand."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import time
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, Gauge, Histogram

from reassignd.controller.runtime.stall_sampler import StallSampler, place
from reassignd.controller.runtime.stall_watch import StallMetrics, lateness_ms, watch_stalls


def _metrics() -> StallMetrics:
    r = CollectorRegistry()
    return StallMetrics(
        Histogram("stall_ms", "", buckets=(10, 100, 1000), registry=r),
        Gauge("worst_ms", "", ["during"], registry=r),
    )


def test_lateness_is_never_negative() -> None:
    assert lateness_ms(10.0, 9.5) == 0.0
    assert lateness_ms(10.0, 10.25) == pytest.approx(250.0)


async def test_a_held_loop_is_measured_and_logged_with_the_event_in_hand(
    caplog: pytest.LogCaptureFixture,
) -> None:
    metrics = _metrics()
    handling: list[str | None] = [None]
    task = asyncio.create_task(watch_stalls(metrics, lambda: handling[0], interval_s=0.01, warn_ms=100))
    try:
        await asyncio.sleep(0.05)  # the watch is ticking
        with caplog.at_level(logging.WARNING, logger="reassignd.controller.runtime.stall_watch"):
            handling[0] = "BrokersChanged"
            time.sleep(0.25)  # noqa: ASYNC251 (holding the loop on purpose)
            await asyncio.sleep(0.05)  # the watch wakes, late
            handling[0] = None
            time.sleep(0.12)  # noqa: ASYNC251
            await asyncio.sleep(0.05)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    worst = {s.labels["during"]: s.value for s in next(iter(metrics.worst_ms.collect())).samples}
    assert worst["BrokersChanged"] >= 240
    assert worst["none"] >= 100
    lines = [r.getMessage() for r in caplog.records]
    assert any("held for" in line and "while handling BrokersChanged" in line for line in lines), lines
    assert any("outside any controller event" in line for line in lines), lines
    count = sum(s.value for s in next(iter(metrics.stall_ms.collect())).samples if s.name.endswith("_count"))
    assert count >= 2


def _hold_the_loop(seconds: float) -> None:
    time.sleep(seconds)


async def test_a_stall_is_logged_with_where_the_loop_was_held(caplog: pytest.LogCaptureFixture) -> None:
    sampler = StallSampler(
        threading.get_ident(), after_s=0.03, period_s=0.005, package_dir=str(Path(__file__).parent) + os.sep
    )
    sampler.start()
    task = asyncio.create_task(
        watch_stalls(_metrics(), lambda: "BrokersChanged", interval_s=0.01, warn_ms=100, sampler=sampler)
    )
    try:
        await asyncio.sleep(0.05)
        with caplog.at_level(logging.WARNING, logger="reassignd.controller.runtime.stall_watch"):
            _hold_the_loop(0.3)
            await asyncio.sleep(0.05)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        sampler.stop()
    lines = [r.getMessage() for r in caplog.records if "held for" in r.getMessage()]
    assert any("sampled in test_stall_watch._hold_the_loop:" in line for line in lines), lines


def test_a_place_names_the_innermost_frames_of_the_package() -> None:
    def inner() -> str | None:
        return place(sys._getframe(), str(Path(__file__).parent) + os.sep)

    where = inner()
    assert where is not None
    assert where.startswith("test_stall_watch.inner:")
    assert where.endswith("< test_stall_watch.test_a_place_names_the_innermost_frames_of_the_package")
    assert place(sys._getframe(), "/nowhere/") is None

"""The controller's one timer: once, after a delay or at a time on the injected clock, never two
pending at once, cancellable."""

from __future__ import annotations

import asyncio

from reassignd.controller.instance.timer import Timer


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_a_timer_fires_once_and_can_be_armed_again() -> None:
    fired: list[int] = []
    done = asyncio.Event()

    def fire() -> None:
        fired.append(1)
        done.set()

    timer = Timer(FakeClock(), fire)
    assert timer.after(0.01)
    assert timer.pending
    assert not timer.after(0.0)  # one pending call at a time
    await asyncio.wait_for(done.wait(), 5.0)
    assert fired == [1] and not timer.pending
    done.clear()
    assert timer.after(0.0)
    await asyncio.wait_for(done.wait(), 5.0)
    assert fired == [1, 1]


async def test_at_reads_the_due_time_on_the_injected_clock() -> None:
    clock = FakeClock()
    done = asyncio.Event()
    timer = Timer(clock, done.set)
    timer.at(clock.now + 3600.0)  # an hour away on the injected clock: not now
    await asyncio.sleep(0.05)
    assert not done.is_set() and timer.pending
    timer.cancel()
    assert not timer.pending
    clock.now += 7200.0
    timer.at(1000.0 + 3600.0)  # past already on the injected clock: at once
    await asyncio.wait_for(done.wait(), 5.0)


async def test_a_cancelled_timer_does_not_fire() -> None:
    fired: list[int] = []
    timer = Timer(FakeClock(), lambda: fired.append(1))
    timer.after(0.0)
    timer.cancel()
    timer.cancel()  # twice is harmless
    await asyncio.sleep(0.05)
    assert fired == [] and not timer.pending

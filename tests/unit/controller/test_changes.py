"""Waiting on a condition: a waiter looks again at each change and once more at its deadline."""

from __future__ import annotations

import asyncio
import time

from reassignd.controller.instance.changes import Changes


async def test_a_waiter_wakes_at_the_change_that_makes_its_condition_true() -> None:
    changes = Changes()
    state = {"done": False}
    looks = 0

    def done() -> bool:
        nonlocal looks
        looks += 1
        return state["done"]

    waiter = asyncio.create_task(changes.until(done, time.monotonic() + 30.0, time.monotonic))
    await asyncio.sleep(0)
    changes.notify()  # a change that leaves the condition false: it looks again and waits on
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert not waiter.done()
    state["done"] = True
    changes.notify()
    assert await asyncio.wait_for(waiter, 5.0) is True
    assert looks == 3  # at the start and at each change: no polling


async def test_a_condition_still_false_at_the_deadline_is_false() -> None:
    changes = Changes()
    started = time.monotonic()
    assert await changes.until(lambda: False, started + 0.05, time.monotonic) is False


async def test_a_condition_true_at_the_deadline_counts_and_a_past_deadline_still_looks() -> None:
    changes = Changes()
    now = time.monotonic()
    assert await changes.until(lambda: True, now - 1.0, time.monotonic) is True
    flips = iter([False, True])
    assert await changes.until(lambda: next(flips), time.monotonic() + 0.02, time.monotonic) is True


async def test_next_returns_at_the_next_change() -> None:
    changes = Changes()
    waiter = asyncio.create_task(changes.next())
    await asyncio.sleep(0)
    assert not waiter.done()
    changes.notify()
    await asyncio.wait_for(waiter, 5.0)

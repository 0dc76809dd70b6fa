"""The event queue: FIFO, preemption, clearing, queue-time accounting with an injected clock."""

from __future__ import annotations

import asyncio

from reassignd.controller.instance.event_queue import ControllerEventQueue


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_fifo_with_preemption_and_queue_time() -> None:
    clock = FakeClock()
    sizes: list[int] = []
    q: ControllerEventQueue[str] = ControllerEventQueue(clock, on_size=sizes.append)
    q.put("a")
    q.put("b")
    q.put_first("resign")
    clock.now += 0.25
    assert await q.get() == ("resign", 250.0)
    assert (await q.get())[0] == "a"
    assert len(q) == 1
    assert q.clear() == ["b"]
    assert len(q) == 0
    assert sizes[-1] == 0
    assert q.queue_time_percentiles_ms()["p99"] == 250.0


async def test_the_percentiles_are_kept_until_a_new_queue_time() -> None:
    clock = FakeClock()
    q: ControllerEventQueue[str] = ControllerEventQueue(clock)
    assert q.queue_time_percentiles_ms() == {"p50": 0.0, "p99": 0.0}
    q.put("a")
    clock.now += 0.1
    await q.get()
    first = q.queue_time_percentiles_ms()
    assert first == {"p50": 100.0, "p99": 100.0}
    first["p99"] = -1.0  # the caller's copy: the kept figures are not changed through it
    assert q.queue_time_percentiles_ms() == {"p50": 100.0, "p99": 100.0}
    q.put("b")
    q.put("c")
    clock.now += 0.3
    await q.get()  # a new time from get
    assert q.queue_time_percentiles_ms() == {"p50": 300.0, "p99": 300.0}
    assert q.take(lambda e: True) == ["c"]  # and from take
    clock.now += 0.5
    q.put("d")
    clock.now += 0.5
    await q.get()
    assert q.queue_time_percentiles_ms() == {"p50": 300.0, "p99": 500.0}


async def test_get_waits_for_put() -> None:
    q: ControllerEventQueue[int] = ControllerEventQueue()
    getter = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    assert not getter.done()
    q.put(7)
    event, _ = await asyncio.wait_for(getter, 1)
    assert event == 7

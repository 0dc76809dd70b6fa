"""The event queue: FIFO, preemption, clearing, queue-time accounting with an injected clock."""

from __future__ import annotations

import asyncio

from reassignd.controller.instance.event_queue import EventQueue


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_fifo_with_preemption_and_queue_time() -> None:
    clock = FakeClock()
    sizes: list[int] = []
    q: EventQueue[str] = EventQueue(clock, on_size=sizes.append)
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


async def test_get_waits_for_put() -> None:
    q: EventQueue[int] = EventQueue()
    getter = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    assert not getter.done()
    q.put(7)
    event, _ = await asyncio.wait_for(getter, 1)
    assert event == 7

"""The worker pool the controller's pipelined ZooKeeper work runs on: bounded, and structured —
the first failure stops the rest, and nothing it started outlives the call."""

from __future__ import annotations

import asyncio

import pytest

from reassignd.controller.replication.pipeline import for_each
from reassignd.zk.client import ConnectionLostError, NotControllerError


def leftovers(before: set[asyncio.Task[object]]) -> set[asyncio.Task[object]]:
    return {t for t in asyncio.all_tasks() if t not in before and not t.done()}


async def test_every_item_on_at_most_window_workers() -> None:
    running, peak, done = 0, 0, []

    async def work(item: int) -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0)
        running -= 1
        done.append(item)

    await for_each(range(100), work, window=7)
    assert sorted(done) == list(range(100))
    assert peak == 7


async def test_the_first_failure_cancels_the_rest_and_nothing_outlives_the_call() -> None:
    before = set(asyncio.all_tasks())
    started: list[int] = []
    cancelled: list[int] = []
    release = asyncio.Event()

    async def work(item: int) -> None:
        started.append(item)
        if item == 3:
            raise ConnectionLostError("lost", None)
        try:
            await release.wait()  # a write still waiting for its reply
        except asyncio.CancelledError:
            cancelled.append(item)
            raise

    with pytest.raises(ConnectionLostError):
        await for_each(range(10), work, window=5)
    assert sorted(started) == [0, 1, 2, 3, 4]  # nothing new started after the failure
    assert sorted(cancelled) == [0, 1, 2, 4]
    assert leftovers(before) == set()


async def test_the_failure_is_raised_as_itself() -> None:
    async def work(item: int) -> None:
        await asyncio.sleep(0)
        if item == 2:
            raise NotControllerError("fenced", None)

    with pytest.raises(NotControllerError):
        await for_each(range(5), work, window=2)


async def test_cancelling_the_caller_cancels_the_workers() -> None:
    before = set(asyncio.all_tasks())
    entered = asyncio.Event()

    async def work(item: int) -> None:
        entered.set()
        await asyncio.Event().wait()

    caller = asyncio.create_task(for_each(range(4), work))
    await entered.wait()
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert leftovers(before | {caller}) == set()

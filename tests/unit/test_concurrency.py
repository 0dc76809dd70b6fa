"""The one bounded-concurrency primitive (the ZooKeeper client's pipelined requests, the
controller's work of one event, the feeder's reads): bounded, and structured — the first failure
stops the rest (cancelled, or drained to learn their outcome), and nothing it started outlives the
call."""

from __future__ import annotations

import asyncio

import pytest

from reassignd.concurrency import for_each
from reassignd.controller.reads import pipeline
from reassignd.errors import NotController
from reassignd.zk.errors import ConnectionLostError


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

    await for_each(range(100), work, 7)
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
        await for_each(range(10), work, 5)
    assert sorted(started) == [0, 1, 2, 3]  # nothing new started after the failure
    assert sorted(cancelled) == [0, 1, 2]
    assert leftovers(before) == set()


async def test_the_failure_is_raised_as_itself() -> None:
    async def work(item: int) -> None:
        await asyncio.sleep(0)
        if item == 2:
            raise NotController("fenced")

    with pytest.raises(NotController):
        await for_each(range(5), work, 2)


async def test_a_failed_fencing_check_outranks_what_it_caused() -> None:
    async def work(item: int) -> None:
        if item == 0:
            await asyncio.sleep(0)
            raise NotController("fenced")  # in flight when the other failed
        raise ConnectionLostError("lost", None)

    with pytest.raises(NotController):
        await for_each(range(2), work, 2, drain=True, prefer=NotController)
    with pytest.raises(ConnectionLostError):
        await for_each(range(2), work, 2, drain=True)  # without a preference: the first failure

    async def fenced(item: int) -> None:
        raise NotController("fenced")

    with pytest.raises(NotController):  # the controller's pipeline: raised as itself
        await pipeline.for_each(range(3), fenced)


async def test_draining_lets_the_items_in_flight_finish_and_starts_nothing_new() -> None:
    before = set(asyncio.all_tasks())
    started: list[int] = []
    finished: list[int] = []
    failed = asyncio.Event()

    async def work(item: int) -> None:
        started.append(item)
        if item == 1:
            failed.set()
            raise ConnectionLostError("lost", None)
        await failed.wait()  # a request on the wire: its reply still comes
        await asyncio.sleep(0)
        finished.append(item)

    with pytest.raises(ConnectionLostError):
        await for_each(iter(range(10)), work, 3, drain=True)  # a lazy iterator: window workers
    assert sorted(started) == [0, 1] and finished == [0]
    assert leftovers(before) == set()


async def test_nothing_to_do() -> None:
    async def work(item: int) -> None:
        raise AssertionError(item)

    await for_each([], work, 4)
    await for_each(iter(()), work, 4)


async def test_cancelling_the_caller_cancels_the_workers() -> None:
    before = set(asyncio.all_tasks())
    entered = asyncio.Event()

    async def work(item: int) -> None:
        entered.set()
        await asyncio.Event().wait()

    caller = asyncio.create_task(for_each(range(4), work, 2))
    await entered.wait()
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert leftovers(before | {caller}) == set()

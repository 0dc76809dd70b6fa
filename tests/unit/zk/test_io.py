"""The ZooKeeper client's I/O thread (``reassignd.zk._io``): coroutines handed over and answered on
the caller's loop, one FIFO back to the caller, cancellation across, a bounded stop that leaves no
thread behind."""

from __future__ import annotations

import asyncio
import threading

import pytest
import uvloop

from reassignd.zk._io import IoClosed, IoThread


async def _on_io_thread(name: str) -> str:
    await asyncio.sleep(0)
    return threading.current_thread().name


async def _fail() -> None:
    await asyncio.sleep(0)
    raise ValueError("no")


async def test_a_coroutine_runs_on_the_io_thread_and_answers_on_the_callers_loop() -> None:
    io = IoThread("zk-io-test")
    io.start()
    try:
        assert await io.submit(_on_io_thread("x")) == "zk-io-test"
        with pytest.raises(ValueError, match="no"):
            await io.submit(_fail())
    finally:
        await io.stop()
    assert not [t for t in threading.enumerate() if t.name == "zk-io-test"]
    with pytest.raises(IoClosed):
        await io.submit(_on_io_thread("late"))
    await io.stop()  # twice is fine


async def test_deliveries_and_answers_reach_the_caller_in_the_order_the_io_thread_made_them() -> None:
    io = IoThread("zk-io-order")
    io.start()
    loop = asyncio.get_running_loop()
    seen: list[object] = []

    async def produce(n: int) -> int:
        for i in range(n):
            io.deliver(seen.append, i)  # from the I/O thread, as a watch event would be
        return n

    try:
        for round_ in range(50):
            seen.clear()
            answer = await io.submit(produce(round_))
            seen.append("answer")
            assert seen == [*range(answer), "answer"]
        io.deliver(lambda: seen.append(asyncio.get_running_loop() is loop))
        await asyncio.sleep(0)
        assert seen[-1] is True
    finally:
        await io.stop()


async def test_cancelling_the_caller_cancels_the_coroutine_on_the_io_loop() -> None:
    io = IoThread("zk-io-cancel")
    io.start()
    started, cancelled = threading.Event(), threading.Event()

    async def forever() -> None:
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    try:
        task = asyncio.ensure_future(io.submit(forever()))
        await asyncio.to_thread(started.wait, 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await asyncio.to_thread(cancelled.wait, 5)
    finally:
        await io.stop()


async def test_stopping_fails_what_is_still_running_there_and_ends_the_thread() -> None:
    io = IoThread("zk-io-stop")
    io.start()
    waiting = io.submit(asyncio.sleep(3600))
    await asyncio.sleep(0.05)
    await io.stop()
    with pytest.raises(IoClosed):
        await waiting
    assert not [t for t in threading.enumerate() if t.name == "zk-io-stop"]


def test_the_io_loop_is_of_the_callers_kind() -> None:
    async def kinds() -> tuple[type, type]:
        io = IoThread("zk-io-kind")
        io.start()
        try:
            return type(asyncio.get_running_loop()), type(await io.submit(_running_loop()))
        finally:
            await io.stop()

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        caller, io_loop = runner.run(kinds())
    assert caller is io_loop is uvloop.Loop


async def _running_loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()

"""The ZooKeeper session runs on its own I/O thread (issue 37): a caller's loop busy for seconds
does not expire it; what reaches the caller (watch events, state reports, replies) runs on the
caller's loop, in ZooKeeper's order; a request too large to send is refused before sending.
Real ZooKeeper, the real controller in the test's loop."""

from __future__ import annotations

import asyncio
import threading
import time

import aiohttp
import pytest

from reassignd.controller.effects.failures import Failure, classify
from reassignd.testing.controller import in_process_controller
from reassignd.testing.polling import eventually
from reassignd.zk import paths
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import ZnodeTooLargeError
from reassignd.zk.values import SessionState, ZkSettings

SESSION_TIMEOUT_S = 2.0


def _io_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("zk-io-")]


async def test_a_controller_whose_loop_stalls_past_the_session_timeout_keeps_its_session(
    zk_connect: str, zk: ZkClient
) -> None:
    async with in_process_controller(zk_connect, session_timeout_s=SESSION_TIMEOUT_S) as c:
        await c.until_active()
        states: list[SessionState] = []
        c.zk.on_session_state(states.append)
        session_id = c.zk.session_id
        epoch = (await zk.get(paths.CONTROLLER_EPOCH)).data
        assert session_id is not None

        # The stimulus, not a wait: a callback holds the controller's loop (this one) for 2.5
        # session timeouts, as a CPU-heavy event or answer would.
        stalled: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_soon(_stall, 2.5 * SESSION_TIMEOUT_S, stalled)
        assert await stalled >= 2.5 * SESSION_TIMEOUT_S

        # A round trip on the controller's session: its reply comes after any report the I/O
        # thread queued during the stall (one FIFO), so none is still on its way.
        await c.zk.get(paths.CONTROLLER_EPOCH)
        assert states == []
        assert c.zk.session_id == session_id and c.zk.connected
        assert (await zk.get(paths.CONTROLLER_EPOCH)).data == epoch
        assert c.controller.snapshot().active and not c.task.done()
        assert c.url is not None
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{c.url}/v1/quotas") as response:  # read through its session
                assert response.status == 200
            async with http.get(f"{c.url}/v1/status") as response:
                assert response.status == 200
        assert c.controller.snapshot().active
        assert (await zk.get(paths.CONTROLLER_EPOCH)).data == epoch


async def test_a_read_of_an_over_long_path_is_refused_before_sending(zk: ZkClient) -> None:
    session_id = zk.session_id
    long_path = "/" + "q" * (1024 * 1024 + 16)
    started = time.monotonic()
    for read in (zk.get, zk.get_or_none, zk.exists, zk.children):
        with pytest.raises(ZnodeTooLargeError) as refused:
            await read(long_path)
        assert classify(refused.value) is Failure.DETERMINISTIC
    for bulk in (zk.get_many, zk.children_many):
        with pytest.raises(ZnodeTooLargeError) as refused:
            await bulk(["/a", long_path])
        assert refused.value.path == long_path
    with pytest.raises(ZnodeTooLargeError):
        await zk.ensure_path(long_path)
    assert time.monotonic() - started < 1.0  # at once: nothing sent, no reconnect waited out
    assert zk.session_id == session_id and zk.connected
    await zk.create("/after", b"1")
    assert (await zk.get("/after")).data == b"1"
    assert zk.session_id == session_id


async def test_callbacks_run_on_the_callers_loop_and_a_watch_comes_before_a_later_reply(
    zk_connect: str, zk: ZkClient
) -> None:
    loop = asyncio.get_running_loop()
    caller = threading.get_ident()
    before = set(_io_threads())
    client = ZkClient(ZkSettings(zk_connect, session_timeout_s=6.0, role="probe"))
    seen: list[tuple[str, object, bool, bool]] = []  # (what, value, on the caller's loop, thread)

    def record(what: str, value: object) -> None:
        seen.append((what, value, asyncio.get_running_loop() is loop, threading.get_ident() == caller))

    client.on_session_state(lambda state: record("state", state))
    await client.start()
    try:
        assert [t.name for t in set(_io_threads()) - before] == ["zk-io-probe"]
        await eventually(lambda: _true(("state", SessionState.CONNECTED, True, True) in seen))
        await zk.create("/order", b"0")
        for round_ in range(1, 21):
            await client.get("/order", watch=lambda path: record("watch", path))
            await zk.set("/order", str(round_).encode(), -1)  # done before the next read is sent
            znode = await client.get("/order")
            record("reply", znode.data)
            # the watch event came in before the reply of the read that sees the change
            assert seen[-2:] == [
                ("watch", "/order", True, True),
                ("reply", str(round_).encode(), True, True),
            ]
    finally:
        await client.close()
    assert seen[-1] == ("state", SessionState.CLOSED, True, True)
    assert all(on_loop and on_thread for _, _, on_loop, on_thread in seen)
    assert set(_io_threads()) - before == set()  # the I/O thread was joined
    assert not [t for t in asyncio.all_tasks() if t.get_name().startswith("zk-")]


async def test_cancelling_a_waiting_request_cancels_it_on_the_io_loop(zk: ZkClient) -> None:
    await zk.create("/c", b"1")
    pending = [asyncio.create_task(zk.get("/c")) for _ in range(200)]
    await asyncio.sleep(0)
    for task in pending[::2]:
        task.cancel()
    done = await asyncio.gather(*pending, return_exceptions=True)
    for index, outcome in enumerate(done):
        if index % 2:
            assert not isinstance(outcome, BaseException) and outcome.data == b"1"
        else:
            assert isinstance(outcome, asyncio.CancelledError) or outcome.data == b"1"  # type: ignore[union-attr]
    assert (await zk.get("/c")).data == b"1" and zk.connected


def _stall(seconds: float, stalled: asyncio.Future[float]) -> None:
    started = time.monotonic()
    time.sleep(seconds)
    stalled.set_result(time.monotonic() - started)


async def _true(value: object) -> bool:
    return bool(value)

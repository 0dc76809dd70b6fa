"""The demo's Spark step waits for the bootstrap's background install of PySpark (a first run)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from reassignd.demo.cluster import DemoFailed
from reassignd.demo.spark import await_feeder_install

pytestmark = pytest.mark.timeout(30)


async def test_nothing_pending_goes_on_at_once(tmp_path: Path) -> None:
    await asyncio.wait_for(await_feeder_install(tmp_path / ".reassignd-feeder-install", asyncio.sleep), 1)


async def test_it_waits_until_the_install_ends_well(tmp_path: Path) -> None:
    pending = tmp_path / ".reassignd-feeder-install"
    installer = await asyncio.create_subprocess_exec("sleep", "30")
    try:
        pending.write_text(f"{installer.pid} /tmp/feeder.log\n")
        looks = 0
        polled = asyncio.Event()

        async def pause(_seconds: float) -> None:  # the step's pause, counted, with no time passing
            nonlocal looks
            looks += 1
            if looks >= 3:
                polled.set()
            await asyncio.sleep(0.01)

        waiter = asyncio.ensure_future(await_feeder_install(pending, pause))
        await asyncio.wait_for(polled.wait(), 5)  # it looked three times
        assert not waiter.done()  # the install is still running: it waits on
        (tmp_path / ".reassignd-feeder-rc").write_text("0\n")
        await asyncio.wait_for(waiter, 5)
    finally:
        installer.kill()
        await installer.wait()


async def test_a_failed_install_fails_the_step_with_its_log(tmp_path: Path) -> None:
    pending = tmp_path / ".reassignd-feeder-install"
    pending.write_text("1 /tmp/reassignd-feeder-install.abc\n")
    (tmp_path / ".reassignd-feeder-rc").write_text("1\n")
    with pytest.raises(DemoFailed, match=r"pip exited with 1\); its log: /tmp/reassignd-feeder-install\.abc"):
        await await_feeder_install(pending, asyncio.sleep)


async def test_an_install_that_died_unfinished_is_reported(tmp_path: Path) -> None:
    gone = await asyncio.create_subprocess_exec("true")
    await gone.wait()
    pending = tmp_path / ".reassignd-feeder-install"
    pending.write_text(f"{gone.pid} /tmp/feeder.log\n")
    with pytest.raises(DemoFailed, match="stopped before it finished"):
        await asyncio.wait_for(await_feeder_install(pending, asyncio.sleep), 5)

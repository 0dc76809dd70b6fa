"""The status page in a real browser: headless Debian Chromium driven by Playwright (its
``executable_path``; no browser is downloaded), against a real ZooKeeper, controller and agents.

A move's bar advances and the move leaves the page when it completes; Cancel on a second move
reverts it (ZooKeeper shows its original replicas again). On failure a screenshot is saved and
named in the message.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from reassignd.zk.client import ZkClient
from tests.integration.harness import ControllerProc, Procs, active_one, eventually, wait_brokers
from tests.integration.reassignment_helpers import alter, completed, make_topic, set_broker_rate

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="Debian's chromium is not installed (scripts/bootstrap.sh installs it)"
    ),
]

playwright_api = pytest.importorskip("playwright.async_api")


@pytest.fixture
async def browser() -> AsyncIterator[object]:
    async with playwright_api.async_playwright() as p:
        b = await p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"])
        try:
            yield b
        finally:
            await b.close()


async def cluster(procs: Procs, zk: ZkClient) -> ControllerProc:
    c = procs.controller(9000, 2.0, "--events-progress-interval-s", "0.5")
    await active_one(c)
    await set_broker_rate(zk, None, "150000")  # a 1.5 MB partition moves in about 10 s
    procs.cluster(4)
    await wait_brokers(c, {1, 2, 3, 4})
    return c


async def test_a_bar_advances_and_cancel_reverts(procs: Procs, zk: ZkClient, browser: object) -> None:
    c = await cluster(procs, zk)
    await make_topic(zk, "web", {0: (1, 2), 1: (1, 2)}, initial_bytes=1_500_000)
    page = await browser.new_page()  # type: ignore[attr-defined]
    shot = Path(tempfile.gettempdir()) / "reassignd-status-page-failure.png"
    try:
        await page.goto(c.url + "/")
        await page.wait_for_selector("#stream.on", timeout=30_000)  # the event stream is live
        await page.wait_for_selector("#brokers tbody tr[data-broker='4']", timeout=30_000)
        await alter(c, {("web", 0): [3, 2], ("web", 1): [4, 2]})
        row0 = "#moves tr[data-tp='web-0']"
        await page.wait_for_selector(row0, timeout=30_000)

        seen: list[int] = []

        async def advanced() -> bool:
            pct = await page.get_attribute(f"{row0} .bar", "data-pct")
            if pct is not None:
                seen.append(int(pct))
            return len({p for p in seen if 0 < p < 100}) >= 2  # two distinct values on the way

        await eventually(advanced, timeout_s=60, interval_s=0.2, what=f"web-0's bar advancing (seen {seen})")
        # cancel the second move from the page
        await page.click("#moves tr[data-tp='web-1'] button")
        await eventually(lambda: completed(zk, "web", 1, (1, 2)), timeout_s=60, what="web-1 back at [1, 2]")
        await page.wait_for_selector("#moves tr[data-tp='web-1']", state="detached", timeout=30_000)
        await page.wait_for_selector("#events li[data-type='reassignment_cancelled']", timeout=30_000)
        # the first finishes: it leaves the table, its completion is in the recent events
        await eventually(lambda: completed(zk, "web", 0, (3, 2)), timeout_s=90, what="web-0 moved")
        await page.wait_for_selector(row0, state="detached", timeout=30_000)
        await page.wait_for_selector("#events li[data-type='reassignment_completed']", timeout=30_000)
        assert await page.is_hidden("#error")
    except BaseException:
        await page.screenshot(path=str(shot), full_page=True)
        print(f"status page screenshot: {shot}")
        raise
    finally:
        await page.close()

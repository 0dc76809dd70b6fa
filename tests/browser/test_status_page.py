"""The status page in a real browser: headless Debian Chromium driven by Playwright (its
``executable_path``; no browser is downloaded), against a real ZooKeeper, controller and agents.

A move's bar advances and the move leaves the page when it completes; Cancel on a second move
reverts it (ZooKeeper shows its original replicas again). With a tokens file: before a token is
accepted the tables say "sign in to see ..." (not "nothing moves"), a wrong token is said to be
rejected (not merely missing), and a request refused per item (a viewer's CreateTopics through the
Kafka listener) shows each item's error in the recent events, not the top level's NONE. On
failure a screenshot is saved and named in the message; the token test also saves the page at
each of its steps (``reassignd-status-page-*.png`` in the temporary directory, printed).
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from kafka.admin import NewTopic
from kafka.errors import TopicAuthorizationFailedError

from reassignd.zk.client import ZkClient
from tests.integration.harness import ControllerProc, Procs, active_one, eventually, wait_brokers
from tests.integration.kafka_clients import TOKENS, admin_client, off_loop, start_controller
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


SHOTS = Path(tempfile.gettempdir())


async def text_of(page: object, selector: str) -> str:
    return str(await page.text_content(selector)).strip()  # type: ignore[attr-defined]


async def shoot(page: object, name: str) -> Path:
    path = SHOTS / f"reassignd-status-page-{name}.png"
    await page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
    print(f"status page screenshot ({name}): {path}")
    return path


async def test_signed_out_token_rejected_and_a_refusal_per_item(
    procs: Procs, tmp_path: Path, browser: object
) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(TOKENS)
    k = start_controller(procs, 9000, tokens=tokens)

    async def active() -> bool:
        k.c.token = "victor-secret"
        s = await k.c.status()
        return bool(s and s["active"])

    await eventually(active, what="the controller active")
    page = await browser.new_page()  # type: ignore[attr-defined]
    try:
        # no token: nothing is shown as if it were the data
        await page.goto(k.c.url + "/")
        await page.wait_for_selector("#auth[data-auth='needed']", timeout=30_000)
        assert await text_of(page, "#auth") == "not signed in"
        assert await text_of(page, "#no-moves") == "sign in to see moving partitions"
        assert await text_of(page, "#no-batches") == "sign in to see batches"
        assert await text_of(page, "#no-brokers") == "sign in to see brokers"
        assert await text_of(page, "#no-events") == "sign in to see events"
        assert await page.is_visible("#login")
        await shoot(page, "signed-out")

        # a wrong token: said to be rejected, still nothing shown as data
        await page.fill("#token", "not-a-token")
        await page.click("#login button[type='submit']")
        await page.wait_for_selector("#auth[data-auth='rejected']", timeout=30_000)
        assert await text_of(page, "#auth") == "token rejected"
        await page.wait_for_selector("#error:not([hidden])", timeout=30_000)
        assert (await text_of(page, "#error")).startswith("token rejected (401)")
        assert await text_of(page, "#no-moves") == "sign in to see moving partitions"
        assert await page.is_visible("#login")
        await shoot(page, "token-rejected")

        # the viewer's token: the page reads the cluster; empty tables now mean empty
        await page.fill("#token", "victor-secret")
        await page.click("#login button[type='submit']")
        await page.wait_for_selector("#auth[data-auth='ok']", timeout=30_000)
        assert await text_of(page, "#auth") == "victor (viewer)"
        await page.wait_for_selector("#stream.on", timeout=30_000)
        await eventually(
            lambda: _text_is(page, "#no-moves", "nothing moves"),
            timeout_s=30,
            what="'nothing moves' once signed in",
        )
        assert await text_of(page, "#no-batches") == "no batches"
        assert await page.is_hidden("#login")
        assert await page.is_hidden("#no-events")

        # the viewer's CreateTopics through the Kafka listener, refused topic by topic (29)
        victor = await admin_client(
            k.address,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="PLAIN",
            sasl_plain_username="victor",
            sasl_plain_password="victor-secret",
        )
        try:
            with pytest.raises(TopicAuthorizationFailedError):
                await off_loop(victor.create_topics, [NewTopic("denied", 1, 1)])
        finally:
            await off_loop(victor.close)
        refused = "#events li.refused[data-type='audit']"
        await page.wait_for_selector(refused, timeout=30_000)
        line = await text_of(page, refused)
        assert "CreateTopics denied by victor: refused: denied TOPIC_AUTHORIZATION_FAILED" in line, line
        assert "NONE" not in line
        await shoot(page, "refusal-per-item")
    except BaseException:
        await shoot(page, "failure")
        raise
    finally:
        await page.close()


async def _text_is(page: object, selector: str, expected: str) -> bool:
    return await text_of(page, selector) == expected

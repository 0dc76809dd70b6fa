"""The status page in a real browser: headless Debian Chromium driven by Playwright (its
``executable_path``; no browser is downloaded), against a real ZooKeeper, controller and agents.

A move's bar advances and the move leaves the page when it completes; Cancel on a second move
reverts it (ZooKeeper shows its original replicas again). With a tokens file: before a token is
accepted the tables say "sign in to see ..." (not "nothing moves"), a wrong token is said to be
rejected (not merely missing), and a request refused per item (a viewer's CreateTopics through the
Kafka listener) shows each item's error in the recent events, not the top level's NONE. While a
batch runs, the page shows its picture (every broker's load before and after), whose bars are the
figures of the batch's moves. On failure a screenshot is saved and named in the message; the token
and picture tests also save the page at each of their steps (``reassignd-status-page-*.png`` in
the temporary directory, printed).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from kafka.admin import NewTopic
from kafka.errors import TopicAuthorizationFailedError

from reassignd.zk.client import ZkClient
from tests.browser.chromium import NEEDS_CHROMIUM, SHOTS, shoot
from tests.integration.batch_helpers import batch_body, state_is, submit
from tests.integration.harness import ControllerProc, Procs, active_one, eventually, wait_brokers
from tests.integration.kafka_clients import TOKENS, admin_client, off_loop, start_controller
from tests.integration.reassignment_helpers import alter, completed, make_topic, set_broker_rate

pytestmark = [pytest.mark.timeout(180), NEEDS_CHROMIUM]
pytest.importorskip("playwright.async_api")


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
    shot = SHOTS / "reassignd-status-page-failure.png"
    try:
        await page.goto(c.url + "/")
        await page.wait_for_selector("#stream.on", timeout=30_000)  # the event stream is live
        await page.wait_for_selector("#brokers tbody tr[data-broker='4']", timeout=30_000)
        await alter(c, {("web", 0): [3, 2], ("web", 1): [4, 2]})
        row0 = "#moves tr[data-tp='web-0']"
        await page.wait_for_selector(row0, timeout=30_000)
        cancel1 = await page.wait_for_selector("#moves tr[data-tp='web-1'] button", timeout=30_000)

        seen: list[int] = []

        async def advanced() -> bool:
            pct = await page.get_attribute(f"{row0} .bar", "data-pct")
            if pct is not None:
                seen.append(int(pct))
            return len({p for p in seen if 0 < p < 100}) >= 2  # two distinct values on the way

        await eventually(advanced, timeout_s=60, interval_s=0.2, what=f"web-0's bar advancing (seen {seen})")
        # the refreshes that advanced the bar kept web-1's row and button in place (a redrawn
        # table lost a click whose press and release fell on either side of a refresh)
        assert cancel1 is not None and await cancel1.evaluate("b => b.isConnected")
        # cancel the second move from the page
        await cancel1.click()
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


async def text_of(page: object, selector: str) -> str:
    return str(await page.text_content(selector)).strip()  # type: ignore[attr-defined]


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


async def test_a_running_batchs_picture(procs: Procs, zk: ZkClient, browser: object) -> None:
    c = await cluster(procs, zk)
    # two 3 MB partitions led by broker 1, moved to brokers 3 and 4: about 20 s at 150 kB/s
    await make_topic(zk, "pics", {0: (1, 2), 1: (1, 2)}, initial_bytes=3_000_000)
    page = await browser.new_page(viewport={"width": 1100, "height": 900})  # type: ignore[attr-defined]
    try:
        await page.goto(c.url + "/")
        await page.wait_for_selector("#brokers tbody tr[data-broker='4']", timeout=30_000)
        assert await page.is_hidden("#picture-section")  # no batch: no picture
        await submit(c, batch_body("pics-1", {("pics", 0): [3, 4], ("pics", 1): [4, 3]}, plan_id="plan-pics"))
        assert await state_is(c, "pics-1", "running", "pending")
        await page.wait_for_selector("#picture[data-batch='pics-1'] svg rect[data-metric]", timeout=30_000)
        assert await page.is_visible("#picture-section")
        bars = await page.eval_on_selector_all(
            "#picture svg rect[data-metric]",
            "rs => rs.map(r => [r.dataset.broker, r.dataset.metric, r.dataset.phase, Number(r.dataset.value),"
            " r.getBoundingClientRect().height])",
        )
        drawn = {(b, m, p): (v, h) for b, m, p, v, h in bars}
        assert {b for b, _, _ in drawn} == {"1", "2", "3", "4"}
        value = {k: v for k, (v, _) in drawn.items()}
        # before: both partitions on 1 (leader) and 2; after: on 3 and 4, one leader each
        assert [value[(b, "replicas", "before")] for b in "1234"] == [2, 2, 0, 0]
        assert [value[(b, "replicas", "after")] for b in "1234"] == [0, 0, 2, 2]
        assert [value[(b, "leaders", "before")] for b in "1234"] == [2, 0, 0, 0]
        assert [value[(b, "leaders", "after")] for b in "1234"] == [0, 0, 1, 1]
        both = value[("1", "bytes", "before")]
        assert both >= 2 * 3_000_000  # the leader's two logs (the simulated producer may add to them)
        assert value[("2", "bytes", "before")] == value[("3", "bytes", "after")] == both
        assert value[("4", "bytes", "after")] == both
        # as drawn in the browser: equal figures, equal bars; none, no bar
        heights = {k: h for k, (_, h) in drawn.items()}
        assert heights[("1", "bytes", "before")] == heights[("3", "bytes", "after")] > 50
        assert heights[("3", "replicas", "before")] == heights[("1", "leaders", "after")] == 0
        title = await text_of(page, "#picture svg text.title")
        assert title == "batch pics-1"
        assert "plan plan-pics" in await text_of(page, "#picture svg text.subtitle")
        assert await state_is(c, "pics-1", "running")  # the picture was seen while the batch ran
        await shoot(page, "plan-picture")
        path = SHOTS / "reassignd-status-page-plan-picture-only.png"
        await page.locator("#picture-section").screenshot(path=str(path))
        print(f"status page screenshot (plan-picture-only): {path}")
        assert await page.is_hidden("#error")
    except BaseException:
        await shoot(page, "picture-failure")
        raise
    finally:
        await page.close()

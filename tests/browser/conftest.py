"""The ``browser`` fixture: a headless Debian Chromium per test (:mod:`tests.browser.chromium`)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.browser.chromium import CHROMIUM


@pytest.fixture
async def browser() -> AsyncIterator[object]:
    playwright_api = pytest.importorskip("playwright.async_api")
    async with playwright_api.async_playwright() as p:
        b = await p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"])
        try:
            yield b
        finally:
            await b.close()

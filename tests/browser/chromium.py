"""What the browser tests share: Debian's Chromium (driven by Playwright through its
``executable_path``; no browser is downloaded), the marks that skip a test without it, and where
screenshots go (``reassignd-*.png`` in the temporary directory, each printed)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
NEEDS_CHROMIUM = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's chromium is not installed (scripts/bootstrap.sh installs it)"
)
SHOTS = Path(tempfile.gettempdir())


async def shoot(page: Any, name: str) -> Path:
    """The whole page, saved as ``reassignd-status-page-<name>.png``."""
    path = SHOTS / f"reassignd-status-page-{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    print(f"status page screenshot ({name}): {path}")
    return path

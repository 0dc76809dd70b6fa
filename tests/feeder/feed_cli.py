"""``reassignd`` commands as the feeder's end-to-end tests run them: a process of its own, its
output appended to a log file; and the plan files read back."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any


async def reassignd(*args: str, log: Path) -> int:
    """``python -m reassignd ARGS`` with stdout and stderr appended to ``log``; its exit code."""
    with log.open("ab") as out:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "reassignd", *args, stdout=out, stderr=asyncio.subprocess.STDOUT
        )
    return await asyncio.wait_for(proc.wait(), 300)


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())

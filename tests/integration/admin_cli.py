"""``reassignd`` commands run as an operator runs them: a process of its own, with none of the
test's ``REASSIGND_*`` environment."""

from __future__ import annotations

import asyncio
import os
import sys


async def reassignd_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``python -m reassignd ARGS`` → (exit code, stdout, stderr)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("REASSIGND_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "reassignd",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**clean, **(env or {})},
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def admin(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``python -m reassignd admin reassign ARGS`` → (exit code, stdout, stderr)."""
    return await reassignd_cli("admin", "reassign", *args, env=env)

"""``reassignd`` commands run as an operator runs them: a process of its own, with none of the
test's ``REASSIGND_*`` environment."""

from __future__ import annotations

import asyncio
import os

from tests import warm_start


async def reassignd_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``python -m reassignd ARGS`` → (exit code, stdout, stderr); a process forked warm
    (``tests/warm_start.py``)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("REASSIGND_")}
    done = await asyncio.to_thread(warm_start.run, list(args), {**clean, **(env or {})}, 60.0)
    return done.returncode, done.stdout, done.stderr


async def admin(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``python -m reassignd admin reassign ARGS`` → (exit code, stdout, stderr)."""
    return await reassignd_cli("admin", "reassign", *args, env=env)

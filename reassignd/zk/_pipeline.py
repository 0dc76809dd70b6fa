"""Run many requests with a bounded number in flight, in order, stopping at the first failure."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from typing import Any


async def run_pipelined(units: Iterator[Coroutine[Any, Any, None]], window: int) -> None:
    """Start the coroutines of ``units`` in order, at most ``window`` at once.

    ``units`` is consumed lazily: after the first failure no new unit is started, the ones in
    flight are awaited (their requests are on the wire; their outcome is still learned) and the
    first failure is raised. If the caller is cancelled, the units in flight are cancelled too.
    """
    pending: set[asyncio.Task[None]] = set()
    error: BaseException | None = None
    try:
        while True:
            while error is None and len(pending) < window:
                unit = next(units, None)
                if unit is None:
                    break
                pending.add(asyncio.create_task(unit))
            if not pending:
                break
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                failure = task.exception()
                if failure is not None and error is None:
                    error = failure
    finally:
        if pending:
            for task in pending:
                task.cancel()
            await asyncio.wait(pending)
    if error is not None:
        raise error

"""An in-process controller: the real ``Controller`` (and its HTTP API, unless asked not to) in the
caller's event loop, against a real ZooKeeper.

For tests that must look inside the controller while it runs (its context, its writer's op count,
its channel) and for the benchmarks, which count what it does. Tests of behaviour start the
``reassignd controller`` process instead (``tests/integration/harness.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from reassignd.controller.runtime.controller import Controller
from reassignd.controller.settings import ControllerSettings
from reassignd.process import Composition, composed
from reassignd.zk.client import ZkClient


@dataclass(frozen=True)
class InProcessController:
    controller: Controller
    zk: ZkClient  # the controller's own session
    url: str | None  # its HTTP API (None when not served)
    task: asyncio.Task[None]  # its event loop (``process.composed``'s task)

    async def until_active(self, timeout_s: float = 30.0) -> None:
        """Return once this controller has won the election and finished its failover."""
        controller = self.controller
        async with asyncio.timeout(timeout_s):
            while controller.last_failover_s is None or not controller.snapshot().active:
                if self.task.done():
                    self.task.result()  # raises what ended it
                    raise AssertionError("the controller's event loop ended")
                published = asyncio.ensure_future(controller.publisher.published.next())
                try:  # the next snapshot published, or the loop's end
                    await asyncio.wait([published, self.task], return_when=asyncio.FIRST_COMPLETED)
                finally:
                    published.cancel()


@contextlib.asynccontextmanager
async def in_process_controller(
    zk_connect: str,
    *,
    controller_id: int = 9000,
    http: bool = True,
    session_timeout_s: float = 6.0,
    request_timeout_s: float = 10.0,
    freeze_gc: bool = False,
    wall_clock: Callable[[], float] = time.time,
    **settings: Any,
) -> AsyncIterator[InProcessController]:
    """Start a controller on ``zk_connect`` (other ``ControllerSettings`` fields as keywords),
    composed as the CLI's (``reassignd/process.py``) but with no side tasks (the event stream's
    Kafka sender, the progress reporter, the agents' sampler); on the way out its loop is
    cancelled, its HTTP server stopped and its session closed (its ``/controller`` znode goes at
    once). ``wall_clock`` is the instance's injected wall clock (every timestamp it writes or
    records)."""
    config = ControllerSettings(
        zk_connect,
        controller_id=controller_id,
        http_host="127.0.0.1",
        http_port=0,
        session_timeout_s=session_timeout_s,
        zk_request_timeout_s=request_timeout_s,
    )
    config = dataclasses.replace(config, **settings)
    composition = Composition(
        role=f"controller-{controller_id}",
        wall_clock=wall_clock,
        freeze_gc=freeze_gc,
        http=http,
        side_tasks=False,
    )
    async with composed(config, composition) as process:
        yield InProcessController(process.controller, process.zk, process.url, process.task)

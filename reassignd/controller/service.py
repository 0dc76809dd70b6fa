"""The controller process's composition root: ZooKeeper session, controller, HTTP server.

``run_controller(settings, stop)`` runs until ``stop`` is set, then shuts down cleanly: the event
loop is cancelled, the HTTP server stops, and the ZooKeeper session is closed so ``/controller``
disappears at once and a standby takes over without waiting for a session timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging

from reassignd.controller.controller import Controller
from reassignd.controller.settings import ControllerSettings
from reassignd.http.app import build_app
from reassignd.http.server import HttpServer
from reassignd.zk.client import ZkClient, ZkSettings

log = logging.getLogger(__name__)


async def run_controller(settings: ControllerSettings, stop: asyncio.Event) -> None:
    # A controller holds hundreds of thousands of long-lived objects; with the default gen-0
    # threshold (700) cyclic GC runs constantly and its full passes stall the event loop.
    thresholds = gc.get_threshold()
    gc.set_threshold(20_000, *thresholds[1:])
    try:
        await _run(settings, stop)
    finally:
        gc.set_threshold(*thresholds)


async def _run(settings: ControllerSettings, stop: asyncio.Event) -> None:
    zk = ZkClient(ZkSettings(settings.zk_connect, settings.session_timeout_s, settings.zk_request_timeout_s))
    await zk.start()
    controller = Controller(settings, zk)
    server = HttpServer(build_app(controller, settings), settings.http_host, settings.http_port)
    try:
        controller.http_url = await server.start()
        async with asyncio.TaskGroup() as tg:
            loop_task = tg.create_task(controller.run(), name="controller-event-loop")
            stopper = tg.create_task(stop.wait(), name="controller-stop-signal")
            await asyncio.wait([loop_task, stopper], return_when=asyncio.FIRST_COMPLETED)
            loop_task.cancel()
            stopper.cancel()
    finally:
        log.info("controller %d stopping", settings.controller_id)
        with contextlib.suppress(Exception):
            await server.stop()
        await zk.close()

"""The controller process's composition root: ZooKeeper session, controller, HTTP server.

INTERFACE STUB (the lead implements it): ``run_controller(settings, stop)`` runs until ``stop`` is
set, then shuts down cleanly (ZooKeeper session closed so /controller disappears at once).
"""

from __future__ import annotations

import asyncio

from reassignd.controller.settings import ControllerSettings


async def run_controller(settings: ControllerSettings, stop: asyncio.Event) -> None:
    raise NotImplementedError

"""The controller process the CLI runs: the process composed by ``process.composed`` (ZooKeeper
session, controller, HTTP server, Kafka listener, the event stream's Kafka sender, the progress
reporter and the agents' sampler), with what only a process of its own does: the GC thresholds,
the warnings about clear-text listeners, and a planned stop.

``run_controller(settings, stop)`` runs until ``stop`` is set, then shuts down cleanly: the active
instance hands its role over (the event in hand finished, ``/controller`` given up, queued requests
answered NOT_CONTROLLER naming the successor), the event loop is cancelled, the HTTP server stops,
and the ZooKeeper session is closed.
"""

from __future__ import annotations

import asyncio
import gc
import ipaddress
import logging

from reassignd.controller.runtime.controller import Controller
from reassignd.controller.settings import ControllerSettings
from reassignd.process import composed

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


async def hand_over(controller: Controller, timeout_s: float) -> None:
    """A planned stop: the active instance finishes the event in hand and gives ``/controller``
    up so a standby wins at once; the HTTP API and the Kafka listener keep answering meanwhile
    (NOT_CONTROLLER, naming the successor). Past ``timeout_s`` the process leaves anyway (its
    session's close still frees ``/controller``)."""
    try:
        async with asyncio.timeout(timeout_s):
            successor = await controller.api.hand_over(leaving=True)
    except TimeoutError:
        log.warning("no hand-over within %.1f s: stopping anyway", timeout_s)
        return
    if successor is not None:
        log.info("handed the active role over to controller %d", successor.controller_id)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name (or "" / 0.0.0.0: every interface) may be reachable from elsewhere


def clear_text_warnings(settings: ControllerSettings) -> list[str]:
    """A warning per listener bound beyond the loopback without TLS: bearer tokens (and every
    request) travel in clear there."""
    warnings = []
    http_tls = settings.tls_cert is not None
    if not http_tls and not _loopback(settings.http_host):
        warnings.append(
            f"the HTTP API listens on {settings.http_host or 'every interface'} without TLS: "
            "bearer tokens travel in clear (--tls-cert/--tls-key)"
        )
    host = settings.kafka_listener_host
    if host is not None and settings.kafka_tls_cert is None and not _loopback(host):
        warnings.append(
            f"the Kafka listener listens on {host or 'every interface'} without TLS: SASL "
            "credentials travel in clear (--kafka-tls-cert/--kafka-tls-key)"
        )
    return warnings


async def _run(settings: ControllerSettings, stop: asyncio.Event) -> None:
    for warning in clear_text_warnings(settings):
        log.warning("%s", warning)
    async with composed(settings) as process:
        try:
            stopper = asyncio.create_task(stop.wait(), name="controller-stop-signal")
            try:
                await asyncio.wait([process.task, stopper], return_when=asyncio.FIRST_COMPLETED)
            finally:
                stopper.cancel()
            if process.task.done():  # the event loop or a side task failed: the process does too
                process.task.result()
            else:
                await hand_over(process.controller, settings.hand_over_timeout_s)
        finally:
            log.info("controller %d stopping", settings.controller_id)

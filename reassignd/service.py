"""The controller process's composition root (outside the controller package, which never imports
the HTTP layer): ZooKeeper session, controller, HTTP server, the Kafka-protocol admin listener
(``--kafka-listener``), the event stream's Kafka sender and progress reporter, and the sampler of
the agents' reports (adaptive concurrency, self-healing).

``run_controller(settings, stop)`` runs until ``stop`` is set, then shuts down cleanly: the active
instance hands its role over (the event in hand finished, ``/controller`` given up, queued requests
answered NOT_CONTROLLER naming the successor), the event loop is cancelled, the HTTP server stops,
and the ZooKeeper session is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import ipaddress
import logging

from reassignd.agent_reports.dir_mover import move_dirs
from reassignd.agent_reports.reporter import report_progress
from reassignd.agent_reports.sampler import sample_agents
from reassignd.agent_reports.status_cache import BatchStatusCache
from reassignd.controller.runtime.controller import Controller
from reassignd.controller.settings import ControllerSettings
from reassignd.errors import starting
from reassignd.feeder.evacuation import evacuate
from reassignd.http.app import build_app
from reassignd.http.listener_config import http_tls_context
from reassignd.http.routes.batches import stuck_rule
from reassignd.http.server import HttpServer
from reassignd.kafka_listener.server import KafkaListener
from reassignd.stream.kafka_sink import EventMetrics, KafkaSettings, KafkaSink
from reassignd.tokens import load_tokens
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import ZkTimeoutError

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


def kafka_sink(settings: ControllerSettings, controller: Controller) -> KafkaSink | None:
    """The event stream's Kafka sender, hooked to the controller's event log (None: no Kafka)."""
    if settings.events_bootstrap_servers is None:
        return None
    sink = KafkaSink(
        KafkaSettings(
            bootstrap_servers=settings.events_bootstrap_servers,
            topic=settings.events_topic,
            buffer_records=settings.events_buffer_records,
            security_protocol=settings.events_security_protocol,
            sasl_mechanism=settings.events_sasl_mechanism,
            sasl_username=settings.events_sasl_username,
            sasl_password=settings.events_sasl_password,
            ssl_cafile=settings.events_ssl_cafile,
        ),
        EventMetrics(controller.metrics.registry),
    )
    controller.records.sinks.append(sink.offer)
    controller.records.kafka_status = sink.status
    return sink


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


def _address(host: str | None, port: int | None) -> str:
    host = host or "0.0.0.0"
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


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
    zk = ZkClient(
        settings.zk_security.zk_settings(
            settings.zk_connect, settings.session_timeout_s, settings.zk_request_timeout_s, role="controller"
        )
    )
    with starting(f"ZooKeeper unreachable (--zk {settings.zk_connect})", ZkTimeoutError):
        await zk.start()
    controller = Controller(settings, zk, place_lost_replicas=evacuate, freeze_gc=True)
    sink = kafka_sink(settings, controller)
    batch_statuses = BatchStatusCache()  # filled by the progress reporter, read by /metrics
    server = HttpServer(
        build_app(controller.api, settings, records=controller.records, batch_statuses=batch_statuses),
        settings.http_host,
        settings.http_port,
        ssl_context=http_tls_context(settings),
    )
    kafka = (
        None
        if settings.kafka_listener_host is None
        else KafkaListener(
            controller.api,
            settings,
            None if settings.auth_tokens_path is None else load_tokens(settings.auth_tokens_path),
            controller.records,
        )
    )
    try:
        with starting(f"cannot listen on {_address(settings.http_host, settings.http_port)} (--http)"):
            bound = await server.start()
        # what /controller and every 41 answer name: --http-advertised, else the bound address
        controller.http_url = settings.http_advertised or bound
        if settings.http_advertised is not None:
            log.info("advertising the HTTP API as %s", settings.http_advertised)
        if kafka is not None:  # before the election: /controller names the listener
            listen = _address(settings.kafka_listener_host, settings.kafka_listener_port)
            with starting(f"cannot listen on {listen} (--kafka-listener)"):
                controller.kafka_address = await kafka.start()
        async with asyncio.TaskGroup() as tg:
            sink_task = None if sink is None else tg.create_task(sink.run(), name="events-to-kafka")
            interval = settings.events_progress_interval_s
            progress_task = (
                tg.create_task(
                    report_progress(
                        controller.api, controller.records, interval, stuck_rule(settings), batch_statuses
                    ),
                    name="events-progress",
                )
                if interval > 0
                else None
            )
            sample_every = settings.agent_sample_interval_s
            sampler_task = (
                tg.create_task(
                    sample_agents(controller.api, sample_every, stuck_rule(settings)),
                    name="agent-sampler",
                )
                if sample_every > 0
                else None
            )
            dir_every = settings.dir_move_interval_s
            dir_task = (
                tg.create_task(move_dirs(controller.api, dir_every), name="dir-mover")
                if dir_every > 0
                else None
            )
            loop_task = tg.create_task(controller.run(), name="controller-event-loop")
            stopper = tg.create_task(stop.wait(), name="controller-stop-signal")
            await asyncio.wait([loop_task, stopper], return_when=asyncio.FIRST_COMPLETED)
            if not loop_task.done():
                await hand_over(controller, settings.hand_over_timeout_s)
            loop_task.cancel()
            stopper.cancel()
            for task in (sink_task, progress_task, sampler_task, dir_task):
                if task is not None:
                    task.cancel()
    finally:
        log.info("controller %d stopping", settings.controller_id)
        if kafka is not None:
            with contextlib.suppress(Exception):
                await kafka.stop()
        with contextlib.suppress(Exception):
            await server.stop()
        await zk.close()

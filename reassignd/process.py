"""One controller process composed (outside the controller package, which never imports the HTTP
layer): its ZooKeeper session, the controller, the HTTP server, the Kafka-protocol admin listener
(``--kafka-listener``), the event stream's Kafka sender, the progress reporter, and the sampler
of the agents' reports (adaptive concurrency, self-healing).

The one composition: the CLI (``service.py``), the in-process controller of the tests and the
benchmarks (``testing/controller.py``) build the process here; what differs between them is a
``Composition``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import aiohttp

from reassignd.agent_reports.dir_mover import move_dirs
from reassignd.agent_reports.reporter import report_progress
from reassignd.agent_reports.sampler import sample_agents
from reassignd.agent_reports.session import agents_session
from reassignd.agent_reports.status_cache import BatchStatusCache
from reassignd.controller.runtime.controller import Controller
from reassignd.controller.settings import ControllerSettings
from reassignd.errors import starting
from reassignd.executor.progress import StuckRule
from reassignd.feeder.evacuation import evacuate
from reassignd.http.app import build_app
from reassignd.http.listener_config import http_tls_context
from reassignd.http.server import HttpServer
from reassignd.tokens import load_tokens
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import ZkTimeoutError

if TYPE_CHECKING:  # loaded when asked for: kafka-python's client and aiokafka cost a process
    # start about half a CPU-second, and most controllers run without the listener or the stream
    from reassignd.kafka_listener.server import KafkaListener
    from reassignd.stream.kafka_sink import KafkaSink

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Composition:
    """What differs between the process the CLI runs and the one a test or a benchmark runs in
    its own event loop (the ports, hosts and intervals are the settings')."""

    role: str = "controller"  # the ZooKeeper session's role (its name in ZooKeeper's log)
    wall_clock: Callable[[], float] = time.time  # every timestamp the instance writes or records
    freeze_gc: bool = True  # the process is the controller's alone: gc.freeze() what a load built
    http: bool = True  # serve the HTTP API (and, with --kafka-listener, the Kafka listener)
    # the event stream's Kafka sender, the progress reporter and the agents' sampler, each when
    # the settings ask for it
    side_tasks: bool = True


@dataclass(frozen=True, slots=True)
class ControllerProcess:
    controller: Controller
    zk: ZkClient  # the controller's own session
    url: str | None  # its HTTP API (None when not served)
    task: asyncio.Task[None]  # the controller's event loop and the side tasks


def kafka_sink(settings: ControllerSettings, controller: Controller) -> KafkaSink | None:
    """The event stream's Kafka sender, hooked to the controller's event log (None: no Kafka)."""
    if settings.events_bootstrap_servers is None:
        return None
    from reassignd.stream.kafka_sink import EventMetrics, KafkaSettings, KafkaSink  # noqa: PLC0415

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


def address(host: str | None, port: int | None) -> str:
    host = host or "0.0.0.0"
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


async def _run(
    controller: Controller,
    settings: ControllerSettings,
    sink: KafkaSink | None,
    batch_statuses: BatchStatusCache | None,
    agents: aiohttp.ClientSession,
) -> None:
    """The controller's event loop with the dir mover and the side tasks, until cancelled (or one
    fails)."""
    stuck = StuckRule.of(settings.batch_stuck_after_s, settings.batch_stuck_below_bytes_per_s)
    async with asyncio.TaskGroup() as tg:
        if sink is not None:
            tg.create_task(sink.run(), name="events-to-kafka")
        interval = settings.events_progress_interval_s
        if batch_statuses is not None and interval > 0:
            tg.create_task(
                report_progress(
                    controller.api, controller.records, interval, stuck, batch_statuses, agents=agents
                ),
                name="events-progress",
            )
        sample_every = settings.agent_sample_interval_s
        if batch_statuses is not None and sample_every > 0:
            tg.create_task(
                sample_agents(controller.api, sample_every, stuck, agents=agents), name="agent-sampler"
            )
        # not a side task: the batches' moves between log dirs are carried out by it
        if settings.dir_move_interval_s > 0:
            tg.create_task(
                move_dirs(controller.api, settings.dir_move_interval_s, agents=agents), name="dir-mover"
            )
        tg.create_task(controller.run(), name=f"controller-{settings.controller_id}-event-loop")


@contextlib.asynccontextmanager
async def composed(
    settings: ControllerSettings, composition: Composition = Composition()
) -> AsyncIterator[ControllerProcess]:
    """Start a controller process on ``settings`` (its listeners bound before the election, so
    ``/controller`` names them); on the way out its event loop and side tasks are cancelled, the
    listeners stopped and its session closed (its ``/controller`` znode goes at once)."""
    zk = ZkClient(
        settings.zk_security.zk_settings(
            settings.zk_connect,
            settings.session_timeout_s,
            settings.zk_request_timeout_s,
            role=composition.role,
        )
    )
    with starting(f"ZooKeeper unreachable (--zk {settings.zk_connect})", ZkTimeoutError):
        await zk.start()
    # the one session the listener, the reporter, the sampler and the dir mover ask agents through
    agents = agents_session()
    server: HttpServer | None = None
    kafka: KafkaListener | None = None
    task: asyncio.Task[None] | None = None
    try:
        controller = Controller(
            settings,
            zk,
            wall_clock=composition.wall_clock,
            place_lost_replicas=evacuate,
            freeze_gc=composition.freeze_gc,
        )
        sink = kafka_sink(settings, controller) if composition.side_tasks else None
        # filled by the progress reporter, read by /metrics
        batch_statuses = BatchStatusCache() if composition.side_tasks else None
        if composition.http:
            server = HttpServer(
                build_app(
                    controller.api, settings, records=controller.records, batch_statuses=batch_statuses
                ),
                settings.http_host,
                settings.http_port,
                ssl_context=http_tls_context(settings),
            )
            with starting(f"cannot listen on {address(settings.http_host, settings.http_port)} (--http)"):
                bound = await server.start()
            # what /controller and every 41 answer name: --http-advertised, else the bound address
            controller.http_url = settings.http_advertised or bound
            if settings.http_advertised is not None:
                log.info("advertising the HTTP API as %s", settings.http_advertised)
            if settings.kafka_listener_host is not None:  # before the election: /controller names it
                from reassignd.kafka_listener.server import KafkaListener  # noqa: PLC0415

                kafka = KafkaListener(
                    controller.api,
                    settings,
                    None if settings.auth_tokens_path is None else load_tokens(settings.auth_tokens_path),
                    controller.records,
                    agents=agents,
                )
                listen = address(settings.kafka_listener_host, settings.kafka_listener_port)
                with starting(f"cannot listen on {listen} (--kafka-listener)"):
                    controller.kafka_address = await kafka.start()
        task = asyncio.create_task(
            _run(controller, settings, sink, batch_statuses, agents),
            name=f"controller-{settings.controller_id}",
        )
        yield ControllerProcess(controller, zk, controller.http_url, task)
    finally:
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if kafka is not None:
            with contextlib.suppress(Exception):
                await kafka.stop()
        if server is not None:
            with contextlib.suppress(Exception):
                await server.stop()
        await agents.close()
        await zk.close()

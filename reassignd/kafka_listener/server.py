"""The Kafka-protocol admin listener: an asyncio server, one task per connection.

``address = await listener.start()`` binds (port 0: a free one) and returns the advertised
``host:port`` (``--kafka-advertised``, or the bound address), logging ``listening on
kafka://...``; ``await listener.stop()`` closes it and every connection. Connections beyond
``kafka_max_connections``, or beyond ``--kafka-max-connections-per-ip`` from one client
address, are closed as they are accepted, with a (rate-limited) log line.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Mapping

import aiohttp

from reassignd.agent_reports.fetch import AGENT_TIMEOUT_S
from reassignd.controller.api.controller_api import ControllerApi
from reassignd.controller.settings import ControllerSettings
from reassignd.kafka_listener.config import tls_context
from reassignd.kafka_listener.connection import Connection
from reassignd.kafka_listener.context import Address, Listener
from reassignd.kafka_listener.limits import ByteBudget, PerAddress, RateLimitedLog
from reassignd.stream.audit import AuditTrail
from reassignd.stream.record_log import RecordLog
from reassignd.tokens import Principal

log = logging.getLogger(__name__)

FRAME_TIMEOUT_S = 30.0  # a client that stops in the middle of a frame
WRITE_TIMEOUT_S = 30.0  # a client that stops reading its responses
TLS_HANDSHAKE_TIMEOUT_S = 10.0


class KafkaListener:
    def __init__(
        self,
        api: ControllerApi,
        settings: ControllerSettings,
        tokens: Mapping[str, Principal] | None,
        records: RecordLog | None = None,
        *,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        assert settings.kafka_listener_host is not None
        self.settings = settings
        self.host = settings.kafka_listener_host
        self.port = settings.kafka_listener_port
        self.tokens = tokens
        self.tls = tls if tls is not None else tls_context(settings)
        self.listener = Listener(
            api,
            settings.controller_id,
            Address(self.host, self.port),
            None,
            records,
            AuditTrail(records, settings.controller_id),
        )
        self.budget = ByteBudget(max(settings.kafka_max_frame_bytes, 4 * settings.kafka_max_frame_bytes))
        self.warn = RateLimitedLog(log)
        self.per_address = PerAddress(settings.kafka_max_connections_per_ip)
        self.address: str | None = None
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.refused_connections = 0

    @property
    def security_protocol(self) -> str:
        sasl = "SASL_" if self.tokens is not None else ""
        return f"{sasl}SSL" if self.tls is not None else f"{sasl}PLAINTEXT"

    async def start(self) -> str:
        self.listener.agents = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=AGENT_TIMEOUT_S))
        try:
            self._server = await asyncio.start_server(
                self._on_connection,
                self.host,
                self.port,
                ssl=self.tls,
                ssl_handshake_timeout=TLS_HANDSHAKE_TIMEOUT_S if self.tls is not None else None,
                backlog=1024,
            )
        except BaseException:
            await self.listener.agents.close()
            raise
        port = self._server.sockets[0].getsockname()[1] if self._server.sockets else self.port
        s = self.settings
        if s.kafka_advertised_host is not None:
            advertised = Address(s.kafka_advertised_host, s.kafka_advertised_port)
        else:
            advertised = Address(self.host, port)
        self.listener.advertised = advertised
        self.address = str(advertised)
        log.info(
            "listening on kafka://%s (%s, advertised as %s)",
            str(Address(self.host, port)),
            self.security_protocol,
            self.address,
        )
        return self.address

    async def stop(self) -> None:
        """Stop accepting, close every connection. Idempotent."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for task in list(self._connections):
            task.cancel()
        for task in list(self._connections):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 5.0)
        if self.listener.agents is not None:
            await self.listener.agents.close()
            self.listener.agents = None

    @property
    def connections(self) -> int:
        return len(self._connections)

    async def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        peer = writer.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else str(peer)
        refusal = None
        if len(self._connections) >= self.settings.kafka_max_connections or self._server is None:
            refusal = f"{len(self._connections)} connections open (the limit)"
        elif not self.per_address.enter(address):
            refusal = (
                f"{self.per_address.count(address)} connections open from {address} "
                "(--kafka-max-connections-per-ip)"
            )
        if refusal is not None:
            self.refused_connections += 1
            self.warn("kafka listener: refusing a connection from %s: %s", peer, refusal)
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 1.0)
            return
        self._connections.add(task)
        s = self.settings
        try:
            await Connection(
                self.listener,
                reader,
                writer,
                tokens=self.tokens,
                max_frame_bytes=s.kafka_max_frame_bytes,
                max_in_flight=s.kafka_max_in_flight,
                idle_timeout_s=s.kafka_idle_timeout_s,
                frame_timeout_s=FRAME_TIMEOUT_S,
                write_timeout_s=WRITE_TIMEOUT_S,
                budget=self.budget,
                warn=self.warn,
            ).run()
        except Exception:
            log.exception("kafka connection failed")
        finally:
            self._connections.discard(task)
            self.per_address.leave(address)

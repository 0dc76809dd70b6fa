"""The Kafka-protocol admin listener: an asyncio server, one task per connection.

``address = await listener.start()`` binds (port 0: a free one) and returns the advertised
``host:port`` (``--kafka-advertised``, or the bound address), logging ``listening on
kafka://...``; ``await listener.stop()`` closes it and every connection. Connections beyond
``kafka_max_connections``, or beyond ``--kafka-max-connections-per-ip`` from one client
address, are closed as they are accepted, with a (rate-limited) log line.

With ``--kafka-broker-ports`` the listener also opens a port per registered broker
(:mod:`reassignd.kafka_listener.broker_ports` says which) and advertises each broker there; a
connection accepted on a broker's port speaks for that broker (``RequestContext.broker_id``). A
watcher task follows the snapshot's brokers (never the controller's loop): it opens a port as a
broker registers and closes it, with its connections, as the broker leaves or this instance
stops being the active one. A port that cannot be bound is logged, its broker advertised at the
bootstrap address meanwhile, and tried again after ``BIND_RETRY_S``. Every port shares the same
TLS, SASL, connection caps and frame limits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections.abc import Mapping
from functools import partial

import aiohttp

from reassignd.controller.api.controller_api import ControllerApi
from reassignd.controller.model.snapshot import ClusterSnapshot
from reassignd.controller.settings import ControllerSettings
from reassignd.kafka_listener import broker_ports
from reassignd.kafka_listener.config import tls_context
from reassignd.kafka_listener.connection import ClientConnection
from reassignd.kafka_listener.context import Address, Listener
from reassignd.kafka_listener.limits import ByteBudget, PerAddress, RateLimitedLog
from reassignd.stream.audit import AuditTrail
from reassignd.stream.record_log import RecordLog
from reassignd.tokens import Principal

log = logging.getLogger(__name__)

FRAME_TIMEOUT_S = 30.0  # a client that stops in the middle of a frame
WRITE_TIMEOUT_S = 30.0  # a client that stops reading its responses
TLS_HANDSHAKE_TIMEOUT_S = 10.0
BROKER_PORTS_POLL_S = 0.25  # how often the watcher looks at the snapshot's brokers
BIND_RETRY_S = 30.0  # a broker port that could not be bound is tried again after this


class KafkaListener:
    def __init__(
        self,
        api: ControllerApi,
        settings: ControllerSettings,
        tokens: Mapping[str, Principal] | None,
        records: RecordLog | None = None,
        *,
        agents: aiohttp.ClientSession,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        """``agents``: the session DescribeLogDirs and AlterReplicaLogDirs ask the broker agents
        through (its owner, the composition root, closes it)."""
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
        self.listener.agents = agents
        self.budget = ByteBudget(max(settings.kafka_max_frame_bytes, 4 * settings.kafka_max_frame_bytes))
        self.warn = RateLimitedLog(log)
        self.per_address = PerAddress(settings.kafka_max_connections_per_ip)
        self.address: str | None = None
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.refused_connections = 0
        # --kafka-broker-ports: broker id -> (its server, the bound port) and its connections
        self.broker_servers: dict[int, tuple[asyncio.Server, int]] = {}
        self._broker_connections: dict[int, set[asyncio.Task[None]]] = {}
        self._remembered_ports: dict[int, int] = {}
        self._unusable_ports: set[int] = set()
        self._bind_failed: set[int] = set()  # brokers whose port failed to bind, until the retry
        self._retry_at: float | None = None
        self._over_cap: tuple[int, ...] = ()
        self._watcher: asyncio.Task[None] | None = None
        self._synced: object = None  # the snapshot brokers the ports were last made to match
        self._syncing: asyncio.Task[None] | None = None

    @property
    def security_protocol(self) -> str:
        sasl = "SASL_" if self.tokens is not None else ""
        return f"{sasl}SSL" if self.tls is not None else f"{sasl}PLAINTEXT"

    async def start(self) -> str:
        self._server = await asyncio.start_server(
            self._on_connection,
            self.host,
            self.port,
            ssl=self.tls,
            ssl_handshake_timeout=TLS_HANDSHAKE_TIMEOUT_S if self.tls is not None else None,
            backlog=1024,
        )
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
        if s.kafka_broker_ports is not None:
            self.listener.follow_brokers = self.follow_brokers
            self._watcher = asyncio.create_task(self._watch_brokers(), name="kafka-broker-ports")
        return self.address

    # --- a port per broker ---------------------------------------------------------------------------

    async def _watch_brokers(self) -> None:
        while True:
            retry = self._retry_at is not None and time.monotonic() >= self._retry_at
            await self.follow_brokers(self.listener.api.snapshot(), force=retry)
            await asyncio.sleep(BROKER_PORTS_POLL_S)

    async def follow_brokers(self, snapshot: ClusterSnapshot, *, force: bool = False) -> None:
        """The broker ports made to match ``snapshot``'s brokers (none unless active). Metadata
        and DescribeCluster await this before they list the nodes, so a broker is never
        advertised at the bootstrap address only because its port is still being opened. The
        work runs in a task of its own, one at a time, that the callers wait for (shielded: a
        caller whose connection the work closes does not stop it)."""
        brokers = snapshot.brokers if snapshot.active else {}
        while force or brokers is not self._synced:
            force = False
            task = self._syncing
            if task is None or task.done():
                self._synced = brokers
                task = self._syncing = asyncio.create_task(
                    self._sync(list(brokers)), name="kafka-broker-ports-sync"
                )
            await asyncio.shield(task)

    async def _sync(self, brokers: list[int]) -> None:
        try:
            await self.sync_broker_ports(brokers)
        except Exception:
            log.exception("kafka listener: cannot update the broker ports")

    async def sync_broker_ports(self, brokers: list[int]) -> None:
        """Open and close broker ports so that ``brokers`` (the registered ones) have theirs."""
        s = self.settings
        assert s.kafka_broker_ports is not None
        if self._server is None:  # stopping (or stopped): no port opens any more
            brokers = []
        if self._retry_at is not None and time.monotonic() >= self._retry_at:
            self._retry_at = None
            self._unusable_ports.clear()
            self._bind_failed.clear()
        current = {b: port for b, (_, port) in self.broker_servers.items()}
        plan = broker_ports.assign(
            [b for b in brokers if b not in self._bind_failed],
            current,
            self._remembered_ports,
            s.kafka_broker_ports,
            s.kafka_max_broker_ports,
            self._unusable_ports,
        )
        for broker_id in [b for b in current if b not in plan.ports]:
            self._close_broker_port(broker_id)
        for broker_id, port in plan.ports.items():
            if broker_id not in self.broker_servers:
                await self._open_broker_port(broker_id, port)
        self._remembered_ports = broker_ports.remember(
            self._remembered_ports, {b: port for b, (_, port) in self.broker_servers.items()}
        )
        over_cap = tuple(b for b in plan.over_cap if b not in self._bind_failed)
        if over_cap and over_cap != self._over_cap:
            log.warning(
                "kafka listener: %d broker(s) past the cap of %d broker ports (--kafka-max-broker-ports, "
                "--kafka-broker-ports), advertised at the bootstrap address: %s",
                len(over_cap),
                broker_ports.capacity(s.kafka_broker_ports, s.kafka_max_broker_ports),
                ", ".join(str(b) for b in over_cap[:20]) + (" ..." if len(over_cap) > 20 else ""),
            )
        self._over_cap = over_cap

    def _advertised_host(self) -> str:
        s = self.settings
        return s.kafka_advertised_host if s.kafka_advertised_host is not None else self.host

    async def _open_broker_port(self, broker_id: int, port: int) -> None:
        try:
            server = await asyncio.start_server(
                partial(self._on_connection, broker_id=broker_id),
                self.host,
                port,
                ssl=self.tls,
                ssl_handshake_timeout=TLS_HANDSHAKE_TIMEOUT_S if self.tls is not None else None,
                backlog=1024,
            )
        except OSError as e:
            self._bind_failed.add(broker_id)
            if port:
                self._unusable_ports.add(port)
            if self._retry_at is None:
                self._retry_at = time.monotonic() + BIND_RETRY_S
            log.warning(
                "kafka listener: cannot listen on %s for broker %d: %s; it is advertised at the "
                "bootstrap address meanwhile (tried again in %g s)",
                Address(self.host, port),
                broker_id,
                e,
                BIND_RETRY_S,
            )
            return
        bound = server.sockets[0].getsockname()[1] if server.sockets else port
        self.broker_servers[broker_id] = (server, bound)
        self.listener.broker_addresses[broker_id] = Address(self._advertised_host(), bound)
        log.info(
            "kafka listener: broker %d on kafka://%s (advertised as %s)",
            broker_id,
            Address(self.host, bound),
            self.listener.broker_addresses[broker_id],
        )

    def _close_broker_port(self, broker_id: int) -> None:
        """Stop advertising the broker's port, stop accepting there (the listening socket closes
        at once), close its connections. Neither the connections nor the server's wait for them
        are awaited: one of them may be a Metadata request waiting for this very work (each
        removes itself as it ends; ``stop`` awaits every connection)."""
        self.listener.broker_addresses.pop(broker_id, None)
        server, port = self.broker_servers.pop(broker_id)
        server.close()
        for task in self._broker_connections.pop(broker_id, set()):
            task.cancel()
        log.info("kafka listener: broker %d's port %d closed", broker_id, port)

    async def stop(self) -> None:
        """Stop accepting, close every connection. Idempotent."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await watcher
        self.listener.follow_brokers = None
        if self._syncing is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._syncing
        for broker_id in list(self.broker_servers):
            with contextlib.suppress(Exception):
                self._close_broker_port(broker_id)
        for task in list(self._connections):
            task.cancel()
        for task in list(self._connections):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 5.0)

    @property
    def connections(self) -> int:
        return len(self._connections)

    async def _on_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, broker_id: int | None = None
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        peer = writer.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else str(peer)
        refusal = None
        if len(self._connections) >= self.settings.kafka_max_connections or self._server is None:
            refusal = f"{len(self._connections)} connections open (the limit)"
        elif broker_id is not None and broker_id not in self.broker_servers:
            refusal = f"broker {broker_id}'s port is closing"
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
        if broker_id is not None:
            self._broker_connections.setdefault(broker_id, set()).add(task)
        s = self.settings
        try:
            await ClientConnection(
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
                broker_id=broker_id,
            ).run()
        except Exception:
            log.exception("kafka connection failed")
        finally:
            self._connections.discard(task)
            if broker_id is not None:
                self._broker_connections.get(broker_id, set()).discard(task)
            self.per_address.leave(address)

"""What a request handler gets: the listener's shared parts and who asks."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from reassignd.agent_reports.fetch import SharedReports
from reassignd.controller.api.controller_api import ControllerApi
from reassignd.controller.model.snapshot import ClusterSnapshot
from reassignd.kafka_listener.limits import FrameCache
from reassignd.stream.audit import AuditTrail
from reassignd.stream.record_log import RecordLog
from reassignd.tokens import Principal, Role

NONE = 0
TOPIC_AUTHORIZATION_FAILED = 29
CLUSTER_AUTHORIZATION_FAILED = 31
NOT_CONTROLLER = 41
UNKNOWN_SERVER_ERROR = -1

METADATA_CACHE_ENTRIES = 4096
METADATA_CACHE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Address:
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


@dataclass(slots=True)
class Listener:
    """The parts every handler shares. ``advertised`` is set once the socket is bound."""

    api: ControllerApi
    controller_id: int
    advertised: Address
    agents: aiohttp.ClientSession | None = None  # DescribeLogDirs asks the agents
    records: RecordLog | None = None
    audit: AuditTrail | None = None  # every mutating request: a log line and an audit record
    # encoded Metadata answers of the current snapshot (see cluster.metadata), bounded in bytes
    metadata_cache: FrameCache = field(
        default_factory=lambda: FrameCache(METADATA_CACHE_ENTRIES, METADATA_CACHE_BYTES)
    )
    # the big answers being built: one build per key and snapshot
    metadata_building: dict[Any, tuple[object, asyncio.Future[bytes]]] = field(default_factory=dict)
    # a standby's list of registered brokers: (read at, ids), and the read in progress
    standby_brokers: tuple[float, tuple[int, ...]] | None = None
    standby_brokers_reading: asyncio.Future[tuple[int, ...]] | None = None
    topic_ids: tuple[object, dict[uuid.UUID, str]] | None = None  # per published topics map
    sorted_topic_names: tuple[object, list[str]] | None = None  # DescribeTopicPartitions' order, likewise
    reports: SharedReports = field(default_factory=SharedReports)  # DescribeLogDirs' agent rounds
    # the brokers with a port of their own (--kafka-broker-ports): id -> the address advertised
    broker_addresses: dict[int, Address] = field(default_factory=dict)
    # opens and closes the broker ports to match a snapshot (set while the ports are on)
    follow_brokers: Callable[[ClusterSnapshot], Awaitable[None]] | None = None

    def broker_address(self, broker_id: int) -> Address:
        """Where a broker is advertised: its own port, else the bootstrap address."""
        return self.broker_addresses.get(broker_id, self.advertised)


@dataclass(frozen=True, slots=True)
class RequestContext:
    listener: Listener
    principal: Principal
    client_id: str
    version: int
    broker_id: int | None = None  # the broker whose port the connection came to; None: bootstrap

    @property
    def api(self) -> ControllerApi:
        return self.listener.api

    @property
    def may_alter(self) -> bool:
        return self.principal.may(Role.ADMIN)

    def denied_message(self, what: str) -> str:
        return f"user {self.principal.user} ({self.principal.role.value}) is not authorized to {what}"

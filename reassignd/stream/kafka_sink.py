"""The event stream's Kafka sender (aiokafka): a bounded buffer the controller fills without
waiting, and one task that sends it on.

- Records are keyed by entity (:attr:`StreamRecord.key`), sent with ``acks=all``; idempotence is off
  (not every Kafka-protocol broker supports it, and a record's ``controller_epoch``/``sequence``
  already identify it).
- The topic is created when missing: one partition (one stream, in order), replicated on up to
  three brokers.
- The controller never waits on Kafka: when the buffer is full a record is dropped and counted
  (``reassignd_events_dropped_total``, ``/v1/status``). A send that fails is kept and tried again
  after the producer reconnects, with a backoff (0.5 s doubling to 5 s).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import ssl
from dataclasses import dataclass
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError, TopicAlreadyExistsError
from prometheus_client import CollectorRegistry, Counter, Gauge

from reassignd.contracts.cluster import KafkaSinkStatus
from reassignd.stream.records import StreamRecord

log = logging.getLogger(__name__)

BACKOFF_S = (0.5, 5.0)
REQUEST_TIMEOUT_MS = 5000


@dataclass(frozen=True, slots=True)
class KafkaSettings:
    bootstrap_servers: str
    topic: str = "reassignd.events"
    buffer_records: int = 10_000
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = None
    ssl_cafile: str | None = None

    def client_options(self) -> dict[str, Any]:
        """What aiokafka's clients take for the connection and its security."""
        options: dict[str, Any] = {
            "bootstrap_servers": self.bootstrap_servers,
            "security_protocol": self.security_protocol,
            "request_timeout_ms": REQUEST_TIMEOUT_MS,
        }
        if self.sasl_mechanism is not None:
            options["sasl_mechanism"] = self.sasl_mechanism
        if self.sasl_username is not None:
            options["sasl_plain_username"] = self.sasl_username
        if self.sasl_password is not None:
            options["sasl_plain_password"] = self.sasl_password
        if "SSL" in self.security_protocol:
            options["ssl_context"] = ssl.create_default_context(cafile=self.ssl_cafile)
        return options


class EventMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.sent = Counter("reassignd_events_sent", "Event records sent to Kafka", registry=registry)
        self.dropped = Counter(
            "reassignd_events_dropped",
            "Event records dropped because the Kafka buffer was full",
            registry=registry,
        )
        self.buffered = Gauge(
            "reassignd_events_buffered", "Event records waiting to be sent to Kafka", registry=registry
        )


class KafkaSink:
    def __init__(self, settings: KafkaSettings, metrics: EventMetrics) -> None:
        self.settings = settings
        self.metrics = metrics
        self.buffer: collections.deque[StreamRecord] = collections.deque()
        self.dropped = 0
        self.sent = 0
        self.connected = False
        self._wake = asyncio.Event()

    def status(self) -> KafkaSinkStatus:
        return KafkaSinkStatus(self.settings.topic, self.connected, self.sent, self.dropped, len(self.buffer))

    def offer(self, record: StreamRecord) -> None:
        """Called by the event log: never waits."""
        if len(self.buffer) >= self.settings.buffer_records:
            self.dropped += 1
            self.metrics.dropped.inc()
            return
        self.buffer.append(record)
        self.metrics.buffered.set(len(self.buffer))
        self._wake.set()

    async def run(self) -> None:
        backoff = BACKOFF_S[0]
        while True:
            producer = AIOKafkaProducer(
                acks="all", enable_idempotence=False, **self.settings.client_options()
            )
            try:
                await producer.start()
                await self._ensure_topic()
                self.connected, backoff = True, BACKOFF_S[0]
                log.info("event stream connected to %s", self.settings.bootstrap_servers)
                await self._send_forever(producer)
            except (KafkaError, OSError, TimeoutError) as e:
                if self.connected:
                    log.warning("event stream to Kafka lost: %r; reconnecting", e)
                else:
                    log.debug("event stream: Kafka not reachable: %r", e)
            finally:
                self.connected = False
                with _suppress_kafka():
                    await producer.stop()
            await asyncio.sleep(backoff)
            backoff = min(BACKOFF_S[1], backoff * 2)

    async def _send_forever(self, producer: AIOKafkaProducer) -> None:
        topic = self.settings.topic
        while True:
            if not self.buffer:
                self._wake.clear()
                await self._wake.wait()
            chunk = list(self.buffer)[:500]
            futures = [
                await producer.send(
                    topic,
                    value=r.json,
                    key=None if r.key is None else r.key.encode(),
                )
                for r in chunk
            ]
            await asyncio.gather(*futures)
            for _ in chunk:  # sent: only now out of the buffer (a failed send is tried again)
                self.buffer.popleft()
            self.sent += len(chunk)
            self.metrics.sent.inc(len(chunk))
            self.metrics.buffered.set(len(self.buffer))

    async def _ensure_topic(self) -> None:
        admin = AIOKafkaAdminClient(**self.settings.client_options())
        await admin.start()
        try:
            if self.settings.topic in await admin.list_topics():
                return
            try:
                cluster = await admin.describe_cluster()
                replication = max(1, min(3, len(cluster.get("brokers", []))))
                topic = NewTopic(self.settings.topic, num_partitions=1, replication_factor=replication)
                await admin.create_topics([topic])
                log.info("created the event topic %s", self.settings.topic)
            except TopicAlreadyExistsError:
                pass
        finally:
            with _suppress_kafka():
                await admin.close()


def _suppress_kafka() -> contextlib.suppress:
    return contextlib.suppress(KafkaError, OSError, TimeoutError)

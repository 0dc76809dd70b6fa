"""The event log: numbers records per controller epoch, keeps a bounded history, and hands each
record to its subscribers (SSE streams) and sinks (the Kafka sender) without ever waiting.

Three kinds of emitter, all on the process's one asyncio thread (``emit`` never awaits, so no
lock is needed): the controller's event loop (its handlers and the fenced writer), the audit
trail (HTTP handlers and the Kafka listener, one record per mutating request) and the agents'
progress reporter (progress and stuck-move records). The time of each record comes from the
clock the log is given: the controller hands it its injected wall clock. Readers (HTTP
handlers) read the history and their own subscription queue. A subscriber whose queue is full is dropped (its stream ends; the client
reconnects with ``Last-Event-ID`` and resumes from the history).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable, Iterator

from reassignd.contracts.cluster import EventsStatus, KafkaSinkStatus
from reassignd.contracts.records import Record
from reassignd.stream.records import StreamRecord, make_record

log = logging.getLogger(__name__)

DEFAULT_HISTORY = 10_000
SUBSCRIBER_QUEUE = 10_000

Sink = Callable[[StreamRecord], None]


class Subscription:
    def __init__(self, maxsize: int) -> None:
        self.queue: asyncio.Queue[StreamRecord | None] = asyncio.Queue(maxsize)
        self.closed = False


class RecordLog:
    def __init__(self, history: int = DEFAULT_HISTORY, clock_ms: Callable[[], int] | None = None) -> None:
        self.history: collections.deque[StreamRecord] = collections.deque(maxlen=history)
        self.epoch = 0
        self.sequence = 0
        self._clock_ms = clock_ms or (lambda: int(time.time() * 1000))
        self._subscribers: set[Subscription] = set()
        self.sinks: list[Sink] = []
        # each sink's figures for /v1/status (e.g. the Kafka sender's sent/dropped/buffered)
        self.kafka_status: Callable[[], KafkaSinkStatus] | None = None  # the Kafka sink's, if any

    @property
    def subscribers(self) -> int:
        """Subscriptions open now (the SSE streams)."""
        return len(self._subscribers)

    def status(self) -> EventsStatus:
        last = self.history[-1].id if self.history else None
        kafka = None if self.kafka_status is None else self.kafka_status()
        return EventsStatus(last, len(self.history), kafka)

    def start_epoch(self, epoch: int) -> None:
        """A new term: its records are numbered from 1."""
        if epoch != self.epoch:
            self.epoch, self.sequence = epoch, 0

    def emit(self, change: Record) -> StreamRecord:
        """Record one state change that happened (its ZooKeeper write succeeded), kept typed: it
        is encoded to JSON only at the edges (:mod:`reassignd.stream.records`)."""
        self.sequence += 1
        record = make_record(change, self._clock_ms(), self.epoch, self.sequence)
        self.history.append(record)
        for sub in list(self._subscribers):
            try:
                sub.queue.put_nowait(record)
            except asyncio.QueueFull:
                self._close(sub)
        for sink in self.sinks:
            try:
                sink(record)
            except Exception:  # a sink never breaks the controller
                log.exception("event sink failed on %s", record.id)
        return record

    def since(self, epoch: int, sequence: int) -> tuple[list[StreamRecord], bool]:
        """The records after ``epoch-sequence`` in the history, and whether the history covers
        everything after it (False: some records in between were already forgotten)."""
        after = [r for r in self.history if (r.controller_epoch, r.sequence) > (epoch, sequence)]
        if not after:
            return after, True
        first = after[0]
        contiguous = (first.controller_epoch == epoch and first.sequence == sequence + 1) or (
            first.controller_epoch > epoch and first.sequence == 1
        )
        return after, contiguous

    def subscribe(self, maxsize: int = SUBSCRIBER_QUEUE) -> Subscription:
        sub = Subscription(maxsize)
        self._subscribers.add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        self._subscribers.discard(sub)

    def _close(self, sub: Subscription) -> None:
        self._subscribers.discard(sub)
        sub.closed = True
        # make room for the end-of-stream marker
        while not sub.queue.empty():
            sub.queue.get_nowait()
        sub.queue.put_nowait(None)

    def __iter__(self) -> Iterator[StreamRecord]:
        return iter(self.history)

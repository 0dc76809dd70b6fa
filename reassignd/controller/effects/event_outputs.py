"""One event's outputs: created per event by the dispatch (once for the whole failover load),
filled by the handlers it runs, and applied at the event's end by the applier (``runtime.apply``),
which sends the control requests in the order the event sealed them, then answers the replies.
No handler sends to a broker or answers a request itself, and no long-lived part keeps an event's
outputs in a field of its own, so nothing leaks from one event into the next.

ZooKeeper writes are not collected here: a handler performs each one where it decides it, through
the fenced write gateway the outputs carry (``out.writes``,
:class:`~reassignd.controller.effects.fenced_writes.FencedWrites`), and decides on its outcome at
once. An event that may not write carries none.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

from reassignd.control.protocol import ControlRequest
from reassignd.controller.effects.broker_requests import BrokerRequestBatch
from reassignd.controller.effects.fenced_writes import FencedWrites
from reassignd.topic_partition import TopicPartition

T = TypeVar("T")

# one sealed batch: each broker's requests, in order
Built = dict[int, list[ControlRequest]]


def _answer(reply: asyncio.Future[T], result: T) -> None:
    if not reply.done():  # the caller may have given up (its timeout) meanwhile
        reply.set_result(result)


@dataclass(slots=True)
class EventOutputs:
    """One event's outputs so far."""

    requests: BrokerRequestBatch  # the control requests collected since the last seal
    # the fenced write gateway this event's handlers write ZooKeeper through (None: an event that
    # may not write — asking for it then is a programming error)
    gateway: FencedWrites | None = None
    # partitions whose reassignment completed (phase B wrote their final state and topic znode),
    # in order: the end elects those left without a live leader, drops them from the legacy
    # znode and the sequenced requests, and resumes deletions waiting for them. Taken (emptied)
    # by ``Finisher.after_reassignments``, so an event that runs it twice acts on each once.
    completed: list[TopicPartition] = field(default_factory=list)
    # partitions without a live leader that the end tries to elect (unclean when the topic allows
    # it): those a replica removal (a re-target or a cancel) left so, and those a new assignment
    # may have given a live in-sync replica; taken like ``completed``
    leaderless: set[TopicPartition] = field(default_factory=set)
    # the batches sealed so far, built, in the order they go out
    outgoing: list[Built] = field(default_factory=list)
    # the answers to the event's requests, given after the control requests went out
    replies: list[Callable[[], None]] = field(default_factory=list)

    # --- ZooKeeper writes ---------------------------------------------------------------------------

    @property
    def writes(self) -> FencedWrites:
        """The fenced write gateway, for this event's ZooKeeper writes."""
        if self.gateway is None:
            raise RuntimeError("an event that may not write asked for the fenced writes")
        return self.gateway

    # --- control requests and answers ------------------------------------------------------------------

    def seal(self) -> None:
        """Close the requests collected so far into one ordered batch (built now, from the
        context as it is now: what a later step changes goes into the next batch) and start a
        new one. Kafka's ``sendRequestsToBrokers``, without the sending: the applier sends."""
        batch = self.requests
        if not batch.empty:
            self.outgoing.append(batch.build())
        self.requests = batch.fresh()

    def add(self, batch: BrokerRequestBatch) -> None:
        """A batch a handler collected on its own (its merge rules kept apart from the event's
        main one): sealed now, after what the event sealed before."""
        if not batch.empty:
            self.outgoing.append(batch.build())

    def answer(self, reply: asyncio.Future[T], result: T) -> None:
        """Answer ``reply`` with ``result`` once the event's requests went out."""
        self.replies.append(partial(_answer, reply, result))

    def take_completed(self) -> tuple[list[TopicPartition], set[TopicPartition]]:
        """The completions and leaderless partitions not acted on yet (emptied)."""
        completed, leaderless = self.completed, self.leaderless
        self.completed, self.leaderless = [], set()
        return completed, leaderless

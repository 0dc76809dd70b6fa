"""What one event produces, as a value: created per event by the dispatch (once for the whole
failover load), filled by the handlers it runs, and applied by the applier. The ZooKeeper writes
are steps (``effects.writes``) the handler hands over one at a time — the applier's ZooKeeper
half performs each, fenced, and answers with its outcome, because what a handler decides next may
depend on what landed (phase A's writes before phase B's reads) — and every step is kept in
``steps``. At the event's end the applier's other half (``runtime.apply``) sends the control
requests in the order the event sealed them, then answers the replies. No handler writes
ZooKeeper, sends to a broker or answers a request itself, and no long-lived part keeps an event's
outputs in a field of its own, so nothing leaks from one event into the next.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

from reassignd.control.protocol import ControlRequest
from reassignd.controller.effects.broker_requests import BrokerRequestBatch
from reassignd.controller.effects.writes import (
    AssignmentsWrite,
    Decide,
    Deletes,
    PathsEnsured,
    Refused,
    StatesCreate,
    StatesWrite,
    Step,
    Write,
    Written,
    ZkWrites,
)
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.topic_partition import TopicPartition
from reassignd.zk import codec
from reassignd.zk.errors import ZkError
from reassignd.zk.values import Op, WatchCallback

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
    # the applier's ZooKeeper half, which performs the event's write steps (None: an event that
    # may not write — a step handed over then is a programming error)
    zk: ZkWrites | None = None
    # every ZooKeeper write step the event handed to the applier, in order
    steps: list[Step] = field(default_factory=list)
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

    # --- ZooKeeper writes: each a step handed to the applier, its outcome the answer ----------------

    def _applier(self, step: Step) -> ZkWrites:
        if self.zk is None:
            raise RuntimeError(f"an event without an applier handed over a write: {step!r}")
        self.steps.append(step)
        return self.zk

    async def write(
        self, ops: Iterable[Op], *, atomic: bool = False, expect: tuple[type[ZkError], ...] = ()
    ) -> Written | Refused:
        """One fenced multi; a refusal of a type in ``expect`` is answered as Refused."""
        step = Write(tuple(ops), atomic, expect)
        return await self._applier(step).write(step)

    async def write_states(self, tps: Iterable[TopicPartition], decide: Decide) -> list[TopicPartition]:
        """Each partition's state decided by ``decide`` and written at its version (decided again
        after a conflict); returns the partitions written."""
        step = StatesWrite(tuple(tps), decide)
        return await self._applier(step).update_states(step.partitions, decide)

    async def write_assignments(self, updates: Mapping[TopicPartition, ReplicaAssignment]) -> None:
        """The topic znodes of ``updates``, each then in memory."""
        if updates:
            step = AssignmentsWrite(updates)
            await self._applier(step).write_assignments(updates)

    async def create_states(self, topic: str, states: Mapping[int, codec.PartitionState]) -> list[int]:
        """The state znodes of new partitions of ``topic``; returns the partitions created."""
        step = StatesCreate(topic, states)
        return await self._applier(step).create_states(topic, states)

    async def delete_all(self, znode_paths: Iterable[str]) -> None:
        """Delete the znodes still there."""
        step = Deletes(tuple(znode_paths))
        if step.paths:
            await self._applier(step).delete_all(list(step.paths))

    async def ensure_paths(self, znode_paths: Iterable[str]) -> list[str]:
        """Create the missing persistent znodes; returns those created."""
        step = PathsEnsured(tuple(znode_paths))
        return await self._applier(step).ensure_paths(step.paths)

    async def children(self, path: str, watch: WatchCallback | None) -> list[str]:
        """The children of a persistent znode, with ``watch`` armed. A read, but one whose znode
        someone deleted is re-created by the applier (a PathsEnsured step, reported) and read
        again, as Kafka's controller re-creates its paths: the watch is armed on it."""
        zk = self.zk
        if zk is None:
            raise RuntimeError(f"an event without an applier read {path} (it may re-create it)")
        return await zk.children(path, watch, self.steps.append)

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

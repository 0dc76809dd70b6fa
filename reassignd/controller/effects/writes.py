"""An event's ZooKeeper writes, as values: what a handler decides to write is a step it hands to
the applier (``EventOutputs.write`` and its siblings), never a call it makes on ZooKeeper. The
applier's ZooKeeper half (:class:`~reassignd.controller.effects.writer.ZkWriter`, behind the
:class:`ZkWrites` port) performs each step fenced by the controller epoch, keeps memory in step
with what landed, emits the records, and answers with the outcome as a value.

Two kinds of failure, kept apart here. A refusal the handler expects of ZooKeeper (the znode is
gone, is there already, changed since it was read) is deterministic — the next controller would
meet it again — so it comes back as a :class:`Refused` value the handler decides on. Anything else
(a lost connection, a timeout, the fence failed: another controller won) is an unknown outcome and
raises, and the controller resigns or reloads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.controller.state.context import LeaderIsr
from reassignd.topic_partition import TopicPartition
from reassignd.zk import codec
from reassignd.zk.errors import ZkError
from reassignd.zk.values import Op, Stat, WatchCallback

# a partition's new state decided from its current one (None: leave it as it is)
Decide = Callable[[TopicPartition, LeaderIsr], codec.PartitionState | None]


@dataclass(frozen=True, slots=True)
class Write:
    """One fenced multi: ``ops`` in order. ``atomic``: never split into several multis (too large
    for one request: ZnodeTooLargeError, nothing written). ``expect``: the refusals the handler
    decides on itself — answered as :class:`Refused` instead of raised."""

    ops: tuple[Op, ...]
    atomic: bool = False
    expect: tuple[type[ZkError], ...] = ()


@dataclass(frozen=True, slots=True)
class Written:
    """Every op applied; one result per op (a created path, a Stat, or None)."""

    results: tuple[Stat | str | None, ...]


@dataclass(frozen=True, slots=True)
class Refused:
    """ZooKeeper refused op ``index`` with ``error`` (one the step expected); nothing of the multi
    was applied."""

    index: int
    error: ZkError


@dataclass(frozen=True, slots=True)
class StatesWrite:
    """New partition states, each decided from its cached state and written at its version; a
    partition whose state changed meanwhile is read again and decided again."""

    partitions: tuple[TopicPartition, ...]
    decide: Decide


@dataclass(frozen=True, slots=True)
class AssignmentsWrite:
    """New full assignments: one topic znode write per topic (with its origins znode: the moves' original replicas)."""

    updates: Mapping[TopicPartition, ReplicaAssignment]


@dataclass(frozen=True, slots=True)
class StatesCreate:
    """The state znodes of a topic's new partitions (and their parents)."""

    topic: str
    states: Mapping[int, codec.PartitionState]


@dataclass(frozen=True, slots=True)
class Deletes:
    """Znodes deleted where they still exist (one already gone is not an error)."""

    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PathsEnsured:
    """Every missing persistent znode of ``paths`` and above them created (null data)."""

    paths: tuple[str, ...]


Step = Write | StatesWrite | AssignmentsWrite | StatesCreate | Deletes | PathsEnsured


class ZkWrites(Protocol):
    """The applier's ZooKeeper half: the one place an active controller writes ZooKeeper."""

    async def write(self, step: Write) -> Written | Refused: ...

    async def update_states(self, tps: Iterable[TopicPartition], decide: Decide) -> list[TopicPartition]: ...

    async def write_assignments(self, updates: Mapping[TopicPartition, ReplicaAssignment]) -> None: ...

    async def create_states(
        self, topic: str, new_states: Mapping[int, codec.PartitionState]
    ) -> list[int]: ...

    async def delete_all(self, znode_paths: list[str]) -> None: ...

    async def ensure_paths(self, znode_paths: Iterable[str]) -> list[str]: ...

    async def children(
        self, path: str, watch: WatchCallback | None, repaired: Callable[[Step], None]
    ) -> list[str]: ...

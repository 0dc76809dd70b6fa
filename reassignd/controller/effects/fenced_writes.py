"""The fenced write gateway: :class:`FencedWrites`, the one way a handler writes ZooKeeper. A
handler reaches it through its event's outputs (``out.writes``: an event that may not write has
none, and asking for it is a programming error) and awaits each write where it decides it — what
it decides next may depend on what landed (phase A's writes before phase B's reads). The
implementation (:class:`~reassignd.controller.effects.writer.ZkWriter`, one per active term)
performs each write fenced by the controller epoch, keeps memory in step with what landed, emits
the stream records, and answers with the outcome. Reads go beside it, through the read port every
part takes (:class:`~reassignd.zk.reads.ZkReads`, ``Shared.reads``); the one read here,
:meth:`FencedWrites.children`, is here because it may write (it re-creates a deleted path).

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
class Written:
    """Every op applied; one result per op (a created path, a Stat, or None)."""

    results: tuple[Stat | str | None, ...]


@dataclass(frozen=True, slots=True)
class Refused:
    """ZooKeeper refused op ``index`` with ``error`` (one the write expected); nothing of the
    multi was applied."""

    index: int
    error: ZkError


class FencedWrites(Protocol):
    """Every kind of ZooKeeper write an active controller's handlers make, each fenced by the
    controller epoch: ZooKeeper first, then memory, then the stream records."""

    async def write(
        self, ops: Iterable[Op], *, atomic: bool = False, expect: tuple[type[ZkError], ...] = ()
    ) -> Written | Refused:
        """One fenced multi: ``ops`` in order. ``atomic``: never split into several multis (too
        large for one request: ZnodeTooLargeError, nothing written). ``expect``: the refusals
        the handler decides on itself — answered as :class:`Refused` instead of raised."""
        ...

    async def write_states(self, tps: Iterable[TopicPartition], decide: Decide) -> list[TopicPartition]:
        """Each partition's new state decided from its cached one by ``decide`` and written at its
        version; a partition whose state changed meanwhile is read again and decided again.
        Returns the partitions written."""
        ...

    async def write_assignments(self, updates: Mapping[TopicPartition, ReplicaAssignment]) -> None:
        """New full assignments: one topic znode write per topic (with its origins znode: the
        moves' original replicas), each then in memory. Nothing to write: nothing written."""
        ...

    async def create_states(self, topic: str, new_states: Mapping[int, codec.PartitionState]) -> list[int]:
        """The state znodes of new partitions of ``topic`` (and their parents); returns the
        partitions created."""
        ...

    async def delete_all(self, znode_paths: Iterable[str]) -> None:
        """Delete the znodes still there (one already gone is not an error)."""
        ...

    async def ensure_paths(self, znode_paths: Iterable[str]) -> list[str]:
        """Every missing persistent znode of ``znode_paths`` and above them created (null data);
        returns those created."""
        ...

    async def children(self, path: str, watch: WatchCallback | None) -> list[str]:
        """The children of a persistent znode, with ``watch`` armed. A read, but one whose znode
        someone deleted is re-created (fenced, reported) and read again, as Kafka's controller
        re-creates its paths: the watch is armed on it."""
        ...

"""What a decoded batch journal is made of, shared by its two decoding tiers (``journal.py`` the
strict one, ``journal_typed.py`` the typed one): the layout a head names, a decoded head and chunk
entry, and the one rule tying a move's ``state`` to its ``started_ms``. Pure."""

from __future__ import annotations

from dataclasses import dataclass, field

from reassignd.executor import paths
from reassignd.executor.model import (
    Batch,
    BatchMove,
    BatchMoveEnd,
    BatchMoveState,
    PartitionSpec,
    SubmitRefusal,
)
from reassignd.executor.throttle_records import ThrottleRecords

VERSION = 2
MAX_GENERATION = 10**18 - 1

# How a move ended, by the state its entry names (pending and running: not ended).
MOVE_ENDS: dict[BatchMoveState, BatchMoveEnd | None] = {
    BatchMoveState.PENDING: None,
    BatchMoveState.RUNNING: None,
    **{BatchMoveState(e.value): e for e in BatchMoveEnd},
}


@dataclass(frozen=True, slots=True)
class Layout:
    """The znodes a head names besides itself: each chunk's generation (0: its version 1 name) and
    each throttle records znode's."""

    chunks: tuple[int, ...]
    throttles: tuple[int, ...] = ()

    def chunk_names(self) -> tuple[str, ...]:
        return tuple(paths.chunk_name(i, g) for i, g in enumerate(self.chunks))

    def throttle_names(self) -> tuple[str, ...]:
        return tuple(paths.throttles_name(i, g) for i, g in enumerate(self.throttles))

    def names(self) -> frozenset[str]:
        return frozenset((*self.chunk_names(), *self.throttle_names()))

    @property
    def generation(self) -> int:
        """The newest generation it names (0 for a version 1 journal)."""
        return max((*self.chunks, *self.throttles), default=0)


@dataclass(frozen=True, slots=True)
class JournalHead:
    """A decoded head: the batch without its partitions, and the znodes holding the rest. A
    version 1 head holds its throttle records itself (``records``)."""

    batch: Batch  # spec.partitions empty, moves, refusals and throttle records empty
    layout: Layout
    partitions: int
    version: int
    records: ThrottleRecords = field(default_factory=ThrottleRecords)


@dataclass(frozen=True, slots=True)
class JournalEntry:
    spec: PartitionSpec
    move: BatchMove | None
    refusal: SubmitRefusal | None


def started_error(state: BatchMoveState, started_ms: int | None) -> str | None:
    """Why a move's ``state`` and ``started_ms`` disagree, or None: its state is derived from how it
    ended and whether it started, so a ``pending`` move names no ``started_ms`` and a ``running``
    one names it (as every journal written so far has them)."""
    if state is BatchMoveState.PENDING and started_ms is not None:
        return "a pending move has no 'started_ms'"
    if state is BatchMoveState.RUNNING and started_ms is None:
        return "a running move has a 'started_ms'"
    return None


def head_error(layout: Layout, partitions: int, chunk_size: int) -> str | None:
    """Why a version 2 head's layout cannot be its partitions', or None."""
    expected = -(-partitions // chunk_size)
    if len(layout.chunks) != expected:
        return (
            f"field 'chunks' names {len(layout.chunks)} chunks; "
            f"{partitions} partitions of {chunk_size} per chunk"
        )
    if len(layout.chunks) - 1 > paths.MAX_INDEX or len(layout.throttles) - 1 > paths.MAX_INDEX:
        return "the head names more znodes than a journal may have"
    return None

"""The journal's commit rule: which znodes a journal change writes, and in which order. Pure.

A journal bigger than one ZooKeeper multi cannot be written atomically, so the head is the
commit point. A change writes, in three steps:

1. ``create``: the chunks and throttle records it changes, each under a name no head has named
   yet (the change's **generation** in the name, ``chunk_000003_8``). Nothing reads them yet.
2. ``head``: the head naming them, one setData (a submission: its placeholder, an empty head
   created with the first step, gets its data). Once it is applied the change is made.
3. ``delete``: the znodes the old head named and the new one does not.

A controller that dies anywhere leaves the old journal or the new one, never a mix: before step 2
the new znodes are **debris** no head names, after it the old ones are. The next load reads only
what the head names and deletes the rest (:func:`debris`); an empty head is a submission that was
never committed (or a journal whose deletion was cut short): all of it is debris.

A change small enough (:attr:`Commit.fits_one_multi`) goes as one multi instead: atomic anyway,
and one round trip. Deleting a journal (:func:`deletion`) is the same rule backwards: the head is
emptied first (the batch is gone), then its children and itself are deleted — one multi when
small.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from reassignd.executor import journal, paths
from reassignd.executor.journal import Layout
from reassignd.executor.model import Batch

UNCOMMITTED = b""  # an empty head: no journal (yet, or any more)
# A change goes as one multi when it is this small: far below the client's multi limits (256 KiB,
# 500 ops) even with paths a kilobyte long, so the client never splits it.
ONE_MULTI_BYTES = 128 * 1024
ONE_MULTI_OPS = 64


@dataclass(frozen=True, slots=True)
class Commit:
    """The writes of one journal change (module docstring). Names are children of the batch's
    znode."""

    batch_id: str
    create: tuple[tuple[str, bytes], ...]
    head: bytes
    delete: tuple[str, ...]
    layout: Layout  # what the new head names
    new: bool  # a submission: the head is created

    @property
    def fits_one_multi(self) -> bool:
        size = len(self.head) + sum(len(data) for _, data in self.create)
        return size <= ONE_MULTI_BYTES and 1 + len(self.create) + len(self.delete) <= ONE_MULTI_OPS


def submission(batch: Batch, generation: int) -> Commit:
    """A new batch's journal, every znode at ``generation``."""
    znodes = journal.encode_batch(batch, generation)
    create = tuple(zip(znodes.layout.chunk_names(), znodes.chunks, strict=True))
    create += tuple(zip(znodes.layout.throttle_names(), znodes.throttles, strict=True))
    return Commit(batch.batch_id, create, znodes.head, (), znodes.layout, new=True)


def update(old: Batch, layout: Layout, new: Batch, generation: int) -> Commit:
    """``old`` (whose head names ``layout``) becomes ``new``: the chunks holding a move that
    changed, and the throttle records if any changed, are written at ``generation``."""
    if generation <= layout.generation:
        raise ValueError(f"generation {generation} is not newer than the journal's {layout.generation}")
    changed = {tp for tp, m in new.moves.items() if old.moves.get(tp) != m}
    chunks = journal.chunks_of(new, changed)
    create = [(paths.chunk_name(i, generation), journal.encode_chunk(new, i)) for i in sorted(chunks)]
    delete = [paths.chunk_name(i, layout.chunks[i]) for i in sorted(chunks)]
    throttles = layout.throttles
    records_changed = (
        old.broker_throttles != new.broker_throttles or old.topic_throttles != new.topic_throttles
    )
    # a version 1 head held its records itself: the first change writes them out of it
    inline = not layout.throttles and bool(new.broker_throttles or new.topic_throttles)
    if records_changed or inline:
        written = journal.encode_throttles(new)
        throttles = (generation,) * len(written)
        create += [(paths.throttles_name(i, generation), data) for i, data in enumerate(written)]
        delete += layout.throttle_names()
    new_layout = Layout(
        tuple(generation if i in chunks else g for i, g in enumerate(layout.chunks)), throttles
    )
    return Commit(
        new.batch_id,
        tuple(create),
        journal.encode_head(new, new_layout),
        tuple(delete),
        new_layout,
        new=False,
    )


def debris(layout: Layout | None, children: Iterable[str]) -> tuple[str, ...]:
    """The children of a batch's znode that are the journal's but not named by its head
    (``layout``; None: an empty head, so every one of them), in name order. A name the journal
    never uses is not ours: it is left alone."""
    named = layout.names() if layout is not None else frozenset()
    return tuple(sorted(n for n in children if paths.parse_child(n) is not None and n not in named))


def next_generation(layout: Layout | None, children: Iterable[str]) -> int:
    """A generation newer than every name found under the batch's znode (debris included)."""
    found = [c.generation for n in children if (c := paths.parse_child(n)) is not None]
    return max([layout.generation if layout is not None else 0, *found]) + 1


@dataclass(frozen=True, slots=True)
class Deletion:
    """The writes that delete a journal: ``one_multi`` (the children, then the head, atomic), or
    the head emptied, then the children, then the head."""

    batch_id: str
    children: tuple[str, ...]

    @property
    def one_multi(self) -> bool:
        return len(self.children) + 1 <= ONE_MULTI_OPS


def deletion(batch_id: str, children: Iterable[str]) -> Deletion:
    """Every child of the batch's znode goes (ours or not: the head cannot go before them)."""
    return Deletion(batch_id, tuple(sorted(children)))

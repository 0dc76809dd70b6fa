"""ZooKeeper paths of the batch journal (under /reassignd, reassignd's own state).

``/reassignd/batches/<batch_id>`` holds a batch's head (state, spec settings, and the names of
the znodes that hold the rest); its children hold the rest, each written once under a name no
head has named before and never changed afterwards (journal.py, commit.py):

- ``chunk_<k>_<g>``: the batch's partitions of chunk ``k`` (six digits), as written by the
  journal change of generation ``g``. ``chunk_<k>`` without a generation (generation 0) is the
  name version 1 of the journal gave chunk ``k``; a version 1 journal is still read.
- ``throttles_<k>_<g>``: the throttle values the batch replaced, a share of them per znode.

These builders belong in ``reassignd/zk/paths.py`` with every other path; they wait here until
that module is free to change.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from reassignd.zk.paths import REASSIGND

BATCHES = f"{REASSIGND}/batches"
CHUNK_PREFIX = "chunk_"
THROTTLES_PREFIX = "throttles_"
MAX_INDEX = 999_999  # six digits: a million znodes of 900 KiB
_CHILD_NAME = re.compile(r"(chunk|throttles)_([0-9]{6})(?:_([1-9][0-9]{0,17}))?")


class ChildKind(enum.StrEnum):
    CHUNK = "chunk"
    THROTTLES = "throttles"


@dataclass(frozen=True, slots=True)
class Child:
    """What a child of a batch znode is, by its name."""

    kind: ChildKind
    index: int
    generation: int  # 0: a version 1 chunk name


def batch(batch_id: str) -> str:
    return f"{BATCHES}/{batch_id}"


def child(batch_id: str, name: str) -> str:
    return f"{BATCHES}/{batch_id}/{name}"


def batch_chunk(batch_id: str, index: int, generation: int = 0) -> str:
    return child(batch_id, chunk_name(index, generation))


def chunk_name(index: int, generation: int = 0) -> str:
    return _name(ChildKind.CHUNK, index, generation)


def throttles_name(index: int, generation: int) -> str:
    if generation < 1:
        raise ValueError(f"throttle records have no generation {generation}")
    return _name(ChildKind.THROTTLES, index, generation)


def _name(kind: ChildKind, index: int, generation: int) -> str:
    if not 0 <= index <= MAX_INDEX:
        raise ValueError(f"{kind} index {index} out of range")
    if not 0 <= generation < 10**18:
        raise ValueError(f"generation {generation} out of range")
    base = f"{kind}_{index:06d}"
    return base if generation == 0 else f"{base}_{generation}"


def parse_child(name: str) -> Child | None:
    """What a child of a batch znode named ``name`` is; None for a name the journal never uses."""
    match = _CHILD_NAME.fullmatch(name)
    if match is None:
        return None
    kind = ChildKind(match[1])
    generation = 0 if match[3] is None else int(match[3])
    if kind is ChildKind.THROTTLES and generation == 0:
        return None
    return Child(kind, int(match[2]), generation)


def chunk_index(name: str) -> int | None:
    """The index a chunk's name (of any generation) names, or None for another name."""
    parsed = parse_child(name)
    return parsed.index if parsed is not None and parsed.kind is ChildKind.CHUNK else None

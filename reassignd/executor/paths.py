"""ZooKeeper paths of the batch journal (under /reassignd, reassignd's own state).

``/reassignd/batches/<batch_id>`` holds a batch's head (state, spec settings, the throttle values
it replaced); its children ``chunk_000000``, ``chunk_000001``, ... hold its partitions, a fixed
number per chunk (journal.py). These builders belong in ``reassignd/zk/paths.py`` with every other
path; they wait here until that module is free to change.
"""

from __future__ import annotations

import re

from reassignd.zk.paths import REASSIGND

BATCHES = f"{REASSIGND}/batches"
CHUNK_PREFIX = "chunk_"
_CHUNK_NAME = re.compile(r"chunk_([0-9]{6})")


def batch(batch_id: str) -> str:
    return f"{BATCHES}/{batch_id}"


def batch_chunk(batch_id: str, index: int) -> str:
    """Chunk names sort in index order (six digits: a million chunks of 900 KiB)."""
    return f"{BATCHES}/{batch_id}/{chunk_name(index)}"


def chunk_name(index: int) -> str:
    if not 0 <= index <= 999_999:
        raise ValueError(f"chunk index {index} out of range")
    return f"{CHUNK_PREFIX}{index:06d}"


def chunk_index(name: str) -> int | None:
    """The index a child of a batch znode names, or None for a name that is not a chunk's."""
    match = _CHUNK_NAME.fullmatch(name)
    return None if match is None else int(match[1])

"""How big a znode of the batch journal may be, and the check made before one is written. Pure."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from reassignd.zk.codec import JSON_ENCODER
from reassignd.zk.json_fields import dump

CHUNK_BUDGET_BYTES = 900 * 1024  # a chunk's (or throttle records znode's) size at its longest
ZNODE_LIMIT_BYTES = 1024 * 1024 - 1024  # nothing bigger is sent (ZooKeeper's 1 MiB, less framing)


class JournalTooLarge(ValueError):
    """A znode of the journal would exceed ZooKeeper's limit: refused before it is sent."""


def checked(what: str, obj: dict[str, object], decode: Callable[[bytes], object]) -> bytes:
    """``obj`` as compact JSON, once ``decode`` accepted it and its size is under the limit.
    msgspec writes it, in C, the bytes ``compact_json`` writes (a ten-fold quicker for a chunk);
    where msgspec cannot, or ``decode`` refuses, :func:`dump` writes it again and words why."""
    try:
        data = JSON_ENCODER.encode(obj)
        decode(data)
    except (msgspec.EncodeError, TypeError, ValueError, OverflowError):  # a CodecError is a ValueError
        data = dump(what, obj, decode)
    if len(data) > ZNODE_LIMIT_BYTES:
        raise JournalTooLarge(f"{what} is {len(data)} bytes, over the {ZNODE_LIMIT_BYTES}-byte limit")
    return data

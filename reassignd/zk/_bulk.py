"""Bulk requests: multiRead batches for many reads, bounded chunks for long fenced multis.

Sizes and windows were measured with ``bench/zk_baseline.py`` on a 2-core machine sharing the CPU
with a local ZooKeeper (more in flight bought nothing there). The client passes in how to send
one request and how to build its errors, so nothing here depends on the public API.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any

from reassignd.concurrency import for_each
from reassignd.zk import _wire

READ_BATCH_MAX = 500  # paths per multiRead
READ_BATCH_MIN = 16
READ_BATCH_FIRST = 32  # paths per multiRead until a reply told how large entries are
READ_BATCH_TARGET_BYTES = 512 * 1024  # aimed-at size of one multiRead reply
READ_REQUEST_MAX_BYTES = 256 * 1024  # size of one multiRead request
READ_WINDOW = 4  # multiReads in flight
SINGLE_READ_WINDOW = 256  # single reads in flight (servers before 3.6 have no multiRead)
MULTI_MAX_OPS = 500  # ops per fenced multi chunk
MULTI_MAX_BYTES = 256 * 1024  # serialized bytes per fenced multi chunk
WRITE_WINDOW = 4  # fenced multi chunks in flight
DELETE_WINDOW = 128  # single deletes in flight (delete_recursive)

# send(request, index of the path it is about, or None for a batch) → the decoded reply
Send = Callable[[_wire.Request, int | None], Awaitable[Any]]


async def read_many(
    send: Send,
    paths: Sequence[str],
    opcode: int,
    *,
    multi_read: bool,
    missing: type[Exception],
    failed: Callable[[int, int], Exception],
) -> list[Any]:
    """``opcode`` (GET_DATA or GET_CHILDREN) for every (absolute) path: the replies in order,
    None where the znode is missing (``missing`` is what ``send`` raises then). Another error of
    one path raises ``failed(code, index)``.

    multiRead batches, READ_WINDOW of them in flight, sized so a reply stays near
    READ_BATCH_TARGET_BYTES: small until the first replies tell how large an entry is, then up to
    READ_BATCH_MAX paths (a batch of unexpectedly large znodes is still read whole).
    """
    values: list[Any] = [None] * len(paths)
    if not multi_read:
        make = _wire.get_data if opcode == _wire.GET_DATA else _wire.get_children

        async def read_one(i: int) -> None:
            try:
                values[i] = await send(make(paths[i]), i)
            except missing:
                values[i] = None

        await for_each(range(len(paths)), read_one, SINGLE_READ_WINDOW, drain=True, name="zk-read")
        return values

    entry_bytes = [0]  # size of one reply entry, learned from the replies (0: not known yet)

    async def read_batch(start: int, request: _wire.Request) -> None:
        replies = await send(request, None)
        reply_bytes = 0
        for i, reply in enumerate(replies):
            if isinstance(reply, _wire.ServerError):
                if reply.code != _wire.NO_NODE:
                    raise failed(reply.code, start + i)
                values[start + i] = None
            else:
                reply_bytes += _reply_size(reply)
                values[start + i] = reply
        entry_bytes[0] = max(64, reply_bytes // max(len(replies), 1) + 16)

    def batches() -> Iterator[tuple[int, _wire.Request]]:
        start = 0
        while start < len(paths):
            count = READ_BATCH_FIRST
            if entry_bytes[0]:
                count = max(READ_BATCH_MIN, min(READ_BATCH_MAX, READ_BATCH_TARGET_BYTES // entry_bytes[0]))
            request = _wire.multi_read(opcode, paths[start : start + count])
            while request.packet_size > READ_REQUEST_MAX_BYTES and count > 1:
                count //= 2
                request = _wire.multi_read(opcode, paths[start : start + count])
            yield start, request
            start += count

    await for_each(batches(), lambda batch: read_batch(*batch), READ_WINDOW, drain=True, name="zk-read")
    return values


def _reply_size(reply: Any) -> int:
    if isinstance(reply, tuple):  # (data, stat)
        return len(reply[0] or b"") + 80
    return sum(len(child) + 4 for child in reply) + 8


def chunk_bounds(
    check: _wire.Request, requests: Sequence[_wire.Request], too_large: Callable[[int, int], Exception]
) -> list[tuple[int, int]]:
    """Split ``requests`` into multis of at most MULTI_MAX_OPS ops and MULTI_MAX_BYTES bytes,
    each starting with ``check``: (start, end) index pairs, at least one (possibly empty). Raises
    ``too_large(index, size)`` when an op cannot fit in a packet the server accepts, before
    anything is sent."""
    base = _wire.EMPTY_MULTI_SIZE + _wire.multi_op_size(check)
    bounds: list[tuple[int, int]] = []
    start, size = 0, base
    for index, request in enumerate(requests):
        op_size = _wire.multi_op_size(request)
        if index > start and (index - start >= MULTI_MAX_OPS or size + op_size > MULTI_MAX_BYTES):
            bounds.append((start, index))
            start, size = index, base
        size += op_size
        if size > _wire.MAX_PACKET_BYTES:
            raise too_large(index, size)
    bounds.append((start, len(requests)))
    return bounds


async def delete_tree(
    path: str,
    children_many: Callable[[list[str]], Awaitable[list[list[str] | None]]],
    delete: Callable[[str], Awaitable[None]],
    *,
    missing: type[Exception],
    not_empty: type[Exception],
) -> None:
    """Delete ``path`` and everything under it: list it level by level (multiRead), then delete
    the deepest level first, DELETE_WINDOW deletes in flight. A znode that gets a new child
    meanwhile makes it start over (up to 5 times, then ``not_empty`` is raised)."""
    for _ in range(5):
        levels = [[path]]
        while levels[-1]:
            listed = await children_many(levels[-1])
            if len(levels) == 1 and listed[0] is None:
                return  # nothing to delete
            levels.append(
                [
                    f"{p.rstrip('/')}/{c}"
                    for p, kids in zip(levels[-1], listed, strict=True)
                    for c in kids or ()
                ]
            )
        busy: list[str] = []

        async def delete_one(znode: str, busy: list[str] = busy) -> None:
            try:
                await delete(znode)
            except missing:
                pass
            except not_empty:
                busy.append(znode)

        for level in reversed(levels):
            await for_each(level, delete_one, DELETE_WINDOW, drain=True, name="zk-delete")
            if busy:
                break
        if not busy:
            return
    raise not_empty(f"{path} keeps getting new children")

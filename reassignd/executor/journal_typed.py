"""The batch journal's typed tier: a chunk or a head decoded by msgspec into typed structs (in C),
then checked for what types cannot say. It returns what the strict path (``journal.py``, on the
readers of ``zk/json_fields.py``) returns, or None wherever that path might refuse or return
something else; it never raises and never words an error: on None the strict path runs, and alone
says why. The encoders check what they write with the decoder, so with this first
(``znode_size.checked``).

Where msgspec is laxer than the strict path, the checks here close the gap: a repeated or unknown
key is seen by counting colons (one per member, plus those inside strings, where none may be
written as an escape), a repeated replica id by a set, the rest is in the types (``true`` is no
integer, ``1.0`` neither, and the bounds are the strict readers'). A version 1 head is left to the
strict path (it is read once, then rewritten as version 2)."""

from __future__ import annotations

from typing import Annotated, TypeVar

import msgspec

from reassignd.executor.journal_model import (
    MAX_GENERATION,
    MOVE_ENDS,
    VERSION,
    JournalEntry,
    JournalHead,
    Layout,
    head_error,
    started_error,
)
from reassignd.executor.model import (
    Adaptive,
    Batch,
    BatchMove,
    BatchMoveState,
    BatchSpec,
    BatchState,
    Limits,
    PartitionSpec,
    Strategy,
    SubmitRefusal,
)
from reassignd.int_limits import INT32_MAX, INT32_MIN, INT64_MAX

_T = TypeVar("_T")
_UNSET = msgspec.UNSET
_Unset = msgspec.UnsetType
_Int32 = Annotated[int, msgspec.Meta(ge=INT32_MIN, le=INT32_MAX)]
_UInt31 = Annotated[int, msgspec.Meta(ge=0, le=INT32_MAX)]
_Positive = Annotated[int, msgspec.Meta(ge=1, le=INT32_MAX)]
_Ms = Annotated[int, msgspec.Meta(ge=0, le=INT64_MAX)]
# What a JSON decode may raise on bytes it refuses: invalid JSON, UTF-8 or types; too deep.
_REFUSED = (msgspec.MsgspecError, ValueError, RecursionError)


def _escaped_colon(data: bytes) -> bool:
    """A colon written as an escape: in a string, uncounted (msgspec refuses a lone surrogate)."""
    return b"\\u003a" in data or b"\\u003A" in data


class _Entry(msgspec.Struct, gc=False):
    """A chunk's entry as ``journal._entry`` reads it. A member absent and one that is null both
    read as None here; the colon count tells them apart (a null is left to the strict path: the
    encoder never writes one)."""

    topic: str
    partition: _UInt31
    replicas: tuple[_Int32, ...]
    expected_replicas: tuple[_Int32, ...] | None = None
    log_dirs: tuple[str, ...] | None = None
    state: BatchMoveState | None = None
    previous: tuple[_UInt31, ...] | None = None
    started_ms: _Ms | None = None
    finished_ms: _Ms | None = None
    error_message: str | None = None
    size_bytes: _Ms | None = None
    dirs_asked_ms: _Ms | None = None
    original_log_dirs: tuple[str, ...] | None = None
    error_code: _Int32 | None = None


_ENTRY_FIELDS = len(_Entry.__struct_fields__)


class _Chunk(msgspec.Struct, gc=False):
    version: Annotated[int, msgspec.Meta(ge=1, le=1)]
    index: _UInt31
    partitions: list[_Entry]


_CHUNK_DECODER = msgspec.json.Decoder(_Chunk)


def _opt(value: _T | _Unset | None) -> _T | None:
    return None if isinstance(value, _Unset) else value


def _colons(value: str | _Unset | None) -> int:
    """A string member's colon count, its own included (0 for an absent member)."""
    if isinstance(value, str):
        return 1 + value.count(":")
    return 0 if value is _UNSET else 1


def _dir_colons(dirs: tuple[str, ...] | None) -> int:
    return 0 if dirs is None else sum(d.count(":") for d in dirs)


def chunk_typed(data: bytes, index: int) -> tuple[JournalEntry, ...] | None:
    """What ``journal.decode_chunk(data, index)`` returns, or None where it might refuse."""
    if _escaped_colon(data):
        return None
    try:
        chunk = _CHUNK_DECODER.decode(data)
    except _REFUSED:
        return None
    if chunk.index != index:
        return None
    members, entries = 3, []  # the chunk's three, then each entry's, and the colons in strings
    astuple = msgspec.structs.astuple
    for e in chunk.partitions:
        members += _ENTRY_FIELDS - astuple(e).count(None) + e.topic.count(":")
        if (message := e.error_message) is not None:
            members += message.count(":")
        if (dirs := e.log_dirs) is not None or e.original_log_dirs is not None:
            members += _dir_colons(dirs) + _dir_colons(e.original_log_dirs)
        spec = PartitionSpec(e.topic, e.partition, e.replicas, e.expected_replicas, dirs)
        if (state := e.state) is None:
            if (code := e.error_code) is None:
                return None
            entries.append(JournalEntry(spec, None, SubmitRefusal(code, message)))
            continue
        previous, started, original_dirs = e.previous, e.started_ms, e.original_log_dirs
        if e.error_code is not None or previous is None or len(set(previous)) != len(previous):
            return None
        if started_error(state, started) is not None:
            return None
        width = len(e.replicas)
        if (dirs is not None and len(dirs) != width) or (
            original_dirs is not None and len(original_dirs) != width
        ):
            return None
        move = BatchMove(
            spec,
            origins=previous,  # the journal's key
            ended=MOVE_ENDS[state],
            started_at_ms=started,
            finished_ms=e.finished_ms,
            error_message=message,
            size_bytes=e.size_bytes,
            original_log_dirs=original_dirs,
            dirs_asked_ms=e.dirs_asked_ms,
        )
        entries.append(JournalEntry(spec, move, None))
    # one colon per member, and those in strings: no key repeated, none unknown, none null
    return tuple(entries) if data.count(b":") == members else None


class _Adaptive(msgspec.Struct, gc=False):
    min: _Positive
    max: _Positive


class _Limits(msgspec.Struct, gc=False):
    moves_per_broker: _Positive
    moves_in_cluster: _Positive
    leader_moves_per_broker: _Positive
    adaptive: _Adaptive | _Unset | None = _UNSET


_Generation = Annotated[int, msgspec.Meta(ge=0, le=MAX_GENERATION)]


class _Head(msgspec.Struct, gc=False):
    """A version 2 head as ``journal.decode_head`` reads it."""

    version: Annotated[int, msgspec.Meta(ge=VERSION, le=VERSION)]
    batch_id: str
    priority: _Int32
    state: BatchState
    created_ms: _Ms
    updated_ms: _Ms
    limits: _Limits
    strategy: tuple[Strategy, ...]
    chunk_size: _Positive
    partitions: _UInt31
    chunks: tuple[_Generation, ...]
    throttle_records: tuple[Annotated[int, msgspec.Meta(ge=1, le=MAX_GENERATION)], ...]
    plan_id: str | _Unset | None = _UNSET
    throttle_bytes_per_s: Annotated[int, msgspec.Meta(ge=1, le=INT64_MAX)] | _Unset | None = _UNSET
    owner: str | _Unset | None = _UNSET
    rollback_of: str | _Unset | None = _UNSET
    rollback_batch_id: str | _Unset | None = _UNSET
    broker_caps: dict[str, _Positive] | _Unset | None = _UNSET


_HEAD_DECODER = msgspec.json.Decoder(_Head)
_HEAD_REQUIRED = sum(f.required for f in msgspec.structs.fields(_Head))  # (12)


def head_typed(data: bytes) -> JournalHead | None:
    """What ``journal.decode_head(data)`` returns for a version 2 head, or None where it might
    refuse (or for a version 1 head)."""
    if _escaped_colon(data):
        return None
    try:
        h = _HEAD_DECODER.decode(data)
    except _REFUSED:
        return None
    limits, adaptive, caps = h.limits, h.limits.adaptive, h.broker_caps
    members = _HEAD_REQUIRED + 3 + h.batch_id.count(":") + (h.throttle_bytes_per_s is not _UNSET)
    members += _colons(h.plan_id) + _colons(h.owner) + _colons(h.rollback_of) + _colons(h.rollback_batch_id)
    bounds = None
    if isinstance(adaptive, _Adaptive):
        if adaptive.max < adaptive.min:
            return None
        bounds, members = Adaptive(adaptive.min, adaptive.max), members + 3
    elif adaptive is None:
        members += 1
    broker_caps: dict[int, int] = {}
    if isinstance(caps, dict):
        members += 1 + len(caps)
        for key, cap in caps.items():
            if not (key.isascii() and key.isdigit()) or len(key) > 10 or int(key) > INT32_MAX:
                return None
            broker_caps[int(key)] = cap
    elif caps is None:
        members += 1
    if data.count(b":") != members:  # a repeated or unknown key
        return None
    layout = Layout(h.chunks, h.throttle_records)
    if head_error(layout, h.partitions, h.chunk_size) is not None:
        return None
    spec = BatchSpec(
        batch_id=h.batch_id,
        partitions=(),
        limits=Limits(
            limits.moves_per_broker,
            limits.moves_in_cluster,
            limits.leader_moves_per_broker,
            bounds,
        ),
        plan_id=_opt(h.plan_id),
        priority=h.priority,
        throttle_bytes_per_s=_opt(h.throttle_bytes_per_s),
        strategy=h.strategy,
        owner=_opt(h.owner),
    )
    batch = Batch(
        spec=spec,
        state=h.state,
        created_ms=h.created_ms,
        updated_ms=h.updated_ms,
        moves={},
        chunk_size=h.chunk_size,
        rollback_of=_opt(h.rollback_of),
        rollback_batch_id=_opt(h.rollback_batch_id),
        broker_caps=broker_caps,
    )
    return JournalHead(batch, layout, h.partitions, VERSION)

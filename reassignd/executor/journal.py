"""The batch journal's codec: a :class:`Batch` as a head znode and partition chunks, and back.
Pure: no ZooKeeper calls (paths.py builds the paths).

Head, ``/reassignd/batches/<id>``::

    {"version":1,"batch_id":"b-1","plan_id":"p","priority":0,"state":"running",
     "created_ms":1,"updated_ms":2,"throttle_bytes_per_s":52428800,
     "limits":{"moves_per_broker":5,"moves_in_cluster":100,"leader_moves_per_broker":100},
     "strategy":["small_first"],"rollback_of":null,"rollback_batch_id":null,
     "chunk_size":1500,"chunks":2,"partitions":2400,
     "throttles":{"brokers":{"4":{"leader.replication.throttled.rate":null}},"topics":{}}}

Chunk ``k``, ``/reassignd/batches/<id>/chunk_00000k``, holds the spec's partitions
``k * chunk_size`` to ``(k + 1) * chunk_size - 1``, in order::

    {"version":1,"index":0,"partitions":[
      {"topic":"orders","partition":0,"replicas":[4,5,6],"expected_replicas":[1,2,3],
       "state":"running","previous":[1,2,3],"started_ms":5},
      {"topic":"orders","partition":1,"replicas":[4,5,6],"error_code":10002,"error_message":"..."}]}

An accepted partition has ``state`` and ``previous`` (``started_ms``, ``finished_ms`` and
``error_message`` when set); a refused one has ``error_code``. ``chunk_size`` is fixed when the
batch is submitted (:func:`partitions_per_chunk`) so that a chunk stays under 900 KiB whatever
becomes of its moves: a state change rewrites one chunk, never reshuffles the others. Decoding is
strict (the readers of ``zk/json_fields.py``): a malformed znode is refused with one line saying
why, prefixed with the chunk it is in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from reassignd.executor.model import (
    ERROR_MESSAGE_MAX_BYTES,
    Batch,
    BatchSpec,
    BatchState,
    Limits,
    Move,
    MoveState,
    PartitionSpec,
    Refusal,
    Strategy,
    ThrottleValues,
    spec_error,
)
from reassignd.topic_partition import TopicPartition
from reassignd.zk.json_fields import (
    INT32_MAX,
    INT64_MAX,
    CodecError,
    compact_json,
    dump,
    fast_int,
    fast_replicas,
    field_name,
    get_field,
    load_object,
    quote,
    read_int,
    read_list,
    read_object,
    read_optional,
    read_replicas,
    read_str,
    read_version,
)

CHUNK_BUDGET_BYTES = 900 * 1024  # a chunk's size when every move in it has every field at its longest
ZNODE_LIMIT_BYTES = 1024 * 1024 - 1024  # nothing bigger is sent (ZooKeeper's 1 MiB, less framing)
INT32_MIN = -INT32_MAX - 1

_E = TypeVar("_E", bound=StrEnum)
_BROKER_KEY = re.compile(r"0|[1-9][0-9]{0,9}")
# What an accepted entry may gain after submission, at its longest (see partitions_per_chunk).
_MUTABLE_BYTES = len(
    ',"state":"completed","previous":[],"started_ms":,"finished_ms":,"error_message":,"size_bytes":'
) + (3 * 19 + ERROR_MESSAGE_MAX_BYTES)


class JournalTooLarge(ValueError):
    """A znode of the journal would exceed ZooKeeper's limit: refused before it is sent."""


@dataclass(frozen=True, slots=True)
class JournalZnodes:
    head: bytes
    chunks: tuple[bytes, ...]


# --- sizing --------------------------------------------------------------------------------------


def partitions_per_chunk(spec: BatchSpec) -> int:
    """How many partitions each chunk of ``spec``'s journal holds: as many as fit in
    CHUNK_BUDGET_BYTES when each entry has its longest possible form (``previous`` one broker
    longer than its longest replica list, ten-digit broker ids, the longest error message)."""
    worst = 1
    for p in spec.partitions:
        longest = max(len(p.replicas), len(p.expected_replicas or ())) + 1
        worst = max(worst, len(compact_json(_spec_entry(p))) + 1 + _MUTABLE_BYTES + 11 * longest)
    return max(1, (CHUNK_BUDGET_BYTES - 64) // worst)


def chunk_count(batch: Batch) -> int:
    return -(-len(batch.spec.partitions) // batch.chunk_size)


def chunks_of(batch: Batch, tps: Collection[TopicPartition]) -> set[int]:
    """The chunks holding ``tps``: what a change of those moves rewrites."""
    return {i // batch.chunk_size for i, p in enumerate(batch.spec.partitions) if p.tp in tps}


# --- encoding ------------------------------------------------------------------------------------


def encode_batch(batch: Batch) -> JournalZnodes:
    return JournalZnodes(encode_head(batch), tuple(encode_chunk(batch, i) for i in range(chunk_count(batch))))


def encode_head(batch: Batch) -> bytes:
    spec = batch.spec
    obj: dict[str, object] = {"version": 1, "batch_id": spec.batch_id, "plan_id": spec.plan_id}
    obj.update(priority=spec.priority, state=str(batch.state), created_ms=batch.created_ms)
    obj.update(updated_ms=batch.updated_ms, throttle_bytes_per_s=spec.throttle_bytes_per_s)
    obj["limits"] = {
        "moves_per_broker": spec.limits.moves_per_broker,
        "moves_in_cluster": spec.limits.moves_in_cluster,
        "leader_moves_per_broker": spec.limits.leader_moves_per_broker,
    }
    obj.update(strategy=[str(s) for s in spec.strategy], rollback_of=batch.rollback_of)
    obj.update(rollback_batch_id=batch.rollback_batch_id, chunk_size=batch.chunk_size)
    obj.update(chunks=chunk_count(batch), partitions=len(spec.partitions))
    obj["throttles"] = {
        "brokers": {str(b): dict(values) for b, values in sorted(batch.broker_throttles.items())},
        "topics": {t: dict(values) for t, values in sorted(batch.topic_throttles.items())},
    }
    return _checked("batch journal head", obj, decode_head)


def encode_chunk(batch: Batch, index: int) -> bytes:
    size = batch.chunk_size
    entries: list[object] = []
    for p in batch.spec.partitions[index * size : (index + 1) * size]:
        entry = _spec_entry(p)
        if (move := batch.moves.get(p.tp)) is not None:
            entry.update(state=str(move.state), previous=list(move.previous))
            for key, value in (
                ("started_ms", move.started_ms),
                ("finished_ms", move.finished_ms),
                ("error_message", move.error_message),
                ("size_bytes", move.size_bytes),
            ):
                if value is not None:
                    entry[key] = value
        else:
            refusal = batch.refusals[p.tp]
            entry["error_code"] = refusal.error_code
            if refusal.error_message is not None:
                entry["error_message"] = refusal.error_message
        entries.append(entry)
    obj: dict[str, object] = {"version": 1, "index": index, "partitions": entries}
    return _checked(f"batch journal chunk {index}", obj, lambda data: decode_chunk(data, index))


def _spec_entry(p: PartitionSpec) -> dict[str, object]:
    entry: dict[str, object] = {"topic": p.topic, "partition": p.partition, "replicas": list(p.replicas)}
    if p.expected_replicas is not None:
        entry["expected_replicas"] = list(p.expected_replicas)
    return entry


def _checked(what: str, obj: dict[str, object], decode: Callable[[bytes], object]) -> bytes:
    data = dump(what, obj, decode)
    if len(data) > ZNODE_LIMIT_BYTES:
        raise JournalTooLarge(f"{what} is {len(data)} bytes, over the {ZNODE_LIMIT_BYTES}-byte limit")
    return data


# --- decoding ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JournalHead:
    """A decoded head: the batch without its partitions, and how many chunks hold them."""

    batch: Batch  # spec.partitions empty, moves and refusals empty
    chunks: int
    partitions: int


@dataclass(frozen=True, slots=True)
class JournalEntry:
    spec: PartitionSpec
    move: Move | None
    refusal: Refusal | None


def decode_batch(head: bytes | None, chunks: Sequence[bytes | None]) -> Batch:
    """The batch whose head and chunks (in index order) these are; CodecError says what is wrong
    and where (``chunk 3: field 'partitions[5].state' ...``)."""
    h = decode_head(head)
    if len(chunks) != h.chunks:
        raise CodecError(f"the head names {h.chunks} chunks, found {len(chunks)}")
    size = h.batch.chunk_size
    entries: list[JournalEntry] = []
    for i, data in enumerate(chunks):
        try:
            chunk = decode_chunk(data, i)
        except CodecError as e:
            raise CodecError(f"chunk {i}: {e.reason}") from None
        expected = min(size, h.partitions - i * size)
        if len(chunk) != expected:
            raise CodecError(f"chunk {i} holds {len(chunk)} partitions, expected {expected}")
        entries.extend(chunk)
    spec = _replace_partitions(h.batch.spec, tuple(e.spec for e in entries))
    if (reason := spec_error(spec)) is not None:
        raise CodecError(reason)
    return Batch(
        spec=spec,
        state=h.batch.state,
        created_ms=h.batch.created_ms,
        updated_ms=h.batch.updated_ms,
        moves={e.spec.tp: e.move for e in entries if e.move is not None},
        refusals={e.spec.tp: e.refusal for e in entries if e.refusal is not None},
        chunk_size=size,
        broker_throttles=h.batch.broker_throttles,
        topic_throttles=h.batch.topic_throttles,
        rollback_of=h.batch.rollback_of,
        rollback_batch_id=h.batch.rollback_batch_id,
    )


def _replace_partitions(spec: BatchSpec, partitions: tuple[PartitionSpec, ...]) -> BatchSpec:
    return BatchSpec(
        spec.batch_id,
        partitions,
        spec.limits,
        spec.plan_id,
        spec.priority,
        spec.throttle_bytes_per_s,
        spec.strategy,
    )


def _enum(kind: type[_E], value: object, where: str) -> _E:
    text = read_str(value, where)
    try:
        return kind(text)
    except ValueError:
        names = ", ".join(str(k) for k in kind)
        raise CodecError(f"field '{where}' must be one of {names}, got {quote(text)}") from None


def _ms(value: object, where: str) -> int:
    return read_int(value, where, hi=INT64_MAX)


def decode_head(data: bytes | None) -> JournalHead:
    obj = load_object(data)
    read_version(obj, (1,))
    limits = read_object(get_field(obj, "limits"), "limits")
    spec = BatchSpec(
        batch_id=read_str(get_field(obj, "batch_id"), "batch_id"),
        partitions=(),
        limits=Limits(
            *(
                read_int(get_field(limits, name, "limits."), f"limits.{name}", lo=1)
                for name in ("moves_per_broker", "moves_in_cluster", "leader_moves_per_broker")
            )
        ),
        plan_id=read_optional(obj, "plan_id", read_str),
        priority=read_int(get_field(obj, "priority"), "priority", lo=INT32_MIN),
        throttle_bytes_per_s=read_optional(
            obj, "throttle_bytes_per_s", lambda v, w: read_int(v, w, 1, INT64_MAX)
        ),
        strategy=tuple(
            _enum(Strategy, s, f"strategy[{i}]")
            for i, s in enumerate(read_list(get_field(obj, "strategy"), "strategy"))
        ),
    )
    throttles = read_object(get_field(obj, "throttles"), "throttles")
    brokers = _throttle_map(get_field(throttles, "brokers", "throttles."), "throttles.brokers")
    for key in brokers:
        if not _BROKER_KEY.fullmatch(key) or int(key) > INT32_MAX:
            raise CodecError(f"field 'throttles.brokers' has key {quote(key)}, which is not a broker id")
    batch = Batch(
        spec=spec,
        state=_enum(BatchState, get_field(obj, "state"), "state"),
        created_ms=_ms(get_field(obj, "created_ms"), "created_ms"),
        updated_ms=_ms(get_field(obj, "updated_ms"), "updated_ms"),
        moves={},
        chunk_size=read_int(get_field(obj, "chunk_size"), "chunk_size", lo=1),
        broker_throttles={int(b): values for b, values in brokers.items()},
        topic_throttles=_throttle_map(get_field(throttles, "topics", "throttles."), "throttles.topics"),
        rollback_of=read_optional(obj, "rollback_of", read_str),
        rollback_batch_id=read_optional(obj, "rollback_batch_id", read_str),
    )
    partitions = read_int(get_field(obj, "partitions"), "partitions")
    chunks = read_int(get_field(obj, "chunks"), "chunks")
    if chunks != -(-partitions // batch.chunk_size):
        raise CodecError(
            f"field 'chunks' is {chunks}; {partitions} partitions of {batch.chunk_size} per chunk"
        )
    return JournalHead(batch, chunks, partitions)


def _throttle_map(value: object, where: str) -> dict[str, ThrottleValues]:
    result: dict[str, ThrottleValues] = {}
    for key, configs in read_object(value, where).items():
        at = field_name(where, key)
        result[key] = {
            name: None if v is None else read_str(v, field_name(at, name))
            for name, v in read_object(configs, at).items()
        }
    return result


def decode_chunk(data: bytes | None, index: int) -> tuple[JournalEntry, ...]:
    obj = load_object(data)
    read_version(obj, (1,))
    if (found := read_int(get_field(obj, "index"), "index")) != index:
        raise CodecError(f"field 'index' is {found}, expected {index}")
    items = read_list(get_field(obj, "partitions"), "partitions")
    return tuple(_entry_fast(item) or _entry(item, f"partitions[{i}]") for i, item in enumerate(items))


_STATES = {str(s): s for s in MoveState}


def _ints(value: object) -> tuple[int, ...] | None:
    """What ``read_replicas(value, where, recorded=False)`` returns, or None if it might refuse."""
    if type(value) is not list:
        return None
    for item in value:
        if type(item) is not int or not INT32_MIN <= item <= INT32_MAX:
            return None
    return tuple(value)


def _entry_fast(item: object) -> JournalEntry | None:
    """What :func:`_entry` returns, or None where it might refuse (it then says why)."""
    if type(item) is not dict:
        return None
    topic, partition, message = item.get("topic"), item.get("partition"), item.get("error_message")
    replicas, expected = _ints(item.get("replicas")), item.get("expected_replicas")
    if type(topic) is not str or not fast_int(partition) or replicas is None:
        return None
    if (expected is not None and (expected := _ints(expected)) is None) or not (
        message is None or type(message) is str
    ):
        return None
    spec = PartitionSpec(topic, partition, replicas, expected)
    state, code = item.get("state"), item.get("error_code")
    if state is None and "state" not in item and fast_int(code, INT32_MIN):
        return JournalEntry(spec, None, Refusal(code, message))
    if type(state) is not str or (state := _STATES.get(state)) is None or "error_code" in item:
        return None
    previous = fast_replicas(item.get("previous"), allow_empty=True)
    started, finished, size = item.get("started_ms"), item.get("finished_ms"), item.get("size_bytes")
    if previous is None or not all(t is None or fast_int(t, hi=INT64_MAX) for t in (started, finished, size)):
        return None
    return JournalEntry(spec, Move(replicas, previous, state, started, finished, message, size), None)


def _entry(item: object, where: str) -> JournalEntry:
    entry, at = read_object(item, where), where + "."
    spec = PartitionSpec(
        topic=read_str(get_field(entry, "topic", at), at + "topic"),
        partition=read_int(get_field(entry, "partition", at), at + "partition"),
        replicas=read_replicas(get_field(entry, "replicas", at), at + "replicas", recorded=False),
        expected_replicas=read_optional(
            entry,
            "expected_replicas",
            lambda v, _: read_replicas(v, at + "expected_replicas", recorded=False),
        ),
    )
    message = read_optional(entry, "error_message", lambda v, _: read_str(v, at + "error_message"))
    if "state" in entry and "error_code" in entry:
        raise CodecError(f"field '{where}' has both 'state' and 'error_code'")
    if "error_code" in entry:
        code = read_int(entry["error_code"], at + "error_code", lo=INT32_MIN)
        return JournalEntry(spec, None, Refusal(code, message))
    if "state" not in entry:
        raise CodecError(f"field '{where}' has neither 'state' nor 'error_code'")
    move = Move(
        target=spec.replicas,
        previous=read_replicas(get_field(entry, "previous", at), at + "previous", allow_empty=True),
        state=_enum(MoveState, entry["state"], at + "state"),
        started_ms=read_optional(entry, "started_ms", lambda v, _: _ms(v, at + "started_ms")),
        finished_ms=read_optional(entry, "finished_ms", lambda v, _: _ms(v, at + "finished_ms")),
        error_message=message,
        size_bytes=read_optional(entry, "size_bytes", lambda v, _: _ms(v, at + "size_bytes")),
    )
    return JournalEntry(spec, move, None)

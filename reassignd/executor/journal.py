"""The batch journal's codec: a :class:`Batch` as a head znode, partition chunks and throttle
records, and back. Pure: no ZooKeeper calls (paths.py builds the names, commit.py the order of the
writes).

Head, ``/reassignd/batches/<id>`` (version 2)::

    {"version":2,"batch_id":"b-1","plan_id":"p","priority":0,"state":"running",
     "created_ms":1,"updated_ms":2,"throttle_bytes_per_s":52428800,
     "limits":{"moves_per_broker":5,"moves_in_cluster":100,"leader_moves_per_broker":100},
     "strategy":["small_first"],"rollback_of":null,"rollback_batch_id":null,
     "chunk_size":1500,"partitions":2400,"chunks":[3,7],"throttle_records":[7]}

With adaptive concurrency, ``limits`` also holds ``"adaptive":{"min":1,"max":20}`` and the head
``"broker_caps":{"4":6}`` (the caps an adjustment moved from the initial one: a change of caps
rewrites the head alone, one setData, atomic). A batch the controller submitted itself names its
``"owner"`` (``"self-healing"``). Each of the three is absent when unset, and a head without them
(written before they existed) reads as a batch without them.

``chunks`` gives, for each chunk ``k``, the generation of the znode that holds it
(``chunk_00000k_<generation>``); ``throttle_records`` the generations of the znodes holding the
throttle values the batch replaced (``throttles_00000k_<generation>``). The head names every znode
of the journal: a znode it does not name is not part of it (the debris of a change cut short,
commit.py). An empty head is no journal: a submission not committed yet, or a journal being
deleted.

Chunk ``k`` holds the spec's partitions ``k * chunk_size`` to ``(k + 1) * chunk_size - 1``, in
order::

    {"version":1,"index":0,"partitions":[
      {"topic":"orders","partition":0,"replicas":[4,5,6],"expected_replicas":[1,2,3],
       "state":"running","previous":[1,2,3],"started_ms":5},
      {"topic":"orders","partition":1,"replicas":[4,5,6],"error_code":10002,"error_message":"..."}]}

Throttle records ``k``: the values before the batch's throttles, per broker and per topic (None:
the key was absent)::

    {"version":1,"index":0,"brokers":{"4":{"leader.replication.throttled.rate":null}},
     "topics":{"orders":{"leader.replication.throttled.replicas":"0:1"}}}

An accepted partition has ``state`` and ``previous`` (``started_ms``, ``finished_ms`` and
``error_message`` when set); a refused one has ``error_code``. A move's ``state`` is derived from
how it ended and whether it started (``BatchMove.state``): ``pending`` has no ``started_ms`` and
``running`` has one, as every journal written so far has them (a journal saying otherwise is
refused). JBOD: a partition whose spec pins
log dirs has ``"log_dirs":["/d2","any"]`` (one per target replica); once the batch asked the agents
to move them, its move has ``"dirs_asked_ms"`` and ``"original_log_dirs"`` (the dirs they were in,
``"any"`` where not pinned). ``chunk_size`` is fixed when the
batch is submitted (:func:`partitions_per_chunk`) so that a chunk stays under 900 KiB whatever
becomes of its moves: a state change rewrites one chunk, never reshuffles the others. Decoding is
in two tiers: a typed msgspec decode (``journal_typed.py``) and, only where it gives up, the strict
path here (the readers of ``zk/json_fields.py``), which alone words a refusal; so it is as strict
as that path: a malformed znode is refused with one line saying why, prefixed with the chunk it is in — except a throttle record, which is left out (with a line
saying why) while the rest of the journal is used: the batch then never restores that entity.

Version 1 heads (still read) held the throttle records themselves (``"throttles":{"brokers":..,
"topics":..}``) and the number of chunks (``"chunks":2``), named ``chunk_00000k`` (generation 0).
A journal read as version 1 is written as version 2 by its next change.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TypeVar

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
from reassignd.executor.journal_typed import chunk_typed, head_typed
from reassignd.executor.model import (
    ERROR_MESSAGE_MAX_BYTES,
    LOG_DIR_MAX,
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
    spec_error,
)
from reassignd.executor.throttle_records import (
    ThrottleRecords,
    decode_records,
    encode_records,
    read_records,
)
from reassignd.executor.znode_size import (
    CHUNK_BUDGET_BYTES,
    ZNODE_LIMIT_BYTES,
    JournalTooLarge,
    checked,
)
from reassignd.int_limits import INT32_MAX, INT32_MIN, INT64_MAX
from reassignd.topic_partition import TopicPartition
from reassignd.zk.json_fields import (
    CodecError,
    compact_json,
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

__all__ = [
    "CHUNK_BUDGET_BYTES",
    "MAX_GENERATION",
    "VERSION",
    "ZNODE_LIMIT_BYTES",
    "JournalEntry",
    "JournalHead",
    "JournalTooLarge",
    "Layout",
]

_E = TypeVar("_E", bound=StrEnum)
# What an accepted entry may gain after submission, at its longest (see partitions_per_chunk).
_MUTABLE_BYTES = len(
    ',"state":"completed","previous":[],"started_ms":,"finished_ms":,"error_message":,"size_bytes":'
) + (3 * 19 + ERROR_MESSAGE_MAX_BYTES)


@dataclass(frozen=True, slots=True)
class JournalZnodes:
    """A whole journal, every znode written at one generation (a submission)."""

    layout: Layout
    head: bytes
    chunks: tuple[bytes, ...]
    throttles: tuple[bytes, ...] = ()


# --- sizing --------------------------------------------------------------------------------------


def _worst_entry_bytes(p: PartitionSpec) -> int:
    longest = max(len(p.replicas), len(p.expected_replicas or ())) + 1
    dirs = (
        0
        if p.log_dirs is None
        else len(',"original_log_dirs":[],"dirs_asked_ms":') + 19 + len(p.replicas) * (LOG_DIR_MAX + 3)
    )
    return len(compact_json(_spec_entry(p))) + 1 + _MUTABLE_BYTES + 11 * longest + dirs


def partitions_per_chunk(spec: BatchSpec) -> int:
    """How many partitions each chunk of ``spec``'s journal holds: as many as fit in
    CHUNK_BUDGET_BYTES when each entry has its longest possible form (``previous`` one broker
    longer than its longest replica list, ten-digit broker ids, the longest error message)."""
    worst = max((_worst_entry_bytes(p) for p in spec.partitions), default=1)
    return max(1, (CHUNK_BUDGET_BYTES - 64) // worst)


def chunk_count(batch: Batch) -> int:
    return -(-len(batch.spec.partitions) // batch.chunk_size)


def chunks_of(batch: Batch, tps: Collection[TopicPartition]) -> set[int]:
    """The chunks holding ``tps``: what a change of those moves rewrites."""
    if not tps:
        return set()
    return {i // batch.chunk_size for i, p in enumerate(batch.spec.partitions) if p.tp in tps}


def size_error(batch: Batch) -> str | None:
    """Why ``batch``'s journal could not be written for its whole life, or None: a partition
    whose entry alone would outgrow a chunk, or a head that would outgrow ZooKeeper's limit once
    its generations are at their longest and the batch records a throttle for every broker and
    topic its moves touch."""
    for p in batch.spec.partitions if batch.chunk_size == 1 else ():  # (else each entry fits)
        if (worst := _worst_entry_bytes(p)) > CHUNK_BUDGET_BYTES - 64:
            return (
                f"the journal entry of {p.topic}-{p.partition} may grow to {worst} bytes, "
                f"over a chunk's {CHUNK_BUDGET_BYTES - 64}"
            )
    entities = {p.topic for p in batch.spec.partitions}
    brokers = {b for p in batch.spec.partitions for b in p.replicas}
    brokers.update(b for m in batch.moves.values() for b in m.origins)
    layout = Layout(
        (MAX_GENERATION,) * chunk_count(batch), (MAX_GENERATION,) * (len(entities) + len(brokers))
    )
    if batch.spec.limits.adaptive is not None:  # every broker's cap moved, at its longest
        batch = replace(batch, broker_caps=dict.fromkeys(brokers, INT32_MAX))
    try:
        encode_head(batch, layout)
    except JournalTooLarge as e:
        return f"its head may grow too large: {e}"
    return None


# --- encoding ------------------------------------------------------------------------------------


def encode_batch(batch: Batch, generation: int = 1) -> JournalZnodes:
    """Every znode of ``batch``'s journal, written at ``generation`` (a submission)."""
    chunks = tuple(encode_chunk(batch, i) for i in range(chunk_count(batch)))
    throttles = encode_throttles(batch)
    layout = Layout((generation,) * len(chunks), (generation,) * len(throttles))
    return JournalZnodes(layout, encode_head(batch, layout), chunks, throttles)


def encode_throttles(batch: Batch) -> tuple[bytes, ...]:
    return encode_records(batch.broker_throttles, batch.topic_throttles)


def encode_head(batch: Batch, layout: Layout) -> bytes:
    spec = batch.spec
    if len(layout.chunks) != chunk_count(batch):
        raise ValueError(f"a layout of {len(layout.chunks)} chunks for {chunk_count(batch)}")
    obj: dict[str, object] = {"version": VERSION, "batch_id": spec.batch_id, "plan_id": spec.plan_id}
    obj.update(priority=spec.priority, state=str(batch.state), created_ms=batch.created_ms)
    obj.update(updated_ms=batch.updated_ms, throttle_bytes_per_s=spec.throttle_bytes_per_s)
    limits: dict[str, object] = {
        "moves_per_broker": spec.limits.moves_per_broker,
        "moves_in_cluster": spec.limits.moves_in_cluster,
        "leader_moves_per_broker": spec.limits.leader_moves_per_broker,
    }
    if (adaptive := spec.limits.adaptive) is not None:
        limits["adaptive"] = {"min": adaptive.min, "max": adaptive.max}
    obj["limits"] = limits
    if spec.owner is not None:
        obj["owner"] = spec.owner
    obj.update(strategy=[str(s) for s in spec.strategy], rollback_of=batch.rollback_of)
    obj.update(rollback_batch_id=batch.rollback_batch_id, chunk_size=batch.chunk_size)
    obj.update(partitions=len(spec.partitions), chunks=list(layout.chunks))
    obj["throttle_records"] = list(layout.throttles)
    if batch.broker_caps:
        obj["broker_caps"] = {str(b): c for b, c in sorted(batch.broker_caps.items())}
    return checked("batch journal head", obj, decode_head)


def encode_chunk(batch: Batch, index: int) -> bytes:
    size = batch.chunk_size
    entries: list[object] = []
    for p in batch.spec.partitions[index * size : (index + 1) * size]:
        entry = _spec_entry(p)
        if (move := batch.moves.get(p.tp)) is not None:
            entry.update(state=str(move.state), previous=list(move.origins))
            for key, value in (
                ("started_ms", move.started_at_ms),
                ("finished_ms", move.finished_ms),
                ("error_message", move.error_message),
                ("size_bytes", move.size_bytes),
                ("dirs_asked_ms", move.dirs_asked_ms),
            ):
                if value is not None:
                    entry[key] = value
            if move.original_log_dirs is not None:
                entry["original_log_dirs"] = list(move.original_log_dirs)
        else:
            refusal = batch.refusals[p.tp]
            entry["error_code"] = refusal.error_code
            if refusal.error_message is not None:
                entry["error_message"] = refusal.error_message
        entries.append(entry)
    obj: dict[str, object] = {"version": 1, "index": index, "partitions": entries}
    return checked(f"batch journal chunk {index}", obj, lambda data: decode_chunk(data, index))


def _spec_entry(p: PartitionSpec) -> dict[str, object]:
    entry: dict[str, object] = {"topic": p.topic, "partition": p.partition, "replicas": list(p.replicas)}
    if p.expected_replicas is not None:
        entry["expected_replicas"] = list(p.expected_replicas)
    if p.log_dirs is not None:
        entry["log_dirs"] = list(p.log_dirs)
    return entry


# --- decoding ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Journal:
    """A decoded journal: the batch, the znodes its head names, and the throttle records left
    out (each with why; the batch cannot restore those entities)."""

    batch: Batch
    layout: Layout
    problems: tuple[str, ...] = ()


def decode_journal(
    head: JournalHead, chunks: Sequence[bytes | None], throttles: Sequence[bytes | None] = ()
) -> Journal:
    """The journal whose head, chunks (in index order) and throttle records znodes (in index
    order) these are. CodecError says what is wrong and where (``chunk 3: field
    'partitions[5].state' ...``); a throttle record that cannot be used is left out instead."""
    if len(chunks) != len(head.layout.chunks):
        raise CodecError(f"the head names {len(head.layout.chunks)} chunks, found {len(chunks)}")
    size = head.batch.chunk_size
    entries: list[JournalEntry] = []
    for i, data in enumerate(chunks):
        try:
            chunk = decode_chunk(data, i)
        except CodecError as e:
            raise CodecError(f"chunk {i}: {e.reason}") from None
        expected = min(size, head.partitions - i * size)
        if len(chunk) != expected:
            raise CodecError(f"chunk {i} holds {len(chunk)} partitions, expected {expected}")
        entries.extend(chunk)
    spec = _replace_partitions(head.batch.spec, tuple(e.spec for e in entries))
    if (reason := spec_error(spec)) is not None:
        raise CodecError(reason)
    brokers, topics = dict(head.records.brokers), dict(head.records.topics)
    problems = list(head.records.problems)
    for i, data in enumerate(throttles):
        name = head.layout.throttle_names()[i] if i < len(head.layout.throttles) else f"throttles {i}"
        try:
            records = decode_records(data, i)
        except CodecError as e:
            problems.append(f"{name}: {e.reason}")
            continue
        problems.extend(f"{name}: {p}" for p in records.problems)
        for b, values in records.brokers.items():
            brokers.setdefault(b, values)
        for t, values in records.topics.items():
            topics.setdefault(t, values)
    moves: dict[TopicPartition, BatchMove] = {}
    refusals: dict[TopicPartition, SubmitRefusal] = {}
    for entry in entries:  # each an accepted partition's or a refused one's
        if entry.move is not None:
            moves[entry.spec.tp] = entry.move
        elif entry.refusal is not None:
            refusals[entry.spec.tp] = entry.refusal
    batch = Batch(
        spec=spec,
        state=head.batch.state,
        created_ms=head.batch.created_ms,
        updated_ms=head.batch.updated_ms,
        moves=moves,
        refusals=refusals,
        chunk_size=size,
        broker_throttles=brokers,
        topic_throttles=topics,
        rollback_of=head.batch.rollback_of,
        rollback_batch_id=head.batch.rollback_batch_id,
        broker_caps=head.batch.broker_caps,
    )
    return Journal(batch, head.layout, tuple(problems))


def decode_batch(
    head: bytes | None, chunks: Sequence[bytes | None], throttles: Sequence[bytes | None] = ()
) -> Batch:
    """The batch of a journal (:func:`decode_journal`, its problems left out)."""
    return decode_journal(decode_head(head), chunks, throttles).batch


def _replace_partitions(spec: BatchSpec, partitions: tuple[PartitionSpec, ...]) -> BatchSpec:
    return replace(spec, partitions=partitions)


def _enum(kind: type[_E], value: object, where: str) -> _E:
    text = read_str(value, where)
    try:
        return kind(text)
    except ValueError:
        names = ", ".join(str(k) for k in kind)
        raise CodecError(f"field '{where}' must be one of {names}, got {quote(text)}") from None


def _ms(value: object, where: str) -> int:
    return read_int(value, where, hi=INT64_MAX)


def _generations(value: object, where: str, lo: int) -> tuple[int, ...]:
    return tuple(
        read_int(g, f"{where}[{i}]", lo=lo, hi=MAX_GENERATION) for i, g in enumerate(read_list(value, where))
    )


def _adaptive(value: object, where: str) -> Adaptive:
    bounds = read_object(value, where)
    low = read_int(get_field(bounds, "min", where + "."), where + ".min", lo=1)
    high = read_int(get_field(bounds, "max", where + "."), where + ".max", lo=low)
    return Adaptive(low, high)


def _broker_caps(value: object, where: str) -> dict[int, int]:
    caps: dict[int, int] = {}
    for key, cap in read_object(value, where).items():
        if not (key.isascii() and key.isdigit()) or len(key) > 10 or int(key) > INT32_MAX:
            raise CodecError(f"field '{where}' has a key that is no broker id: {quote(key)}")
        caps[int(key)] = read_int(cap, f"{where}.{key}", lo=1)
    return caps


def decode_head(data: bytes | None) -> JournalHead:
    """Two tiers: the typed path (journal_typed.py), and where it is unsure the strict path, which
    words the refusal."""
    if type(data) is bytes and (typed := head_typed(data)) is not None:
        return typed
    return _read_head(load_object(data))


def _read_head(obj: dict[str, object]) -> JournalHead:
    """The strict path: every check in turn, each with its own reason."""
    version = read_version(obj, (1, VERSION))
    limits = read_object(get_field(obj, "limits"), "limits")
    spec = BatchSpec(
        batch_id=read_str(get_field(obj, "batch_id"), "batch_id"),
        partitions=(),
        limits=Limits(
            moves_per_broker=read_int(
                get_field(limits, "moves_per_broker", "limits."), "limits.moves_per_broker", lo=1
            ),
            moves_in_cluster=read_int(
                get_field(limits, "moves_in_cluster", "limits."), "limits.moves_in_cluster", lo=1
            ),
            leader_moves_per_broker=read_int(
                get_field(limits, "leader_moves_per_broker", "limits."),
                "limits.leader_moves_per_broker",
                lo=1,
            ),
            adaptive=read_optional(limits, "adaptive", lambda v, _: _adaptive(v, "limits.adaptive")),
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
        owner=read_optional(obj, "owner", read_str),
    )
    batch = Batch(
        spec=spec,
        state=_enum(BatchState, get_field(obj, "state"), "state"),
        created_ms=_ms(get_field(obj, "created_ms"), "created_ms"),
        updated_ms=_ms(get_field(obj, "updated_ms"), "updated_ms"),
        moves={},
        chunk_size=read_int(get_field(obj, "chunk_size"), "chunk_size", lo=1),
        rollback_of=read_optional(obj, "rollback_of", read_str),
        rollback_batch_id=read_optional(obj, "rollback_batch_id", read_str),
        broker_caps=read_optional(obj, "broker_caps", _broker_caps) or {},
    )
    partitions = read_int(get_field(obj, "partitions"), "partitions")
    expected = -(-partitions // batch.chunk_size)
    records = ThrottleRecords()
    if version == 1:
        chunks = read_int(get_field(obj, "chunks"), "chunks")
        if chunks != expected:
            raise CodecError(
                f"field 'chunks' is {chunks}; {partitions} partitions of {batch.chunk_size} per chunk"
            )
        layout = Layout((0,) * chunks)
        try:
            records = read_records(read_object(get_field(obj, "throttles"), "throttles"), "throttles.")
        except CodecError as e:
            records = ThrottleRecords(problems=(e.reason,))
    else:
        layout = Layout(
            _generations(get_field(obj, "chunks"), "chunks", 0),
            _generations(get_field(obj, "throttle_records"), "throttle_records", 1),
        )
        if (reason := head_error(layout, partitions, batch.chunk_size)) is not None:
            raise CodecError(reason)
    return JournalHead(batch, layout, partitions, version, records)


def decode_chunk(data: bytes | None, index: int) -> tuple[JournalEntry, ...]:
    """Two tiers: the typed path (journal_typed.py), and where it is unsure the strict path, which
    words the refusal."""
    if type(data) is bytes and (typed := chunk_typed(data, index)) is not None:
        return typed
    return _read_chunk(load_object(data), index)


def _read_chunk(obj: dict[str, object], index: int) -> tuple[JournalEntry, ...]:
    """The strict path: every check in turn, each with its own reason."""
    read_version(obj, (1,))
    if (found := read_int(get_field(obj, "index"), "index")) != index:
        raise CodecError(f"field 'index' is {found}, expected {index}")
    items = read_list(get_field(obj, "partitions"), "partitions")
    return tuple(_entry(item, f"partitions[{i}]") for i, item in enumerate(items))


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
        log_dirs=read_optional(entry, "log_dirs", lambda v, _: _dirs(v, at + "log_dirs")),
    )
    message = read_optional(entry, "error_message", lambda v, _: read_str(v, at + "error_message"))
    if "state" in entry and "error_code" in entry:
        raise CodecError(f"field '{where}' has both 'state' and 'error_code'")
    if "error_code" in entry:
        code = read_int(entry["error_code"], at + "error_code", lo=INT32_MIN)
        return JournalEntry(spec, None, SubmitRefusal(code, message))
    if "state" not in entry:
        raise CodecError(f"field '{where}' has neither 'state' nor 'error_code'")
    state = _enum(BatchMoveState, entry["state"], at + "state")
    started_ms = read_optional(entry, "started_ms", lambda v, _: _ms(v, at + "started_ms"))
    if (why := started_error(state, started_ms)) is not None:
        raise CodecError(f"field '{where}': {why}")
    move = BatchMove(
        spec=spec,
        origins=read_replicas(get_field(entry, "previous", at), at + "previous", allow_empty=True),
        ended=MOVE_ENDS[state],
        started_at_ms=started_ms,
        finished_ms=read_optional(entry, "finished_ms", lambda v, _: _ms(v, at + "finished_ms")),
        error_message=message,
        size_bytes=read_optional(entry, "size_bytes", lambda v, _: _ms(v, at + "size_bytes")),
        original_log_dirs=read_optional(
            entry, "original_log_dirs", lambda v, _: _dirs(v, at + "original_log_dirs")
        ),
        dirs_asked_ms=read_optional(entry, "dirs_asked_ms", lambda v, _: _ms(v, at + "dirs_asked_ms")),
    )
    if spec.log_dirs is not None and len(spec.log_dirs) != len(spec.replicas):
        raise CodecError(
            f"field '{at}log_dirs' names {len(spec.log_dirs)} dirs for {len(spec.replicas)} replicas"
        )
    if move.original_log_dirs is not None and len(move.original_log_dirs) != len(spec.replicas):
        raise CodecError(
            f"field '{at}original_log_dirs' names {len(move.original_log_dirs)} dirs for {len(spec.replicas)} replicas"
        )
    return JournalEntry(spec, move, None)


def _dirs(value: object, where: str) -> tuple[str, ...]:
    return tuple(read_str(v, f"{where}[{i}]") for i, v in enumerate(read_list(value, where)))

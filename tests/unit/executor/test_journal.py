"""The batch journal: a batch survives encode -> decode whatever became of it, a 20,000-partition
batch is split into chunks under 900 KiB that stay under it as its moves end, throttle records
live outside the head however many there are, a version 1 journal is still read, and a malformed
journal is refused with one line saying what and where (a throttle record that cannot be used is
left out instead, saying why)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given, settings

from reassignd.errors import ReassigndError
from reassignd.executor import paths
from reassignd.executor.journal import (
    CHUNK_BUDGET_BYTES,
    JournalTooLarge,
    Layout,
    _entry,
    _read_chunk,
    chunk_count,
    chunks_of,
    decode_batch,
    decode_head,
    decode_journal,
    encode_batch,
    encode_chunk,
    partitions_per_chunk,
    size_error,
)
from reassignd.executor.journal_typed import chunk_typed
from reassignd.executor.lifecycle import moves_failed, moves_started, rollback, throttles_recorded
from reassignd.executor.model import (
    Batch,
    BatchMoveEnd,
    BatchMoveState,
    BatchSpec,
    PartitionSpec,
    Strategy,
    capped,
)
from reassignd.executor.submit import submit
from reassignd.executor.throttle_records import encode_records, record_fits
from reassignd.zk.codec import CodecError
from tests.examples import examples
from tests.unit.executor.batch_helpers import LIMITS, Cluster, move, spec, submitted
from tests.unit.executor.journal_strategies import batches


def round_trip(batch: Batch) -> Batch:
    znodes = encode_batch(batch)
    return decode_batch(znodes.head, znodes.chunks, znodes.throttles)


def a_lived_batch() -> Batch:
    c = Cluster({("orders", p): (1, 2, 3) for p in range(4)})
    s = spec(move(0), move(1), move(2, (4, 4, 5)), move(3, expected=None), plan_id="plan-7f3a", priority=-2)
    s = dataclasses.replace(
        s, throttle_bytes_per_s=52428800, strategy=(Strategy.SPREAD_BROKERS, Strategy.LARGE_FIRST)
    )
    batch = submitted(s, c)
    batch = moves_started(batch, {("orders", 0): (1, 2, 3), ("orders", 1): (1, 2, 3)}, 2000)
    batch = moves_failed(batch, {("orders", 1): "broker 5 left"}, 3000)
    batch = throttles_recorded(
        batch,
        {4: {"leader.replication.throttled.rate": None, "follower.replication.throttled.rate": "1000"}},
        {"orders": {"leader.replication.throttled.replicas": "0:1"}},
        3500,
    )
    return rollback(batch, {"b-1": batch}, c.current, c.validate, 4000).batch


def test_a_batch_that_lived_round_trips() -> None:
    batch = a_lived_batch()
    assert batch.refusals and batch.broker_throttles and batch.rollback_batch_id
    assert round_trip(batch) == batch
    znodes = encode_batch(batch, generation=7)
    head = json.loads(znodes.head)
    assert head["version"] == 2 and head["state"] == "rolled_back" and head["partitions"] == 4
    assert head["chunks"] == [7] and head["throttle_records"] == [7] and "throttles" not in head
    assert znodes.layout.names() == {"chunk_000000_7", "throttles_000000_7"}
    assert json.loads(znodes.throttles[0]) == {
        "version": 1,
        "index": 0,
        "brokers": {
            "4": {"leader.replication.throttled.rate": None, "follower.replication.throttled.rate": "1000"}
        },
        "topics": {"orders": {"leader.replication.throttled.replicas": "0:1"}},
    }
    entries = json.loads(encode_chunk(batch, 0))["partitions"]
    assert entries[0] == {
        "topic": "orders",
        "partition": 0,
        "replicas": [4, 5, 6],
        "expected_replicas": [1, 2, 3],
        "state": "cancelled",
        "previous": [1, 2, 3],
        "started_ms": 2000,
        "finished_ms": 4000,
    }
    assert entries[2]["error_code"] == 39 and "state" not in entries[2]


def big_batch(n: int = 20_000) -> Batch:
    partitions = tuple(
        PartitionSpec(f"topic-{p % 500:03d}", p // 500, (p % 24 + 1, (p + 7) % 24 + 1, (p + 13) % 24 + 1))
        for p in range(n)
    )
    before = (101, 102, 103)
    sizes = {p.tp: 2**63 - 1 for p in partitions}  # the longest size a move can record
    return submit(
        BatchSpec("big", partitions, LIMITS), {}, lambda tp: before, lambda p: None, 1000, sizes
    ).batch


@pytest.mark.timeout(60)
def test_a_20000_partition_batch_is_chunked_under_900_kib_for_its_whole_life() -> None:
    batch = big_batch()
    znodes = encode_batch(batch)
    assert len(znodes.chunks) == chunk_count(batch) > 1
    assert all(len(chunk) < CHUNK_BUDGET_BYTES for chunk in znodes.chunks)
    assert decode_batch(znodes.head, znodes.chunks) == batch
    assert size_error(batch) is None
    # every move failed with the longest message: the chunks grow, and stay under the budget
    worst = capped("x" * 10_000)
    assert worst is not None
    batch = moves_started(batch, {tp: m.origins for tp, m in batch.moves.items()}, 1_700_000_000_000)
    batch = moves_failed(batch, dict.fromkeys(batch.moves, worst), 9_999_999_999_999)
    grown = encode_batch(batch)
    assert len(grown.chunks) == len(znodes.chunks)
    assert all(len(chunk) < CHUNK_BUDGET_BYTES <= 1024 * 1024 for chunk in grown.chunks)
    assert max(map(len, grown.chunks)) > 2 * max(map(len, znodes.chunks))
    assert decode_batch(grown.head, grown.chunks) == batch


def test_a_change_rewrites_only_the_chunks_it_touches() -> None:
    batch = big_batch(5000)
    size = batch.chunk_size
    tps = [batch.spec.partitions[i].tp for i in (0, size + 1, 2 * size)]
    assert chunks_of(batch, tps) == {0, 1, 2}
    before = encode_batch(batch)
    after = encode_batch(moves_started(batch, {tps[1]: (101, 102, 103)}, 5))
    assert [i for i, (a, b) in enumerate(zip(before.chunks, after.chunks, strict=True)) if a != b] == [1]


def test_a_moves_size_is_journaled_and_read_back_on_both_paths() -> None:
    c = Cluster({("orders", p): (1, 2, 3) for p in range(2)})
    batch = submit(spec(move(0), move(1)), {}, c.current, c.validate, 1000, {("orders", 0): 7_340_032}).batch
    assert [m.size_bytes for m in batch.moves.values()] == [7_340_032, None]
    entries = json.loads(encode_chunk(batch, 0))["partitions"]
    assert entries[0]["size_bytes"] == 7_340_032 and "size_bytes" not in entries[1]
    assert round_trip(batch) == batch
    assert chunk_typed(encode_chunk(batch, 0), 0) == _read_chunk(json.loads(encode_chunk(batch, 0)), 0)
    with pytest.raises(CodecError, match="size_bytes"):
        _entry({**entries[0], "size_bytes": -1}, "partitions[0]")


def test_chunk_size_follows_the_longest_entry() -> None:
    small = spec(move(0))
    wide = spec(PartitionSpec("t" * 249, 0, tuple(range(1_000_000_000, 1_000_000_100))))
    assert partitions_per_chunk(small) > 4 * partitions_per_chunk(wide) >= 1


def test_throttle_records_stay_out_of_the_head_however_large() -> None:
    # 3,000 topics whose operators listed long throttled replicas: several MiB of records
    huge = {f"topic-{i}": {"leader.replication.throttled.replicas": "0:1," * 500} for i in range(3000)}
    batch = dataclasses.replace(submitted(spec(move(0))), topic_throttles=huge)
    znodes = encode_batch(batch)
    assert len(znodes.head) < 1024 and len(znodes.throttles) > 3
    assert all(len(z) <= CHUNK_BUDGET_BYTES for z in znodes.throttles)
    assert json.loads(znodes.head)["throttle_records"] == [1] * len(znodes.throttles)
    assert round_trip(batch) == batch


def test_a_record_too_large_for_a_znode_is_never_made() -> None:
    values = {"leader.replication.throttled.replicas": "0:1," * 300_000}
    assert not record_fits("t", values) and record_fits("t", {"leader.replication.throttled.replicas": "0:1"})
    with pytest.raises(JournalTooLarge, match=r"batch journal throttle records 0 is \d+ bytes, over the"):
        encode_records({}, {"t": values})


def test_a_batch_whose_journal_cannot_live_is_refused_at_submission() -> None:
    wide = spec(PartitionSpec("t", 0, tuple(range(1_000_000_000, 1_000_090_000))))
    with pytest.raises(ReassigndError, match="journal would not fit in ZooKeeper: the journal entry of t-0"):
        submit(wide, {}, lambda tp: (1, 2, 3), lambda p: None, 1000)
    # the head at its longest: a generation of 18 digits per chunk and per possible record
    assert size_error(big_batch(5000)) is None


# --- malformed journals --------------------------------------------------------------------------

GOOD = encode_batch(a_lived_batch())


def head_with(**changes: object) -> bytes:
    obj = json.loads(GOOD.head) | changes
    return json.dumps({k: v for k, v in obj.items() if v is not ...}).encode()


def chunk_with(entry: int = 0, **changes: object) -> bytes:
    obj = json.loads(GOOD.chunks[0])
    obj["partitions"][entry] = {k: v for k, v in (obj["partitions"][entry] | changes).items() if v is not ...}
    return json.dumps(obj).encode()


@pytest.mark.parametrize(
    ("head", "chunks", "reason"),
    [
        (b"", GOOD.chunks, "znode data is empty"),
        (b"{", GOOD.chunks, "invalid JSON at byte 2"),
        (head_with(version=3), GOOD.chunks, "unsupported version 3 (expected 1, 2)"),
        (
            head_with(state="done"),
            GOOD.chunks,
            "field 'state' must be one of pending, running, paused, completed",
        ),
        (
            head_with(limits={"moves_per_broker": 0}),
            GOOD.chunks,
            "field 'limits.moves_per_broker' must be between 1",
        ),
        (head_with(strategy=["fast"]), GOOD.chunks, "field 'strategy[0]' must be one of small_first"),
        (
            head_with(limits={**json.loads(GOOD.head)["limits"], "adaptive": {"min": 3, "max": 2}}),
            GOOD.chunks,
            "field 'limits.adaptive.max' must be between 3",
        ),
        (head_with(broker_caps={"x": 2}), GOOD.chunks, "field 'broker_caps' has a key that is no broker id"),
        (head_with(broker_caps={"4": 0}), GOOD.chunks, "field 'broker_caps.4' must be between 1"),
        (head_with(priority="0"), GOOD.chunks, "field 'priority' must be an integer, got string"),
        (head_with(chunk_size=...), GOOD.chunks, "missing field 'chunk_size'"),
        (head_with(chunks=[1, 1, 1]), GOOD.chunks, "field 'chunks' names 3 chunks; 4 partitions of"),
        (head_with(chunks=3), GOOD.chunks, "field 'chunks' must be an array"),
        (head_with(chunks=[-1]), GOOD.chunks, "field 'chunks[0]' must be between 0"),
        (head_with(throttle_records=[0]), GOOD.chunks, "field 'throttle_records[0]' must be between 1"),
        (head_with(throttle_records=...), GOOD.chunks, "missing field 'throttle_records'"),
        (GOOD.head, (), "the head names 1 chunks, found 0"),
        (GOOD.head, (None,), "chunk 0: znode data is null"),
        (
            GOOD.head,
            (GOOD.chunks[0].replace(b'"index":0', b'"index":1'),),
            "chunk 0: field 'index' is 1, expected 0",
        ),
        (GOOD.head, (chunk_with(state="moving"),), "chunk 0: field 'partitions[0].state' must be one of"),
        (GOOD.head, (chunk_with(previous=[1, 1]),), "chunk 0: field 'partitions[0].previous' has duplicate"),
        (GOOD.head, (chunk_with(2, state="pending"),), "chunk 0: field 'partitions[2]' has both 'state' and"),
        (
            GOOD.head,
            (chunk_with(state=..., previous=...),),
            "chunk 0: field 'partitions[0]' has neither 'state'",
        ),
        (
            GOOD.head,
            (chunk_with(started_ms=-1),),
            "chunk 0: field 'partitions[0].started_ms' must be between 0",
        ),
        (GOOD.head, (chunk_with(1, partition=0),), "partition orders-0 is listed twice"),
        (GOOD.head, (GOOD.chunks[0].replace(b',"expected_replicas":[1,2,3]', b"", 1) + b" ",), None),
    ],
)
def test_a_malformed_journal_is_refused_with_a_reason(
    head: bytes, chunks: tuple[bytes | None, ...], reason: str | None
) -> None:
    if reason is None:  # the last row: a chunk without an optional field, with trailing space, is fine
        decode_batch(head, chunks)
        return
    with pytest.raises(CodecError) as e:
        decode_batch(head, chunks)
    assert reason in e.value.reason
    assert "\n" not in e.value.reason


def test_the_journal_znode_names() -> None:
    assert paths.batch("b-1") == "/reassignd/batches/b-1"
    assert paths.batch_chunk("b-1", 10, 3) == "/reassignd/batches/b-1/chunk_000010_3"
    assert paths.chunk_name(7) == "chunk_000007"  # generation 0: version 1's name
    names = ["chunk_000000", "chunk_000009_12", "throttles_000001_4", "chunk_1", "other", "throttles_000000"]
    parsed = [paths.parse_child(n) for n in names]
    assert parsed[:3] == [
        paths.Child(paths.ChildKind.CHUNK, 0, 0),
        paths.Child(paths.ChildKind.CHUNK, 9, 12),
        paths.Child(paths.ChildKind.THROTTLES, 1, 4),
    ]
    assert parsed[3:] == [None, None, None]
    assert [paths.chunk_index(n) for n in names] == [0, 9, None, None, None, None]
    with pytest.raises(ValueError, match="out of range"):
        paths.chunk_name(1_000_000)
    with pytest.raises(ValueError, match="no generation 0"):
        paths.throttles_name(0, 0)


# --- version 1 -----------------------------------------------------------------------------------


def version_1(batch: Batch, throttles: object = None) -> tuple[bytes, tuple[bytes, ...]]:
    """``batch``'s journal as version 1 wrote it: the throttle records in the head, the number of
    chunks, chunks named without a generation."""
    znodes = encode_batch(batch)
    head = json.loads(znodes.head)
    del head["throttle_records"]
    head.update(version=1, chunks=len(znodes.chunks))
    head["throttles"] = throttles or {
        "brokers": {str(b): dict(v) for b, v in batch.broker_throttles.items()},
        "topics": {t: dict(v) for t, v in batch.topic_throttles.items()},
    }
    return json.dumps(head).encode(), znodes.chunks


def test_a_version_1_journal_is_still_read() -> None:
    batch = a_lived_batch()
    head, chunks = version_1(batch)
    decoded = decode_head(head)
    assert decoded.version == 1 and decoded.layout == Layout((0,))
    assert decoded.layout.names() == {"chunk_000000"}
    journal = decode_journal(decoded, chunks)
    assert journal.batch == batch and journal.problems == ()


# a journal as the controller wrote it while a batch move kept its own state (pending, running,
# completed, cancelled, failed), byte for byte: the moves' states are derived now, the format is not
OLD_HEAD = (
    b'{"version":2,"batch_id":"b-old","plan_id":null,"priority":0,"state":"running","created_ms":1000,'
    b'"updated_ms":3000,"throttle_bytes_per_s":null,"limits":{"moves_per_broker":5,"moves_in_cluster":100,'
    b'"leader_moves_per_broker":100},"strategy":[],"rollback_of":null,"rollback_batch_id":null,'
    b'"chunk_size":5,"partitions":5,"chunks":[3],"throttle_records":[]}'
)
OLD_CHUNK = (
    b'{"version":1,"index":0,"partitions":['
    b'{"topic":"orders","partition":0,"replicas":[4,5,6],"expected_replicas":[1,2,3],"state":"pending",'
    b'"previous":[1,2,3]},'
    b'{"topic":"orders","partition":1,"replicas":[4,5,6],"expected_replicas":[1,2,3],"state":"running",'
    b'"previous":[1,2,3],"started_ms":2000},'
    b'{"topic":"orders","partition":2,"replicas":[4,5,6],"expected_replicas":[1,2,3],"state":"completed",'
    b'"previous":[1,2,3],"started_ms":2000,"finished_ms":3000},'
    b'{"topic":"orders","partition":3,"replicas":[4,5,6],"expected_replicas":[1,2,3],"state":"cancelled",'
    b'"previous":[1,2,3],"finished_ms":3000,"error_message":"cancelled through the API"},'
    b'{"topic":"orders","partition":4,"replicas":[4,5,6],"expected_replicas":[1,2,3],"state":"failed",'
    b'"previous":[1,2,3],"started_ms":2000,"finished_ms":3000,"error_message":"broker 5 left"}]}'
)


def test_a_journal_written_with_a_move_state_of_its_own_still_loads() -> None:
    batch = decode_batch(OLD_HEAD, (OLD_CHUNK,))
    moves = [batch.moves[("orders", p)] for p in range(5)]
    assert [m.state for m in moves] == list(BatchMoveState)  # pending, running, completed, ...
    assert [m.ended for m in moves] == [None, None, *BatchMoveEnd]
    assert [m.started_at_ms for m in moves] == [None, 2000, 2000, None, 2000]
    assert moves[4].error_message == "broker 5 left"
    # and is written back as it was: the state on the wire is the one derived
    again = encode_batch(batch, generation=3)
    assert (again.head, again.chunks) == (OLD_HEAD, (OLD_CHUNK,))


@pytest.mark.parametrize(
    ("entry", "changes", "reason"),
    [
        (1, {"started_ms": ...}, "field 'partitions[1]': a running move has a 'started_ms'"),
        (0, {"started_ms": 5}, "field 'partitions[0]': a pending move has no 'started_ms'"),
    ],
)
def test_a_move_whose_state_and_start_disagree_is_refused(
    entry: int, changes: dict[str, object], reason: str
) -> None:
    obj = json.loads(OLD_CHUNK)
    obj["partitions"][entry] = {k: v for k, v in (obj["partitions"][entry] | changes).items() if v is not ...}
    with pytest.raises(CodecError) as e:
        decode_batch(OLD_HEAD, (json.dumps(obj).encode(),))
    assert reason in e.value.reason


def test_a_throttle_record_that_cannot_be_used_is_left_out_and_the_rest_kept() -> None:
    batch = a_lived_batch()
    head, chunks = version_1(
        batch,
        {
            "brokers": {"x": {}, "4": {"leader.replication.throttled.rate": "1"}},
            "topics": {"t": {"k": 1}, "orders": {}},
        },
    )
    journal = decode_journal(decode_head(head), chunks)
    assert journal.batch.broker_throttles == {4: {"leader.replication.throttled.rate": "1"}}
    assert journal.batch.topic_throttles == {"orders": {}}
    assert journal.problems == (
        "field 'throttles.brokers' has key \"x\", which is not a broker id",
        'field \'throttles.topics["t"]["k"]\' must be a string, got number',
    )
    # no usable throttles at all: the batch is still read
    head, chunks = version_1(batch, "none")
    journal = decode_journal(decode_head(head), chunks)
    assert journal.batch.broker_throttles == {} and journal.problems == (
        "field 'throttles' must be an object, got string",
    )
    # the same in a version 2 records znode; a znode that cannot be read at all loses its records
    znodes = encode_batch(batch)
    bad = znodes.throttles[0].replace(b'"1000"', b"1000")
    journal = decode_journal(decode_head(znodes.head), znodes.chunks, [bad])
    assert 4 not in journal.batch.broker_throttles and "orders" in journal.batch.topic_throttles
    assert journal.problems == (
        'throttles_000000_1: field \'brokers["4"]["follower.replication.throttled.rate"]\' must be a '
        "string, got number",
    )
    journal = decode_journal(decode_head(znodes.head), znodes.chunks, [b"garbage"])
    assert journal.batch.topic_throttles == {} and journal.problems[0].startswith(
        "throttles_000000_1: invalid"
    )


# --- property ------------------------------------------------------------------------------------


@pytest.mark.timeout(60)
@settings(max_examples=examples(150), deadline=None)
@given(batches())
def test_decode_of_encode_is_the_batch(batch: Batch) -> None:
    assert round_trip(batch) == batch
    for i, chunk in enumerate(encode_batch(batch).chunks):  # and what the encoder writes is read
        assert chunk_typed(chunk, i) is not None  # on the typed path

"""The pending legacy set's writes, decided from what was read (``Intake._persist``'s pure part):
one ordered step — the old overflow out, the legacy znode written only when its bytes change, the
new overflow in."""

from __future__ import annotations

from reassignd.controller.reassignment.intake import legacy_chunks, legacy_writes
from reassignd.zk import admin_codec, paths
from reassignd.zk.values import Create, Delete, SetData

ENTRY = admin_codec.LegacyReassignmentEntry("t", 0, (1, 2), (3, 4))


def test_unchanged_bytes_are_not_written_and_the_old_overflow_goes_first() -> None:
    data = admin_codec.encode_legacy_reassignment((ENTRY,))
    assert legacy_writes([(ENTRY,)], None, data) == []
    assert legacy_writes([(ENTRY,)], ["chunk_0000"], data) == [
        Delete(f"{paths.LEGACY_OVERFLOW}/chunk_0000"),
        Delete(paths.LEGACY_OVERFLOW),
    ]
    assert legacy_writes([(ENTRY,)], None, b"{}") == [SetData(paths.REASSIGN_PARTITIONS, data, -1)]
    assert legacy_writes([(ENTRY,)], None, None) == [Create(paths.REASSIGN_PARTITIONS, data)]
    assert legacy_writes([], ["chunk_0000"], None) == [
        Delete(f"{paths.LEGACY_OVERFLOW}/chunk_0000"),
        Delete(paths.LEGACY_OVERFLOW),
    ]


def test_what_does_not_fit_goes_to_the_overflow_after_the_legacy_znode() -> None:
    entries = tuple(
        admin_codec.LegacyReassignmentEntry(f"topic-{i:05d}-{'x' * 200}", 0, (1, 2, 3), (4, 5, 6))
        for i in range(12_000)
    )
    chunks = legacy_chunks(entries)
    assert len(chunks) >= 2 and sum(len(c) for c in chunks) == len(entries)
    assert [e for c in chunks for e in c] == list(entries)  # in order, nothing lost or doubled
    ops = legacy_writes(chunks, None, None)
    assert [type(op) for op in ops[:2]] == [Create, Create]
    assert ops[0].path == paths.REASSIGN_PARTITIONS and ops[1] == Create(paths.LEGACY_OVERFLOW)
    assert [op.path for op in ops[2:]] == [
        f"{paths.LEGACY_OVERFLOW}/chunk_{i:04d}" for i in range(len(chunks) - 1)
    ]

"""The batch journal's two decoding tiers agree: the typed tier (journal_typed.py, msgspec) returns
what the strict path returns, or gives up, on every chunk and head — as written, with an entry
broken, and damaged in random ways (a value changed, a key gone, added or repeated, escapes,
colons in strings) — and the decoder, whichever tier reads, returns or words exactly what the
strict path alone does."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reassignd.executor.journal import _read_chunk, _read_head, decode_chunk, decode_head, encode_batch
from reassignd.executor.journal_typed import chunk_typed, head_typed
from reassignd.executor.model import Batch
from reassignd.zk.codec import CodecError
from reassignd.zk.json_fields import load_object_strictly
from tests.examples import examples
from tests.json_paths import at, paths_in
from tests.unit.executor.journal_strategies import batches, entries


def strict_chunk(data: bytes) -> object:
    return _read_chunk(load_object_strictly(data), 0)


def strict_head(data: bytes) -> object:
    return _read_head(load_object_strictly(data))


def outcome(call: Callable[[bytes], object], data: bytes) -> object:
    try:
        return call(data)
    except CodecError as e:
        return ("refused", e.reason)


def assert_tiers_agree(data: bytes, head: bool) -> bool:
    """The typed tier returns the strict path's value or gives up; the decoder is the strict path.
    True if the typed tier read it."""
    typed = head_typed(data) if head else chunk_typed(data, 0)
    strict = outcome(strict_head if head else strict_chunk, data)
    if typed is not None:
        assert typed == strict
    assert outcome(decode_head if head else lambda d: decode_chunk(d, 0), data) == strict
    return typed is not None


class Pairs(list[tuple[str, Any]]):
    """A JSON object as its members, in order, a key possibly repeated."""


def render(value: Any, ascii_only: bool, space: str) -> str:
    if isinstance(value, dict):
        value = Pairs(value.items())
    if isinstance(value, Pairs):
        members = (
            f"{json.dumps(k, ensure_ascii=ascii_only)}:{space}{render(v, ascii_only, space)}"
            for k, v in value
        )
        return "{" + f",{space}".join(members) + "}"
    if isinstance(value, list):
        return "[" + ",".join(render(v, ascii_only, space) for v in value) + "]"
    return json.dumps(value, ensure_ascii=ascii_only)


DROP = object()
ODD = st.sampled_from(
    [None, True, False, -1, 0, 1, 2, 2**31 - 1, 2**31, 2**63 - 1, 2**63, 1.0, 1e3, "", "x", "a:b", ":",
     "é", "running", "pending", "completed", [], [1, 1], [1, -1], ["a:b"], {}, {"a": 1}]
)  # fmt: skip
KEYS = st.sampled_from(["topic", "partition", "state", "previous", "started_ms", "error_code", "error_message",
                        "log_dirs", "index", "version", "partitions", "limits", "chunks", "broker_caps",
                        "adaptive", "min", "x", "a:b"])  # fmt: skip


def without(container: Any, key: Any) -> Any:
    if isinstance(container, dict):
        return {k: v for k, v in container.items() if k != key}
    return [v for i, v in enumerate(container) if i != key]


@st.composite
def damaged(draw: st.DrawFn, obj: Any) -> bytes:
    for _ in range(draw(st.integers(1, 2))):
        path = draw(st.sampled_from(paths_in(obj)[1:] or [()]))
        if path and draw(st.booleans()):
            obj = at(obj, path[:-1], lambda c, key=path[-1]: without(c, key))  # type: ignore[misc]
        elif path:
            new = draw(ODD)
            obj = at(obj, path, lambda _, new=new: new)  # type: ignore[misc]
    dicts = [p for p in paths_in(obj) if isinstance(_get(obj, p), dict)]
    if draw(st.booleans()) and dicts:  # a key added or repeated, before or after the others
        path = draw(st.sampled_from(dicts))
        node = _get(obj, path)
        key = draw(st.sampled_from(list(node)) | KEYS) if node else draw(KEYS)
        member = (key, draw(st.sampled_from([node.get(key), 0])) if draw(st.booleans()) else draw(ODD))
        first = draw(st.booleans())
        obj = at(obj, path, lambda d: Pairs([member, *d.items()] if first else [*d.items(), member]))
    return render(obj, draw(st.booleans()), draw(st.sampled_from(["", " "]))).encode()


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        value = value[p]
    return value


@pytest.mark.timeout(300)
@settings(max_examples=examples(200), deadline=None)
@given(entries(), st.booleans(), st.booleans())
def test_a_chunk_with_an_entry_broken_reads_the_same_on_both_tiers(
    entry: dict[str, object], ascii_only: bool, dirs: bool
) -> None:
    if dirs:
        replicas = entry.get("replicas")
        entry["log_dirs"] = ["/d:1", "any", "/d2", "/d3"][
            : len(replicas) if isinstance(replicas, list) else 2
        ]
    chunk = {"version": 1, "index": 0, "partitions": [entry]}
    assert_tiers_agree(render(chunk, ascii_only, "").encode(), head=False)


@pytest.mark.timeout(300)
@settings(max_examples=examples(150), deadline=None)
@given(st.data())
def test_damaged_chunks_and_heads_read_the_same_on_both_tiers(data: st.DataObject) -> None:
    batch = data.draw(batches())
    znodes = encode_batch(batch)
    head = not znodes.chunks or data.draw(st.booleans())
    written = znodes.head if head else znodes.chunks[0]
    assert assert_tiers_agree(written, head)  # as written: read on the typed tier
    assert_tiers_agree(data.draw(damaged(json.loads(written))), head)


def test_the_typed_tier_leaves_doubtful_znodes_to_the_strict_path() -> None:
    entry = '{"topic":"t","partition":0,"replicas":[1],"state":"pending","previous":[1]%s}'
    chunk = '{"version":1,"index":0,"partitions":[%s]}'
    assert chunk_typed((chunk % (entry % "")).encode(), 0) is not None
    for doubtful in (
        ',"started_ms":null',  # null (absent to the strict path, but not counted)
        ',"previous":[1]',  # a repeated key (msgspec keeps the last)
        ',"x":1',  # an unknown key
        ',"error_message":"\\u003a"',  # an escape
    ):
        data = (chunk % (entry % doubtful)).encode()
        assert chunk_typed(data, 0) is None
        assert outcome(lambda d: decode_chunk(d, 0), data) == outcome(strict_chunk, data)
    with pytest.raises(CodecError, match="duplicate key"):
        decode_chunk((chunk % (entry % ',"previous":[1]')).encode(), 0)


@pytest.mark.timeout(300)
@settings(max_examples=examples(100), deadline=None)
@given(batches())
def test_every_znode_the_encoder_writes_is_read_on_the_typed_tier(batch: Batch) -> None:
    znodes = encode_batch(batch)
    assert head_typed(znodes.head) is not None
    assert all(chunk_typed(c, i) is not None for i, c in enumerate(znodes.chunks))
    for data in (znodes.head, *znodes.chunks, *znodes.throttles):  # msgspec writes json's bytes
        assert data == json.dumps(json.loads(data), separators=(",", ":"), ensure_ascii=False).encode()

"""The Kafka listener's cache of encoded Metadata answers (``FrameCache``): bounded in bytes and
entries together, oldest used first out, an answer over a quarter of the byte cap never kept,
and a kept answer served only for the very snapshot part it was built from."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from reassignd.kafka_listener.limits import FrameCache

PART = object()  # the snapshot part the answers were built from


def test_the_oldest_used_goes_first_when_bytes_run_out() -> None:
    cache = FrameCache(max_entries=100, max_bytes=1000)
    for key in ("a", "b", "c"):
        cache.put(key, PART, bytes(250))
    assert cache.get("a", PART) is not None  # "a" used: "b" is now the oldest
    cache.put("d", PART, bytes(250))
    assert cache.bytes == 1000 and len(cache) == 4
    cache.put("e", PART, bytes(250))
    assert cache.get("b", PART) is None
    assert all(cache.get(k, PART) is not None for k in ("a", "c", "d", "e"))
    assert cache.bytes == 1000


def test_an_answer_over_a_quarter_of_the_cap_is_not_kept_and_pushes_nothing_out() -> None:
    cache = FrameCache(max_entries=100, max_bytes=1000)
    cache.put("small", PART, bytes(100))
    cache.put("big", PART, bytes(251))
    assert cache.get("big", PART) is None
    assert cache.get("small", PART) is not None and cache.bytes == 100
    cache.put("small", PART, bytes(251))  # replaced by one too big: the old answer goes too
    assert cache.get("small", PART) is None and cache.bytes == 0 and len(cache) == 0


def test_an_answer_is_served_only_for_the_part_it_was_built_from() -> None:
    cache = FrameCache(max_entries=10, max_bytes=1000)
    cache.put("k", PART, b"old")
    assert cache.get("k", object()) is None  # a new snapshot part: never the stale answer
    newer = object()
    cache.put("k", newer, b"new")
    assert cache.get("k", newer) == b"new" and cache.bytes == 3 and len(cache) == 1


def test_the_entry_count_is_capped_too() -> None:
    cache = FrameCache(max_entries=2, max_bytes=1000)
    for key in ("a", "b", "c"):
        cache.put(key, PART, b"x")
    assert len(cache) == 2 and cache.get("a", PART) is None and cache.bytes == 2


@given(max_bytes=st.integers(4, 1000), max_entries=st.integers(1, 20), data=st.data())
def test_never_more_than_its_caps_and_evicts_in_least_recent_use_order(
    max_bytes: int, max_entries: int, data: st.DataObject
) -> None:
    # sizes around a quarter of the cap: some kept, some too big, and the byte cap often reached
    sizes = st.integers(0, 8) | st.integers(max_bytes // 6, max_bytes // 3)
    reads = st.sampled_from([False, False, False, True])  # mostly puts: the caps are reached
    ops = data.draw(st.lists(st.tuples(st.integers(0, 15), sizes, reads), min_size=10, max_size=80))
    cache = FrameCache(max_entries, max_bytes)
    model: dict[int, bytes] = {}  # insertion order = least recently used first
    for key, size, read in ops:
        if read:
            got = cache.get(key, PART)
            assert got == model.get(key)
            if key in model:
                model[key] = model.pop(key)
            continue
        frame = bytes([key]) * size
        cache.put(key, PART, frame)
        model.pop(key, None)
        if size <= max_bytes // 4:
            model[key] = frame
            while len(model) > max_entries or sum(map(len, model.values())) > max_bytes:
                del model[next(iter(model))]
        assert cache.bytes == sum(map(len, model.values())) <= max_bytes
        assert len(cache) == len(model) <= max_entries
    for key, frame in model.items():
        assert cache.get(key, PART) == frame

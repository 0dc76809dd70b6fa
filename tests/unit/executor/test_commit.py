"""The journal's commit rule, as pure plans: which znodes a change writes and in which order, and
what a load keeps. A change cut after any single write leaves a journal that reads as the old
batch or as the new one, never a mix, and everything else under the batch's znode is debris the
load finds."""

from __future__ import annotations

import dataclasses
import functools

import pytest

from reassignd.executor import commit, journal, paths
from reassignd.executor.commit import UNCOMMITTED, Commit
from reassignd.executor.journal import Layout
from reassignd.executor.lifecycle import moves_started, stop, throttles_recorded
from reassignd.executor.model import Batch, BatchMoveState, BatchSpec, PartitionSpec
from reassignd.executor.submit import submit
from tests.unit.executor.batch_helpers import LIMITS

HEAD = ""  # the head's key in a simulated batch znode: its children by name, the head under ""
Store = dict[str, bytes]


def batch_of(n: int, batch_id: str = "big") -> Batch:
    """``n`` partitions moving from broker 1 to broker 2: several chunks from a few thousand."""
    partitions = tuple(PartitionSpec("t", p, (2,)) for p in range(n))
    return submit(BatchSpec(batch_id, partitions, LIMITS), {}, lambda tp: (1,), lambda p: None, 1000).batch


def started(b: Batch) -> Batch:
    return moves_started(b, {tp: (1,) for tp in b.moves}, 2000)


def writes(plan: Commit) -> list[tuple[str, bytes | None]]:
    """The plan's writes one by one, in the order the controller sends them (None: a delete). As
    one multi they are applied together; here every prefix is a state a cut may leave."""
    head = [(HEAD, plan.head)]
    created = list(plan.create)
    if plan.new:
        return [(HEAD, UNCOMMITTED), *created, *head]
    return [*created, *head, *((n, None) for n in plan.delete)]


def apply(store: Store, steps: list[tuple[str, bytes | None]]) -> Store:
    out = dict(store)
    for name, data in steps:
        if data is None:
            del out[name]
        else:
            out[name] = data
    return out


def load(store: Store) -> tuple[Batch | None, tuple[str, ...]]:
    """What a new controller reads (None: no journal) and the debris it deletes."""
    children = [n for n in store if n != HEAD]
    if not store.get(HEAD):
        return None, commit.debris(None, children)
    head = journal.decode_head(store[HEAD])
    chunks = tuple(store.get(n) for n in head.layout.chunk_names())
    throttles = tuple(store.get(n) for n in head.layout.throttle_names())
    return decoded(store[HEAD], chunks, throttles), commit.debris(head.layout, children)


@functools.lru_cache(maxsize=4)
def decoded(head: bytes, chunks: tuple[bytes | None, ...], throttles: tuple[bytes | None, ...]) -> Batch:
    """The batch a journal's bytes hold, decoded once per distinct bytes: the cuts of one change
    leave the same head and chunks (the old ones or the new ones) with only debris beside them, and
    a 4000-partition journal takes a second or so to decode on a loaded machine."""
    loaded = journal.decode_journal(journal.decode_head(head), chunks, throttles)
    assert loaded.problems == ()
    return loaded.batch


def committed(plan: Commit) -> Store:
    return apply({}, writes(plan))


def test_a_submission_writes_its_chunks_then_its_head() -> None:
    b = batch_of(4000)
    plan = commit.submission(b, 1)
    assert plan.new and plan.delete == () and len(plan.create) == journal.chunk_count(b) >= 3
    assert [n for n, _ in plan.create] == ["chunk_000000_1", "chunk_000001_1", "chunk_000002_1"]
    assert not plan.fits_one_multi  # a few hundred KiB: the head is the commit point
    assert load(committed(plan)) == (b, ())
    small = commit.submission(batch_of(10, "small"), 1)
    assert small.fits_one_multi


def test_a_change_rewrites_its_chunks_under_new_names_and_deletes_the_old_ones() -> None:
    b = batch_of(4000)
    sub = commit.submission(b, 1)
    one = next(iter(b.moves))
    new = moves_started(b, {one: (1,)}, 2000)
    plan = commit.update(b, sub.layout, new, 2)
    assert [n for n, _ in plan.create] == ["chunk_000000_2"] and plan.delete == ("chunk_000000_1",)
    assert plan.layout == Layout((2, 1, 1))
    assert load(apply(committed(sub), writes(plan))) == (new, ())
    with pytest.raises(ValueError, match="not newer"):
        commit.update(b, sub.layout, new, 1)


@pytest.mark.parametrize("change", ["start", "stop", "throttles"])
def test_a_change_cut_after_any_write_leaves_the_old_journal_or_the_new_one(change: str) -> None:
    old = started(batch_of(4000)) if change != "start" else batch_of(4000)
    sub = commit.submission(old, 3)
    before = committed(sub)
    if change == "start":
        new = started(old)
    elif change == "stop":
        new, _ = stop(old, 3000)
        assert all(m.state is BatchMoveState.CANCELLED for m in new.moves.values())
    else:
        records = {f"t{i}": {"leader.replication.throttled.replicas": "0:1," * 20_000} for i in range(40)}
        new = throttles_recorded(old, {2: {"leader.replication.throttled.rate": None}}, records, 3000)
    plan = commit.update(old, sub.layout, new, 4)
    steps = writes(plan)
    assert len(steps) > 3 and not plan.fits_one_multi
    seen = set()
    for cut in range(len(steps) + 1):
        store = apply(before, steps[:cut])
        batch, debris = load(store)
        assert batch in (old, new), f"a mix after {cut} writes"
        seen.add("new" if batch == new else "old")
        layout = plan.layout if batch == new else sub.layout
        assert set(debris) == set(store) - {HEAD} - layout.names()
        assert commit.next_generation(layout, store) > max(
            c.generation for n in store if (c := paths.parse_child(n)) is not None
        )
    assert seen == {"old", "new"}


def test_a_submission_cut_short_is_no_journal_and_all_debris() -> None:
    b = batch_of(4000)
    steps = writes(commit.submission(b, 1))
    for cut in range(1, len(steps)):
        store = apply({}, steps[:cut])
        assert load(store) == (None, tuple(sorted(set(store) - {HEAD})))
    assert load(apply({}, steps))[0] == b


def test_a_version_1_journal_moves_its_throttle_records_out_of_the_head_at_its_first_change() -> None:
    b = throttles_recorded(batch_of(10), {2: {"leader.replication.throttled.rate": None}}, {}, 1500)
    v1 = Layout((0,))  # chunk_000000, records in the head
    new = started(b)
    plan = commit.update(b, v1, new, 1)
    assert [n for n, _ in plan.create] == ["chunk_000000_1", "throttles_000000_1"]
    assert plan.delete == ("chunk_000000",) and plan.layout == Layout((1,), (1,))
    unchanged = commit.update(new, plan.layout, dataclasses.replace(new, updated_ms=9), 2)
    assert unchanged.create == () and unchanged.delete == () and unchanged.layout == plan.layout


def test_debris_is_what_the_journal_names_nowhere_and_only_its_own_names() -> None:
    layout = Layout((3, 0), (3,))
    children = [
        "chunk_000000_3",
        "chunk_000001",
        "throttles_000000_3",
        "chunk_000000_4",
        "throttles_000000_2",
    ]
    assert commit.debris(layout, [*children, "notes"]) == ("chunk_000000_4", "throttles_000000_2")
    assert commit.debris(None, [*children, "notes"]) == tuple(sorted(children))
    assert commit.next_generation(layout, children) == 5
    assert commit.next_generation(None, []) == 1


def test_a_deletion_is_one_multi_when_small() -> None:
    assert commit.deletion("b", ["chunk_000000_1", "throttles_000000_1"]).one_multi
    assert not commit.deletion("b", [f"chunk_{i:06d}_1" for i in range(100)]).one_multi

"""The fenced write gateway's implementation (``ZkWriter``) against a real ZooKeeper: a write's
outcome as a value, an event's writes through its outputs (and none from an event that may not
write), a deleted persistent path re-created by the read that finds it gone, and the concurrent
topic-znode writes (``write_assignments``):
one event's writes fail or succeed as a unit — the first failure is raised, the writes still in
flight are cancelled, nothing outlives the call, and memory holds exactly what was written."""

from __future__ import annotations

import asyncio

import pytest

from reassignd.controller.effects.broker_requests import BrokerRequestBatch
from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.effects.fenced_writes import Refused, Written
from reassignd.controller.effects.writer import ZkWriter
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.controller.state.context import ControllerContext, LeaderIsr
from reassignd.controller.state.wire_states import WireStates
from reassignd.errors import NotController
from reassignd.testing.polling import eventually
from reassignd.zk import codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import MultiFailedError, NodeExistsError, NoNodeError
from reassignd.zk.values import Create, Delete, Fence, SetData

TOPICS = [f"t{i:02d}" for i in range(40)]
ORIGINAL = ReplicaAssignment((1, 2))
MOVED = ORIGINAL.reassign_to((2, 3))


async def setup(zk: ZkClient, topics: list[str]) -> tuple[ZkWriter, ControllerContext]:
    await zk.create("/controller_epoch", b"1")
    await zk.ensure_path(paths.BROKER_TOPICS)
    ctx = ControllerContext(1, 0)
    for t in topics:
        await zk.create(paths.topic(t), codec.encode_topic(codec.TopicZnode({0: ORIGINAL.replicas})))
        ctx.put_topic(t, None, {0: ORIGINAL})
    problems: list[str] = []
    return ZkWriter(zk, zk, Fence("/controller_epoch", 0), ctx, lambda p, r, k: problems.append(p)), ctx


def leftovers(before: set[asyncio.Task[object]]) -> set[asyncio.Task[object]]:
    return {t for t in asyncio.all_tasks() if t not in before and not t.done()}


async def in_zookeeper(zk: ZkClient, topic: str) -> ReplicaAssignment | None:
    znode = await zk.get_or_none(paths.topic(topic))
    if znode is None:
        return None
    decoded = codec.decode_topic(znode.data)
    return ReplicaAssignment(decoded.partitions[0], decoded.adding.get(0, ()), decoded.removing.get(0, ()))


async def test_all_topics_written_then_in_memory(zk: ZkClient) -> None:
    writer, ctx = await setup(zk, TOPICS)
    await writer.write_assignments({(t, 0): MOVED for t in TOPICS})
    for t in TOPICS:
        assert await in_zookeeper(zk, t) == MOVED
        assert ctx.assignment((t, 0)) == MOVED
        assert ctx.topic_ids[t] is not None


async def test_a_failed_write_fails_the_whole_call_and_leaves_nothing_running(zk: ZkClient) -> None:
    writer, ctx = await setup(zk, TOPICS)
    await zk.delete(paths.topic("t05"))  # deleted behind the controller's back: its write fails
    before = set(asyncio.all_tasks())
    with pytest.raises(MultiFailedError) as failed:
        await writer.write_assignments({(t, 0): MOVED for t in TOPICS})
    assert isinstance(failed.value.cause, NoNodeError)
    assert leftovers(before) == set()
    # memory claims no write ZooKeeper does not have
    for t in TOPICS:
        if ctx.assignment((t, 0)) == MOVED:
            assert await in_zookeeper(zk, t) == MOVED, t
    assert ctx.assignment(("t05", 0)) == ORIGINAL


async def test_a_lost_fence_fails_the_call_and_writes_nothing(zk: ZkClient) -> None:
    writer, ctx = await setup(zk, TOPICS)
    await zk.set("/controller_epoch", b"2", 0)  # another controller was elected
    before = set(asyncio.all_tasks())
    with pytest.raises(NotController):
        await writer.write_assignments({(t, 0): MOVED for t in TOPICS})
    assert leftovers(before) == set()
    for t in TOPICS:
        assert await in_zookeeper(zk, t) == ORIGINAL
        assert ctx.assignment((t, 0)) == ORIGINAL


async def test_states_go_in_multis_and_a_state_changed_under_us_is_decided_again(zk: ZkClient) -> None:
    """``write_states`` writes many states per transaction; when an agent changed one of them
    meanwhile, only that one is re-read and decided again from what the agent wrote, and every
    other one is written as decided from the cache."""
    writer, ctx = await setup(zk, ["s"])
    n = 250
    initial = codec.PartitionState(1, 0, 1, (1, 2))
    await zk.multi([Create(paths.topic_partitions("s"))])
    await zk.multi(
        [Create(paths.partition("s", p)) for p in range(n)]
        + [Create(paths.partition_state("s", p), codec.encode_partition_state(initial)) for p in range(n)]
    )
    for p in range(n):
        ctx.set_state(("s", p), LeaderIsr(initial, 0))
    everything = [("s", p) for p in range(n)]

    def bump(tp: tuple[str, int], li: LeaderIsr) -> codec.PartitionState:
        s = li.state
        return codec.PartitionState(s.leader, s.leader_epoch + 1, 2, s.isr)

    # nothing changed under us: 250 states in 3 transactions (100 + 100 + 50): the znodes one
    # transaction wrote share its zxid (a count of the server's zxids would include other
    # sessions' transactions, such as an earlier test's sessions expiring)
    assert sorted(await writer.write_states(everything, bump)) == everything
    written: dict[int, int] = {}
    for p in range(n):
        mzxid = (await zk.get(paths.partition_state("s", p))).stat.mzxid
        written[mzxid] = written.get(mzxid, 0) + 1
    assert sorted(written.values()) == [50, 100, 100], written

    # an agent shrinks the ISR of three partitions behind the controller's cache
    shrunk = codec.PartitionState(1, 1, 2, (1,))
    for p in (7, 150, 249):
        await zk.set(paths.partition_state("s", p), codec.encode_partition_state(shrunk), 1)
    assert sorted(await writer.write_states(everything, bump)) == everything
    for p in range(n):
        state = codec.decode_partition_state((await zk.get(paths.partition_state("s", p))).data)
        isr = (1,) if p in (7, 150, 249) else (1, 2)
        assert state == codec.PartitionState(1, 2, 2, isr), p  # bumped once more, from what is there
        assert ctx.states[("s", p)] == LeaderIsr(state, 3 if p in (7, 150, 249) else 2)


async def test_a_write_answers_an_expected_refusal_as_a_value_and_raises_the_rest(zk: ZkClient) -> None:
    """A write's refusal that the handler expects (the znode gone, there already) is its outcome,
    nothing written; one it does not expect raises; a lost fence raises NotController whatever
    the write expects (another controller won: the outcome is not this one's to decide)."""
    writer, _ = await setup(zk, [])
    await zk.create("/there", b"x")
    refused = await writer.write([Create("/new", b""), Delete("/gone")], expect=(NoNodeError,))
    assert isinstance(refused, Refused) and refused.index == 1 and isinstance(refused.error, NoNodeError)
    assert await zk.exists("/new") is None  # nothing of the multi was applied
    with pytest.raises(MultiFailedError):
        await writer.write([Create("/there", b"")], expect=(NoNodeError,))  # NodeExists: not expected
    written = await writer.write([Create("/new", b"n"), SetData("/there", b"y", -1)])
    assert isinstance(written, Written) and written.results[0] == "/new"
    assert (await zk.get("/there")).data == b"y"
    await zk.set("/controller_epoch", b"2", -1)  # another controller won
    with pytest.raises(NotController):
        await writer.write([Delete("/gone")], expect=(NoNodeError,))


async def test_an_event_writes_through_its_gateway_and_one_that_may_not_write_cannot(zk: ZkClient) -> None:
    """A handler's writes go through its event's outputs to the fenced writer: each lands in
    ZooKeeper (and memory) when it is awaited; nothing to write sends nothing; an event built
    without the gateway refuses to write at all — a programming error, raised."""
    writer, ctx = await setup(zk, ["a", "b"])
    await zk.ensure_path(paths.DELETE_TOPICS)
    out = EventOutputs(BrokerRequestBatch(ctx, 1, wire=WireStates(ctx)), writer)
    await out.writes.write_assignments({("a", 0): MOVED})
    assert await in_zookeeper(zk, "a") == MOVED and ctx.assignment(("a", 0)) == MOVED
    created = await out.writes.write([Create(paths.delete_topic("b"))], expect=(NodeExistsError,))
    assert isinstance(created, Written) and await zk.exists(paths.delete_topic("b")) is not None
    again = await out.writes.write([Create(paths.delete_topic("b"))], expect=(NodeExistsError,))
    assert isinstance(again, Refused) and isinstance(again.error, NodeExistsError)
    ops_before = writer.ops_written
    await out.writes.delete_all([])
    await out.writes.write_assignments({})
    assert writer.ops_written == ops_before, "nothing to write: no multi sent"
    await out.writes.delete_all([paths.delete_topic("b"), "/not-there"])  # one gone already: no error
    assert await zk.exists(paths.delete_topic("b")) is None
    assert await in_zookeeper(zk, "b") == ORIGINAL
    unable = EventOutputs(BrokerRequestBatch(ctx, 1, wire=WireStates(ctx)))
    with pytest.raises(RuntimeError, match="may not write"):
        await unable.writes.write([Delete(paths.topic("a"))])
    assert await in_zookeeper(zk, "a") == MOVED


async def test_a_read_of_a_deleted_persistent_path_re_creates_it_reported_and_watched(zk: ZkClient) -> None:
    """``children`` of a persistent znode someone deleted: re-created (fenced), reported, read
    again, and the watch armed on it, as Kafka's controller re-creates its paths."""
    await zk.create("/controller_epoch", b"1")
    reported: list[tuple[str, str]] = []
    writer = ZkWriter(
        zk,
        zk,
        Fence("/controller_epoch", 0),
        ControllerContext(1, 0),
        lambda p, r, k: reported.append((p, k)),
    )
    fired: list[str] = []
    assert await zk.exists(paths.BROKER_IDS) is None
    assert await writer.children(paths.BROKER_IDS, fired.append) == []
    assert await zk.exists(paths.BROKER_IDS) is not None
    assert reported == [(paths.BROKER_IDS, "persistent_path")]
    await zk.create(paths.broker(7), b"{}")
    await eventually(lambda: fired == [paths.BROKER_IDS], what="the watch armed on the re-created path")
    # there: read, nothing re-created or reported
    assert await writer.children(paths.BROKER_IDS, None) == ["7"]
    assert reported == [(paths.BROKER_IDS, "persistent_path")]

"""Control request batching (pure): full LeaderAndIsr sets, and requests split by partition count
and by encoded bytes so that every body stays below the agent's limit."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reassignd.control.protocol import (
    ControlRequest,
    FullSet,
    Header,
    LeaderAndIsrRequest,
    LiveBroker,
    StopReplicaPartition,
    StopReplicaRequest,
    UpdateMetadataRequest,
    WirePartitionState,
)
from reassignd.control.request_sizes import (
    encode_request,
    partitions_of,
    split_request,
    state_size,
    stop_partition_size,
    tp_size,
)
from reassignd.control.wire import MAX_CONTROL_BODY_BYTES, MAX_REQUEST_BYTES, WireError
from reassignd.controller.effects.broker_requests import (
    MAX_PARTITIONS_PER_REQUEST,
    BrokerRequestBatch,
    chunk_ranges,
)
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.controller.state.context import ControllerContext, LeaderIsr
from reassignd.controller.state.wire_states import WireStates
from reassignd.zk.codec import BrokerRegistration, Endpoint, PartitionState

LONG = "t" * 240  # a topic name near Kafka's limit (249): ~3x the bytes of a short one per state


def registration(b: int) -> BrokerRegistration:
    eps = (Endpoint("PLAINTEXT", "127.0.0.1", 9000 + b), Endpoint("CONTROL", "127.0.0.1", 9000 + b))
    return BrokerRegistration(b, "127.0.0.1", 9000 + b, eps, rack=f"r{b % 2}")


def context(brokers: tuple[int, ...] = (1, 2, 3)) -> ControllerContext:
    ctx = ControllerContext(epoch=7, epoch_zk_version=6)
    for b in brokers:
        ctx.add_broker(registration(b), 4294967296 + b)
    return ctx


def put(
    ctx: ControllerContext,
    topic: str,
    partitions: dict[int, ReplicaAssignment],
    *,
    states: bool = True,
) -> None:
    ctx.put_topic(topic, None, partitions)
    if states:
        for p, a in partitions.items():
            ctx.set_state((topic, p), LeaderIsr(PartitionState(a.replicas[0], 3, 7, a.replicas), 5))


def names(requests: Sequence[ControlRequest]) -> list[tuple[str, int]]:
    return [tp for r in requests for tp in partitions_of(r)]


def laisr(requests: list[ControlRequest]) -> list[LeaderAndIsrRequest]:
    out = [r for r in requests if isinstance(r, LeaderAndIsrRequest)]
    assert all(isinstance(r, LeaderAndIsrRequest) for r in requests[: len(out)])  # LeaderAndIsr first
    return out


def within_limits(requests: Sequence[ControlRequest]) -> None:
    for r in requests:
        assert len(encode_request(r)) <= MAX_REQUEST_BYTES < MAX_CONTROL_BODY_BYTES
        assert len(partitions_of(r)) <= MAX_PARTITIONS_PER_REQUEST


# --- chunk_ranges -----------------------------------------------------------------------------


def test_chunk_ranges_bounds_bytes_and_count() -> None:
    assert chunk_ranges([], 100) == []
    # overhead 10, items of 10 and a comma each: 10 + 10 + 11 + 11 = 42 fits in 45, a 4th does not
    assert chunk_ranges([10] * 7, 10, max_bytes=45, max_count=100) == [(0, 3), (3, 6), (6, 7)]
    assert chunk_ranges([1] * 5, 0, max_bytes=1000, max_count=2) == [(0, 2), (2, 4), (4, 5)]
    # an item too big on its own still gets a chunk (the channel drops it if the agent refuses it)
    assert chunk_ranges([5, 500, 5], 10, max_bytes=100, max_count=100) == [(0, 1), (1, 2), (2, 3)]


@given(
    st.lists(st.integers(min_value=1, max_value=300), max_size=200),
    st.integers(min_value=0, max_value=200),
    st.integers(min_value=300, max_value=3000),
    st.integers(min_value=1, max_value=50),
)
def test_chunk_ranges_cover_everything_in_order_within_bounds(
    sizes: list[int], overhead: int, max_bytes: int, max_count: int
) -> None:
    ranges = chunk_ranges(sizes, overhead, max_bytes=max_bytes, max_count=max_count)
    assert [i for a, b in ranges for i in range(a, b)] == list(range(len(sizes)))
    for a, b in ranges:
        assert 1 <= b - a <= max_count
        total = overhead + sum(sizes[a:b]) + (b - a - 1)
        assert total <= max_bytes or b - a == 1
        if b < len(sizes) and b - a < max_count:  # greedy: the next item would not have fitted
            assert total + 1 + sizes[b] > max_bytes


# --- sizes and the wire ----------------------------------------------------------------------

ids = st.integers(min_value=-1, max_value=10**12)
id_lists = st.lists(ids, max_size=6).map(tuple)


@given(
    st.text(max_size=30),
    st.integers(min_value=0, max_value=10**6),
    ids,
    ids,
    ids,
    id_lists,
    ids,
    id_lists,
    id_lists,
    id_lists,
    st.booleans(),
)
def test_state_size_is_the_encoded_size(  # noqa: PLR0913, PLR0917 (one argument per Hypothesis strategy)
    topic: str,
    partition: int,
    ce: int,
    leader: int,
    le: int,
    isr: tuple[int, ...],
    pe: int,
    replicas: tuple[int, ...],
    adding: tuple[int, ...],
    removing: tuple[int, ...],
    is_new: bool,
) -> None:
    ws = WirePartitionState(topic, partition, ce, leader, le, isr, pe, replicas, adding, removing, is_new)
    # what the state adds to a body, whatever its topic's characters (one state: no comma)
    one, none = LeaderAndIsrRequest(Header(1, 2, 3), (ws,)), LeaderAndIsrRequest(Header(1, 2, 3), ())
    assert state_size(ws) == len(encode_request(one)) - len(encode_request(none))
    assert json.loads(encode_request(one))["partition_states"] == [ws.to_json()]
    assert tp_size((topic, partition)) == len(
        json.dumps({"topic": topic, "partition": partition}, separators=(",", ":"))
    )
    stop = StopReplicaPartition(topic, partition, le, is_new)
    assert stop_partition_size(stop) == len(json.dumps(stop.to_json(), separators=(",", ":")))


def test_a_request_without_type_is_incremental_and_a_full_one_round_trips() -> None:
    old = {"controller_id": 9000, "controller_epoch": 7, "broker_epoch": 5, "partition_states": []}
    parsed = LeaderAndIsrRequest.from_json(old)
    assert parsed.full is None and parsed.type == "incremental"
    assert "type" not in parsed.to_json()  # what older agents read, unchanged
    ws = WirePartitionState("a", 0, 7, 1, 3, (1,), 5, (1, 2))
    full = LeaderAndIsrRequest(
        Header(9000, 7, 5), (ws,), (), FullSet(12, 2, ("broken",)), partitions_without_state=(("b", 4),)
    )
    wire = json.loads(encode_request(full))
    assert wire["type"] == "full"
    assert wire["full"] == {"id": 12, "total_partitions": 2, "kept_topics": ["broken"]}
    assert wire["partitions_without_state"] == [{"topic": "b", "partition": 4}]
    assert LeaderAndIsrRequest.from_json(wire) == full
    for bad in (
        {**old, "type": "partial"},
        {**old, "type": "full"},
        {**old, "type": "full", "full": {"id": 1}},
    ):
        with pytest.raises(WireError):
            LeaderAndIsrRequest.from_json(bad)


def test_split_request_halves_keep_the_full_set_and_their_own_leaders() -> None:
    states = tuple(WirePartitionState("a", p, 7, 1 + p % 2, 3, (1, 2), 5, (1, 2)) for p in range(3))
    leaders = (LiveBroker(1, None, ("CONTROL://h:1",)), LiveBroker(2, None, ("CONTROL://h:2",)))
    full = FullSet(3, 4)
    request = LeaderAndIsrRequest(Header(9000, 7, 5), states, leaders, full, (("b", 0),))
    halves = split_request(request)
    assert halves is not None
    first, second = halves
    assert isinstance(first, LeaderAndIsrRequest) and isinstance(second, LeaderAndIsrRequest)
    assert names([first, second]) == partitions_of(request)
    assert first.full == second.full == full
    assert [b.broker_id for b in first.live_leaders] == [1, 2]  # partitions 0 (leader 1) and 1 (2)
    assert [b.broker_id for b in second.live_leaders] == [1]  # partition 2 (leader 1), b-0
    single = LeaderAndIsrRequest(Header(9000, 7, 5), states[:1])
    assert split_request(single) is None
    stop = StopReplicaRequest(
        Header(9000, 7, 5), tuple(StopReplicaPartition("a", p, 3, True) for p in range(5))
    )
    halves = split_request(stop)
    assert halves is not None and names(list(halves)) == partitions_of(stop)
    um = UpdateMetadataRequest(Header(9000, 7, 5), states, leaders)
    halves = split_request(um)
    assert halves is not None and all(
        isinstance(h, UpdateMetadataRequest) and h.live_brokers == leaders for h in halves
    )
    assert split_request(UpdateMetadataRequest(Header(9000, 7, 5), (), leaders)) is None


# --- BrokerRequestBatch ----------------------------------------------------------------------------


def test_full_leader_and_isr_names_every_partition_whose_replica_set_holds_the_broker() -> None:
    ctx = context()
    put(
        ctx,
        "a",
        {0: ReplicaAssignment.of([1, 2]), 1: ReplicaAssignment.of([2, 3]), 2: ReplicaAssignment.of([3])},
    )
    # moving from (2, 1) to (3, 2): RS (3, 2, 1); broker 1 hosts it until the move completes
    put(ctx, "b", {0: ReplicaAssignment.of([3, 2, 1], adding=[3], removing=[1])})
    put(ctx, "c", {0: ReplicaAssignment.of([1])}, states=False)  # no state znode yet
    ctx.malformed_topics.add("broken")
    broker_requests = BrokerRequestBatch(ctx, 9000, wire=WireStates(ctx), full_ids=itertools.count(40))
    broker_requests.add_full_leader_and_isr(1)
    broker_requests.add_leader_and_isr([1, 3], ("b", 0), is_new=True)
    out = broker_requests.build()
    request, stateless = laisr(out[1])
    assert request.full == stateless.full == FullSet(40, 3, ("broken",))
    assert sorted((s.topic, s.partition, s.is_new) for s in request.partition_states) == [
        ("a", 0, False),
        ("b", 0, True),
    ]
    assert request.partitions_without_state == () and stateless.partition_states == ()
    assert stateless.partitions_without_state == (("c", 0),)
    assert request.header == Header(9000, 7, 4294967297)
    (incremental,) = laisr(out[3])  # other brokers keep getting incremental requests
    assert incremental.full is None and names([incremental]) == [("b", 0)]


def test_full_leader_and_isr_skips_dead_brokers_and_is_one_empty_set_for_an_idle_one() -> None:
    ctx = context((1, 2))
    put(ctx, "a", {0: ReplicaAssignment.of([1])})
    broker_requests = BrokerRequestBatch(ctx, 9000, wire=WireStates(ctx), full_ids=itertools.count(1))
    broker_requests.add_full_leader_and_isr(2)
    broker_requests.add_full_leader_and_isr(9)  # not live
    out = broker_requests.build()
    assert set(out) == {2}
    (request,) = laisr(out[2])
    assert (
        request.full == FullSet(1, 0)
        and request.partition_states == ()
        and request.partitions_without_state == ()
    )


def test_a_big_full_set_is_split_by_bytes_and_every_chunk_names_the_same_set() -> None:
    ctx = context()
    n = 6000
    put(ctx, LONG, {p: ReplicaAssignment.of([1 + p % 3, 1 + (p + 1) % 3]) for p in range(n)})
    put(ctx, "nostate", {p: ReplicaAssignment.of([1]) for p in range(3000)}, states=False)
    broker_requests = BrokerRequestBatch(ctx, 9000, wire=WireStates(ctx), full_ids=itertools.count(7))
    broker_requests.add_full_leader_and_isr(1)
    requests = laisr(broker_requests.build()[1])
    within_limits(requests)
    expected = sorted(tp for tp in ctx.all_partitions() if 1 in ctx.assignments[tp[0]][tp[1]].replicas)
    assert sorted(names(list(requests))) == expected
    assert len(set(names(list(requests)))) == len(expected)
    assert {r.full for r in requests} == {FullSet(7, len(expected))}
    state_chunks = [r for r in requests if r.partition_states]
    # bytes, not the count, bound these: 4,000 long states need 3 chunks though 2 would do by count
    assert len(state_chunks) >= 3
    assert all(len(r.partition_states) < MAX_PARTITIONS_PER_REQUEST for r in state_chunks)
    for r in state_chunks:
        assert {b.broker_id for b in r.live_leaders} == {s.leader for s in r.partition_states}


def test_incremental_update_metadata_and_stop_replica_are_split_by_bytes() -> None:
    ctx = context()
    n = 4000
    put(ctx, LONG, {p: ReplicaAssignment.of([1, 2, 3]) for p in range(n)})
    broker_requests = BrokerRequestBatch(ctx, 9000, wire=WireStates(ctx))
    for p in range(n):
        broker_requests.add_leader_and_isr([1, 2, 3], (LONG, p))
        broker_requests.add_stop_replica(2, (LONG, p), delete=True)
    broker_requests.add_update_metadata(ctx.states)
    out = broker_requests.build()
    for b in (1, 2, 3):
        requests = out[b]
        within_limits(requests)
        kinds = [type(r).__name__ for r in requests]
        assert kinds == sorted(
            kinds, key=["LeaderAndIsrRequest", "UpdateMetadataRequest", "StopReplicaRequest"].index
        )
        lai = [r for r in requests if isinstance(r, LeaderAndIsrRequest)]
        um = [r for r in requests if isinstance(r, UpdateMetadataRequest)]
        assert len(lai) >= 3 and names(list(lai)) == [(LONG, p) for p in range(n)]
        assert len(um) >= 3 and sorted(names(list(um))) == [(LONG, p) for p in range(n)]
        assert all(len(r.live_brokers) == 3 for r in um)
    stops = [r for r in out[2] if isinstance(r, StopReplicaRequest)]
    assert len(stops) == 2 and names(list(stops)) == [(LONG, p) for p in range(n)]  # the count bounds these


def test_small_requests_still_go_in_one_chunk_and_an_empty_update_metadata_is_sent() -> None:
    ctx = context()
    put(ctx, "a", {p: ReplicaAssignment.of([1, 2]) for p in range(10)})
    broker_requests = BrokerRequestBatch(ctx, 9000, wire=WireStates(ctx))
    for p in range(10):
        broker_requests.add_leader_and_isr([1], ("a", p))
    broker_requests.add_update_metadata([], brokers=[3])
    out = broker_requests.build()
    assert len(out[1]) == 1 and len(partitions_of(out[1][0])) == 10
    assert out[3] == [UpdateMetadataRequest(Header(9000, 7, 4294967299), (), out[3][0].live_brokers)]  # type: ignore[union-attr]

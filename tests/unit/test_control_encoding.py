"""The control channel's encoder: each partition state is encoded once and spliced into every
request that carries it, and the body is byte for byte what ``json.dumps`` makes of the request."""

from __future__ import annotations

import dataclasses
import json

from hypothesis import given
from hypothesis import strategies as st

from reassignd.control.protocol import (
    FullSet,
    Header,
    LeaderAndIsrRequest,
    LiveBroker,
    StopReplicaPartition,
    StopReplicaRequest,
    UpdateMetadataRequest,
    WirePartitionState,
    encode_request,
)

COMPACT = (",", ":")
ids = st.lists(st.integers(-1, 2**31 - 1), max_size=5).map(tuple)
ints = st.integers(-(2**63), 2**63 - 1)
states = st.builds(
    WirePartitionState,
    topic=st.text(max_size=12),
    partition=st.integers(0, 2**31 - 1),
    controller_epoch=ints,
    leader=st.integers(-1, 2**31 - 1),
    leader_epoch=ints,
    isr=ids,
    partition_epoch=ints,
    replicas=ids,
    adding_replicas=ids,
    removing_replicas=ids,
    is_new=st.booleans(),
)
headers = st.builds(Header, ints, ints, ints)
brokers = st.lists(
    st.builds(LiveBroker, st.integers(0, 99), st.none() | st.text(max_size=4), st.just(("PLAINTEXT://h:1",))),
    max_size=3,
).map(tuple)


def dumped(request: object) -> bytes:
    assert hasattr(request, "to_json")
    return json.dumps(request.to_json(), separators=COMPACT).encode()


@given(states, st.booleans())
def test_a_state_encodes_as_json_dumps_does(ws: WirePartitionState, with_is_new: bool) -> None:
    expected = json.dumps(ws.to_json(with_is_new=with_is_new), separators=COMPACT)
    assert ws.encoded(with_is_new=with_is_new) == expected
    assert ws.encoded(with_is_new=with_is_new) == expected  # the cached copy too


@given(headers, st.lists(states, max_size=4).map(tuple), brokers, st.booleans())
def test_requests_encode_as_json_dumps_does(
    header: Header, partition_states: tuple[WirePartitionState, ...], live: tuple[LiveBroker, ...], full: bool
) -> None:
    full_set = FullSet(7, len(partition_states) + 1, ("kept",)) if full else None
    without = (("t", 3),) if full else ()
    for request in (
        LeaderAndIsrRequest(header, partition_states, live, full_set, without),
        UpdateMetadataRequest(header, partition_states, live),
        StopReplicaRequest(header, (StopReplicaPartition("t", 0, 1, True),)),
    ):
        assert encode_request(request) == dumped(request)


def test_the_cache_does_not_change_equality_or_the_wire() -> None:
    a = WirePartitionState("t", 0, 1, 1, 2, (1, 2), 3, (1, 2, 3))
    b = WirePartitionState("t", 0, 1, 1, 2, (1, 2), 3, (1, 2, 3))
    a.encoded()
    assert a == b and hash(a) == hash(b)
    assert WirePartitionState.from_json(json.loads(a.encoded())) == b


def test_a_replaced_state_is_encoded_afresh() -> None:
    a = WirePartitionState("t", 0, 1, 1, 2, (1, 2), 3, (1, 2, 3))
    a.encoded()
    b = dataclasses.replace(a, leader=2, is_new=True)
    assert json.loads(b.encoded()) == {**json.loads(a.encoded()), "leader": 2, "is_new": True}

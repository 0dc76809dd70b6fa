"""The control channel's wire: the body the controller encodes is byte for byte what ``json.dumps``
makes of the request (partition states encoded by msgspec), and the agent's struct decoder reads
it back to the same request, refusing wrong types with the field's path."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reassignd.control.protocol import (
    ControlResponse,
    FullSet,
    Header,
    LeaderAndIsrRequest,
    LiveBroker,
    PartitionError,
    StopReplicaPartition,
    StopReplicaRequest,
    UpdateMetadataRequest,
    WirePartitionState,
)
from reassignd.control.request_sizes import encode_request
from reassignd.control.wire import WireError

COMPACT = (",", ":")
ids = st.lists(st.integers(-1, 2**31 - 1), max_size=5).map(tuple)
ints = st.integers(-(2**63), 2**63 - 1)
states = st.builds(
    WirePartitionState,
    topic=st.from_regex(r"[a-zA-Z0-9._-]{0,12}", fullmatch=True),  # Kafka's topic names
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


@given(headers, st.lists(states, max_size=4).map(tuple), brokers, st.booleans())
def test_the_agent_decodes_what_the_controller_encodes(
    header: Header, partition_states: tuple[WirePartitionState, ...], live: tuple[LiveBroker, ...], full: bool
) -> None:
    full_set = FullSet(7, len(partition_states) + 1, ("kept",)) if full else None
    without = (("t", 3),) if full else ()
    request = LeaderAndIsrRequest(header, partition_states, live, full_set, without)
    assert LeaderAndIsrRequest.decode(encode_request(request)) == request
    update = UpdateMetadataRequest(header, partition_states, live)
    assert UpdateMetadataRequest.decode(encode_request(update)) == update


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"{", "invalid JSON"),
        (b"[]", "Expected `object`, got `array`"),
        (b'{"controller_id":1,"controller_epoch":1}', "missing required field `broker_epoch`"),
        (
            b'{"controller_id":1,"controller_epoch":1,"broker_epoch":1,"partition_states":[{"topic":"t"}]}',
            "missing required field `partition` - at `$.partition_states[0]`",
        ),
        (
            b'{"controller_id":1,"controller_epoch":1,"broker_epoch":1,"partition_states":[{"topic":"t",'
            b'"partition":0,"controller_epoch":1,"leader":true,"leader_epoch":0,"isr":[],'
            b'"partition_epoch":0,"replicas":[]}]}',
            "Expected `int`, got `bool` - at `$.partition_states[0].leader`",
        ),
        (
            b'{"controller_id":1,"controller_epoch":1,"broker_epoch":1,"partition_states":[{"topic":"t",'
            b'"partition":0,"controller_epoch":1,"leader":1,"leader_epoch":0,"isr":[1,"2"],'
            b'"partition_epoch":0,"replicas":[]}]}',
            "Expected `int`, got `str` - at `$.partition_states[0].isr[1]`",
        ),
    ],
)
def test_a_malformed_body_is_a_wire_error_naming_the_field(body: bytes, reason: str) -> None:
    for decode in (LeaderAndIsrRequest.decode, UpdateMetadataRequest.decode):
        with pytest.raises(WireError, match=re.escape(reason)):
            decode(body)


def test_unknown_fields_are_ignored_and_defaults_fill_in() -> None:
    body = (
        b'{"controller_id":1,"controller_epoch":2,"broker_epoch":3,"future":1,"partition_states":[{"topic":"t",'
        b'"partition":0,"controller_epoch":2,"leader":1,"leader_epoch":0,"isr":[1],"partition_epoch":0,'
        b'"replicas":[1],"future":[]}]}'
    )
    request = LeaderAndIsrRequest.decode(body)
    assert request.header == Header(1, 2, 3)
    assert request.partition_states == (WirePartitionState("t", 0, 2, 1, 0, (1,), 0, (1,)),)
    assert request.full is None and request.live_leaders == ()


@given(
    code=st.integers(-(2**31), 2**31 - 1),
    errors=st.lists(st.builds(PartitionError, st.text(max_size=8), st.integers(0, 99), st.integers(-1, 99))),
    complete=st.none() | st.booleans(),
    deleted=st.lists(st.tuples(st.text(max_size=8), st.integers(0, 99))),
)
def test_a_control_response_reads_back_as_it_was_written(
    code: int, errors: list[PartitionError], complete: bool | None, deleted: list[tuple[str, int]]
) -> None:
    response = ControlResponse(code, tuple(errors), complete, tuple(deleted) if complete is not None else ())
    wire = response.to_json()
    assert ControlResponse.decode(json.dumps(wire).encode()) == response  # the controller's path
    assert ControlResponse.from_json(wire) == response


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"{", "invalid JSON"),
        (b"[]", "Expected `object`, got `array`"),
        (b'{"partition_errors": []}', "missing required field `error_code`"),
        (b'{"error_code": "0"}', "Expected `int`, got `str` - at `$.error_code`"),
        (
            b'{"error_code": 0, "partition_errors": [{"topic": "t", "partition": true, "error_code": 0}]}',
            "partition",
        ),
        (b'{"error_code": 0, "full_complete": 1}', "full_complete"),
    ],
)
def test_a_control_response_not_in_the_wire_format_is_refused_with_the_reason(
    body: bytes, reason: str
) -> None:
    with pytest.raises(WireError, match=re.escape(reason)):
        ControlResponse.decode(body)

"""Properties every znode codec holds: garbage refused with one line and only a CodecError,
every value survives encode -> decode, key order and unknown keys carry no meaning, and a damaged
znode decodes or is refused, never anything else."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reassignd.int_limits import INT32_MAX, INT64_MAX
from reassignd.zk.admin_codec import (
    LegacyReassignmentEntry,
    ReassignmentRequest,
    ReassignmentStatus,
    decode_config_change,
    decode_entity_config,
    decode_isr_change,
    decode_legacy_reassignment,
    decode_preferred_replica_election,
    decode_reassignment_request,
    decode_reassignment_status,
    encode_config_change,
    encode_entity_config,
    encode_isr_change,
    encode_legacy_reassignment,
    encode_preferred_replica_election,
    encode_reassignment_request,
    encode_reassignment_status,
)
from reassignd.zk.codec import (
    BrokerRegistration,
    CodecError,
    ControllerInfo,
    Endpoint,
    PartitionState,
    decode_broker,
    decode_cluster_id,
    decode_controller,
    decode_controller_epoch,
    decode_partition_state,
    decode_topic,
    encode_broker,
    encode_cluster_id,
    encode_controller,
    encode_controller_epoch,
    encode_partition_state,
    encode_topic,
)
from tests.unit.zk.codec_helpers import (
    DELETE,
    JSON_VALUES,
    broker_ids,
    json_paths,
    reason,
    reorder,
    replaced,
    replica_lists,
    topic_znodes,
    uuids,
)

# --- garbage, for every decoder ------------------------------------------------------------------

DECODERS: dict[str, Callable[[bytes | None], object]] = {
    "controller": decode_controller,
    "cluster_id": decode_cluster_id,
    "broker": lambda data: decode_broker(1, data),
    "topic": decode_topic,
    "partition_state": decode_partition_state,
    "legacy_reassignment": decode_legacy_reassignment,
    "reassignment_request": decode_reassignment_request,
    "reassignment_status": decode_reassignment_status,
    "isr_change": decode_isr_change,
    "preferred_replica_election": decode_preferred_replica_election,
    "entity_config": decode_entity_config,
    "config_change": decode_config_change,
}
every_decoder = pytest.mark.parametrize("decode", DECODERS.values(), ids=DECODERS.keys())


@every_decoder
@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (None, "znode data is null"),
        (b"", "znode data is empty"),
        (b"garbage", "invalid JSON at byte 1"),
        (b'{"version":1,', "invalid JSON at byte 14"),
        ('{"t":"é",}'.encode(), "invalid JSON at byte 11"),
        (b'{"version":1}{}', "invalid JSON at byte 14"),
        (b"\xef\xbb\xbf{}", "invalid JSON at byte 1"),
        (b'{"version":1,"a":"\xff"}', "not valid UTF-8 at byte 19"),
        (b"\x00\x00\x00{", "invalid JSON at byte 1"),
        ("{}".encode("utf-16"), "not valid UTF-8 at byte 1"),
        (b"[1,2]", "expected a JSON object, got array"),
        (b'"text"', "expected a JSON object, got string"),
        (b"null", "expected a JSON object, got null"),
        (b"7", "expected a JSON object, got number"),
        (b'{"version":1,"version":2}', 'invalid JSON: duplicate key "version"'),
        (b'{"version":NaN}', "invalid JSON: NaN is not a JSON value"),
        (b'{"x":-Infinity}', "invalid JSON: -Infinity is not a JSON value"),
        (b'{"x":"\\udc00"}', "invalid JSON: a \\u escape makes a lone surrogate"),
        (b'{"x":' + b"[" * 100_000 + b"]" * 100_000 + b"}", "invalid JSON: nested too deeply"),
        (b'{"x":' + b"9" * 5000 + b"}", "invalid JSON: number too long"),
    ],
)
def test_every_decoder_refuses_garbage(
    decode: Callable[[bytes | None], object], data: bytes | None, expected: str
) -> None:
    assert reason(decode, data) == expected


@every_decoder
def test_every_decoder_needs_an_integer_version(decode: Callable[[bytes | None], object]) -> None:
    if decode is decode_cluster_id:
        assert reason(decode, b'{"id":"x"}') == "missing field 'version'"
        return
    if decode is decode_legacy_reassignment:  # a plan: version 1 when absent, as Kafka's tool reads it
        assert reason(decode, b"{}") == "missing required field 'partitions'"
        assert reason(decode, b'{"version":true}') == "version: expected an integer, got a boolean"
        assert reason(decode, b'{"version":1.0}') == "version: expected an integer, got a number"
        assert (
            reason(decode, b'{"version":99}')
            == "version: Not supported version field value 99 (only 1 exists)"
        )
        return
    assert reason(decode, b"{}") == "missing field 'version'"
    assert reason(decode, b'{"version":true}') == "field 'version' must be an integer, got boolean"
    assert reason(decode, b'{"version":1.0}') == "field 'version' must be an integer, got number"
    assert reason(decode, b'{"version":99}').startswith("unsupported version 99 (expected ")


def test_a_valid_surrogate_pair_escape_is_fine() -> None:
    assert decode_isr_change(b'{"version":1,"partitions":[{"topic":"\\ud83d\\ude00","partition":0}]}') == (
        ("\U0001f600", 0),
    )


@every_decoder
@given(data=st.binary(max_size=64))
def test_decoders_raise_only_codec_errors_on_any_bytes(
    decode: Callable[[bytes | None], object], data: bytes
) -> None:
    try:
        decode(data)
    except CodecError as e:
        assert "\n" not in e.reason


int32s = st.integers(-(2**31), INT32_MAX)


def assert_compact_json(data: bytes) -> None:
    assert data == json.dumps(json.loads(data), separators=(",", ":"), ensure_ascii=False).encode()


endpoints = st.builds(
    Endpoint,
    listener=st.from_regex(r"[A-Z][A-Z0-9_.-]{0,11}", fullmatch=True),
    host=st.from_regex(r"[0-9a-zA-Z%._:-]{0,20}", fullmatch=True),
    port=st.integers(0, 65535),
)
brokers = st.builds(
    BrokerRegistration,
    broker_id=st.just(7),  # the id is the znode's name, not in its data
    host=st.text(),
    port=st.integers(-1, 65535),
    endpoints=st.lists(endpoints, max_size=4, unique_by=lambda ep: ep.listener).map(tuple),
    rack=st.none() | st.text(),
    timestamp_ms=st.integers(0, INT64_MAX),
    jmx_port=st.integers(-1, 65535),
)
entity_names = st.text(min_size=1).filter(lambda name: "/" not in name)
entity_paths = st.one_of(
    st.tuples(st.sampled_from(["topics", "clients", "users", "brokers", "ips"]), entity_names).map("/".join),
    st.tuples(entity_names, entity_names).map(lambda uc: f"users/{uc[0]}/clients/{uc[1]}"),
)

ROUND_TRIPS: list[tuple[str, Callable[[Any], bytes], Callable[[bytes], Any], st.SearchStrategy[Any]]] = [
    (
        "controller",
        encode_controller,
        decode_controller,
        st.builds(ControllerInfo, broker_ids, st.integers(0, INT64_MAX), st.none() | st.text()),
    ),
    ("controller_epoch", encode_controller_epoch, decode_controller_epoch, st.integers(0, INT32_MAX)),
    ("cluster_id", encode_cluster_id, decode_cluster_id, uuids),
    ("broker", encode_broker, lambda data: decode_broker(7, data), brokers),
    ("topic", encode_topic, decode_topic, topic_znodes()),
    (
        "partition_state",
        encode_partition_state,
        decode_partition_state,
        st.builds(PartitionState, st.integers(-1, INT32_MAX), broker_ids, broker_ids, replica_lists()),
    ),
    (
        "legacy_reassignment",
        encode_legacy_reassignment,
        decode_legacy_reassignment,
        st.lists(  # a plan: legal topic names, each partition once, replicas non-empty and unique
            st.builds(
                LegacyReassignmentEntry,
                st.from_regex(r"[a-zA-Z0-9._-]{1,20}", fullmatch=True).filter(lambda t: t not in (".", "..")),
                broker_ids,
                st.lists(broker_ids, min_size=1, max_size=5, unique=True).map(tuple),
                st.none() | st.lists(broker_ids, max_size=5).map(tuple),
            ),
            min_size=1,
            max_size=5,
            unique_by=lambda e: (e.topic, e.partition),
        ).map(tuple),
    ),
    (
        "reassignment_request",
        encode_reassignment_request,
        decode_reassignment_request,
        st.builds(
            ReassignmentRequest,
            st.dictionaries(st.tuples(st.text(), broker_ids), st.lists(int32s, max_size=5).map(tuple)),
            st.booleans(),
        ),
    ),
    (
        "reassignment_status",
        encode_reassignment_status,
        decode_reassignment_status,
        st.builds(ReassignmentStatus, replica_lists(1), replica_lists(1), broker_ids),
    ),
    (
        "isr_change",
        encode_isr_change,
        decode_isr_change,
        st.lists(st.tuples(st.text(), broker_ids), max_size=5).map(tuple),
    ),
    (
        "preferred_replica_election",
        encode_preferred_replica_election,
        decode_preferred_replica_election,
        st.lists(st.tuples(st.text(), broker_ids), max_size=5, unique=True).map(tuple),
    ),
    ("entity_config", encode_entity_config, decode_entity_config, st.dictionaries(st.text(), st.text())),
    ("config_change", encode_config_change, decode_config_change, entity_paths),
]


@pytest.mark.parametrize(
    ("encode", "decode", "values"), [rt[1:] for rt in ROUND_TRIPS], ids=[rt[0] for rt in ROUND_TRIPS]
)
@given(data=st.data())
def test_decode_of_encode_is_identity(
    encode: Callable[[Any], bytes], decode: Callable[[bytes], Any], values: Any, data: st.DataObject
) -> None:
    value = data.draw(values)
    encoded = encode(value)
    assert decode(encoded) == value
    if decode is not decode_controller_epoch:
        assert_compact_json(encoded)


@pytest.mark.parametrize(
    ("encode", "decode", "values"),
    [rt[1:] for rt in ROUND_TRIPS if rt[0] != "controller_epoch"],
    ids=[rt[0] for rt in ROUND_TRIPS if rt[0] != "controller_epoch"],
)
@given(data=st.data(), extra=st.tuples(st.text(max_size=8), st.none() | st.integers() | st.text()))
def test_key_order_and_unknown_keys_carry_no_meaning(
    encode: Callable[[Any], bytes],
    decode: Callable[[bytes], Any],
    values: Any,
    data: st.DataObject,
    extra: tuple[str, object],
) -> None:
    value = data.draw(values)
    changed = json.dumps({**reorder(json.loads(encode(value))), f"x-{extra[0]}": extra[1]}).encode()
    assert decode(changed) == value


@pytest.mark.parametrize(
    ("encode", "decode", "values"),
    [rt[1:] for rt in ROUND_TRIPS if rt[0] != "controller_epoch"],
    ids=[rt[0] for rt in ROUND_TRIPS if rt[0] != "controller_epoch"],
)
@given(data=st.data())
def test_a_damaged_znode_decodes_or_raises_a_codec_error_never_anything_else(
    encode: Callable[[Any], bytes], decode: Callable[[bytes], Any], values: Any, data: st.DataObject
) -> None:
    obj = json.loads(encode(data.draw(values)))
    path = data.draw(st.sampled_from(json_paths(obj)))
    damaged = replaced(obj, path, data.draw(st.just(DELETE) | JSON_VALUES if path else JSON_VALUES))
    try:
        decode(json.dumps(damaged).encode())
    except CodecError as e:
        assert e.reason
        assert "\n" not in e.reason

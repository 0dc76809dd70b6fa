"""The znode codecs: Kafka's own bytes decode as Kafka means them, garbage is refused with one
clear line, and every value survives encode -> decode."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any, cast

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reassignd.int_limits import INT32_MAX, INT64_MAX
from reassignd.strict_json import fast_object
from reassignd.zk import codec as codec_module
from reassignd.zk.admin_codec import (
    LegacyReassignmentEntry,
    ReassignmentRequest,
    ReassignmentStatus,
    _read_legacy,
    _read_origins,
    decode_config_change,
    decode_entity_config,
    decode_isr_change,
    decode_legacy_reassignment,
    decode_origins,
    decode_preferred_replica_election,
    decode_reassignment_request,
    decode_reassignment_status,
    encode_config_change,
    encode_entity_config,
    encode_isr_change,
    encode_legacy_reassignment,
    encode_origins,
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
    TopicZnode,
    _read_partition_state,
    _read_topic,
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
    new_uuid_base64,
)
from reassignd.zk.json_fields import dump, load_object_strictly

TOPIC_ID = "vKbcOsJ9TWCz3qAiVMHqEQ"


def js(value: Any) -> bytes:
    """Test input written the way a hand or another tool might: ordinary JSON with spaces."""
    return json.dumps(value).encode()


def reason(decode: Callable[[bytes | None], object], data: bytes | None) -> str:
    with pytest.raises(CodecError) as caught:
        decode(data)
    assert type(caught.value) is CodecError
    assert str(caught.value) == caught.value.reason
    assert "\n" not in caught.value.reason
    return caught.value.reason


# --- /controller, /controller_epoch, /cluster/id -------------------------------------------------


def test_controller_is_written_as_kafka_writes_it_plus_the_http_address() -> None:
    info = ControllerInfo(9000, 1700000000123, "http://10.0.0.5:8080")
    assert encode_controller(info) == (
        b'{"version":1,"brokerid":9000,"timestamp":"1700000000123","http":"http://10.0.0.5:8080"}'
    )
    assert encode_controller(ControllerInfo(9000, 5)) == b'{"version":1,"brokerid":9000,"timestamp":"5"}'


def test_controller_written_by_kafka_decodes_without_http() -> None:
    data = b'{"timestamp":"1600000000000","brokerid":2,"version":1,"kraftControllerEpoch":-1}'
    assert decode_controller(data) == ControllerInfo(2, 1600000000000)


def test_controller_timestamp_must_be_a_string_of_milliseconds() -> None:
    data = js({"version": 1, "brokerid": 1, "timestamp": 5})
    assert reason(decode_controller, data) == "field 'timestamp' must be a string, got number"
    data = js({"version": 1, "brokerid": 1, "timestamp": "5s"})
    assert reason(decode_controller, data) == (
        "field 'timestamp' must be a decimal string of milliseconds, got \"5s\""
    )


def test_controller_epoch_is_a_bare_decimal_string() -> None:
    assert encode_controller_epoch(0) == b"0"
    assert encode_controller_epoch(7) == b"7"
    assert decode_controller_epoch(b"7") == 7
    assert reason(decode_controller_epoch, b"-1") == 'controller epoch must be a decimal integer, got "-1"'
    assert reason(decode_controller_epoch, b" 7") == 'controller epoch must be a decimal integer, got " 7"'
    assert reason(decode_controller_epoch, b"2147483648").startswith("controller epoch must be")
    assert reason(decode_controller_epoch, None) == "znode data is null"
    assert reason(decode_controller_epoch, b"\x80") == "not valid UTF-8 at byte 1"
    with pytest.raises(ValueError, match="cannot encode controller epoch"):
        encode_controller_epoch(-1)


def test_cluster_id_keeps_kafkas_string_version() -> None:
    assert encode_cluster_id(TOPIC_ID) == b'{"version":"1","id":"vKbcOsJ9TWCz3qAiVMHqEQ"}'
    assert decode_cluster_id(b'{"id":"vKbcOsJ9TWCz3qAiVMHqEQ","version":"1"}') == TOPIC_ID
    assert reason(decode_cluster_id, js({"version": 1, "id": TOPIC_ID})) == (
        "field 'version' must be a string, got number"
    )
    assert reason(decode_cluster_id, js({"version": "2", "id": TOPIC_ID})) == (
        'unsupported version "2" (expected "1")'
    )
    assert reason(decode_cluster_id, js({"version": "1", "id": "short"})) == (
        "field 'id' must be a 22-character base64 UUID, got \"short\""
    )


def test_new_uuid_is_kafkas_uuid_string() -> None:
    for _ in range(200):
        text = new_uuid_base64()
        assert len(text) == 22
        assert not text.startswith("-")
        raw = base64.urlsafe_b64decode(text + "==")
        assert len(raw) == 16
        assert raw[6] >> 4 == 4  # a random (version 4) UUID
        assert decode_cluster_id(encode_cluster_id(text)) == text
    assert len({new_uuid_base64() for _ in range(100)}) == 100


def test_uuid_with_nonzero_padding_bits_is_refused() -> None:
    # "...EQ" and "...ER" decode to the same 16 bytes; only the first is the UUID's own string.
    assert reason(decode_cluster_id, js({"version": "1", "id": TOPIC_ID[:-1] + "R"})).startswith(
        "field 'id' must be a 22-character base64 UUID"
    )


# --- /brokers/ids/<id> ---------------------------------------------------------------------------

V5 = (
    b'{"version":5,"host":"h","port":9092,"jmx_port":-1,"timestamp":"1700000000000",'
    b'"endpoints":["PLAINTEXT://h:9092","CONTROL://h:19092"],"rack":"r1",'
    b'"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT","CONTROL":"PLAINTEXT"},"features":{}}'
)
AGENT = BrokerRegistration(
    broker_id=1,
    host="h",
    port=9092,
    endpoints=(Endpoint("PLAINTEXT", "h", 9092), Endpoint("CONTROL", "h", 19092)),
    rack="r1",
    timestamp_ms=1700000000000,
)


def test_broker_v5_registration_is_the_layouts_example_byte_for_byte() -> None:
    assert encode_broker(AGENT) == V5
    assert decode_broker(1, V5) == AGENT
    assert AGENT.control_url == "http://h:19092"
    assert AGENT.endpoint("PLAINTEXT") == Endpoint("PLAINTEXT", "h", 9092)
    assert str(AGENT.endpoints[1]) == "CONTROL://h:19092"


def test_broker_without_rack_has_no_rack_key() -> None:
    reg = BrokerRegistration(2, "h", 9092, (Endpoint("PLAINTEXT", "h", 9092),))
    data = encode_broker(reg)
    assert b"rack" not in data
    assert decode_broker(2, data) == reg
    assert reg.control_url is None


def test_broker_v4_written_by_kafka_2_x() -> None:
    data = (
        b'{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://kafka1:9092"],'
        b'"jmx_port":9999,"host":"kafka1","timestamp":"1600000000000","port":9092,"version":4}'
    )
    assert decode_broker(3, data) == BrokerRegistration(
        3, "kafka1", 9092, (Endpoint("PLAINTEXT", "kafka1", 9092),), None, 1600000000000, 9999
    )


def test_broker_without_plaintext_listener_has_kafkas_null_host() -> None:
    data = js(
        {
            "version": 4,
            "host": None,
            "port": -1,
            "jmx_port": -1,
            "timestamp": "1",
            "endpoints": ["SSL://[fe80::1]:9093", "INTERNAL://b1:9094"],
            "listener_security_protocol_map": {"SSL": "SSL", "INTERNAL": "SASL_PLAINTEXT"},
            "rack": None,
        }
    )
    reg = decode_broker(4, data)
    assert (reg.host, reg.port, reg.rack) == ("", -1, None)
    assert reg.endpoints == (Endpoint("SSL", "fe80::1", 9093), Endpoint("INTERNAL", "b1", 9094))


def test_broker_v1_to_v3_without_endpoints_use_host_and_port_as_plaintext() -> None:
    plaintext = (Endpoint("PLAINTEXT", "old", 9092),)
    v1 = {"version": 1, "host": "old", "port": 9092, "jmx_port": -1}
    assert decode_broker(5, js(v1)) == BrokerRegistration(5, "old", 9092, plaintext)
    v2 = {**v1, "version": 2, "timestamp": "42", "endpoints": ["PLAINTEXT://other:9093"]}
    assert decode_broker(5, js(v2)).endpoints == (Endpoint("PLAINTEXT", "other", 9093),)
    v3 = {**v1, "version": 3, "timestamp": "42", "rack": "r2"}
    assert decode_broker(5, js(v3)) == BrokerRegistration(5, "old", 9092, plaintext, "r2", 42)


def test_ipv6_endpoint_is_written_in_brackets_and_read_back() -> None:
    reg = BrokerRegistration(6, "::1", 9092, (Endpoint("CONTROL", "::1", 19092),))
    data = encode_broker(reg)
    assert b'"CONTROL://[::1]:19092"' in data
    assert decode_broker(6, data) == reg


def test_listener_names_are_normalised_to_upper_case_as_kafka_does() -> None:
    data = js({"version": 5, "host": "h", "port": 1, "jmx_port": -1, "endpoints": ["control://h:2"]})
    assert decode_broker(1, data).control_url == "http://h:2"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"version": 6}, "unsupported version 6 (expected 1, 2, 3, 4, 5)"),
        ({"port": "9092"}, "field 'port' must be an integer, got string"),
        ({"port": 70000}, "field 'port' must be between -1 and 65535, got 70000"),
        ({"jmx_port": True}, "field 'jmx_port' must be an integer, got boolean"),
        ({"endpoints": "PLAINTEXT://h:1"}, "field 'endpoints' must be an array, got string"),
        ({"endpoints": ["h:9092"]}, "field 'endpoints[0]' is not LISTENER://host:port, got \"h:9092\""),
        (
            {"endpoints": ["A://h:99999"]},
            "field 'endpoints[0]' is not LISTENER://host:port, got \"A://h:99999\"",
        ),
        ({"endpoints": ["A://h:1", "a://g:2"]}, "field 'endpoints' names listener A twice"),
        ({"rack": 1}, "field 'rack' must be a string, got number"),
        ({"timestamp": 1}, "field 'timestamp' must be a string, got number"),
        ({"features": []}, "field 'features' must be an object, got array"),
        (
            {"listener_security_protocol_map": "x"},
            "field 'listener_security_protocol_map' must be an object, got string",
        ),
    ],
)
def test_broker_registration_rejects(change: dict[str, object], expected: str) -> None:
    assert reason(lambda d: decode_broker(1, d), js({**json.loads(V5), **change})) == expected


def test_broker_registration_missing_endpoints_from_v4() -> None:
    data = js({"version": 4, "host": "h", "port": 1, "jmx_port": -1})
    assert reason(lambda d: decode_broker(1, d), data) == "missing field 'endpoints'"


# --- /brokers/topics/<topic> ---------------------------------------------------------------------

LAYOUT_TOPIC = {
    "version": 2,
    "partitions": {"0": [4, 5, 6, 1, 2, 3], "1": [2, 3, 1]},
    "adding_replicas": {"0": [4, 5, 6]},
    "removing_replicas": {"0": [1, 2, 3]},
}


def test_topic_v1_has_replica_sets_only() -> None:
    znode = decode_topic(b'{"version":1,"partitions":{"0":[1,2]}}')
    assert znode == TopicZnode({0: (1, 2)})
    assert (znode.adding, znode.removing, znode.topic_id) == ({}, {}, None)


def test_topic_v2_carries_adding_and_removing_replicas() -> None:
    znode = decode_topic(js(LAYOUT_TOPIC))
    assert znode == TopicZnode({0: (4, 5, 6, 1, 2, 3), 1: (2, 3, 1)}, {0: (4, 5, 6)}, {0: (1, 2, 3)})
    assert encode_topic(znode) == (
        b'{"version":2,"partitions":{"0":[4,5,6,1,2,3],"1":[2,3,1]},'
        b'"adding_replicas":{"0":[4,5,6]},"removing_replicas":{"0":[1,2,3]}}'
    )


def test_topic_v3_adds_the_topic_id_and_both_maps_are_always_written() -> None:
    znode = TopicZnode({0: (1, 2), 1: (2, 1)}, topic_id=TOPIC_ID)
    assert encode_topic(znode) == (
        b'{"version":3,"partitions":{"0":[1,2],"1":[2,1]},"adding_replicas":{},"removing_replicas":{},'
        b'"topic_id":"vKbcOsJ9TWCz3qAiVMHqEQ"}'
    )
    assert decode_topic(encode_topic(znode)) == znode


def test_topic_partitions_are_numeric_whatever_their_order_in_the_json() -> None:
    znode = decode_topic(b'{"partitions":{"10":[1],"2":[2],"0":[3]},"version":2}')
    assert list(znode.partitions) == [0, 2, 10]
    assert encode_topic(znode).startswith(b'{"version":2,"partitions":{"0":[3],"2":[2],"10":[1]}')


def test_topic_empty_adding_or_removing_list_means_not_reassigning() -> None:
    data = js({**LAYOUT_TOPIC, "adding_replicas": {"0": [], "1": []}})
    assert decode_topic(data).adding == {}
    written = encode_topic(TopicZnode({0: (1,)}, adding={0: ()}, removing={0: ()}))
    assert written == b'{"version":2,"partitions":{"0":[1]},"adding_replicas":{},"removing_replicas":{}}'


@pytest.mark.parametrize(
    ("topic", "expected"),
    [
        ({"version": 4, "partitions": {}}, "unsupported version 4 (expected 1, 2, 3)"),
        ({"version": 2}, "missing field 'partitions'"),
        ({"version": 2, "partitions": []}, "field 'partitions' must be an object, got array"),
        (
            {"version": 2, "partitions": {"a": [1]}},
            "field 'partitions' has key \"a\", which is not a partition number",
        ),
        (
            {"version": 2, "partitions": {"-1": [1]}},
            "field 'partitions' has key \"-1\", which is not a partition number",
        ),
        (
            {"version": 2, "partitions": {"01": [1]}},
            "field 'partitions' has key \"01\", which is not a partition number",
        ),
        (
            {"version": 2, "partitions": {"0": [1, 2, 1]}},
            "field 'partitions[\"0\"]' has duplicate replica id 1",
        ),
        (
            {"version": 2, "partitions": {"0": [1, -2]}},
            "field 'partitions[\"0\"]' has negative replica id -2",
        ),
        (
            {"version": 2, "partitions": {"0": [1, True]}},
            "field 'partitions[\"0\"][1]' must be an integer, got boolean",
        ),
        (
            {"version": 2, "partitions": {"0": [1.0]}},
            "field 'partitions[\"0\"][0]' must be an integer, got number",
        ),
        (
            {"version": 2, "partitions": {"0": [2**31]}},
            "field 'partitions[\"0\"][0]' must be between -2147483648 and 2147483647, got 2147483648",
        ),
        ({"version": 2, "partitions": {"0": None}}, "field 'partitions[\"0\"]' must be an array, got null"),
        ({"version": 2, "partitions": {"0": []}}, "field 'partitions[\"0\"]' must not be empty"),
        (
            {**LAYOUT_TOPIC, "adding_replicas": {"7": [4]}},
            "field 'adding_replicas' names partition 7, which is not in 'partitions'",
        ),
        (
            {**LAYOUT_TOPIC, "adding_replicas": {"1": [9]}},
            "field 'adding_replicas[\"1\"]' has replica 9, not in 'partitions'",
        ),
        (
            {**LAYOUT_TOPIC, "removing_replicas": {"0": [4]}},
            "partition 0 has replica 4 both adding and removing",
        ),
        (
            {**LAYOUT_TOPIC, "removing_replicas": None},
            "field 'removing_replicas' must be an object, got null",
        ),
        ({**LAYOUT_TOPIC, "version": 3}, "missing field 'topic_id'"),
        ({**LAYOUT_TOPIC, "topic_id": 7}, "field 'topic_id' must be a string, got number"),
        (
            {**LAYOUT_TOPIC, "topic_id": "not-a-uuid"},
            "field 'topic_id' must be a 22-character base64 UUID, got \"not-a-uuid\"",
        ),
    ],
)
def test_topic_rejects(topic: dict[str, object], expected: str) -> None:
    assert reason(decode_topic, js(topic)) == expected


def test_topic_encode_refuses_what_decode_would_refuse() -> None:
    with pytest.raises(ValueError, match=r"cannot encode topic znode: .*has duplicate replica id 1"):
        encode_topic(TopicZnode({0: (1, 1)}))
    with pytest.raises(ValueError, match="names partition 3, which is not in 'partitions'"):
        encode_topic(TopicZnode({0: (1,)}, adding={3: (1,)}))


# --- /brokers/topics/<topic>/partitions/<p>/state ------------------------------------------------


def test_partition_state_is_the_layouts_example() -> None:
    data = b'{"version":1,"leader":1,"leader_epoch":3,"controller_epoch":5,"isr":[1,2,3]}'
    state = PartitionState(leader=1, leader_epoch=3, controller_epoch=5, isr=(1, 2, 3))
    assert decode_partition_state(data) == state
    assert encode_partition_state(state) == data


def test_partition_state_without_leader_and_with_newer_kafkas_extra_field() -> None:
    data = (
        b'{"controller_epoch":5,"leader":-1,"version":1,"leader_epoch":9,"isr":[2],"leader_recovery_state":0}'
    )
    assert decode_partition_state(data) == PartitionState(-1, 9, 5, (2,))


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"leader": -2}, "field 'leader' must be between -1 and 2147483647, got -2"),
        ({"leader": "1"}, "field 'leader' must be an integer, got string"),
        ({"leader": False}, "field 'leader' must be an integer, got boolean"),
        ({"leader_epoch": -1}, "field 'leader_epoch' must be between 0 and 2147483647, got -1"),
        ({"controller_epoch": None}, "field 'controller_epoch' must be an integer, got null"),
        ({"isr": [1, 1]}, "field 'isr' has duplicate replica id 1"),
        ({"isr": [-1]}, "field 'isr' has negative replica id -1"),
        ({"isr": {"0": 1}}, "field 'isr' must be an array, got object"),
        ({"version": 2}, "unsupported version 2 (expected 1)"),
        ({"version": "1"}, "field 'version' must be an integer, got string"),
    ],
)
def test_partition_state_rejects(change: dict[str, object], expected: str) -> None:
    state = {"version": 1, "leader": 1, "leader_epoch": 3, "controller_epoch": 5, "isr": [1, 2, 3]}
    assert reason(decode_partition_state, js({**state, **change})) == expected


def test_partition_state_missing_field() -> None:
    assert reason(decode_partition_state, b'{"version":1,"leader":1,"leader_epoch":3,"isr":[]}') == (
        "missing field 'controller_epoch'"
    )


# --- /admin/reassign_partitions ------------------------------------------------------------------


def test_legacy_reassignment_as_kafka_tools_write_it() -> None:
    data = b'{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2,3]}]}'
    assert decode_legacy_reassignment(data) == (LegacyReassignmentEntry("foo", 0, (1, 2, 3)),)
    assert encode_legacy_reassignment(decode_legacy_reassignment(data)) == data


def test_legacy_reassignment_keeps_kip_236_original_replicas() -> None:
    entries = (
        LegacyReassignmentEntry("foo", 0, (4, 5, 6), original_replicas=(1, 2, 3)),
        LegacyReassignmentEntry("bar", 2, (1,)),
    )
    data = encode_legacy_reassignment(entries)
    assert data == (
        b'{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[4,5,6],'
        b'"original_replicas":[1,2,3]},{"topic":"bar","partition":2,"replicas":[1]}]}'
    )
    assert decode_legacy_reassignment(data) == entries


@pytest.mark.parametrize(
    ("partitions", "expected"),
    [
        ([], "partitions: Partition reassignment list cannot be empty"),
        (
            [{"topic": "foo", "partition": 0, "replicas": []}],
            "partitions[0].replicas: Partition replica list cannot be empty (partition foo-0)",
        ),
        (
            [
                {"topic": "foo", "partition": 0, "replicas": [1]},
                {"topic": "foo", "partition": 0, "replicas": [2]},
            ],
            "Partition reassignment contains duplicate topic partitions: foo-0",
        ),
        (
            [{"topic": "foo", "partition": 0, "replicas": [-1]}],
            "partitions[0].replicas[0]: expected a non-negative integer up to 2147483647, got -1",
        ),
    ],
)
def test_legacy_reassignment_is_a_plan_refused_whole(partitions: object, expected: str) -> None:
    # The znode is read by the one plan reader: what admin reassign and the API refuse, it refuses
    # whole (reported by the controller, left for its owner), so a bad line never half-applies.
    assert reason(decode_legacy_reassignment, js({"version": 1, "partitions": partitions})) == expected


@pytest.mark.parametrize(
    ("partitions", "expected"),
    [
        ({}, "partitions: expected an array, got an object"),
        ([[]], "partitions[0]: expected an object, got an array"),
        ([{"partition": 0, "replicas": [1]}], "partitions[0]: missing required field 'topic'"),
        (
            [{"topic": 1, "partition": 0, "replicas": [1]}],
            "partitions[0].topic: expected a string, got an integer",
        ),
        (
            [{"topic": "t", "partition": "0", "replicas": [1]}],
            "partitions[0].partition: expected a non-negative integer, got a string",
        ),
        (
            [{"topic": "t", "partition": 0, "replicas": [True]}],
            "partitions[0].replicas[0]: expected a non-negative integer, got a boolean",
        ),
        (
            [{"topic": "t", "partition": 0, "replicas": [1], "original_replicas": "1"}],
            "partitions[0].original_replicas: expected a list of broker ids, got a string",
        ),
    ],
)
def test_legacy_reassignment_rejects(partitions: object, expected: str) -> None:
    assert reason(decode_legacy_reassignment, js({"version": 1, "partitions": partitions})) == expected


# --- KIP-236 requests and status nodes -----------------------------------------------------------


def test_reassignment_request_is_the_layouts_example() -> None:
    data = b'{"version":1,"assignments":{"my-topic":{"0":[1,2,3]}},"legacy":false}'
    request = ReassignmentRequest({("my-topic", 0): (1, 2, 3)})
    assert decode_reassignment_request(data) == request
    assert encode_reassignment_request(request) == data


def test_reassignment_request_groups_partitions_by_topic() -> None:
    request = ReassignmentRequest({("b", 1): (2,), ("a", 10): (1, 2), ("a", 2): (3,)}, legacy=True)
    assert encode_reassignment_request(request) == (
        b'{"version":1,"assignments":{"a":{"2":[3],"10":[1,2]},"b":{"1":[2]}},"legacy":true}'
    )
    assert decode_reassignment_request(encode_reassignment_request(request)) == request


def test_reassignment_request_legacy_defaults_to_false() -> None:
    assert not decode_reassignment_request(b'{"version":1,"assignments":{}}').legacy


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"legacy": 0}, "field 'legacy' must be a boolean, got number"),
        ({"assignments": []}, "field 'assignments' must be an object, got array"),
        ({"assignments": {"t": [1]}}, "field 'assignments[\"t\"]' must be an object, got array"),
        (
            {"assignments": {"t": {"x": [1]}}},
            'field \'assignments["t"]\' has key "x", which is not a partition number',
        ),
        (
            {"assignments": {"t": {"0": [1, "2"]}}},
            'field \'assignments["t"]["0"][1]\' must be an integer, got string',
        ),
    ],
)
def test_reassignment_request_rejects(change: dict[str, object], expected: str) -> None:
    assert reason(decode_reassignment_request, js({"version": 1, "assignments": {}, **change})) == expected


def test_reassignment_status_is_the_layouts_example() -> None:
    data = b'{"version":1,"target":[4,5,6],"original":[1,2,3],"top":3}'
    status = ReassignmentStatus(target=(4, 5, 6), original=(1, 2, 3), top=3)
    assert decode_reassignment_status(data) == status
    assert encode_reassignment_status(status) == data


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"target": [4, 4]}, "field 'target' has duplicate replica id 4"),
        ({"original": [-1]}, "field 'original' has negative replica id -1"),
        ({"original": []}, "field 'original' must not be empty"),
        ({"top": -1}, "field 'top' must be between 0 and 2147483647, got -1"),
        ({"top": "3"}, "field 'top' must be an integer, got string"),
    ],
)
def test_reassignment_status_rejects(change: dict[str, object], expected: str) -> None:
    status = {"version": 1, "target": [4, 5, 6], "original": [1, 2, 3], "top": 3}
    assert reason(decode_reassignment_status, js({**status, **change})) == expected


# --- /isr_change_notification --------------------------------------------------------------------


def test_isr_change_notification_is_the_layouts_example() -> None:
    data = b'{"version":1,"partitions":[{"topic":"foo","partition":0},{"topic":"bar","partition":3}]}'
    assert decode_isr_change(data) == (("foo", 0), ("bar", 3))
    assert encode_isr_change((("foo", 0), ("bar", 3))) == data


def test_isr_change_rejects_a_negative_partition() -> None:
    data = js({"version": 1, "partitions": [{"topic": "foo", "partition": -1}]})
    assert reason(decode_isr_change, data) == (
        "field 'partitions[0].partition' must be between 0 and 2147483647, got -1"
    )


# --- /admin/preferred_replica_election ----------------------------------------------------------


def test_preferred_replica_election_is_what_kafkas_tool_writes() -> None:
    data = b'{"version":1,"partitions":[{"topic":"t","partition":0},{"topic":"u","partition":2}]}'
    assert decode_preferred_replica_election(data) == (("t", 0), ("u", 2))
    assert encode_preferred_replica_election((("t", 0), ("u", 2))) == data


def test_preferred_replica_election_names_each_partition_once() -> None:
    data = js({"version": 1, "partitions": [{"topic": "t", "partition": 1}, {"topic": "t", "partition": 1}]})
    assert decode_preferred_replica_election(data) == (("t", 1),)


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ({"version": 1}, "missing field 'partitions'"),
        ({"version": 1, "partitions": {}}, "field 'partitions' must be an array, got object"),
        ({"version": 1, "partitions": ["t-0"]}, "field 'partitions[0]' must be an object, got string"),
        ({"version": 1, "partitions": [{"partition": 0}]}, "missing field 'partitions[0].topic'"),
        ({"version": 1, "partitions": [{"topic": "t"}]}, "missing field 'partitions[0].partition'"),
        (
            {"version": 1, "partitions": [{"topic": "t", "partition": "0"}]},
            "field 'partitions[0].partition' must be an integer, got string",
        ),
        (
            {"version": 1, "partitions": [{"topic": "t", "partition": -1}]},
            "field 'partitions[0].partition' must be between 0 and 2147483647, got -1",
        ),
        ({"version": 2, "partitions": []}, "unsupported version 2 (expected 1)"),
    ],
)
def test_preferred_replica_election_rejects(doc: dict[str, object], expected: str) -> None:
    assert reason(decode_preferred_replica_election, js(doc)) == expected


# --- /config -------------------------------------------------------------------------------------


def test_entity_config_values_are_strings() -> None:
    throttle = {
        "leader.replication.throttled.rate": "10485760",
        "follower.replication.throttled.rate": "10485760",
    }
    data = encode_entity_config(throttle)
    assert data == (
        b'{"version":1,"config":{"follower.replication.throttled.rate":"10485760",'
        b'"leader.replication.throttled.rate":"10485760"}}'
    )
    assert decode_entity_config(data) == throttle
    assert decode_entity_config(b'{"version":1,"config":{"controller_mutation_rate":"10.0"}}') == {
        "controller_mutation_rate": "10.0"
    }
    assert reason(decode_entity_config, b'{"version":1,"config":{"controller_mutation_rate":10.0}}') == (
        "field 'config[\"controller_mutation_rate\"]' must be a string, got number"
    )
    assert reason(decode_entity_config, b'{"version":1,"config":null}') == (
        "field 'config' must be an object, got null"
    )


def test_config_change_v2_carries_the_entity_path() -> None:
    data = b'{"version":2,"entity_path":"users/alice/clients/app-1"}'
    assert encode_config_change("users/alice/clients/app-1") == data
    assert decode_config_change(data) == "users/alice/clients/app-1"
    assert decode_config_change(b'{"version":2,"entity_path":"brokers/<default>"}') == "brokers/<default>"


def test_config_change_v1_becomes_the_same_entity_path() -> None:
    data = b'{"version":1,"entity_type":"topics","entity_name":"foo"}'
    assert decode_config_change(data) == "topics/foo"


@pytest.mark.parametrize(
    ("notification", "expected"),
    [
        (
            {"version": 2, "entity_path": "users"},
            "field 'entity_path' does not name a config entity: \"users\"",
        ),
        (
            {"version": 2, "entity_path": "groups/g"},
            "field 'entity_path' does not name a config entity: \"groups/g\"",
        ),
        (
            {"version": 2, "entity_path": "users/a/topics/b"},
            "field 'entity_path' does not name a config entity: \"users/a/topics/b\"",
        ),
        (
            {"version": 2, "entity_path": "users//clients/c"},
            "field 'entity_path' does not name a config entity: \"users//clients/c\"",
        ),
        (
            {"version": 1, "entity_type": "topics", "entity_name": ""},
            "field 'entity_name' does not name a config entity: \"topics/\"",
        ),
        ({"version": 1, "entity_type": "topics"}, "missing field 'entity_name'"),
        ({"version": 3, "entity_path": "topics/foo"}, "unsupported version 3 (expected 1, 2)"),
    ],
)
def test_config_change_rejects(notification: dict[str, object], expected: str) -> None:
    assert reason(decode_config_change, js(notification)) == expected


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


# --- round trips ---------------------------------------------------------------------------------

broker_ids = st.integers(0, INT32_MAX)
int32s = st.integers(-(2**31), INT32_MAX)
uuids = st.binary(min_size=16, max_size=16).map(lambda raw: base64.urlsafe_b64encode(raw).decode()[:22])


def replica_lists(
    min_size: int = 0, ids: st.SearchStrategy[int] = broker_ids
) -> st.SearchStrategy[tuple[int, ...]]:
    return st.lists(ids, min_size=min_size, max_size=6, unique=True).map(tuple)


def assert_compact_json(data: bytes) -> None:
    assert data == json.dumps(json.loads(data), separators=(",", ":"), ensure_ascii=False).encode()


@st.composite
def topic_znodes(draw: st.DrawFn, ids: st.SearchStrategy[int] = broker_ids) -> TopicZnode:
    partitions = draw(st.dictionaries(ids, replica_lists(min_size=1, ids=ids), max_size=5))
    adding: dict[int, tuple[int, ...]] = {}
    removing: dict[int, tuple[int, ...]] = {}
    for p, rs in partitions.items():
        ar = draw(st.lists(st.sampled_from(rs), unique=True).map(tuple))
        rest = [r for r in rs if r not in ar]
        rr = draw(st.lists(st.sampled_from(rest), unique=True).map(tuple)) if rest else ()
        if ar:
            adding[p] = ar
        if rr:
            removing[p] = rr
    return TopicZnode(partitions, adding, removing, draw(st.none() | uuids))


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


def reorder(value: Any) -> Any:
    """The same JSON with every object's keys in reverse order."""
    if isinstance(value, dict):
        return {key: reorder(value[key]) for key in reversed(value)}
    if isinstance(value, list):
        return [reorder(item) for item in value]
    return value


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


def json_containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    # a def, not a lambda: hypothesis reads a lambda's source to see it recurse, and at times
    # cannot (a deprecation warning, an error under -W error)
    return st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    json_containers,
    max_leaves=8,
)
DELETE = object()


def json_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value: the keys and indexes that lead there."""
    children = (
        value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    )
    return [path] + [sub for key, child in children for sub in json_paths(child, (*path, key))]


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """``value`` with the node at ``path`` replaced by ``new`` (or removed, for DELETE)."""
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    if new is DELETE and len(path) == 1:
        del copy[path[0]]
    else:
        copy[path[0]] = replaced(value[path[0]], path[1:], new)
    return copy


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


# --- the fast path agrees with the strict path ---------------------------------------------------
# decode_partition_state and decode_topic (and every decoder's JSON reading) first try a cheap path
# that returns a value only where the strict path would return the same one; anything else goes to
# the strict path, which alone words the errors. So do encode_partition_state and encode_topic,
# which skip asking the decoder when the cheap path vouches for the JSON. These tests hold the
# two paths side by side, on valid znodes damaged in every single way, then in random ways.


def strict_decode_partition_state(data: bytes | None) -> PartitionState:
    return _read_partition_state(load_object_strictly(data))


def strict_decode_topic(data: bytes | None) -> TopicZnode:
    return _read_topic(load_object_strictly(data))


def strict_decode_legacy(data: bytes | None) -> tuple[LegacyReassignmentEntry, ...]:
    return _read_legacy(load_object_strictly(data))


def legacy_json(entries: tuple[LegacyReassignmentEntry, ...]) -> dict[str, Any]:
    """The JSON encode_legacy_reassignment writes, unchecked."""
    items: list[dict[str, Any]] = []
    for e in entries:
        items.append({"topic": e.topic, "partition": e.partition, "replicas": list(e.replicas)})
        if e.original_replicas is not None:
            items[-1]["original_replicas"] = list(e.original_replicas)
    return {"version": 1, "partitions": items}


def strict_decode_origins(data: bytes | None) -> dict[int, tuple[int, ...]]:
    return _read_origins(load_object_strictly(data))


def origins_json(origins: dict[Any, Any]) -> dict[str, Any]:
    """The JSON encode_origins writes, unchecked."""
    return {"version": 1, "partitions": {str(p): list(r) for p, r in sorted(origins.items())}}


def state_json(state: PartitionState) -> dict[str, Any]:
    """The JSON encode_partition_state writes, unchecked."""
    obj: dict[str, Any] = {"version": 1, "leader": state.leader, "leader_epoch": state.leader_epoch}
    return {**obj, "controller_epoch": state.controller_epoch, "isr": list(state.isr)}


def topic_json(znode: TopicZnode) -> dict[str, Any]:
    """The JSON encode_topic writes, unchecked."""

    def json_map(replicas: Any, keep_empty: bool = False) -> dict[str, list[int]]:
        return {str(p): list(replicas[p]) for p in sorted(replicas) if keep_empty or replicas[p]}

    obj: dict[str, Any] = {"version": 2 if znode.topic_id is None else 3}
    obj["partitions"] = json_map(znode.partitions, keep_empty=True)
    obj["adding_replicas"] = json_map(znode.adding)
    obj["removing_replicas"] = json_map(znode.removing)
    return obj if znode.topic_id is None else {**obj, "topic_id": znode.topic_id}


def strict_encode_partition_state(state: PartitionState) -> bytes:
    """encode_partition_state without its fast path: write the JSON, let the strict decoder judge."""
    return dump("partition state", state_json(state), strict_decode_partition_state)


def strict_encode_topic(znode: TopicZnode) -> bytes:
    return dump("topic znode", topic_json(znode), strict_decode_topic)


def strict_encode_legacy_reassignment(entries: tuple[LegacyReassignmentEntry, ...]) -> bytes:
    """encode_legacy_reassignment without its fast path: the plan reader judges the JSON."""
    items: list[dict[str, Any]] = []
    for e in entries:
        items.append({"topic": e.topic, "partition": e.partition, "replicas": list(e.replicas)})
        if e.original_replicas is not None:
            items[-1]["original_replicas"] = list(e.original_replicas)
    return dump("legacy reassignment", {"version": 1, "partitions": items}, decode_legacy_reassignment)


def outcome(call: Callable[[Any], object], arg: Any) -> object:
    """The value, or the refusal: ("CodecError", reason) or ("ValueError", message)."""
    try:
        return call(arg)
    except CodecError as e:
        return ("CodecError", e.reason)
    except ValueError as e:
        return ("ValueError", str(e))


class Pairs(list[tuple[str, Any]]):
    """A JSON object written as exactly these members, a repeated key and all."""


def render(value: Any, compact: bool = True, ascii_only: bool = False) -> bytes:
    """``value`` as JSON bytes; a lone surrogate in a string is written raw (so not UTF-8) unless
    ``ascii_only`` escapes it; NaN and Infinity as Python writes them."""

    def text(value: Any) -> str:
        comma, colon = (",", ":") if compact else (", ", ": ")
        if isinstance(value, dict):
            value = Pairs(value.items())
        if isinstance(value, Pairs):
            return (
                "{"
                + comma.join(json.dumps(k, ensure_ascii=ascii_only) + colon + text(v) for k, v in value)
                + "}"
            )
        if isinstance(value, list):
            return "[" + comma.join(map(text, value)) + "]"
        return json.dumps(value, ensure_ascii=ascii_only)

    return text(value).encode("utf-8", "surrogatepass")


def node(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def nudges(value: Any) -> list[Any]:
    """Values just beside ``value``: where a fast check is most likely to be too lax."""
    if type(value) is int:
        ints = [value - 1, value + 1, -value, -1, -2, 0, INT32_MAX, INT32_MAX + 1, -(2**31) - 1]
        return [*ints, float(value), value != 0, str(value), None]
    if type(value) is list:
        return [
            [],
            value + value[:1],
            [*value, -1],
            [*value, INT32_MAX + 1],
            [*value, True],
            [*value, [1]],
            {},
        ]
    if type(value) is str:
        return ["", value + "x", value[:-1], " " + value, value.upper(), "\ud800", 7]
    return [None, [], {}, {"0": [1]}, {"0": []}, {"9": [1]}, {"0": [9]}, 1]


ODD_VALUES = [
    None,
    True,
    1.0,
    float("nan"),
    float("-inf"),
    "a:b",
    "\ud800",
    {"y": {"z": 1}},
    {"y": 1, "z": []},
]
ODD_KEYS = ["01", " 1", "1 ", "+1", "-1", "-0", "1_0", "\u0661", "2147483648", "x", "a:b", "0", "1", "9"]


def single_damages(obj: Any) -> list[Any]:
    """``obj`` damaged in each single way: a value nudged or removed; in an object, a key renamed
    (onto another: repeated), written twice, or added with an odd value."""
    damaged = [reorder(obj)]
    for path in json_paths(obj)[1:]:
        damaged += [replaced(obj, path, new) for new in [*nudges(node(obj, path)), DELETE]]
    for at in (p for p in json_paths(obj) if isinstance(node(obj, p), dict)):
        members = list(node(obj, at).items())
        for i, (key, value) in enumerate(members):
            renamed = [[*members[:i], (new, value), *members[i + 1 :]] for new in ODD_KEYS]
            repeated = [[*members, (key, new)] for new in (value, nudges(value)[0])]
            for changed in renamed + repeated:
                unique = len({k for k, _ in changed}) == len(changed)
                damaged.append(replaced(obj, at, dict(changed) if unique else Pairs(changed)))
        damaged += [replaced(obj, at, {**node(obj, at), "x-odd": odd}) for odd in ODD_VALUES]
    return damaged


@pytest.mark.parametrize(
    ("decode", "strict", "obj"),
    [
        (decode_partition_state, strict_decode_partition_state, state)
        for state in [
            state_json(PartitionState(1, 3, 5, (1, 2, 3))),
            state_json(PartitionState(-1, 0, 0, ())),
        ]
    ]
    + [
        (decode_topic, strict_decode_topic, topic)
        for topic in [
            LAYOUT_TOPIC,
            {**LAYOUT_TOPIC, "version": 3, "topic_id": TOPIC_ID},
            {"version": 1, "partitions": {"0": [1, 2], "1": [2]}},
        ]
    ]
    + [
        (decode_origins, strict_decode_origins, origins)
        for origins in [
            origins_json({0: (3, 5, 6), 7: (), 12: (-1, 1, 1)}),
            origins_json({2147483648: (INT32_MAX, -(2**31))}),
        ]
    ]
    + [
        (decode_legacy_reassignment, strict_decode_legacy, legacy)
        for legacy in [
            legacy_json(
                (LegacyReassignmentEntry("a", 0, (1, 2)), LegacyReassignmentEntry("b.c", 3, (3,), (1, 2)))
            ),
            {"partitions": [{"topic": "t", "partition": 1, "replicas": [2], "original_replicas": None}]},
        ]
    ],
    ids=[
        "state",
        "state-without-leader",
        "topic-v2",
        "topic-v3",
        "topic-v1",
        "origins",
        "origins-edges",
        "legacy",
        "legacy-no-version",
    ],
)
def test_every_single_damage_reads_the_same_on_both_paths(
    decode: Callable[[bytes], object], strict: Callable[[bytes], object], obj: Any
) -> None:
    damaged = single_damages(obj)
    assert len(damaged) > 100
    for each in damaged:
        for data in (render(each), render(each, compact=False, ascii_only=True)):
            assert outcome(decode, data) == outcome(strict, data), data


def test_the_fast_path_leaves_every_doubtful_znode_to_the_strict_path() -> None:
    state = b'{"version":1,"leader":1,"leader_epoch":3,"controller_epoch":5,"isr":[1,2,3]}'
    ok = PartitionState(1, 3, 5, (1, 2, 3))
    assert fast_object(b" " + state) is None
    assert decode_partition_state(b" " + state + b"\n") == ok  # JSON allows the whitespace
    assert decode_partition_state(state.replace(b'"isr"', b'"\\u0069sr"')) == ok  # an escaped key
    assert decode_partition_state(state[:-1] + b',"x":"a:b"}') == ok  # a colon in a string
    assert decode_partition_state(state[:-1] + b',"x":{"y":1,"z":[]}}') == ok  # an unknown object
    assert (
        reason(decode_partition_state, state[:-1] + b',"x":{"y":1,"y":2}}')
        == 'invalid JSON: duplicate key "y"'
    )
    assert (
        reason(decode_partition_state, state[:-1] + b',"leader":2}') == 'invalid JSON: duplicate key "leader"'
    )
    assert (
        reason(decode_partition_state, state[:-1] + b',"x":NaN}') == "invalid JSON: NaN is not a JSON value"
    )
    topic = b'{"version":2,"partitions":{"0":[1,2],"1":[2,1]},"adding_replicas":{"1":[]}}'
    assert decode_topic(topic) == TopicZnode({0: (1, 2), 1: (2, 1)})
    assert (
        reason(decode_topic, topic.replace(b'"1":[2,1]', b'"0":[2,1]')) == 'invalid JSON: duplicate key "0"'
    )
    assert reason(decode_topic, topic.replace(b'"1":[2,1]', b'"\xd9\xa1":[2,1]')) == (
        "field 'partitions' has key \"\\u0661\", which is not a partition number"
    )


# Random damage, several at a time, on top of near-valid values.

edge_values = st.integers(-3, 3) | st.sampled_from(
    [INT32_MAX, INT32_MAX + 1, -(2**31) - 1, True, 1.0, None, "1"]
)
state_values = st.builds(PartitionState, st.integers(-1, INT32_MAX), broker_ids, broker_ids, replica_lists())


@st.composite
def near_states(draw: st.DrawFn) -> PartitionState:
    """A valid state with one field at or beyond its limits."""
    state = draw(state_values)
    name = draw(st.sampled_from(["leader", "leader_epoch", "controller_epoch", "isr"]))
    if name == "isr":
        value: Any = draw(
            st.lists(edge_values, max_size=4).map(tuple) | st.lists(st.integers(0, 4), max_size=4)
        )
    else:
        value = draw(edge_values)
    return msgspec.structs.replace(state, **{name: value})


@st.composite
def near_topics(draw: st.DrawFn) -> TopicZnode:
    """A valid topic with small ids, then one map entry set to a list that may overlap RS, AR or
    RR, stray out of RS or break a rule of its own; and maybe an odd topic id."""
    znode = draw(topic_znodes(st.integers(0, 5)))
    maps = {
        "partitions": dict(znode.partitions),
        "adding": dict(znode.adding),
        "removing": dict(znode.removing),
    }
    key = draw(st.integers(-1, 6) | st.sampled_from([INT32_MAX, INT32_MAX + 1]))
    maps[draw(st.sampled_from(list(maps)))][key] = draw(
        st.lists(edge_values | st.integers(0, 5), max_size=4).map(lambda xs: cast(tuple[int, ...], tuple(xs)))
    )
    topic_id = draw(
        st.just(znode.topic_id) | st.sampled_from([None, TOPIC_ID, TOPIC_ID[:-1] + "R", "\ud800"])
    )
    return TopicZnode(maps["partitions"], maps["adding"], maps["removing"], topic_id)


def pick_path(draw: st.DrawFn, paths: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    """A depth first, then a place at it: top-level fields are picked as often as replica ids."""
    depth = draw(st.sampled_from(sorted({len(p) for p in paths})))
    return draw(st.sampled_from([p for p in paths if len(p) == depth]))


def damage_once(draw: st.DrawFn, obj: Any) -> Any:
    """``obj`` with a value nudged, replaced or removed, keys reordered, or, in one object, a member
    added, a key renamed or one written twice (then a :class:`Pairs`)."""
    paths = json_paths(obj)
    objects = [p for p in paths if isinstance(node(obj, p), dict) and node(obj, p)]
    damage = draw(
        st.sampled_from(
            ["nudge", "nudge", "nudge", "replace", "delete", "reorder", "add", "rename", "repeat"]
        )
    )
    if damage == "reorder":
        return reorder(obj)
    if damage in ("nudge", "replace", "delete") or not objects:
        if not (path := pick_path(draw, paths)):
            return draw(JSON_VALUES)
        if damage == "delete":
            return replaced(obj, path, DELETE)
        new = (
            st.sampled_from(ODD_VALUES) | JSON_VALUES
            if damage == "replace"
            else st.sampled_from(nudges(node(obj, path)))
        )
        return replaced(obj, path, draw(new))
    at = pick_path(draw, objects)
    members = list(node(obj, at).items())
    i = draw(st.integers(0, len(members) - 1))
    key = draw(st.sampled_from(ODD_KEYS) | st.sampled_from([k for k, _ in members]))
    if damage == "add":
        members.insert(i, (key, draw(st.sampled_from(ODD_VALUES) | JSON_VALUES)))
    elif damage == "rename":
        members[i] = (key, members[i][1])
    else:
        members.insert(
            draw(st.integers(0, len(members))), (members[i][0], draw(st.sampled_from(nudges(members[i][1]))))
        )
    unique = len({k for k, _ in members}) == len(members)
    return replaced(obj, at, dict(members) if unique else Pairs(members))


@st.composite
def damaged_znodes(draw: st.DrawFn, values: st.SearchStrategy[Any], to_json: Callable[[Any], Any]) -> bytes:
    """A (near-)valid znode, damaged up to three times (see damage_once); written compact or
    spaced, ASCII-escaped or not; then maybe a byte changed, or added at either end."""
    obj: Any = to_json(draw(values))
    for _ in range(draw(st.sampled_from([0, 0, 1, 1, 1, 2, 3]))):
        obj = damage_once(draw, obj)
        if any(isinstance(node(obj, p), Pairs) for p in json_paths(obj)):
            break  # json_paths and replaced see a Pairs object as a list: no more damage
    data = render(obj, compact=draw(st.booleans()), ascii_only=draw(st.booleans()))
    edit = st.sampled_from([b"", b" ", b"\n", b"\xef\xbb\xbf", b",", b":", b"\x80", b'"', b"{}", b"0"])
    match draw(st.integers(0, 15)):
        case 0:
            i = draw(st.integers(0, len(data)))
            data = data[:i] + draw(edit) + data[i + 1 :]
        case 1:
            data = draw(edit) + data
        case 2:
            data = data + draw(edit)
    return data


damaged_states = damaged_znodes(state_values | near_states(), state_json)
damaged_topics = damaged_znodes(topic_znodes() | topic_znodes(st.integers(0, 5)) | near_topics(), topic_json)
origin_values = st.dictionaries(
    st.integers(0, 12) | st.sampled_from([INT32_MAX, INT32_MAX + 1, 2**63]),
    st.lists(st.integers(-2, 6) | st.sampled_from([INT32_MAX, -(2**31)]), max_size=4).map(tuple),
    max_size=4,
)
damaged_origins = damaged_znodes(origin_values, origins_json)


@settings(max_examples=400)
@given(data=damaged_states)
def test_partition_state_fast_and_strict_paths_agree(data: bytes) -> None:
    assert outcome(decode_partition_state, data) == outcome(strict_decode_partition_state, data)


@pytest.mark.parametrize(
    "data",
    [
        b'{"version":1,"leader":1,"leader_epoch":0,"controller_epoch":1,"isr":[1,2]}',
        b'{ "version" : 1 , "leader" : 1 , "leader_epoch" : 0 , "controller_epoch" : 1 , "isr" : [ ] }',
        b'{"version":1,"leader":1,"leader_epoch":0,"controller_epoch":1,"isr":[1,1]}',  # a repeated id
        b'{"version":1,"leader":1,"leader_epoch":0,"controller_epoch":1,"isr":[1],"x":0}',  # unknown key
        b'{"version":1,"leader":1,"leader_epoch":0,"leader_epoch":2,"isr":[1]}',  # a repeated key
        b'{"version":1,"leader":-2,"leader_epoch":0,"controller_epoch":1,"isr":[1]}',
        b'{"version":1,"leader":1,"leader_epoch":0,"controller_epoch":1,"isr":[2147483648]}',
        b'{"version":1,"leader":1.0,"leader_epoch":0,"controller_epoch":1,"isr":[1]}',
        b'{"version":true,"leader":1,"leader_epoch":0,"controller_epoch":1,"isr":[1]}',
        b'{"version":2,"leader":1,"leader_epoch":0,"controller_epoch":1,"isr":[1]}',
        b'\xef\xbb\xbf{"version":1,"leader":1,"leader_epoch":0,"controller_epoch":1,"isr":[1]}',
        b'{"version":1,"leader":1,"leader_epoch":0,"controller_epoch":1,"isr":[1]} x',
        b'{"version":1,"l\\u0065ader":1,"leader_epoch":0,"controller_epoch":1,"isr":[1]}',
    ],
)
def test_the_msgspec_fast_path_returns_what_the_strict_path_does(data: bytes) -> None:
    # decode_partition_state tries msgspec first and falls back to the strict path on any doubt
    assert outcome(decode_partition_state, data) == outcome(strict_decode_partition_state, data)


@pytest.mark.parametrize(
    "data",
    [
        b'{"version":2,"partitions":{"0":[1,2]},"adding_replicas":{},"removing_replicas":{}}',
        b'{"version":2,"partitions":{"01":[1,2]}}',
        b'{"version":2,"partitions":{"-0":[1,2]}}',
        b'{"version":2,"partitions":{"0":[1,2]},"adding_replicas":{"-0":[]}}',
        b'{"version":2,"partitions":{"+1":[1,2]}}',
        b'{"version":2,"partitions":{"1.0":[1,2]}}',
        b'{"version":2,"partitions":{"1":[1,2],"0":[2]}}',
        b'{"version":2,"partitions":{"0":[1,2],"0":[3]}}',
        b'{"version":2,"partitions":{"0":[1,2]},"extra":{"a":1}}',
        b'{"version":2,"partitions":{"0":[1,2]},"extra":1}',
        b'{"version":2,"partitions":{"4294967296":[1]}}',
        b'{"version":2,"partitions":{"2147483648":[1]}}',
        b'{"version":2,"partitions":{"0":[1,1]}}',
        b'{"version":2,"partitions":{"0":[1.0]}}',
        b'{"version":2,"partitions":{"0":[true]}}',
        b'{"version":2,"partitions":{}}',
        b'{"version":2,"partitions":{"0":[]}}',
        b'{"version":2,"partitions":{"0":[1,2]},"adding_replicas":{"7":[]}}',
        b'{"version":2,"partitions":{"0":[1,2]},"adding_replicas":{"9999999999":[]}}',
        b'{"version":2,"partitions":{"0":[1,2]},"removing_replicas":{"2147483647":[]}}',
        b'{"version":2,"partitions":{"0":[1,2]},"adding_replicas":{"7":[1]}}',
        b'{"version":2,"partitions":{"0":[1,2]},"adding_replicas":{"0":[3]}}',
        b'{"version":2,"partitions":{"0":[1,2]},"adding_replicas":{"0":[1]},"removing_replicas":{"0":[1]}}',
        b'{"version":3,"partitions":{"0":[1,2]}}',
        b'{"version":3,"partitions":{"0":[1,2]},"topic_id":null}',
        b'{"version":2,"partitions":{"0":[1,2]},"topic_id":"vKbcOsJ9TWCz3qAiVMHqEQ"}',
        b'{"version":3,"partitions":{"0":[1,2]},"topic_id":"not-a-uuid"}',
        b'{"version":4,"partitions":{"0":[1,2]}}',
        b'{"version":2,"partitions":{"\\u0030":[1,2]}}',
        b'{"version":2,"partitions":{"0":[1,2]}} x',
        b'\xef\xbb\xbf{"version":2,"partitions":{"0":[1,2]}}',
        b'{"version":2,"partitions":{"0":[1,2]},"topic_id":"\xed\xa0\x80"}',
    ],
)
def test_the_typed_topic_path_returns_what_the_strict_path_does(data: bytes) -> None:
    # decode_topic tries msgspec first and falls back on any doubt
    assert outcome(decode_topic, data) == outcome(strict_decode_topic, data)


@settings(max_examples=200)
@given(znode=topic_znodes())
def test_the_typed_topic_path_reads_every_znode_the_encoder_writes(znode: TopicZnode) -> None:
    assert codec_module._topic_typed(encode_topic(znode)) == znode


@settings(max_examples=250)
@given(data=damaged_topics)
def test_topic_fast_and_strict_paths_agree(data: bytes) -> None:
    assert outcome(decode_topic, data) == outcome(strict_decode_topic, data)


@settings(max_examples=250)
@given(data=damaged_origins)
def test_origins_typed_and_strict_paths_agree(data: bytes) -> None:
    assert outcome(decode_origins, data) == outcome(strict_decode_origins, data)


@pytest.mark.parametrize(
    "data",
    [
        b'{"version":1,"partitions":{"-0":[1]}}',
        b'{"version":1,"partitions":{"007":[1]}}',
        b'{"version":1,"partitions":{"\\u0031":[1]}}',
        b'{"version":1,"partitions":{"1":[1],"1":[2]}}',
        b'{"version":1,"partitions":{"99999999999999999999":[1]}}',
        b'{"version":1,"partitions":{"1":[true]}}',
        b'{"version":1,"partitions":{"1":[2147483648]}}',
        b'{"version":1,"partitions":{"1":[1]},"x":"a:b"}',
        b'{"version":true,"partitions":{}}',
    ],
)
def test_the_typed_origins_path_returns_what_the_strict_path_does(data: bytes) -> None:
    assert outcome(decode_origins, data) == outcome(strict_decode_origins, data)


@given(data=damaged_states | damaged_topics | damaged_origins | st.binary(max_size=64))
def test_the_fast_json_reader_returns_what_the_strict_one_does_or_nothing(data: bytes) -> None:
    if (obj := fast_object(data)) is not None:
        assert load_object_strictly(data) == obj


@settings(max_examples=300)
@given(
    state=state_values
    | near_states()
    | st.builds(PartitionState, edge_values, edge_values, edge_values, st.just([1]))
)
def test_partition_state_encoders_agree(state: PartitionState) -> None:
    assert outcome(encode_partition_state, state) == outcome(strict_encode_partition_state, state)


@settings(max_examples=200)
@given(znode=topic_znodes() | near_topics())
def test_topic_encoders_agree(znode: TopicZnode) -> None:
    assert outcome(encode_topic, znode) == outcome(strict_encode_topic, znode)


legacy_topics = st.sampled_from(["a", "b.c", "t_1-x", "", ".", "..", "a/b", "é", "x" * 250, "x" * 249])
some_ids = st.lists(edge_values | st.integers(0, 5), max_size=4).map(tuple)


legacy_entries = st.lists(
    st.builds(
        LegacyReassignmentEntry,
        legacy_topics,
        st.integers(0, 3) | edge_values,
        replica_lists(min_size=1, ids=st.integers(0, 5)) | some_ids,
        st.none() | replica_lists() | some_ids,
    ),
    max_size=4,
).map(tuple)


@settings(max_examples=300)
@given(entries=legacy_entries)
def test_legacy_reassignment_encoders_agree(entries: tuple[LegacyReassignmentEntry, ...]) -> None:
    assert outcome(encode_legacy_reassignment, entries) == outcome(strict_encode_legacy_reassignment, entries)


@settings(max_examples=300)
@given(data=damaged_znodes(legacy_entries, legacy_json))
def test_legacy_typed_and_strict_paths_agree(data: bytes) -> None:
    assert outcome(decode_legacy_reassignment, data) == outcome(strict_decode_legacy, data)


@pytest.mark.parametrize(
    "data",
    [
        b'{"partitions":[{"topic":"a","partition":0,"replicas":[1]}]}',
        b'{"version":1,"partitions":[]}',
        b'{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1],"log_dirs":["any"]}]}',
        b'{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1],"log_dirs":["x:y"]}]}',
        b'{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1],"log_dirs":[]}]}',
        b'{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1],"original_replicas":null}]}',
        b'{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1],"original_replicas":[]}]}',
        b'{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1],"original_replicas":[2,2]}]}',
        b'{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1]},{"topic":"a","partition":0,"replicas":[2]}]}',
        b'{"version":1,"partitions":[{"topic":"a:b","partition":0,"replicas":[1]}]}',
        b'{"version":1,"partitions":[{"topic":"a","topic":"b","partition":0,"replicas":[1]}]}',
        b'{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1,1]}]}',
        b'{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[]}]}',
        b'{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1]}],"x":{"y":1}}',
        b'{"version":true,"partitions":[{"topic":"a","partition":0,"replicas":[1]}]}',
        b'{"version":null,"partitions":[{"topic":"a","partition":0,"replicas":[1]}]}',
        b'{"version":1,"partitions":[{"topic":"\\u0061","partition":0,"replicas":[1]}]}',
    ],
)
def test_the_typed_legacy_path_returns_what_the_strict_path_does(data: bytes) -> None:
    assert outcome(decode_legacy_reassignment, data) == outcome(strict_decode_legacy, data)


def strict_encode_origins(origins: dict[Any, Any]) -> bytes:
    """encode_origins without its fast path: decode_origins judges the JSON."""
    obj = {"version": 1, "partitions": {str(p): list(r) for p, r in sorted(origins.items())}}
    return dump("origins", obj, decode_origins)


@settings(max_examples=300)
@given(
    origins=st.dictionaries(
        st.integers(0, 5) | edge_values.filter(lambda v: type(v) in (int, bool)),
        replica_lists() | some_ids | st.lists(st.integers(0, 3), max_size=3),  # lists: not the typed tuple
        max_size=4,
    )
)
def test_origins_encoders_agree(origins: dict[Any, Any]) -> None:
    fast = outcome(encode_origins, origins)
    assert fast == outcome(strict_encode_origins, origins)
    if isinstance(fast, bytes):
        assert decode_origins(fast) == {p: tuple(r) for p, r in origins.items()}


def test_origins_with_a_negative_partition_or_a_wide_id_are_refused_with_the_decoders_words() -> None:
    with pytest.raises(ValueError, match=r"cannot encode origins: .*not a partition id"):
        encode_origins({-1: (1, 2)})
    with pytest.raises(ValueError, match=r"cannot encode origins: .*must be between"):
        encode_origins({0: (INT32_MAX + 1,)})

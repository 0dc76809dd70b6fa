"""The znode codecs of the cluster's own znodes: ``/controller``, its epoch, ``/cluster/id`` and
broker registrations, as Kafka writes them, and refused with one clear line."""

from __future__ import annotations

import base64
import json

import pytest

from reassignd.zk.codec import (
    BrokerRegistration,
    ControllerInfo,
    Endpoint,
    decode_broker,
    decode_cluster_id,
    decode_controller,
    decode_controller_epoch,
    encode_broker,
    encode_cluster_id,
    encode_controller,
    encode_controller_epoch,
    new_uuid_base64,
)
from tests.unit.zk.codec_helpers import (
    TOPIC_ID,
    js,
    reason,
)

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

"""The admin and notification znodes' codecs: KIP-236 requests and status nodes, ISR change
notifications, preferred replica election, entity configs and config change notifications."""

from __future__ import annotations

import pytest

from reassignd.zk.admin_codec import (
    ReassignmentRequest,
    ReassignmentStatus,
    decode_config_change,
    decode_entity_config,
    decode_isr_change,
    decode_preferred_replica_election,
    decode_reassignment_request,
    decode_reassignment_status,
    encode_config_change,
    encode_entity_config,
    encode_isr_change,
    encode_preferred_replica_election,
    encode_reassignment_request,
    encode_reassignment_status,
)
from tests.unit.zk.codec_helpers import (
    js,
    reason,
)

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

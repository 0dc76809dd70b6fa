"""The topic znode's codec: Kafka's versions 1-3 read as Kafka means them, RS/AR/RR kept apart,
and anything malformed refused with one clear line."""

from __future__ import annotations

import pytest

from reassignd.zk.codec import (
    TopicZnode,
    decode_topic,
    encode_topic,
)
from tests.unit.zk.codec_helpers import (
    LAYOUT_TOPIC,
    TOPIC_ID,
    js,
    reason,
)

# --- /brokers/topics/<topic> ---------------------------------------------------------------------


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

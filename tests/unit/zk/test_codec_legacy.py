"""The legacy reassignment znode (``/admin/reassign_partitions``): a plan read as Kafka's tools
write it, refused whole when it is not one."""

from __future__ import annotations

import pytest

from reassignd.zk.admin_codec import (
    LegacyReassignmentEntry,
    decode_legacy_reassignment,
    encode_legacy_reassignment,
)
from tests.unit.zk.codec_helpers import (
    js,
    reason,
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

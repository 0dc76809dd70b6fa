"""The partition state znode's codec: the layout's example, newer Kafka's extra fields, and
refusals with one clear line."""

from __future__ import annotations

import pytest

from reassignd.zk.codec import (
    PartitionState,
    decode_partition_state,
    encode_partition_state,
)
from tests.unit.zk.codec_helpers import (
    js,
    reason,
)

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

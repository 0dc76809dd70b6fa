"""The typed tier agrees with the strict path: decode_partition_state, decode_topic and the
origins and legacy codecs return a value on their typed path only where the strict path returns the
same one, and their encoders write only what the strict decoder reads back as the value given."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reassignd.int_limits import INT32_MAX
from reassignd.strict_json import fast_object
from reassignd.zk import codec as codec_module
from reassignd.zk.admin_codec import (
    LegacyReassignmentEntry,
    decode_legacy_reassignment,
    decode_origins,
    encode_legacy_reassignment,
    encode_origins,
)
from reassignd.zk.codec import (
    PartitionState,
    TopicZnode,
    decode_partition_state,
    decode_topic,
    encode_partition_state,
    encode_topic,
)
from reassignd.zk.json_fields import load_object_strictly
from tests.examples import examples
from tests.unit.zk.codec_damage import (
    damaged_origins,
    damaged_states,
    damaged_topics,
    damaged_znodes,
    edge_values,
    legacy_entries,
    legacy_json,
    near_states,
    near_topics,
    origins_json,
    outcome,
    render,
    single_damages,
    some_ids,
    state_json,
    state_values,
    strict_decode_legacy,
    strict_decode_origins,
    strict_decode_partition_state,
    strict_decode_topic,
    strict_encode_legacy_reassignment,
    strict_encode_origins,
    strict_encode_partition_state,
    strict_encode_topic,
)
from tests.unit.zk.codec_helpers import (
    LAYOUT_TOPIC,
    TOPIC_ID,
    reason,
    replica_lists,
    topic_znodes,
)

# --- the fast path agrees with the strict path ---------------------------------------------------
# decode_partition_state and decode_topic (and every decoder's JSON reading) first try a cheap path
# that returns a value only where the strict path would return the same one; anything else goes to
# the strict path, which alone words the errors. So do encode_partition_state and encode_topic,
# which skip asking the decoder when the cheap path vouches for the JSON. These tests hold the
# two paths side by side, on valid znodes damaged in every single way, then in random ways.


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


@settings(max_examples=examples(400))
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


@settings(max_examples=examples(200))
@given(znode=topic_znodes())
def test_the_typed_topic_path_reads_every_znode_the_encoder_writes(znode: TopicZnode) -> None:
    assert codec_module._topic_typed(encode_topic(znode)) == znode


@settings(max_examples=examples(250))
@given(data=damaged_topics)
def test_topic_fast_and_strict_paths_agree(data: bytes) -> None:
    assert outcome(decode_topic, data) == outcome(strict_decode_topic, data)


@settings(max_examples=examples(250))
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


@settings(max_examples=examples(300))
@given(
    state=state_values
    | near_states()
    | st.builds(PartitionState, edge_values, edge_values, edge_values, st.just([1]))
)
def test_partition_state_encoders_agree(state: PartitionState) -> None:
    assert outcome(encode_partition_state, state) == outcome(strict_encode_partition_state, state)


@settings(max_examples=examples(200))
@given(znode=topic_znodes() | near_topics())
def test_topic_encoders_agree(znode: TopicZnode) -> None:
    assert outcome(encode_topic, znode) == outcome(strict_encode_topic, znode)


@settings(max_examples=examples(300))
@given(entries=legacy_entries)
def test_legacy_reassignment_encoders_agree(entries: tuple[LegacyReassignmentEntry, ...]) -> None:
    assert outcome(encode_legacy_reassignment, entries) == outcome(strict_encode_legacy_reassignment, entries)


@settings(max_examples=examples(300))
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


@settings(max_examples=examples(300))
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

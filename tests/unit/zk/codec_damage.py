"""The machinery of the znode codecs' tier tests: the strict paths and encoders beside the typed
ones, each znode as JSON, a renderer that can repeat a key, and damage to valid znodes, single and
random."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

import msgspec
from hypothesis import strategies as st

from reassignd.int_limits import INT32_MAX
from reassignd.zk.admin_codec import (
    LegacyReassignmentEntry,
    _read_legacy,
    _read_origins,
    decode_legacy_reassignment,
    decode_origins,
)
from reassignd.zk.codec import (
    CodecError,
    PartitionState,
    TopicZnode,
    _read_partition_state,
    _read_topic,
)
from reassignd.zk.json_fields import dump, load_object_strictly
from tests.unit.zk.codec_helpers import (
    DELETE,
    JSON_VALUES,
    TOPIC_ID,
    broker_ids,
    json_paths,
    reorder,
    replaced,
    replica_lists,
    topic_znodes,
)


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


def strict_encode_origins(origins: dict[Any, Any]) -> bytes:
    """encode_origins without its fast path: decode_origins judges the JSON."""
    obj = {"version": 1, "partitions": {str(p): list(r) for p, r in sorted(origins.items())}}
    return dump("origins", obj, decode_origins)

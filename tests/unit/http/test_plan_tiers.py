"""A ``kafka-reassign-partitions`` plan reads the same on both tiers: the typed tier
(:func:`reassignd.plan_format.typed_plan`, msgspec into ``ReassignmentPlan``) returns what the
strict reader returns, or gives up, on plans as written and damaged in random ways (a value
changed, a key gone, added or repeated, escapes, colons in strings, spaces); and ``POST
/v1/reassignments``' reader, whichever tier reads, returns the same AlterReassignments or words the
same 400 as the strict path alone (the door before the typed plan tier)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reassignd.contracts import requests as rq
from reassignd.controller.model.from_contracts import alter_of
from reassignd.errors import InvalidRequest
from reassignd.http.door import decode_request
from reassignd.http.routes.reassignments import parse_alter_body, strict_alter_body
from reassignd.plan_format import PlanError, parse_plan, strict_plan, typed_plan
from tests.examples import examples
from tests.json_paths import at, paths_in


def outcome(call: Callable[[bytes], object], data: bytes) -> object:
    try:
        return call(data)
    except (PlanError, InvalidRequest) as e:
        return ("refused", type(e).__name__, str(e))


def strict_door(body: bytes) -> object:
    """``POST /v1/reassignments``' reader as it was before plans had a typed tier."""
    return decode_request(body, rq.KafkaAlterReassignments, alter_of, strict_alter_body)


def assert_tiers_agree(data: bytes) -> bool:
    """True if the typed tier read it."""
    typed = typed_plan(data)
    strict = outcome(strict_plan, data)
    if typed is not None:
        assert typed == strict
    assert outcome(parse_plan, data) == strict
    assert outcome(parse_alter_body, data) == outcome(strict_door, data)
    return typed is not None


class Pairs(list[tuple[str, Any]]):
    """A JSON object as its members, in order, a key possibly repeated."""


def render(value: Any, ascii_only: bool, space: str) -> str:
    if isinstance(value, dict):
        value = Pairs(value.items())
    if isinstance(value, Pairs):
        members = (
            f"{json.dumps(k, ensure_ascii=ascii_only)}:{space}{render(v, ascii_only, space)}"
            for k, v in value
        )
        return "{" + space + f",{space}".join(members) + "}"
    if isinstance(value, list):
        return "[" + ",".join(render(v, ascii_only, space) for v in value) + "]"
    return json.dumps(value, ensure_ascii=ascii_only)


TOPICS = st.sampled_from(["orders", "a", "t.x_-9", ".", "..", "", "a b", "é", "a:b", "t" * 249, "t" * 250])
IDS = st.sampled_from([0, 1, 2, 3, 7, 2**31 - 1, 2**31, -1])
DIRS = st.sampled_from(["any", "/data", "/d:1", "é", ""])


@st.composite
def plan_entries(draw: st.DrawFn) -> dict[str, Any]:
    replicas = draw(st.lists(IDS, max_size=4))
    entry: dict[str, Any] = {"topic": draw(TOPICS), "partition": draw(IDS), "replicas": replicas}
    if draw(st.booleans()):
        size = len(replicas) if draw(st.integers(0, 4)) else draw(st.integers(0, 4))
        entry["log_dirs"] = draw(st.lists(DIRS, min_size=size, max_size=size))
    if draw(st.integers(0, 5)) == 0:
        entry["original_replicas"] = draw(st.lists(IDS, max_size=3))
    return dict(draw(st.permutations(list(entry.items()))))


@st.composite
def plans(draw: st.DrawFn) -> dict[str, Any]:
    plan: dict[str, Any] = {"partitions": draw(st.lists(plan_entries(), max_size=4))}
    version = draw(st.sampled_from(["first", "first", "last", "absent"]))
    if version == "first":
        plan = {"version": 1, **plan}
    elif version == "last":
        plan["version"] = 1
    return plan


@st.composite
def valid_plans(draw: st.DrawFn) -> dict[str, Any]:
    """Plans the strict reader accepts (no KIP-236 field), version first or absent."""
    tps = draw(st.lists(st.tuples(st.sampled_from(["orders", "a", "t.x_-9"]), st.integers(0, 3)), unique=True,
                        min_size=1, max_size=4))  # fmt: skip
    partitions = []
    for topic, partition in tps:
        replicas = draw(st.lists(st.integers(0, 9), unique=True, min_size=1, max_size=4))
        entry: dict[str, Any] = {"topic": topic, "partition": partition, "replicas": replicas}
        if draw(st.booleans()):
            entry["log_dirs"] = draw(st.lists(st.sampled_from(["any", "/data", "é"]), min_size=len(replicas),
                                              max_size=len(replicas)))  # fmt: skip
        partitions.append(entry)
    return {"version": 1, "partitions": partitions} if draw(st.booleans()) else {"partitions": partitions}


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        value = value[p]
    return value


def without(container: Any, key: Any) -> Any:
    if isinstance(container, dict):
        return {k: v for k, v in container.items() if k != key}
    return [v for i, v in enumerate(container) if i != key]


ODD = st.sampled_from(
    [None, True, False, -1, 0, 1, 2, 2**31 - 1, 2**31, 2**63, 1.0, -0.0, 1e3, "", "x", "a:b", ":", "é",
     "\ud800", "orders", [], [1, 1], [1, -1], ["a:b"], [1.0], {}, {"a": 1}, {"version": 1}]
)  # fmt: skip
KEYS = st.sampled_from(["topic", "partition", "replicas", "log_dirs", "original_replicas", "version",
                        "partitions", "topics", "timeout_ms", "x", "a:b"])  # fmt: skip


@st.composite
def damaged(draw: st.DrawFn, obj: Any) -> bytes:
    for _ in range(draw(st.integers(0, 2))):
        path = draw(st.sampled_from(paths_in(obj)[1:] or [()]))
        if path and draw(st.booleans()):
            obj = at(obj, path[:-1], lambda c, key=path[-1]: without(c, key))  # type: ignore[misc]
        elif path:
            new = draw(ODD)
            obj = at(obj, path, lambda _, new=new: new)  # type: ignore[misc]
    dicts = [p for p in paths_in(obj) if isinstance(_get(obj, p), dict)]
    if draw(st.booleans()) and dicts:  # a key added or repeated, before or after the others
        path = draw(st.sampled_from(dicts))
        node = _get(obj, path)
        key = draw(st.sampled_from(list(node)) | KEYS) if node else draw(KEYS)
        member = (key, draw(st.sampled_from([node.get(key), 1])) if draw(st.booleans()) else draw(ODD))
        first = draw(st.booleans())
        obj = at(obj, path, lambda d: Pairs([member, *d.items()] if first else [*d.items(), member]))
    text = render(obj, draw(st.booleans()), draw(st.sampled_from(["", " ", "\n  "])))
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate, not escaped: not UTF-8
        return text.encode(errors="surrogatepass")


@pytest.mark.timeout(300)
@settings(max_examples=examples(400), deadline=None)
@given(plans(), st.booleans(), st.sampled_from(["", " ", "\n  "]))
def test_random_plans_read_the_same_on_both_tiers(plan: dict[str, Any], ascii_only: bool, space: str) -> None:
    assert_tiers_agree(render(plan, ascii_only, space).encode())


@pytest.mark.timeout(300)
@settings(max_examples=examples(400), deadline=None)
@given(st.data())
def test_damaged_plans_read_the_same_on_both_tiers(data: st.DataObject) -> None:
    assert_tiers_agree(data.draw(damaged(data.draw(plans()))))


@pytest.mark.timeout(300)
@settings(max_examples=examples(400), deadline=None)
@given(st.data())
def test_valid_plans_read_on_the_typed_tier_and_damaged_the_same_on_both(data: st.DataObject) -> None:
    plan = data.draw(valid_plans())
    assert assert_tiers_agree(
        render(plan, data.draw(st.booleans()), data.draw(st.sampled_from(["", " "]))).encode()
    )
    assert_tiers_agree(data.draw(damaged(plan)))


def test_a_plan_as_kafka_and_our_client_write_it_is_read_on_the_typed_tier() -> None:
    kafka = b'{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[4,5],"log_dirs":["any","any"]}]}'
    ours = rq.ReassignmentPlan(
        partitions=(rq.PlanPartition(topic="orders", partition=1, replicas=(1,), log_dirs=("/d:1",)),)
    )
    pretty = json.dumps(json.loads(kafka), indent=2).encode()
    for body in (kafka, pretty, b'{"partitions":[{"topic":"a","partition":0,"replicas":[1]}]}'):
        assert assert_tiers_agree(body)
    assert typed_plan(json.dumps(json.loads(kafka)).encode()) is not None
    # a colon in a string: the count does not rule a repeated key out, the strict reader reads
    written = msgspec.json.encode(ours)
    assert written.startswith(b'{"version":1,')
    assert not assert_tiers_agree(written)


def test_the_typed_tier_leaves_doubtful_plans_to_the_strict_reader() -> None:
    entry = '{"topic":"t","partition":0,"replicas":[1,2]%s}'
    plan = '{"version":1,"partitions":[%s]}'
    assert typed_plan((plan % (entry % "")).encode()) is not None
    for doubtful, refusal in (
        (',"replicas":[1,2]', 'duplicate key "replicas"'),
        (',"x":1', None),  # an unknown key: ignored, as Kafka's tool ignores it
        (',"log_dirs":["any"]', "Size of replicas list"),
        (',"topic":".."', "duplicate key"),
    ):
        data = (plan % (entry % doubtful)).encode()
        assert typed_plan(data) is None
        result = outcome(parse_plan, data)
        assert result == outcome(strict_plan, data)
        if refusal is None:
            assert not isinstance(result, tuple)
        else:
            assert isinstance(result, tuple) and refusal in result[2], result
    twice = (plan % ",".join([entry % ""] * 2)).encode()
    assert typed_plan(twice) is None
    assert outcome(parse_alter_body, twice) == (
        "refused",
        "InvalidRequest",
        "request body: Partition reassignment contains duplicate topic partitions: t-0",
    )

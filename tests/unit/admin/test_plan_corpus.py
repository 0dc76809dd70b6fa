"""One plan corpus, fed to the three ways a ``kafka-reassign-partitions`` plan comes in:
``POST /v1/reassignments`` (its body parser), the legacy znode ``/admin/reassign_partitions``
(its codec, which the controller reads it with) and ``reassignd admin reassign`` (its plan-file
reader). Each plan is accepted by all three with the same targets in the same order, or refused
by all three, for the same reason wherever the reason is the plan reader's — but an integral
number written 1.0, which the API and the tool take as 1 and the znode, as Kafka's, refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reassignd.admin.command_line import read_plan_file
from reassignd.errors import InvalidRequest
from reassignd.http.routes.reassignments import parse_alter_body
from reassignd.plan_format import parse_plan
from reassignd.topic_partition import TopicPartition
from reassignd.zk import admin_codec, codec

Targets = list[tuple[TopicPartition, tuple[int, ...]]]


def plan(*entries: object, **top: object) -> bytes:
    return json.dumps({"version": 1, "partitions": list(entries), **top}).encode()


def entry(
    topic: object = "t", partition: object = 0, replicas: object = (1, 2), **more: object
) -> dict[str, object]:
    return {
        "topic": topic,
        "partition": partition,
        "replicas": list(replicas) if isinstance(replicas, tuple) else replicas,
        **more,
    }


# (name, bytes, the targets, in order) — accepted everywhere
ACCEPTED: list[tuple[str, bytes, Targets]] = [
    (
        "kafka's tool output",
        b'{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}',
        [(("t", 0), (1, 2))],
    ),
    (
        "no version (Kafka's EarliestVersion)",
        b'{"partitions":[{"topic":"t","partition":0,"replicas":[3]}]}',
        [(("t", 0), (3,))],
    ),
    (
        "unknown fields ignored at every level",
        plan(entry(replicas=(2, 1), note="why"), comment="by hand", mode="stop"),
        [(("t", 0), (2, 1))],
    ),
    (
        "order kept, replica order kept",
        plan(entry("b", 1, (3, 1, 2)), entry("a", 0, (1,)), entry("b", 0, (2, 3))),
        [(("b", 1), (3, 1, 2)), (("a", 0), (1,)), (("b", 0), (2, 3))],
    ),
    (
        "pretty-printed, log dirs named",
        json.dumps(
            {
                "version": 1,
                "partitions": [entry("x.y_z-1", 2147483647, (0, 2147483647), log_dirs=["/d1", "any"])],
            },
            indent=2,
        ).encode(),
        [(("x.y_z-1", 2147483647), (0, 2147483647))],
    ),
    ("a 249-character topic name", plan(entry("n" * 249)), [(("n" * 249, 0), (1, 2))]),
    (
        "original_replicas is just another field here",
        plan(entry(original_replicas=[9])),
        [(("t", 0), (1, 2))],
    ),
]

# (name, bytes, the plan reader's reason) — refused everywhere
REFUSED: list[tuple[str, bytes, str]] = [
    ("empty plan", plan(), "partitions: Partition reassignment list cannot be empty"),
    ("no partitions", b'{"version":1}', "missing required field 'partitions'"),
    (
        "partitions an object",
        b'{"version":1,"partitions":{}}',
        "partitions: expected an array, got an object",
    ),
    ("version 2", plan(entry(), version=2), "version: Not supported version field value 2 (only 1 exists)"),
    ("version a string", plan(entry(), version="1"), "version: expected an integer, got a string"),
    ("version null", plan(entry(), version=None), "version: expected an integer, got null"),
    ("version true", plan(entry(), version=True), "version: expected an integer, got a boolean"),
    ("entry not an object", plan([1]), "partitions[0]: expected an object, got an array"),
    ("no topic", plan({"partition": 0, "replicas": [1]}), "partitions[0]: missing required field 'topic'"),
    (
        "no partition",
        plan({"topic": "t", "replicas": [1]}),
        "partitions[0]: missing required field 'partition'",
    ),
    ("no replicas", plan({"topic": "t", "partition": 0}), "partitions[0]: missing required field 'replicas'"),
    ("topic a number", plan(entry(7)), "partitions[0].topic: expected a string, got an integer"),
    ("topic with a space", plan(entry("a b")), 'partitions[0].topic: Topic name "a b" is illegal'),
    ("topic '..'", plan(entry("..")), 'partitions[0].topic: Topic name cannot be "." or ".."'),
    (
        "topic too long",
        plan(entry("n" * 250)),
        "partitions[0].topic: Topic name is illegal, it can't be longer",
    ),
    ("empty topic", plan(entry("")), "partitions[0].topic: Topic name is illegal, it can't be empty"),
    (
        "negative partition",
        plan(entry(partition=-1)),
        "partitions[0].partition: expected a non-negative integer up to",
    ),
    (
        "partition 2^31",
        plan(entry(partition=2**31)),
        "partitions[0].partition: expected a non-negative integer up to",
    ),
    (
        "partition 1.5",
        plan(entry(partition=1.5)),
        "partitions[0].partition: expected a non-negative integer, got a number",
    ),
    (
        "partition a string",
        plan(entry(partition="0")),
        "partitions[0].partition: expected a non-negative integer, got a string",
    ),
    (
        "replicas null",
        plan(entry(replicas=None)),
        "partitions[0].replicas: expected a list of broker ids, got null",
    ),
    (
        "replicas empty",
        plan(entry(replicas=())),
        "partitions[0].replicas: Partition replica list cannot be empty (partition t-0)",
    ),
    (
        "a replica twice",
        plan(entry(replicas=(1, 2, 1))),
        "partitions[0].replicas: Partition replica lists may not contain duplicate entries: t-0 contains "
        "multiple entries for 1",
    ),
    (
        "negative replica",
        plan(entry(replicas=(1, -1))),
        "partitions[0].replicas[1]: expected a non-negative integer up to",
    ),
    (
        "replica a boolean",
        plan(entry(replicas=(True,))),
        "partitions[0].replicas[0]: expected a non-negative integer, got a boolean",
    ),
    (
        "log_dirs shorter than replicas",
        plan(entry(log_dirs=["any"])),
        "partitions[0].log_dirs: Size of replicas list [1, 2] is different from size of log dirs list",
    ),
    (
        "log_dirs not strings",
        plan(entry(replicas=(1,), log_dirs=[1])),
        "partitions[0].log_dirs[0]: expected a string, got an integer",
    ),
    (
        "a partition twice",
        plan(entry(replicas=(1,)), entry("u"), entry(replicas=(2,))),
        "Partition reassignment contains duplicate topic partitions: t-0",
    ),
    (
        "a second good entry does not save a bad one",
        plan(entry("u"), entry(replicas=())),
        "partitions[1].replicas: Partition replica list cannot be empty",
    ),
    (
        "a repeated key",
        b'{"version":1,"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1]}]}',
        'invalid JSON: duplicate key "version"',
    ),
]

# Refused everywhere; the API words these itself (its body reader runs first).
REFUSED_BEFORE_THE_PLAN: list[tuple[str, bytes]] = [
    ("empty body", b""),
    ("not JSON", b"{not json"),
    ("trailing garbage", b'{"partitions":[]}x'),
    ("an array", b"[]"),
    ("an empty object", b"{}"),
    ("NaN", b'{"version":NaN,"partitions":[]}'),
    ("invalid UTF-8", b'{"partitions":[{"topic":"\xff","partition":0,"replicas":[1]}]}'),
    ("UTF-16", '{"partitions":[{"topic":"t","partition":0,"replicas":[1]}]}'.encode("utf-16")),
    ("a UTF-8 byte order mark", b"\xef\xbb\xbf" + plan(entry())),
    ("a lone surrogate", b'{"partitions":[{"topic":"\\ud800","partition":0,"replicas":[1]}]}'),
    ("nested too deeply", b'{"partitions":' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
]


def through_the_api(raw: bytes) -> Targets | str:
    try:
        return [(tp, replicas) for tp, replicas in parse_alter_body(raw).targets if replicas is not None]
    except InvalidRequest as e:
        return str(e.message)


def through_the_znode(raw: bytes) -> Targets | str:
    try:
        return [((e.topic, e.partition), e.replicas) for e in admin_codec.decode_legacy_reassignment(raw)]
    except codec.CodecError as e:
        return e.reason


def through_the_tool(raw: bytes, tmp_path: Path) -> Targets | str:
    path = tmp_path / "plan.json"
    path.write_bytes(raw)
    try:
        return [(e.tp, e.replicas) for e in read_plan_file(str(path)).entries]
    except ValueError as e:
        return str(e)


@pytest.mark.parametrize(
    ("raw", "targets"), [(r, t) for _, r, t in ACCEPTED], ids=[n for n, _, _ in ACCEPTED]
)
def test_a_good_plan_is_taken_alike_by_all_three(raw: bytes, targets: Targets, tmp_path: Path) -> None:
    assert through_the_api(raw) == targets
    assert through_the_znode(raw) == targets
    assert through_the_tool(raw, tmp_path) == targets


@pytest.mark.parametrize(("raw", "reason"), [(r, m) for _, r, m in REFUSED], ids=[n for n, _, _ in REFUSED])
def test_a_bad_plan_is_refused_alike_by_all_three_for_the_same_reason(
    raw: bytes, reason: str, tmp_path: Path
) -> None:
    with pytest.raises(ValueError) as direct:
        parse_plan(raw)
    assert str(direct.value).startswith(reason)
    outcomes = {
        "api": through_the_api(raw),
        "znode": through_the_znode(raw),
        "tool": through_the_tool(raw, tmp_path),
    }
    for door, outcome in outcomes.items():
        assert isinstance(outcome, str), (door, outcome)
        assert reason in outcome, (door, outcome)


@pytest.mark.parametrize(
    "raw", [r for _, r in REFUSED_BEFORE_THE_PLAN], ids=[n for n, _ in REFUSED_BEFORE_THE_PLAN]
)
def test_what_is_not_a_plan_is_refused_by_all_three(raw: bytes, tmp_path: Path) -> None:
    outcomes = {
        "api": through_the_api(raw),
        "znode": through_the_znode(raw),
        "tool": through_the_tool(raw, tmp_path),
    }
    assert all(isinstance(o, str) and o for o in outcomes.values()), outcomes


def test_an_integral_2_0_is_2_to_the_api_and_the_tool_and_refused_in_the_znode_as_kafka_refuses_it(
    tmp_path: Path,
) -> None:
    """JSON Schema's integer, and a user, take 1.0 for 1: the HTTP door and the plan file do. The
    znode is Kafka's: its controller refuses 1.0, so reassignd's reader of it does too."""
    raw = plan(entry(partition=1.0, replicas=(2.0, 3e0)))
    targets = [(("t", 1), (2, 3))]
    assert through_the_api(raw) == targets
    assert through_the_tool(raw, tmp_path) == targets
    refused = through_the_znode(raw)
    assert isinstance(refused, str) and "expected a non-negative integer, got a number" in refused

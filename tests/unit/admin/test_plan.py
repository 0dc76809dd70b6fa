"""``reassignd admin reassign``'s pure parts: plans in, Kafka's JSON and lines out.

The expected strings are Kafka 3.x ``kafka-reassign-partitions``' own (ReassignPartitionsCommand)
wherever Kafka prints something for the case.
"""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reassignd.admin import report
from reassignd.admin.plan import legacy_entries, plan_json, plan_request
from reassignd.admin.settings import Verb, check_arguments, parse_controller_url
from reassignd.api_client.errors import ResponseError
from reassignd.api_client.shapes import (
    cancel_request,
    decode,
    partition_results,
    partitions_by_id,
    reassignments_by_partition,
)
from reassignd.contracts.cluster import Topic
from reassignd.contracts.reassignments import (
    AlterReassignmentsResponse,
    ListReassignmentsResponse,
    PartitionResult,
    Progress,
    Reassignment,
)
from reassignd.plan_format import Plan, PlanEntry, PlanError, parse_plan
from reassignd.topic_partition import Replicas, TopicPartition
from reassignd.zk.admin_codec import (
    LegacyReassignmentEntry,
    decode_legacy_reassignment,
    encode_legacy_reassignment,
)

# --- parsing ---------------------------------------------------------------------------------------


def test_a_kafka_plan_is_read_in_file_order() -> None:
    plan = parse_plan(
        b'{"version":1,"partitions":['
        b'{"topic":"foo","partition":1,"replicas":[4,5,6],"log_dirs":["any","/data/b","any"]},'
        b'{"topic":"bar","partition":0,"replicas":[2,1]}]}'
    )
    assert plan.entries == (
        PlanEntry("foo", 1, (4, 5, 6), ("any", "/data/b", "any")),
        PlanEntry("bar", 0, (2, 1), ("any", "any")),
    )
    assert plan.partitions == [("bar", 0), ("foo", 1)]
    assert plan.topics == ["bar", "foo"]
    assert plan.pins_log_dirs


def test_version_defaults_to_1_and_unknown_keys_are_ignored_as_kafka_does() -> None:
    plan = parse_plan(
        '{"partitions":[{"topic":"t","partition":0,"replicas":[1],"original_replicas":[2]}],"x":1}'
    )
    assert plan.targets == {("t", 0): (1,)}
    assert not plan.pins_log_dirs


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "the plan is empty"),
        ("{", "invalid JSON at byte 2"),
        (b"\xff", "not valid UTF-8 at byte 1"),
        ('{"version": NaN, "partitions": []}', "invalid JSON: NaN is not a JSON value"),
        ("[]", 'expected a JSON object {"version": 1, "partitions": [...]}, got an array'),
        ('{"version":2,"partitions":[]}', "version: Not supported version field value 2 (only 1 exists)"),
        ('{"version":"1","partitions":[]}', "version: expected an integer, got a string"),
        ('{"version":1}', "missing required field 'partitions'"),
        ('{"version":1,"version":1,"partitions":[]}', 'invalid JSON: duplicate key "version"'),
        ('{"partitions":{}}', "partitions: expected an array, got an object"),
        ('{"partitions":[]}', "partitions: Partition reassignment list cannot be empty"),
        ('{"partitions":[1]}', "partitions[0]: expected an object, got an integer"),
        ('{"partitions":[{"partition":0,"replicas":[1]}]}', "partitions[0]: missing required field 'topic'"),
        (
            '{"partitions":[{"topic":"t","partition":0}]}',
            "partitions[0]: missing required field 'replicas'",
        ),
        (
            '{"partitions":[{"topic":"a b","partition":0,"replicas":[1]}]}',
            'partitions[0].topic: Topic name "a b" is illegal, it contains a character other than',
        ),
        (
            '{"partitions":[{"topic":"t","partition":-1,"replicas":[1]}]}',
            "partitions[0].partition: expected a non-negative integer up to 2147483647, got -1",
        ),
        (
            '{"partitions":[{"topic":"t","partition":true,"replicas":[1]}]}',
            "partitions[0].partition: expected a non-negative integer, got a boolean",
        ),
        (
            '{"partitions":[{"topic":"t","partition":0,"replicas":"1,2"}]}',
            "partitions[0].replicas: expected a list of broker ids, got a string",
        ),
        (
            '{"partitions":[{"topic":"t","partition":0,"replicas":[1,-2]}]}',
            "partitions[0].replicas[1]: expected a non-negative integer up to 2147483647, got -2",
        ),
        (
            '{"partitions":[{"topic":"t","partition":0,"replicas":[1,2147483648]}]}',
            "partitions[0].replicas[1]: expected a non-negative integer up to 2147483647, got 2147483648",
        ),
        (
            '{"partitions":[{"topic":"t","partition":0,"replicas":[]}]}',
            "partitions[0].replicas: Partition replica list cannot be empty (partition t-0)",
        ),
        (
            '{"partitions":[{"topic":"t","partition":3,"replicas":[1,2,1,2,5]}]}',
            "partitions[0].replicas: Partition replica lists may not contain duplicate entries: "
            "t-3 contains multiple entries for 1,2",
        ),
        (
            '{"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}',
            "partitions[0].log_dirs: Size of replicas list [1, 2] is different from size of log dirs "
            "list ['any'] for partition t-0",
        ),
        (
            '{"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":[7]}]}',
            "partitions[0].log_dirs[0]: expected a string, got an integer",
        ),
        (
            '{"partitions":[{"topic":"t","partition":0,"replicas":[1]},'
            '{"topic":"u","partition":0,"replicas":[1]},{"topic":"t","partition":0,"replicas":[2]}]}',
            "Partition reassignment contains duplicate topic partitions: t-0",
        ),
    ],
)
def test_an_unusable_plan_is_refused_with_one_line(text: str | bytes, reason: str) -> None:
    with pytest.raises(PlanError) as refused:
        parse_plan(text)
    assert str(refused.value).startswith(reason)
    assert "\n" not in str(refused.value)


# --- rendering -------------------------------------------------------------------------------------


def test_rollback_json_is_kafkas_compact_sorted_format() -> None:
    current = {("foo", 2): (1, 2, 3), ("bar", 10): (3, 1), ("bar", 9): (2,)}
    assert plan_json(current) == (
        '{"version":1,"partitions":['
        '{"topic":"bar","partition":9,"replicas":[2],"log_dirs":["any"]},'
        '{"topic":"bar","partition":10,"replicas":[3,1],"log_dirs":["any","any"]},'
        '{"topic":"foo","partition":2,"replicas":[1,2,3],"log_dirs":["any","any","any"]}]}'
    )


def test_rollback_text_is_kafkas() -> None:
    assert report.rollback_text({("t", 0): (1, 2)}).split("\n") == [
        "Current partition replica assignment",
        "",
        '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}',
        "",
        "Save this to use as the --reassignment-json-file option during rollback",
    ]


topic_names = st.text("abcXYZ019._-", min_size=1, max_size=12).filter(lambda t: t not in (".", ".."))
assignments = st.dictionaries(
    st.tuples(topic_names, st.integers(0, 2**31 - 1)),
    st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=6, unique=True).map(tuple),
    min_size=1,
    max_size=20,
)


@given(assignments)
def test_printed_rollback_json_reads_back_as_the_same_plan(
    assignment: dict[tuple[str, int], tuple[int, ...]],
) -> None:
    plan = parse_plan(plan_json(assignment))
    assert plan.targets == assignment
    assert [e.tp for e in plan.entries] == sorted(assignment)  # sorted by topic, then partition
    assert plan_json(plan.targets) == plan_json(assignment)


def test_the_request_body_is_the_normalised_plan() -> None:
    plan = parse_plan(
        '{"partitions":[{"topic":"b","partition":1,"replicas":[3]},{"topic":"a","partition":0,"replicas":[1,2]}]}'
    )
    assert msgspec.json.decode(msgspec.json.encode(plan_request(plan))) == {
        "version": 1,
        "partitions": [
            {"topic": "a", "partition": 0, "replicas": [1, 2], "log_dirs": ["any", "any"]},
            {"topic": "b", "partition": 1, "replicas": [3], "log_dirs": ["any"]},
        ],
    }
    assert msgspec.json.decode(msgspec.json.encode(cancel_request(plan.partitions))) == {
        "topics": [
            {"name": "a", "partitions": [{"partition": 0, "replicas": None}]},
            {"name": "b", "partitions": [{"partition": 1, "replicas": None}]},
        ]
    }


def test_legacy_entries_record_the_original_replicas() -> None:
    plan = parse_plan(
        '{"partitions":[{"topic":"t","partition":1,"replicas":[4,5]},{"topic":"t","partition":0,"replicas":[2,3]}]}'
    )
    entries = legacy_entries(plan, {("t", 0): (1, 2), ("t", 1): (1, 3)})
    assert entries == (
        LegacyReassignmentEntry("t", 0, (2, 3), (1, 2)),
        LegacyReassignmentEntry("t", 1, (4, 5), (1, 3)),
    )
    assert decode_legacy_reassignment(encode_legacy_reassignment(entries)) == entries


# --- the lines -------------------------------------------------------------------------------------


def ok(t: str, p: int) -> tuple[TopicPartition, PartitionResult]:
    return (t, p), PartitionResult(p, 0, "NONE", None)


def moving_entry(
    tp: TopicPartition,
    replicas: Replicas,
    adding: Replicas,
    removing: Replicas,
    progress: Progress | None = None,
) -> Reassignment:
    """A partition being reassigned, as the controller lists it (the fields the tools read)."""
    return Reassignment(tp[1], replicas, adding, removing, replicas, replicas, "api", None, progress)


def test_execute_lines() -> None:
    assert report.started_line([("foo", 0)]) == "Successfully started partition reassignment for foo-0"
    assert report.started_line([("foo", 1), ("bar", 0), ("foo", 0)]) == (
        "Successfully started partition reassignments for bar-0,foo-0,foo-1"
    )
    failed = [
        (("t", 3), PartitionResult(3, 3, "UNKNOWN_TOPIC_OR_PARTITION", "The partition does not exist.")),
        (("t", 1), PartitionResult(1, 39, "INVALID_REPLICA_ASSIGNMENT", "Duplicate replica ids in [1, 1]")),
    ]
    assert report.execute_errors(failed) == [
        "Error reassigning partition(s):",
        "t-1: INVALID_REPLICA_ASSIGNMENT: Duplicate replica ids in [1, 1]",
        "t-3: UNKNOWN_TOPIC_OR_PARTITION: The partition does not exist.",
    ]


def test_cancel_lines() -> None:
    assert report.cancelled_line([("foo", 1)]) == "Successfully cancelled partition reassignment for: foo-1"
    assert report.cancelled_line([("foo", 1), ("bar", 0)]) == (
        "Successfully cancelled partition reassignments for: bar-0,foo-1"
    )
    assert report.not_moving_line([("t", 2)]) == "No partition reassignment was in progress for: t-2"
    failed = [(("t", 0), PartitionResult(0, 39, "INVALID_REPLICA_ASSIGNMENT", "Unable to revert ..."))]
    assert report.cancel_errors(failed) == [
        "Error cancelling partition reassignment for:",
        "t-0: INVALID_REPLICA_ASSIGNMENT: Unable to revert ...",
    ]


def test_verify_decides_as_kafka() -> None:
    targets = {("t", 0): (4, 5, 6), ("t", 1): (1, 2), ("t", 2): (2, 1), ("t", 3): (1,), ("gone", 0): (1,)}
    moving = {("t", 0): moving_entry(("t", 0), (4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3))}
    current = {("t", 0): (4, 5, 6, 1, 2, 3), ("t", 1): (1, 2), ("t", 2): (1, 2), ("t", 3): (1,)}
    states = report.verify_states(targets, moving, current)
    assert [s.tp for s in states] == [("gone", 0), ("t", 0), ("t", 1), ("t", 2), ("t", 3)]
    assert report.verify_lines(states) == [
        "Status of partition reassignment:",
        "There is no active reassignment of partition gone-0, and the partition does not exist.",
        "Reassignment of partition t-0 is still in progress.",
        "Reassignment of partition t-1 is complete.",
        "There is no active reassignment of partition t-2, but replica set is 1,2 rather than 2,1.",
        "Reassignment of partition t-3 is complete.",
    ]


def test_list_lines_are_kafkas_plus_progress() -> None:
    assert report.list_lines({}) == ["No partition reassignments found."]
    moving = {
        ("t", 1): moving_entry(("t", 1), (1, 2, 3), (), (3,)),
        ("t", 0): moving_entry(
            ("t", 0),
            (4, 5, 6, 1, 2, 3),
            (4, 5, 6),
            (1, 2, 3),
            Progress(bytes_total=3 * 2**30, bytes_done=2**30, bytes_per_s=50 * 2**20, eta_s=41),
        ),
    }
    assert report.list_lines(moving) == [
        "Current partition reassignments:",
        "t-0: replicas: 4,5,6,1,2,3. adding: 4,5,6. removing: 1,2,3. "
        "progress: 33% (1.0 GiB of 3.0 GiB), 50.0 MiB/s, about 41 s left.",
        "t-1: replicas: 1,2,3. removing: 3.",
    ]
    assert report.progress_text(0, 0, None, None) == "progress: 0% (0 B of 0 B)."
    assert report.bytes_text(1536) == "1.5 KiB"


def test_pending_legacy_lines_show_the_original_replicas() -> None:
    entries = (
        LegacyReassignmentEntry("t", 25, (832, 679, 680), (832, 679, 681)),
        LegacyReassignmentEntry("a", 0, (1,)),
    )
    assert report.pending_lines(entries, "/admin/reassign_partitions") == [
        "Rolling back the current pending reassignments in /admin/reassign_partitions:",
        "a-0: replicas: 1. original_replicas: unknown (not yet accepted by the controller)",
        "t-25: replicas: 832,679,680. original_replicas: 832,679,681.",
    ]
    assert report.pending_lines((), "/admin/reassign_partitions") == [
        "There are no pending reassignments in /admin/reassign_partitions."
    ]


# --- the controller's answers ----------------------------------------------------------------------


def test_decode_the_controllers_answers() -> None:
    """The answers decoded into the contract's structs, then flattened by partition."""
    alter = {
        "throttle_time_ms": 0,
        "error_code": 0,
        "error_name": "NONE",
        "error_message": None,
        "responses": [
            {
                "name": "t",
                "partitions": [
                    {"partition": 0, "error_code": 0, "error_name": "NONE", "error_message": None},
                    {
                        "partition": 1,
                        "error_code": 85,
                        "error_name": "NO_REASSIGNMENT_IN_PROGRESS",
                        "error_message": None,
                    },
                ],
            }
        ],
    }
    assert partition_results(decode(alter, AlterReassignmentsResponse)) == [
        ok("t", 0),
        (("t", 1), PartitionResult(1, 85, "NO_REASSIGNMENT_IN_PROGRESS", None)),
    ]
    moving = {"partition": 0, "replicas": [4, 1], "adding_replicas": [4], "removing_replicas": [1]}
    listed = {
        "error_code": 0,
        "error_name": "NONE",
        "error_message": None,
        "topics": [
            {
                "name": "t",
                "partitions": [
                    moving
                    | {
                        "target_replicas": [4],
                        "original_replicas": [1],
                        "source": "api",
                        "started_at": None,
                        "progress": {"bytes_total": 10, "bytes_done": 5, "bytes_per_s": 2, "eta_s": None},
                        "a_later_field": "ignored",
                    }
                ],
            }
        ],
    }
    assert reassignments_by_partition(decode(listed, ListReassignmentsResponse)) == {
        ("t", 0): Reassignment(0, (4, 1), (4,), (1,), (4,), (1,), "api", None, Progress(10, 5, 2, None))
    }
    topic = {
        "name": "t",
        "topic_id": None,
        "partitions": [
            {"partition": 1, "replicas": [4, 5, 1, 2], "adding_replicas": [4, 5], "removing_replicas": [1]}
            | {"leader": 1, "leader_epoch": 0, "isr": [1, 2]},
            {"partition": 0, "replicas": [2, 1], "adding_replicas": [], "removing_replicas": []}
            | {"leader": 2, "leader_epoch": 0, "isr": [2, 1]},
        ],
    }
    decoded = partitions_by_id(decode(topic, Topic))
    assert {p: (d.replicas, d.adding_replicas) for p, d in decoded.items()} == {
        1: ((4, 5, 1, 2), (4, 5)),
        0: ((2, 1), ()),
    }
    assert decoded[1].original == (1, 2)
    with pytest.raises(ResponseError, match=r"^Object missing required field `responses`$"):
        decode({k: v for k, v in alter.items() if k != "responses"}, AlterReassignmentsResponse)
    wrong = {**listed, "topics": [{"name": "t", "partitions": [{**moving, "replicas": 1}]}]}
    with pytest.raises(
        ResponseError,
        match=r"^Expected `array`, got `int` - at `\$\.topics\[0\]\.partitions\[0\]\.replicas`$",
    ):
        decode(wrong, ListReassignmentsResponse)


# --- settings --------------------------------------------------------------------------------------


def test_controller_urls() -> None:
    assert parse_controller_url("http://127.0.0.1:8080/") == "http://127.0.0.1:8080"
    assert parse_controller_url("localhost:8080") == "http://localhost:8080"
    assert parse_controller_url("https://c.example") == "https://c.example"
    for bad in ("ftp://h:1", "http://h:1/v1", "http://h:99999", "http://", ""):
        with pytest.raises(ValueError):
            parse_controller_url(bad)


@pytest.mark.parametrize(
    ("verb", "plan", "bootstrap", "zk", "reason"),
    [
        (Verb.EXECUTE, None, "http://c", None, "--execute needs --reassignment-json-file FILE"),
        (Verb.LIST, "p.json", "http://c", None, "--list takes no --reassignment-json-file"),
        (Verb.CANCEL_ALL, None, None, "zk:2181", "--cancel-all needs --bootstrap-controller URL"),
        (Verb.ROLLBACK, None, "http://c", None, "--rollback needs --zk"),
        (Verb.ADDITIONAL, "p.json", None, None, "--additional needs --zk"),
    ],
)
def test_each_verb_gets_what_it_needs(
    verb: Verb, plan: str | None, bootstrap: str | None, zk: str | None, reason: str
) -> None:
    with pytest.raises(ValueError, match=reason):
        check_arguments(verb, plan, bootstrap_controller=bootstrap, zk_connect=zk)


def test_plan_value() -> None:
    entry = PlanEntry("t", 0, (1,), ("any",))
    assert Plan((entry,)).targets == {("t", 0): (1,)}
    assert json.loads(plan_json({})) == {"version": 1, "partitions": []}

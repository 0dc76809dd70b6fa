"""``reassignd admin elect``: its command line (Kafka's kafka-leader-election flags and JSON file),
the lines it prints (Kafka's), and a run against the real HTTP app in front of the fake
controller."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp.test_utils import TestServer

from reassignd.admin.elect import ElectionOutcome, report, run_elect
from reassignd.admin.elect_command import AdminElectCommand, ElectFileError, ElectSettings, parse_elect_file
from reassignd.api_client.errors import ResponseError
from reassignd.api_client.shapes import decode
from reassignd.config import ConfigError, load_command
from reassignd.contracts.reassignments import ElectLeadersResponse
from reassignd.controller.model.admin_requests import ElectionResult, ElectionType, ElectLeaders
from reassignd.http.app import build_app
from reassignd.testing.fake_view import SETTINGS, FakeView

URL = "http://127.0.0.1:8080"


def command(*args: str) -> ElectSettings:
    parsed = load_command(["admin", "elect", *args, "--bootstrap-controller", URL], {})
    assert isinstance(parsed, AdminElectCommand)
    return parsed.settings


# --- the command line ------------------------------------------------------------------------------


def test_the_three_ways_to_name_partitions(tmp_path: Path) -> None:
    every = command("--election-type", "PREFERRED", "--all-topic-partitions")
    assert (every.election_type, every.partitions) == ("preferred", None)
    assert every.body == {"election_type": "preferred", "partitions": None}
    one = command("--election-type", "unclean", "--topic", "t", "--partition", "3")
    assert (one.election_type, one.partitions) == ("unclean", (("t", 3),))
    assert one.body == {"election_type": "unclean", "partitions": [{"topic": "t", "partition": 3}]}
    path = tmp_path / "elect.json"
    path.write_text('{"partitions": [{"topic": "t", "partition": 0}, {"topic": "u", "partition": 1}]}')
    from_file = command("--election-type", "preferred", "--path-to-json-file", str(path))
    assert from_file.partitions == (("t", 0), ("u", 1))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--election-type", "clean", "--all-topic-partitions"],
            "--election-type: expected preferred or unclean",
        ),
        (["--election-type", "preferred", "--topic", "t"], "--topic and --partition go together"),
        (
            ["--election-type", "preferred", "--all-topic-partitions", "--partition", "1"],
            "--topic and --partition go together",
        ),
        (["--election-type", "preferred", "--topic", "t", "--partition", "-1"], "--partition: expected"),
        (["--election-type", "preferred", "--topic", "t", "--partition", "x"], "--partition: expected"),
        (["--election-type", "preferred", "--path-to-json-file", "/nonexistent.json"], "cannot read"),
    ],
)
def test_bad_arguments_are_refused(args: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        load_command(["admin", "elect", *args, "--bootstrap-controller", URL], {})
    assert message in str(refused.value)


def test_a_controller_url_is_needed() -> None:
    with pytest.raises(ConfigError, match="elect needs --bootstrap-controller"):
        load_command(["admin", "elect", "--election-type", "preferred", "--all-topic-partitions"], {})


def test_the_json_file_is_kafkas() -> None:
    data = b'{"version": 1, "partitions": [{"topic": "t", "partition": 2, "note": "x"}]}'
    assert parse_elect_file(data) == (("t", 2),)  # other members ignored, as Kafka's tool does


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty"),
        (b"[]", "expected an object, got an array"),
        (b"{}", "partitions: missing required field"),
        (b'{"partitions": []}', "partitions: no partition listed"),
        (b'{"partitions": [{"topic": "t"}]}', "partitions[0].partition: missing required field"),
        (
            b'{"partitions": [{"topic": "t", "partition": "0"}]}',
            "partitions[0].partition: expected an integer",
        ),
        (
            b'{"partitions": [{"topic": "t", "partition": 0}, {"topic": "t", "partition": 0}]}',
            "partitions[1]: t-0 is listed more than once",
        ),
    ],
)
def test_a_bad_json_file_is_refused(data: bytes, message: str) -> None:
    with pytest.raises(ElectFileError) as refused:
        parse_elect_file(data)
    assert message in str(refused.value)


# --- what it prints ----------------------------------------------------------------------------------


def test_kafkas_lines() -> None:
    outcomes = [
        ElectionOutcome(("t", 0), 0, None),
        ElectionOutcome(("t", 1), 0, None),
        ElectionOutcome(("t", 2), 84, "Leader election not needed for topic partition."),
        ElectionOutcome(("u", 0), 80, "The preferred leader was not available."),
    ]
    lines, failed = report("preferred", outcomes)
    assert failed
    assert lines == [
        "Successfully completed leader election (PREFERRED) for partitions t-0, t-1",
        "Valid replica already elected for partitions t-2",
        "Error completing leader election (PREFERRED) for partition: u-0: PREFERRED_LEADER_NOT_AVAILABLE (80): "
        "The preferred leader was not available.",
        "1 replica(s) could not be elected",
    ]
    assert report("unclean", []) == (["No partition needed a leader election (UNCLEAN)"], False)
    assert report("preferred", outcomes[2:3])[1] is False  # already led by a valid replica: done


def test_an_answer_of_another_shape_is_refused() -> None:
    answer = {"throttle_time_ms": 0, "error_code": 0, "error_name": "NONE", "error_message": None}
    with pytest.raises(ResponseError, match="replica_election_results"):
        decode(answer | {"results": []}, ElectLeadersResponse)


# --- a run ------------------------------------------------------------------------------------------


@pytest.fixture
async def served() -> AsyncIterator[tuple[FakeView, str]]:
    view = FakeView()
    server = TestServer(build_app(view, SETTINGS), host="127.0.0.1")
    await server.start_server()
    try:
        yield view, f"http://127.0.0.1:{server.port}"
    finally:
        await server.close()


async def test_a_run_posts_the_election_and_prints_the_outcome(served: tuple[FakeView, str]) -> None:
    view, url = served
    view.election_results = [
        ElectionResult("t", 0),
        ElectionResult("gone", 1, 3, "The partition does not exist."),
    ]
    out = io.StringIO()
    settings = ElectSettings("preferred", (("t", 0), ("gone", 1)), url, request_timeout_s=10)
    assert await run_elect(settings, out) == 1
    assert view.requests == [ElectLeaders(ElectionType.PREFERRED, (("t", 0), ("gone", 1)))]
    assert out.getvalue().splitlines() == [
        "Successfully completed leader election (PREFERRED) for partitions t-0",
        "Error completing leader election (PREFERRED) for partition: gone-1: UNKNOWN_TOPIC_OR_PARTITION (3): "
        "The partition does not exist.",
        "1 replica(s) could not be elected",
    ]

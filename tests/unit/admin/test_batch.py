"""``reassignd admin batch``: the batch file, the command line, the lines it prints, and each verb
run against the real HTTP app in front of the fake controller (whose batches are the executor's
own); the console script as a process for the exit codes."""

from __future__ import annotations

import io
import json
import re
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import msgspec
import pytest
from aiohttp.test_utils import TestServer

from reassignd.admin.batch import run_batch, run_verb
from reassignd.admin.batch_command import AdminBatchCommand, BatchSettings, BatchVerb
from reassignd.admin.batch_file import BatchBody, BatchFileError, parse_batch_file
from reassignd.admin.batch_report import describe_lines, list_lines, submitted_lines
from reassignd.api_client.errors import ApiError, ResponseError
from reassignd.api_client.shapes import decode
from reassignd.config import ConfigError, load_command, resolve_admin_batch
from reassignd.contracts.batches import Batches, BatchStatus, MoveCounts, SubmitBatchResponse
from reassignd.executor import lifecycle
from reassignd.executor.progress import MoveProgress, StuckRule, batch_status
from reassignd.http.app import build_app
from reassignd.http.auth import Principal, Role
from reassignd.http.routes.batches import status_json
from reassignd.log_setup import LogSettings
from reassignd.testing.fake_view import SETTINGS, FakeView
from tests.unit.command_line import reassignd
from tests.unit.http.batch_helpers import CLUSTER, NOV_23_10H_MS, fixed_clock, running_batch

URL = "http://127.0.0.1:8080"
GiB = 1024**3
MiB = 1024**2

ONE: dict[str, Any] = {
    "batch_id": "b1",
    "partitions": [{"topic": "orders", "partition": 0, "replicas": [4, 5, 6]}],
}
TWO: dict[str, Any] = {
    "partitions": [{"topic": "orders", "partition": 1, "replicas": [4, 5, 6], "expected_replicas": [1, 2, 3]}]
}


def raw(doc: Any) -> bytes:
    return json.dumps(doc).encode()


# --- the batch file --------------------------------------------------------------------------------


def test_one_body_an_array_or_a_batches_json() -> None:
    assert parse_batch_file(raw(ONE)) == (BatchBody("", ONE, "b1", 1),)
    assert parse_batch_file(raw([ONE, TWO])) == (
        BatchBody("[0]", ONE, "b1", 1),
        BatchBody("[1]", TWO, None, 1),
    )
    feed = {
        "plan_id": "p",
        "created_at": "...",
        "goals": ["decommission:1"],
        "batches": [ONE, TWO],
        "predicted": {},
    }
    assert [b.where for b in parse_batch_file(raw(feed))] == ["batches[0]", "batches[1]"]
    # an integral 2.0 is 2, as the HTTP door reads it; 2.5 is not
    assert parse_batch_file(raw(ONE).replace(b"[4, 5, 6]", b"[4.0, 5e0, 6]")) == (
        BatchBody("", ONE, "b1", 1),
    )
    with pytest.raises(BatchFileError, match=r"^partitions\[0\]\.replicas: .*item 0 is a number"):
        parse_batch_file(raw(ONE).replace(b"[4, 5, 6]", b"[4.5, 5, 6]"))


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (b"{", "invalid JSON: "),
        (b"7", "expected a POST /v1/batches body, an array of them or a batches.json, got an integer"),
        (b"[]", "no batch to submit"),
        (raw({"batches": {}}), "batches: expected an array, got an object"),
        (raw({"batches": []}), "no batch to submit"),
        (raw({}), "partitions: missing required field"),
        (raw({**ONE, "extra": 1}), "extra: unknown field"),
        (raw([ONE, 5]), "[1]: expected a JSON object, got an integer"),
        (
            raw({"batches": [ONE, {"partitions": [{"topic": "t", "partition": 0, "replicas": "1"}]}]}),
            "batches[1].partitions[0].replicas: expected a list of integers, got a string",
        ),
        (raw({"batches": [{**ONE, "batch_id": "a b"}]}), "batches[0].batch_id: expected 1-249 characters"),
        (
            raw({"batches": [{"partitions": ONE["partitions"] * 2}]}),
            "batches[0]: partition orders-0 is listed twice",
        ),
        (raw({"partitions": ONE["partitions"] * 2}), "partition orders-0 is listed twice"),
        (raw([ONE, TWO, ONE]), "[2].batch_id: 'b1' is also [0]'s batch id"),
        (b'{"partitions": [], "partitions": []}', "partitions: duplicate field"),
    ],
)
def test_a_file_the_controller_would_refuse_fails_whole_naming_the_body_and_field(
    doc: bytes, message: str
) -> None:
    with pytest.raises(BatchFileError) as caught:
        parse_batch_file(doc)
    assert str(caught.value).startswith(message), str(caught.value)


# --- the command line ------------------------------------------------------------------------------


def fake_read(path: str) -> tuple[BatchBody, ...]:
    assert path == "batches.json"
    return (BatchBody("", ONE, "b1", 1),)


def test_flags_env_and_file_as_for_every_admin_client() -> None:
    command = resolve_admin_batch(
        BatchVerb.SUBMIT,
        "batches.json",
        None,
        {"auth-token": "from-flag"},
        {"REASSIGND_BOOTSTRAP_CONTROLLER": "127.0.0.1:8080", "REASSIGND_AUTH_TOKEN": "from-env"},
        {"request-timeout-s": 5},
        read_file=fake_read,
    )
    assert command == AdminBatchCommand(
        BatchSettings(
            verb=BatchVerb.SUBMIT,
            bootstrap_controller=URL,
            batch_file="batches.json",
            bodies=(BatchBody("", ONE, "b1", 1),),
            auth_token="from-flag",
            request_timeout_s=5.0,
        ),
        LogSettings("warning", "text"),
    )


def test_argv_to_settings(tmp_path: Path) -> None:
    http = ["--bootstrap-controller", URL]
    listed = load_command(["admin", "batch", "list", *http], {})
    assert isinstance(listed, AdminBatchCommand)
    assert listed.settings == BatchSettings(BatchVerb.LIST, URL)
    for verb in ("describe", "pause", "resume", "stop", "rollback"):
        command = load_command(["admin", "batch", verb, "b1.rollback", *http], {})
        assert isinstance(command, AdminBatchCommand)
        assert command.settings == BatchSettings(BatchVerb(verb), URL, batch_id="b1.rollback")
    batches = tmp_path / "batches.json"
    batches.write_text(json.dumps({"batches": [ONE]}))
    command = load_command(["admin", "batch", "submit", "--batch-file", str(batches), *http], {})
    assert isinstance(command, AdminBatchCommand)
    assert command.settings.bodies == (BatchBody("batches[0]", ONE, "b1", 1),)
    with pytest.raises(ConfigError, match=r"^list needs --bootstrap-controller URL"):
        load_command(["admin", "batch", "list"], {})
    with pytest.raises(ConfigError, match=r"^batch id 'a/b': expected 1-249 characters"):
        load_command(["admin", "batch", "stop", "a/b", *http], {})
    with pytest.raises(ConfigError, match=r"^cannot read --batch-file .*nope\.json: No such file"):
        load_command(["admin", "batch", "submit", "--batch-file", str(tmp_path / "nope.json"), *http], {})
    batches.write_text(json.dumps({"batches": [{"partitions": [{"topic": "t"}]}]}))
    with pytest.raises(
        ConfigError, match=r"batches\.json: batches\[0\]\.partitions\[0\]\.partition: missing"
    ):
        load_command(["admin", "batch", "submit", "--batch-file", str(batches), *http], {})


# --- the lines -------------------------------------------------------------------------------------


def shown_status(**progress: MoveProgress) -> dict[str, Any]:
    batch = running_batch(NOV_23_10H_MS)
    sizes = {("orders", p): GiB for p in range(4)}
    moves = {
        ("orders", 0): MoveProgress(GiB, 3 * GiB, 50.0 * MiB),
        ("orders", 1): MoveProgress(0, 3 * GiB, 0.0),
    }
    computed = batch_status(batch, moves, sizes, NOV_23_10H_MS + 700_000, StuckRule(600_000, MiB))
    return cast(dict[str, Any], msgspec.json.decode(msgspec.json.encode(status_json(computed))))


def test_describe_lines() -> None:
    status = decode(shown_status(), BatchStatus)
    assert describe_lines(status) == [
        "Batch b1: running (plan p, priority 0).",
        "created 2026-11-23T10:00:00Z, updated 2026-11-23T10:00:01Z.",
        "moves: 1 pending, 2 running, 1 completed, 0 cancelled, 0 failed.",
        "progress: 33% (4.0 GiB of 12.0 GiB), 50.0 MiB/s, about 164 s left.",
        "limits: 5 moves per broker, 100 in the cluster, 100 leader moves per broker. throttle: 1000 B/s.",
        "throttles set on brokers: 4,5; topics: orders.",
        "Running moves:",
        "orders-0: 1,2,3 -> 4,5,6. started 2026-11-23T10:00:00Z. progress: 33% (1.0 GiB of 3.0 GiB), "
        "50.0 MiB/s, about 41 s left.",
        "orders-1: 1,2,3 -> 4,5,6. started 2026-11-23T10:00:00Z. progress: 0% (0 B of 3.0 GiB), 0 B/s. STUCK",
        "Stuck moves: orders-1",
    ]


def test_adaptive_limits_and_the_caps_now_are_described() -> None:
    shown = shown_status()
    shown["limits"] = {**shown["limits"], "adaptive": {"min": 1, "max": 20}}
    shown |= {"broker_caps": {"4": 8, "5": 3}, "owner": "ops"}
    lines = describe_lines(decode(shown, BatchStatus))
    assert lines[0] == "Batch b1: running (owner ops, plan p, priority 0)."
    assert lines[4] == (
        "limits: 5 moves per broker, 100 in the cluster, 100 leader moves per broker. adaptive: 1 to 20 "
        "moves per broker. caps now: 4: 8, 5: 3. throttle: 1000 B/s."
    )


def test_list_lines() -> None:
    listed = decode(
        {"batches": [{k: v for k, v in shown_status().items() if k != "running"}]}, Batches
    ).batches
    assert list_lines(listed) == [
        "b1: running. moves: 1 pending, 2 running, 1 completed. progress: 33% (4.0 GiB of 12.0 GiB), "
        "50.0 MiB/s, about 164 s left. 1 stuck."
    ]
    assert list_lines([]) == ["No batches."]
    finished = msgspec.structs.replace(
        listed[0], state="completed", counts=MoveCounts(0, 0, 4, 0, 0), stuck=(), bytes_done=12 * GiB
    )
    assert list_lines([finished]) == [
        "b1: completed. moves: 4 completed. progress: 100% (12.0 GiB of 12.0 GiB)."
    ]


def test_submitted_lines() -> None:
    answer: dict[str, Any] = {
        "batch": shown_status(),
        "partitions": [
            {"topic": "orders", "partition": 0, "error_code": 0, "error_name": "NONE", "error_message": None},
            {
                "topic": "orders",
                "partition": 9,
                "error_code": 10002,
                "error_name": "STALE_PLAN",
                "error_message": "orders-9 has replicas [1, 2, 3], the plan expected [3, 2, 1]",
            },
        ],
        "created": True,
    }
    assert submitted_lines(decode(answer, SubmitBatchResponse)) == [
        "Submitted batch b1: 1 partition accepted, 1 refused. state: running.",
        "Refused partition of batch b1:",
        "orders-9: STALE_PLAN: orders-9 has replicas [1, 2, 3], the plan expected [3, 2, 1]",
    ]
    again = decode({**answer, "partitions": answer["partitions"][:1], "created": False}, SubmitBatchResponse)
    assert submitted_lines(again) == [
        "Batch b1 was submitted before with this body: 1 partition accepted, 0 refused. state: running."
    ]


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({}, "Object missing required field `batch_id`"),
        ({"batches": {}}, "Expected `array`, got `object` - at `$.batches`"),
        ({"batches": [{"batch_id": 1}]}, "Expected `str`, got `int` - at `$.batches[0].batch_id`"),
        ({"batches": [{"batch_id": "b1"}]}, "Object missing required field `plan_id` - at `$.batches[0]`"),
    ],
)
def test_answers_not_in_the_documented_shape(doc: Any, message: str) -> None:
    with pytest.raises(ResponseError, match=re.escape(message)):
        decode(doc, Batches if "batches" in doc else BatchStatus)


# --- each verb against the HTTP app --------------------------------------------------------------


@pytest.fixture
async def controller() -> AsyncIterator[tuple[FakeView, str]]:
    view = FakeView(current=CLUSTER, now_ms=fixed_clock)
    tokens = {"adm1n": Principal("alice", Role.ADMIN), "v1ew": Principal("bob", Role.VIEWER)}
    server = TestServer(build_app(view, SETTINGS, tokens=tokens), host="127.0.0.1")
    await server.start_server()
    try:
        yield view, f"http://127.0.0.1:{server.port}"
    finally:
        await server.close()


async def run(url: str, verb: BatchVerb, token: str = "adm1n", **fields: Any) -> tuple[int, list[str]]:
    out = io.StringIO()
    code = await run_verb(BatchSettings(verb, url, auth_token=token, request_timeout_s=10, **fields), out)
    return code, out.getvalue().splitlines()


async def test_submit_list_describe_and_the_controls(controller: tuple[FakeView, str]) -> None:
    view, url = controller
    refused = {
        "partitions": [{"topic": "orders", "partition": 1, "replicas": [4], "expected_replicas": [3, 2, 1]}]
    }
    bodies = (
        BatchBody("batches[0]", ONE, "b1", 1),
        BatchBody("batches[1]", {**ONE, "priority": 3}, "b1", 1),  # the same id, another body: 409
        BatchBody("batches[2]", refused, None, 1),
    )
    code, lines = await run(url, BatchVerb.SUBMIT, bodies=bodies)
    generated = next(b for b in view.current.batches if b != "b1")
    assert (code, lines) == (
        1,
        [
            "Submitted batch b1: 1 partition accepted, 0 refused. state: pending.",
            "Batch b1 not submitted: POST /v1/batches: HTTP 409 BATCH_ID_IN_USE (10004): batch id 'b1' is in "
            "use by a batch with another body",
            f"Submitted batch {generated}: 0 partitions accepted, 1 refused. state: completed.",
            f"Refused partition of batch {generated}:",
            "orders-1: STALE_PLAN: orders-1 has replicas [1, 2, 3], the plan expected [3, 2, 1]",
        ],
    )
    assert await run(url, BatchVerb.SUBMIT, bodies=bodies[:1]) == (
        0,
        ["Batch b1 was submitted before with this body: 1 partition accepted, 0 refused. state: pending."],
    )
    code, lines = await run(url, BatchVerb.LIST, token="v1ew")
    assert (code, sorted(lines)) == (
        0,
        sorted([f"{generated}: completed. moves: none.", "b1: pending. moves: 1 pending."]),
    )
    code, lines = await run(url, BatchVerb.DESCRIBE, token="v1ew", batch_id="b1")
    assert (code, lines[0], lines[2]) == (
        0,
        "Batch b1: pending (priority 0).",
        "moves: 1 pending, 0 running, 0 completed, 0 cancelled, 0 failed.",
    )
    assert await run(url, BatchVerb.PAUSE, batch_id="b1") == (0, ["Batch b1: paused. moves: 1 pending."])
    assert await run(url, BatchVerb.RESUME, batch_id="b1") == (0, ["Batch b1: pending. moves: 1 pending."])
    b1 = lifecycle.moves_started(view.current.batches["b1"], {("orders", 0): (1, 2, 3)}, NOV_23_10H_MS)
    view.set_batch(lifecycle.moves_completed(b1, [("orders", 0)], NOV_23_10H_MS))
    orders = view.current.topics["orders"]
    moved = msgspec.structs.replace(orders.partitions[0], replicas=(4, 5, 6), leader=4, isr=(4, 5, 6))
    view.current = replace(
        view.current, topics={"orders": replace(orders, partitions=(moved, *orders.partitions[1:]))}
    )
    assert await run(url, BatchVerb.ROLLBACK, batch_id="b1") == (
        0,
        ["Batch b1: rolled back. moves: 1 completed. Batch b1.rollback moves its completed partitions back."],
    )
    assert await run(url, BatchVerb.STOP, batch_id="b1.rollback") == (
        0,
        ["Batch b1.rollback: stopped. moves: 1 cancelled."],  # its move back to 1,2,3, not started
    )
    assert [a.value for _, a in view.controlled] == ["pause", "resume", "rollback", "stop"]


def test_a_failure_of_the_run_is_one_line_on_stderr_and_exit_1() -> None:
    """Synchronous: run_batch runs its own event loop."""
    out, err = io.StringIO(), io.StringIO()
    code = run_batch(BatchSettings(BatchVerb.LIST, "http://127.0.0.1:9", request_timeout_s=5), out, err)
    assert code == 1
    assert err.getvalue().startswith(
        "reassignd admin batch: error: cannot reach the controller at http://127.0.0.1:9"
    )
    assert out.getvalue() == ""


async def test_an_unknown_batch_or_a_refused_action_is_a_failure_of_the_run(
    controller: tuple[FakeView, str],
) -> None:
    _, url = controller
    with pytest.raises(ApiError, match=r"HTTP 404 INVALID_REQUEST \(42\): no batch 'nope'"):
        await run(url, BatchVerb.DESCRIBE, batch_id="nope")
    await run(url, BatchVerb.SUBMIT, bodies=(BatchBody("", {"batch_id": "e", "partitions": []}, "e", 0),))
    with pytest.raises(
        ApiError, match=r"HTTP 409 INVALID_REQUEST \(42\): batch e is completed: cannot pause it"
    ):
        await run(url, BatchVerb.PAUSE, batch_id="e")
    with pytest.raises(ApiError, match=r"HTTP 403 CLUSTER_AUTHORIZATION_FAILED"):
        await run(url, BatchVerb.STOP, token="v1ew", batch_id="e")


# --- the console script, as a process ---------------------------------------------------------------


def test_help() -> None:
    done = reassignd("admin", "batch", "--help")
    assert done.returncode == 0, done.stderr
    for verb in BatchVerb:
        assert verb.value in done.stdout
    done = reassignd("admin", "batch", "submit", "--help")
    assert done.returncode == 0, done.stderr
    for flag in (
        "--batch-file",
        "--bootstrap-controller",
        "--auth-token",
        "--config",
        "REASSIGND_AUTH_TOKEN",
    ):
        assert flag in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["admin", "batch"], "reassignd admin batch: error: choose a verb: submit, list, describe, pause"),
        (
            ["admin", "batch", "submit", "--bootstrap-controller", URL],
            "the following arguments are required: --batch-file",
        ),
        (
            ["admin", "batch", "describe", "--bootstrap-controller", URL],
            "the following arguments are required: ID",
        ),
        (["admin", "batch", "list"], "reassignd admin batch: error: list needs --bootstrap-controller URL"),
        (
            ["admin", "batch", "pause", "a/b", "--bootstrap-controller", URL],
            "reassignd admin batch: error: batch id 'a/b'",
        ),
        (["admin", "batch", "list", "x", "--bootstrap-controller", URL], "unrecognized arguments: x"),
        (
            ["admin", "batch", "submit", "--batch-file", "/nope", "--bootstrap-controller", URL],
            "reassignd admin batch: error: cannot read --batch-file /nope",
        ),
    ],
)
def test_bad_arguments_exit_2_with_one_line(args: list[str], message: str) -> None:
    done = reassignd(*args)
    assert done.returncode == 2, done
    assert message in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stdout == ""

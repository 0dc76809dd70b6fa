"""The batch endpoints (POST/GET /v1/batches, the controls), served by the real aiohttp app over a
real socket in front of the fake ControllerView, whose batches are the executor's own (submit,
pause, resume, stop, rollback); tiny real agents answer ``GET /replicas`` for the byte counts."""

from __future__ import annotations

import dataclasses
import io
import json
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import msgspec
import pytest

from reassignd.agent_reports.batch_inputs import batch_inputs, brokers_to_ask, partition_view
from reassignd.agent_reports.progress import index_reports
from reassignd.config import ConfigError, load_command
from reassignd.contracts.batches import BatchSummary
from reassignd.control.replicas_report import ReplicasReport
from reassignd.controller.api.port import ControllerView
from reassignd.controller.model.snapshot import BatchAction, BrokerView, PartitionView, TopicView
from reassignd.errors import InvalidRequest
from reassignd.executor import lifecycle
from reassignd.executor.model import (
    Adaptive,
    BatchMove,
    BatchMoveEnd,
    BatchSpec,
    Limits,
    PartitionSpec,
    Strategy,
)
from reassignd.executor.progress import MoveProgress, StuckRule, batch_status
from reassignd.http.auth import Principal, Role
from reassignd.http.batch_requests import BatchDefaults, parse_submit_body
from reassignd.http.routes.batches import list_json, new_batch_id, status_json, summary_json
from reassignd.testing.fake_view import ACTIVE, SETTINGS, Client, FakeView, call, serve
from tests.unit.http.batch_helpers import (
    BROKERS,
    CLUSTER,
    FULL,
    MALFORMED,
    NOV_23_10H_MS,
    MiB,
    fixed_clock,
    moving,
    running_batch,
)
from tests.unit.http.reassignment_helpers import Agent, info, report

NOV_23_10H = "2026-11-23T10:00:00Z"
DEFAULTS = BatchDefaults.of(SETTINGS)
DEFAULT_LIMITS = {
    "moves_per_broker": 5,
    "moves_in_cluster": 1000,
    "leader_moves_per_broker": 1000,
    "adaptive": None,
}
COUNTS_ZERO = dict.fromkeys(("pending", "running", "completed", "cancelled", "failed"), 0)


STANDBY = replace(ACTIVE, controller_id=9001, active=False)


@pytest.fixture
def view() -> FakeView:
    return FakeView(current=CLUSTER, now_ms=fixed_clock)


@pytest.fixture
async def client(view: FakeView) -> AsyncIterator[Client]:
    async with serve(view) as c:
        yield c


def body(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def test_the_fake_is_a_controller_view() -> None:
    fake: ControllerView = FakeView()  # mypy checks the protocol here
    assert fake.snapshot() is ACTIVE


# --- POST /v1/batches: parsing -----------------------------------------------------------------

FULL_SPEC = BatchSpec(
    batch_id="plan-7f3a-0001",
    partitions=(
        PartitionSpec("orders", 0, (4, 5, 6), (1, 2, 3)),
        PartitionSpec("orders", 1, (1, 2, 4)),
    ),
    limits=Limits(3, 100, 7),
    plan_id="plan-7f3a",
    priority=2,
    throttle_bytes_per_s=52428800,
    strategy=(Strategy.POSTPONE_UNDER_REPLICATED, Strategy.SMALL_FIRST),
)


def parse(doc: Any) -> BatchSpec:
    return parse_submit_body(body(doc), DEFAULTS, lambda: "b-generated")


def test_every_field_parses_into_the_spec() -> None:
    assert parse(FULL) == FULL_SPEC


def test_absent_fields_come_from_the_controllers_settings_and_the_id_is_generated() -> None:
    assert parse({"partitions": []}) == BatchSpec("b-generated", (), Limits(5, 1000, 1000))
    settings = replace(SETTINGS, batch_moves_per_broker=2, batch_leader_moves_per_broker=9)
    spec = parse_submit_body(
        body({"partitions": [], "limits": {"moves_in_cluster": 50}}), BatchDefaults.of(settings), new_batch_id
    )
    assert spec.limits == Limits(2, 50, 9)
    assert spec.batch_id.startswith("b-") and len(spec.batch_id) == 34
    assert spec.batch_id != new_batch_id()


def test_nullable_fields_may_be_null() -> None:
    doc = {"partitions": [{"topic": "t", "partition": 0, "replicas": [], "expected_replicas": None}]}
    spec = parse({**doc, "plan_id": None, "throttle_bytes_per_s": None, "strategy": []})
    assert spec == BatchSpec("b-generated", (PartitionSpec("t", 0, ()),), Limits(5, 1000, 1000))


P0 = '{"topic": "t", "partition": 0, "replicas": [1]}'


@pytest.mark.parametrize(("raw", "message"), MALFORMED, ids=[m for _, m in MALFORMED])
async def test_a_malformed_body_is_400_invalid_request_naming_the_field_and_submits_nothing(
    client: Client, view: FakeView, raw: bytes, message: str
) -> None:
    reply = await call(client, "POST", "/v1/batches", 400, data=raw)
    assert (reply["error_code"], reply["error_name"]) == (42, "INVALID_REQUEST")
    assert reply["error_message"].startswith(message), reply["error_message"]
    assert view.submitted == [] and view.current.batches == {}
    with pytest.raises(InvalidRequest):
        parse_submit_body(raw, DEFAULTS, new_batch_id)


async def test_log_dirs_not_one_per_replica_or_relative_are_400_and_submit_nothing(
    client: Client, view: FakeView
) -> None:
    for dirs, message in (
        ([], "partition t-0: log_dirs names 0 dirs for 1 replicas"),
        (["d1"], "partition t-0: log_dirs entries are absolute paths or 'any', got 'd1'"),
        # past 255 bytes in UTF-8: in 129 characters (the schema counts characters), or in 256
        (["/" + "é" * 128], "partition t-0: a log dir is at most 255 bytes in UTF-8, got 257"),
        (["/" + "d" * 255], "partition t-0: a log dir is at most 255 bytes in UTF-8, got 256"),
    ):
        doc = {"partitions": [{"topic": "t", "partition": 0, "replicas": [1], "log_dirs": dirs}]}
        reply = await call(client, "POST", "/v1/batches", 400, json=doc)
        assert reply["error_message"].startswith(message), reply
    assert view.submitted == []


async def test_a_partition_listed_twice_is_400_and_submits_nothing(client: Client, view: FakeView) -> None:
    doc = {"partitions": [json.loads(P0), {"topic": "t", "partition": 0, "replicas": [2]}]}
    reply = await call(client, "POST", "/v1/batches", 400, json=doc)
    assert reply["error_message"] == "partition t-0 is listed twice"
    assert view.submitted == []


async def test_a_query_parameter_is_400(client: Client, view: FakeView) -> None:
    reply = await call(client, "POST", "/v1/batches?batch_id=x", 400, json={"partitions": []})
    assert reply["error_message"].startswith("batch_id: unknown query parameter")
    assert view.submitted == []


async def test_a_20_mib_body_is_413_and_submits_nothing(client: Client, view: FakeView) -> None:
    resp = await client.post("/v1/batches", data=io.BytesIO(b" " * (20 * MiB)))
    assert resp.status == 413
    assert (await resp.json())["error_code"] == 42
    assert view.submitted == []


# --- POST /v1/batches: answers -----------------------------------------------------------------


def status(
    batch_id: str,
    state: str,
    *,
    counts: dict[str, int] | None = None,
    running: list[Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A status as the API shows it, with this module's defaults."""
    shown: dict[str, Any] = {
        "batch_id": batch_id,
        "plan_id": None,
        "owner": None,
        "state": state,
        "priority": 0,
        "created_at": NOV_23_10H,
        "updated_at": NOV_23_10H,
        "counts": {**COUNTS_ZERO, **(counts or {})},
        "bytes_total": 0,
        "bytes_done": 0,
        "bytes_per_s": 0,
        "eta_s": 0,
        "limits": DEFAULT_LIMITS,
        "broker_caps": {},
        "throttle_bytes_per_s": None,
    }
    if running is not None:
        shown["running"] = running
    shown |= {
        "stuck": [],
        "throttles": {"brokers": [], "topics": []},
        "rollback_of": None,
        "rollback_batch_id": None,
    }
    return {**shown, **fields}


def ok(topic: str, partition: int) -> dict[str, Any]:
    return {
        "topic": topic,
        "partition": partition,
        "error_code": 0,
        "error_name": "NONE",
        "error_message": None,
    }


async def test_submit_answers_the_batch_and_each_partitions_result(client: Client, view: FakeView) -> None:
    doc = {
        "batch_id": "plan-7f3a-0001",
        "plan_id": "plan-7f3a",
        "partitions": [
            {"topic": "orders", "partition": 0, "replicas": [4, 5, 6], "expected_replicas": [1, 2, 3]},
            {"topic": "orders", "partition": 1, "replicas": [4, 5, 6], "expected_replicas": [3, 2, 1]},
            {"topic": "orders", "partition": 2, "replicas": [2, 3, 1]},  # already there: done at once
            {"topic": "orders", "partition": 3, "replicas": [1, 1]},
            {"topic": "orders", "partition": 3000, "replicas": [4]},
            {"topic": "audit", "partition": 0, "replicas": [9]},
        ],
        "throttle_bytes_per_s": 52428800,
    }
    reply = await call(client, "POST", "/v1/batches", 200, json=doc)
    assert reply == {
        "batch": status(
            "plan-7f3a-0001",
            "pending",
            counts={"pending": 1, "completed": 1},
            running=[],
            plan_id="plan-7f3a",
            throttle_bytes_per_s=52428800,
        ),
        "partitions": [
            ok("orders", 0),
            {
                "topic": "orders",
                "partition": 1,
                "error_code": 10002,
                "error_name": "STALE_PLAN",
                "error_message": "orders-1 has replicas [1, 2, 3], the plan expected [3, 2, 1]",
            },
            ok("orders", 2),
            {
                "topic": "orders",
                "partition": 3,
                "error_code": 39,
                "error_name": "INVALID_REPLICA_ASSIGNMENT",
                "error_message": "Duplicate replica ids in partition reassignment replica list: [1, 1]",
            },
            {
                "topic": "orders",
                "partition": 3000,
                "error_code": 3,
                "error_name": "UNKNOWN_TOPIC_OR_PARTITION",
                "error_message": "The partition does not exist.",
            },
            {
                "topic": "audit",
                "partition": 0,
                "error_code": 39,
                "error_name": "INVALID_REPLICA_ASSIGNMENT",
                "error_message": "Replica assignment has brokers that are not alive. Replica list: [9], "
                "live broker list: [1, 2, 3, 4, 5, 6]",
            },
        ],
        "created": True,
    }
    [spec] = view.submitted
    assert spec.limits == Limits(5, 1000, 1000)  # the controller's defaults
    assert set(view.current.batches) == {"plan-7f3a-0001"}


async def test_a_batch_with_nothing_accepted_is_created_completed(client: Client) -> None:
    reply = await call(
        client,
        "POST",
        "/v1/batches",
        200,
        json={"partitions": [{"topic": "x", "partition": 0, "replicas": [1]}]},
    )
    assert reply["batch"]["state"] == "completed"
    assert reply["batch"]["batch_id"].startswith("b-")
    assert reply["partitions"][0]["error_name"] == "UNKNOWN_TOPIC_OR_PARTITION"
    assert reply["created"] is True


async def test_the_same_id_and_body_answer_the_same_batch(client: Client, view: FakeView) -> None:
    doc = {
        "batch_id": "b1",
        "partitions": [
            {"topic": "orders", "partition": 0, "replicas": [4, 5, 6]},
            {"topic": "orders", "partition": 1, "replicas": [4, 5, 6]},
        ],
    }
    first = await call(client, "POST", "/v1/batches", 200, json=doc)
    view.now_ms = lambda: NOV_23_10H_MS + 60_000
    # the partitions in another order, the defaults spelt out: the same body
    again = {**doc, "partitions": doc["partitions"][::-1], "priority": 0, "limits": DEFAULT_LIMITS}
    second = await call(client, "POST", "/v1/batches", 200, json=again)
    assert first["created"] is True and second["created"] is False
    assert second["batch"] == first["batch"]  # created at 10:00, not re-created
    assert len(view.current.batches) == 1


async def test_the_same_id_with_another_body_is_409_batch_id_in_use(client: Client, view: FakeView) -> None:
    doc = {"batch_id": "b1", "partitions": [{"topic": "orders", "partition": 0, "replicas": [4, 5, 6]}]}
    await call(client, "POST", "/v1/batches", 200, json=doc)
    for other in (
        {**doc, "priority": 1},
        {**doc, "partitions": [{"topic": "orders", "partition": 0, "replicas": [6, 5, 4]}]},
        {**doc, "strategy": ["small_first"]},
    ):
        reply = await call(client, "POST", "/v1/batches", 409, json=other)
        assert (reply["error_code"], reply["error_name"]) == (10004, "BATCH_ID_IN_USE")
        assert reply["error_message"] == "batch id 'b1' is in use by a batch with another body"
    assert view.current.batches["b1"].spec.priority == 0


async def test_a_partition_in_another_running_batch_is_refused_batch_conflict(client: Client) -> None:
    await call(
        client,
        "POST",
        "/v1/batches",
        200,
        json={"partitions": [{"topic": "orders", "partition": 0, "replicas": [4]}]},
    )
    reply = await call(
        client,
        "POST",
        "/v1/batches",
        200,
        json={
            "partitions": [
                {"topic": "orders", "partition": 0, "replicas": [5]},
                {"topic": "orders", "partition": 1, "replicas": [2, 3, 1]},
            ]
        },
    )
    assert [(p["partition"], p["error_code"], p["error_name"]) for p in reply["partitions"]] == [
        (0, 10003, "BATCH_CONFLICT"),
        (1, 0, "NONE"),
    ]


# --- GET /v1/batches and /v1/batches/{id} --------------------------------------------------------


async def test_list_and_describe(client: Client, view: FakeView) -> None:
    assert await call(client, "GET", "/v1/batches", 200) == {"batches": []}
    await call(client, "POST", "/v1/batches", 200, json={"batch_id": "zz", "partitions": []})
    view.now_ms = lambda: NOV_23_10H_MS + 1000
    await call(
        client,
        "POST",
        "/v1/batches",
        200,
        json={
            "batch_id": "aa",
            "priority": 5,
            "partitions": [{"topic": "orders", "partition": 0, "replicas": [4]}],
        },
    )
    at_1s = "2026-11-23T10:00:01Z"
    listed = await call(client, "GET", "/v1/batches", 200)
    assert listed == {
        "batches": [  # oldest first, without "running"
            status("zz", "completed"),
            status("aa", "pending", priority=5, counts={"pending": 1}, created_at=at_1s, updated_at=at_1s),
        ]
    }
    described = await call(client, "GET", "/v1/batches/aa", 200)
    assert described == status(
        "aa", "pending", priority=5, counts={"pending": 1}, running=[], created_at=at_1s, updated_at=at_1s
    )


async def test_an_unknown_batch_is_404(client: Client, view: FakeView) -> None:
    reply = await call(client, "GET", "/v1/batches/nope", 404)
    assert reply == {"error_code": 42, "error_name": "INVALID_REQUEST", "error_message": "no batch 'nope'"}
    for action in BatchAction:
        reply = await call(client, "POST", f"/v1/batches/nope/{action}", 404)
        assert reply["error_message"] == "no batch 'nope'"


async def test_a_standby_answers_503_not_controller_to_every_batch_route(view: FakeView) -> None:
    view.current = STANDBY
    async with serve(view) as c:
        routes: list[tuple[str, str, dict[str, Any]]] = [
            ("GET", "/v1/batches", {}),
            ("GET", "/v1/batches/b1", {}),
            ("POST", "/v1/batches", {"json": {"partitions": []}}),
            *(("POST", f"/v1/batches/b1/{a}", {}) for a in BatchAction),
        ]
        for method, path, kwargs in routes:
            reply = await call(c, method, path, 503, **kwargs)
            assert reply["error_code"] == 41, path
            assert reply["active_controller"] == {"id": 9000, "http": "http://127.0.0.1:8080"}
        # a malformed body is refused on a standby too, before anything else
        await call(c, "POST", "/v1/batches", 400, json={})


TOKENS = {"v1ew": Principal("bob", Role.VIEWER), "adm1n": Principal("alice", Role.ADMIN)}


async def test_reading_needs_a_viewer_and_writing_an_admin(view: FakeView) -> None:
    viewer = {"Authorization": "Bearer v1ew"}
    admin = {"Authorization": "Bearer adm1n"}
    doc = {"batch_id": "b1", "partitions": []}
    async with serve(view, TOKENS) as c:
        for method, path in [
            ("GET", "/v1/batches"),
            ("GET", "/v1/batches/b1"),
            ("POST", "/v1/batches/b1/stop"),
        ]:
            assert (await c.request(method, path)).status == 401
        assert (await c.post("/v1/batches", json=doc)).status == 401
        denied = await call(c, "POST", "/v1/batches", 403, json=doc, headers=viewer)
        assert denied["error_code"] == 31
        assert view.submitted == []
        await call(c, "POST", "/v1/batches", 200, json=doc, headers=admin)
        await call(c, "GET", "/v1/batches", 200, headers=viewer)
        await call(c, "GET", "/v1/batches/b1", 200, headers=viewer)
        for action in BatchAction:
            await call(c, "POST", f"/v1/batches/b1/{action}", 403, headers=viewer)
        assert view.controlled == []
        await call(c, "POST", "/v1/batches/b1/stop", 409, headers=admin)  # completed: nothing to stop
        assert view.controlled == [("b1", BatchAction.STOP)]


# --- the controls --------------------------------------------------------------------------------

MOVES = {"partitions": [{"topic": "orders", "partition": p, "replicas": [4, 5, 6]} for p in (0, 1, 2)]}


async def test_pause_resume_and_stop(client: Client, view: FakeView) -> None:
    await call(client, "POST", "/v1/batches", 200, json={"batch_id": "b1", **MOVES})
    paused = await call(client, "POST", "/v1/batches/b1/pause", 200)
    assert paused == status("b1", "paused", counts={"pending": 3}, running=[])
    assert (await call(client, "POST", "/v1/batches/b1/pause", 200))["state"] == "paused"  # again: no change
    assert (await call(client, "POST", "/v1/batches/b1/resume", 200))["state"] == "pending"
    # one move running, one completed, then a stop
    b1 = view.current.batches["b1"]
    b1 = lifecycle.moves_started(b1, {("orders", 0): (1, 2, 3), ("orders", 1): (1, 2, 3)}, NOV_23_10H_MS)
    view.set_batch(lifecycle.moves_completed(b1, [("orders", 1)], NOV_23_10H_MS))
    stopped = await call(client, "POST", "/v1/batches/b1/stop", 200)
    assert (stopped["state"], stopped["counts"], stopped["running"]) == (
        "stopped",
        {**COUNTS_ZERO, "completed": 1, "cancelled": 2},
        [],
    )
    assert (await call(client, "POST", "/v1/batches/b1/stop", 200))["state"] == "stopped"
    refused = await call(client, "POST", "/v1/batches/b1/pause", 409)
    assert refused == {
        "error_code": 42,
        "error_name": "INVALID_REQUEST",
        "error_message": "batch b1 is stopped: cannot pause it",
    }
    assert [a for _, a in view.controlled] == ["pause", "pause", "resume", "stop", "stop", "pause"]


async def test_rollback_names_the_reverse_batch(client: Client, view: FakeView) -> None:
    await call(client, "POST", "/v1/batches", 200, json={"batch_id": "b1", "plan_id": "p", **MOVES})
    b1 = view.current.batches["b1"]
    b1 = lifecycle.moves_started(b1, {("orders", 0): (1, 2, 3), ("orders", 1): (1, 2, 3)}, NOV_23_10H_MS)
    view.set_batch(lifecycle.moves_completed(b1, [("orders", 0)], NOV_23_10H_MS))
    orders = dict(enumerate(view.current.topics["orders"].partitions))
    orders[0] = msgspec.structs.replace(
        orders[0], replicas=(4, 5, 6), leader=4, isr=(4, 5, 6)
    )  # where it ended
    view.current = replace(view.current, topics={"orders": TopicView("orders", None, tuple(orders.values()))})

    rolled = await call(client, "POST", "/v1/batches/b1/rollback", 200)
    assert (rolled["state"], rolled["rollback_batch_id"], rolled["counts"]) == (
        "rolled_back",
        "b1.rollback",
        {**COUNTS_ZERO, "completed": 1, "cancelled": 2},
    )
    reverse = await call(client, "GET", "/v1/batches/b1.rollback", 200)
    assert (reverse["state"], reverse["rollback_of"], reverse["plan_id"], reverse["counts"]["pending"]) == (
        "pending",
        "b1",
        "p",
        1,
    )
    assert view.current.batches["b1.rollback"].moves[("orders", 0)] == BatchMove(
        PartitionSpec("orders", 0, (1, 2, 3), expected_replicas=(4, 5, 6)), (4, 5, 6)
    )
    # again: the same reverse batch
    again = await call(client, "POST", "/v1/batches/b1/rollback", 200)
    assert again["rollback_batch_id"] == "b1.rollback"
    assert set(view.current.batches) == {"b1", "b1.rollback"}


# --- the status: shapes, bytes, rates, stuck moves ------------------------------------------------


def test_the_status_json_shape() -> None:
    batch = running_batch(NOV_23_10H_MS)
    progress = {("orders", 0): MoveProgress(30, 300, 10.4)}
    sizes = {("orders", p): 100 for p in range(4)}
    rule = StuckRule(after_ms=600_000, below_bytes_per_s=0.01)
    computed = batch_status(batch, progress, sizes, NOV_23_10H_MS + 700_000, rule)
    started = {"original_replicas": [1, 2, 3], "target_replicas": [4, 5, 6], "started_at": NOV_23_10H}
    assert msgspec.json.decode(msgspec.json.encode(status_json(computed))) == {
        "batch_id": "b1",
        "plan_id": "p",
        "owner": None,
        "state": "running",
        "priority": 0,
        "created_at": NOV_23_10H,
        "updated_at": "2026-11-23T10:00:01Z",
        "counts": {**COUNTS_ZERO, "pending": 1, "running": 2, "completed": 1},
        # each move adds 3 replicas of 100 bytes: 300 per move
        "bytes_total": 4 * 300,
        "bytes_done": 30 + 300,
        "bytes_per_s": 10,
        "eta_s": 84,  # 870 bytes left at 10.4 B/s
        "limits": {
            "moves_per_broker": 5,
            "moves_in_cluster": 100,
            "leader_moves_per_broker": 100,
            "adaptive": None,
        },
        "broker_caps": {},
        "throttle_bytes_per_s": 1000,
        "running": [
            {"topic": "orders", "partition": 0, **started, "bytes_done": 30, "bytes_total": 300}
            | {"bytes_per_s": 10, "stuck": False},
            {"topic": "orders", "partition": 1, **started, "bytes_done": 0, "bytes_total": 300}
            | {"bytes_per_s": 0, "stuck": True},
        ],
        "stuck": [{"topic": "orders", "partition": 1}],
        "throttles": {"brokers": [4, 5], "topics": ["orders"]},
        "rollback_of": None,
        "rollback_batch_id": None,
    }


def test_the_lists_summary_is_the_full_status_without_running_byte_for_byte() -> None:
    """The list's entry (BatchSummary) and the full answer (BatchStatus) are two structs; the list's
    bytes are the full answer's with the ``running`` member cut out, keys in the same order."""
    computed = batch_status(
        running_batch(NOV_23_10H_MS),
        {("orders", 0): MoveProgress(30, 300, 10.4)},
        {("orders", p): 100 for p in range(4)},
        NOV_23_10H_MS + 700_000,
        StuckRule(after_ms=600_000, below_bytes_per_s=0.01),
    )
    full = msgspec.json.encode(status_json(computed))
    running = msgspec.json.encode(status_json(computed).running)
    assert b'"running":' + running + b"," in full
    assert msgspec.json.encode(summary_json(computed)) == full.replace(b'"running":' + running + b",", b"")
    assert (
        msgspec.json.encode(list_json([computed]))
        == b'{"batches":[' + msgspec.json.encode(summary_json(computed)) + b"]}"
    )
    summary_keys = [f.encode_name for f in msgspec.structs.fields(BatchSummary)]
    at = summary_keys.index("throttle_bytes_per_s") + 1
    assert list(msgspec.json.decode(full)) == [*summary_keys[:at], "running", *summary_keys[at:]]


def test_the_stuck_rule_is_made_of_the_settings_seconds_and_rate() -> None:
    assert StuckRule.of(SETTINGS.batch_stuck_after_s, SETTINGS.batch_stuck_below_bytes_per_s) == StuckRule(
        600_000, 1024 * 1024
    )
    assert StuckRule.of(1.5, 10.0) == StuckRule(1500, 10.0)


def test_sizes_from_the_leaders_and_progress_of_the_moves_still_moving_to_their_target() -> None:
    batch = running_batch(NOV_23_10H_MS)
    snapshot = replace(
        CLUSTER,
        reassignments={
            ("orders", 0): moving(("orders", 0), (1, 2, 3), (4, 5, 6), 1),
            ("orders", 1): moving(("orders", 1), (1, 2, 3), (4, 5, 2), 1),  # re-targeted elsewhere
        },
    )
    assert brokers_to_ask([batch], snapshot) == {1, 2, 3, 4, 5, 6}
    assert brokers_to_ask([batch], CLUSTER) == {1, 2, 3}  # the leaders only
    stopped = dataclasses.replace(
        batch,
        moves={tp: dataclasses.replace(m, ended=BatchMoveEnd.CANCELLED) for tp, m in batch.moves.items()},
    )
    assert brokers_to_ask([stopped], snapshot) == set()
    replicas = index_reports(
        {
            1: ReplicasReport(1, (info("orders", 0, 900), info("orders", 1, 800))),
            2: ReplicasReport(2, (info("orders", 2, 700),)),
            4: ReplicasReport(4, (info("orders", 0, 300, 600, 25.0),)),
            5: ReplicasReport(5, (info("orders", 0, 600, 300, 25.0), info("orders", 1, 100))),
        }
    )
    inputs = batch_inputs(batch, snapshot, replicas)
    # leader 3 of orders-3 did not report: no size
    assert inputs.sizes == {("orders", 0): 900, ("orders", 1): 800, ("orders", 2): 700}
    # 6 did not report; orders-1 no longer moves to the batch's target
    assert inputs.progress == {("orders", 0): MoveProgress(900, 1800, 50.0)}


def test_partition_view_finds_sparse_partitions() -> None:
    sparse = replace(
        CLUSTER, topics={"t": TopicView("t", None, (PartitionView(5, (1,), 1, 0, (1,), (), ()),))}
    )
    assert partition_view(sparse, ("t", 5)) is not None
    assert partition_view(sparse, ("t", 0)) is None
    assert partition_view(sparse, ("u", 0)) is None
    assert partition_view(CLUSTER, ("orders", 2)) == CLUSTER.topics["orders"].partitions[2]


async def test_bytes_rates_and_stuck_moves_come_from_the_agents(view: FakeView, serve_agent: Any) -> None:
    now_ms = int(time.time() * 1000)
    batch = running_batch(now_ms - 700_000)  # running for more than the 600 s of the stuck rule
    leader = Agent(report(1, info("orders", 0, 1000 * MiB), info("orders", 1, 1000 * MiB), leader=True))
    adding = Agent(
        report(
            4, info("orders", 0, 990 * MiB, 10 * MiB, 2.0 * MiB), info("orders", 1, MiB, 999 * MiB, 1000.0)
        )
    )
    brokers = dict(BROKERS)
    brokers[1] = BrokerView(1, None, (await serve_agent(leader),), 1001)
    brokers[4] = BrokerView(4, None, (await serve_agent(adding),), 1004)
    view.current = replace(
        CLUSTER,
        brokers=brokers,
        reassignments={tp: moving(tp, (1, 2, 3), (4, 5, 6), 1) for tp in (("orders", 0), ("orders", 1))},
    )
    view.set_batch(batch)
    async with serve(view) as c:
        described = await call(c, "GET", "/v1/batches/b1", 200)
        listed = await call(c, "GET", "/v1/batches", 200)
    running = {r["partition"]: r for r in described["running"]}
    # only broker 4 of the adding 4, 5, 6 reported: against leader 1's 1000 MiB
    assert (running[0]["bytes_done"], running[0]["bytes_total"], running[0]["bytes_per_s"]) == (
        990 * MiB,
        1000 * MiB,
        2 * MiB,
    )
    # 1 MiB in 700 s is below the 1 MiB/s floor: stuck; 990 MiB is not
    assert (running[0]["stuck"], running[1]["stuck"]) == (False, True)
    assert described["stuck"] == [{"topic": "orders", "partition": 1}]
    # orders-2 (pending) and orders-3 (completed) have no size: their leaders 2 and 3 have no agent
    assert (described["bytes_total"], described["bytes_done"]) == (2000 * MiB, 991 * MiB)
    assert (described["bytes_per_s"], described["eta_s"]) == (2 * MiB + 1000, 505)
    assert listed["batches"] == [{k: v for k, v in described.items() if k != "running"}]
    assert (leader.hits, adding.hits) == (2, 2)


async def test_submit_answers_the_batch_as_published_once_its_event_ended(
    client: Client, view: FakeView
) -> None:
    """The controller starts the first moves in the submission's own event: the answer shows them."""
    submit = view.submit_batch

    async def submit_and_start(spec: BatchSpec, sizes: Any = None) -> Any:
        result = await submit(spec, sizes)
        view.set_batch(lifecycle.moves_started(result.batch, {("orders", 0): (1, 2, 3)}, NOV_23_10H_MS + 5))
        return result

    view.submit_batch = submit_and_start  # type: ignore[method-assign]
    reply = await call(client, "POST", "/v1/batches", 200, json={"batch_id": "b1", **MOVES})
    assert (reply["batch"]["state"], reply["batch"]["counts"]["running"]) == ("running", 1)
    assert [r["partition"] for r in reply["batch"]["running"]] == [0]


def test_adaptive_limits_from_the_body_or_the_controllers_default() -> None:
    body = b'{"partitions": [], "limits": {"moves_per_broker": 2, "adaptive": {"min": 1, "max": 9}}}'
    assert parse_submit_body(body, DEFAULTS, new_batch_id).limits.adaptive == Adaptive(1, 9)
    assert parse_submit_body(b'{"partitions": []}', DEFAULTS, new_batch_id).limits.adaptive is None
    adaptive_default = BatchDefaults.of(replace(SETTINGS, batch_adaptive_moves_per_broker=(2, 12)))
    assert parse_submit_body(
        b'{"partitions": []}', adaptive_default, new_batch_id
    ).limits.adaptive == Adaptive(2, 12)
    fixed = b'{"partitions": [], "limits": {"adaptive": null}}'  # fixed caps despite the default
    assert parse_submit_body(fixed, adaptive_default, new_batch_id).limits.adaptive is None


@pytest.mark.parametrize(
    ("value", "message"),
    [("5:2", "MAX must be at least MIN"), ("0:2", "must be >= 1, got 0"), ("3", "expected MIN:MAX")],
)
def test_the_controllers_adaptive_default_is_two_bounds_in_order(value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_command(["controller", "--zk", "z:1", "--batch-adaptive-moves-per-broker", value], {})

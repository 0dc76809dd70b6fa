"""Topic mutations over HTTP (POST /v1/topics, POST /v1/topics/delete, DELETE /v1/topics/{topic},
POST /v1/topics/partitions): the real aiohttp app on a real socket in front of a fake
ControllerView that records what reaches the controller. Also the hardening every write route
shares (malformed bodies, 413, roles, NOT_CONTROLLER, the write log line)."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from yarl import URL

from reassignd.contracts.queries import DeleteTopicQuery
from reassignd.controller.api.port import ControllerView
from reassignd.controller.model.requests import (
    CreatePartitions,
    CreateTopics,
    DeleteTopics,
    PartitionsToAdd,
    Requester,
    TopicOutcome,
    TopicsResult,
    TopicToCreate,
)
from reassignd.errors import InvalidRequest, NotController
from reassignd.http.auth import Principal, Role
from reassignd.http.query_door import decode_query
from reassignd.http.routes.topics import (
    parse_create_partitions,
    parse_create_topics,
    parse_delete_topic,
    parse_delete_topics,
    retry_after_headers,
)
from reassignd.testing.fake_view import Client, FakeView, call, serve
from tests.unit.http.topic_cases import (
    CASES,
    CREATE,
)

MiB = 1024**2
ANONYMOUS = Requester("ANONYMOUS", "")


@pytest.fixture
def view() -> FakeView:
    return FakeView()


@pytest.fixture
async def client(view: FakeView) -> AsyncIterator[Client]:
    async with serve(view) as c:
        yield c


def body(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def test_fake_is_a_controller_view() -> None:
    view: ControllerView = FakeView()  # mypy checks the protocol here
    assert view.snapshot().active


# --- POST /v1/topics (CreateTopics) ----------------------------------------------------------------


async def test_create_topics_reaches_the_controller_as_given(client: Client, view: FakeView) -> None:
    await call(client, "POST", "/v1/topics", 200, data=body(CREATE), headers={"X-Client-Id": "app"})
    assert view.requests == [
        CreateTopics(
            topics=(
                TopicToCreate("orders", 12, 3, None, {"cleanup.policy": "compact"}),
                TopicToCreate("audit", -1, -1, {0: (1, 2), 1: (2, 3)}, {}),
                TopicToCreate("bare"),
            ),
            caller=Requester("ANONYMOUS", "app"),
            validate_only=True,
            timeout_ms=5000,
        )
    ]


def test_create_topics_defaults() -> None:
    """Absent count and factor are -1 (the broker default); 30 s; not validate-only."""
    parsed = parse_create_topics(b'{"topics": [{"name": "t", "assignments": null}]}', ANONYMOUS)
    assert parsed == CreateTopics((TopicToCreate("t", -1, -1, None, {}),), ANONYMOUS, False, 30000)
    assert parse_create_topics(b'{"topics": []}', ANONYMOUS) == CreateTopics((), ANONYMOUS)


def test_what_the_controller_judges_passes_through() -> None:
    """Bad names, counts, factors, replica lists, null configs and duplicates are per-topic errors."""
    raw = {
        "topics": [
            {"name": "", "num_partitions": 0, "replication_factor": -7},
            {"name": "a b", "assignments": {"0": [], "2": [1, 1, -1]}, "configs": {"x": None}},
            {"name": "a b"},
        ]
    }
    parsed = parse_create_topics(body(raw), ANONYMOUS)
    assert parsed.topics == (
        TopicToCreate("", 0, -7),
        TopicToCreate("a b", -1, -1, {0: (), 2: (1, 1, -1)}, {"x": None}),
        TopicToCreate("a b"),
    )


async def test_create_topics_answer_in_kafkas_shape_with_retry_after(client: Client, view: FakeView) -> None:
    view.topics_result = TopicsResult(
        (
            TopicOutcome("orders", num_partitions=12, replication_factor=3),
            TopicOutcome("audit", 89),
        ),
        throttle_time_ms=1500,
    )
    resp = await client.post("/v1/topics", data=body(CREATE))
    assert resp.status == 200
    assert resp.headers["Retry-After"] == "2"
    assert await resp.json() == {
        "throttle_time_ms": 1500,
        "topics": [
            {
                "name": "orders",
                "error_code": 0,
                "error_name": "NONE",
                "error_message": None,
                "num_partitions": 12,
                "replication_factor": 3,
            },
            {
                "name": "audit",
                "error_code": 89,
                "error_name": "THROTTLING_QUOTA_EXCEEDED",
                "error_message": "The throttling quota has been exceeded.",
            },
        ],
    }


async def test_no_retry_after_without_throttling(client: Client) -> None:
    resp = await client.post("/v1/topics", data=body(CREATE))
    assert resp.status == 200
    assert "Retry-After" not in resp.headers
    assert (await resp.json())["throttle_time_ms"] == 0


@pytest.mark.parametrize(
    ("throttle_ms", "seconds"),
    [(0, None), (-5, None), (1, "1"), (999, "1"), (1000, "1"), (1001, "2"), (8000, "8")],
)
def test_retry_after_is_whole_seconds_rounded_up(throttle_ms: int, seconds: str | None) -> None:
    assert retry_after_headers(throttle_ms).get("Retry-After") == seconds


# --- DeleteTopics ----------------------------------------------------------------------------------


async def test_delete_topics_shape(client: Client, view: FakeView) -> None:
    view.topics_result = TopicsResult(
        (TopicOutcome("orders"), TopicOutcome("gone", 3, "The topic 'gone' does not exist."))
    )
    reply = await call(
        client, "POST", "/v1/topics/delete", 200, data=b'{"timeout_ms": 0, "topics": ["orders", "gone"]}'
    )
    assert view.requests == [DeleteTopics(("orders", "gone"), ANONYMOUS, 0)]
    assert reply == {
        "throttle_time_ms": 0,
        "responses": [
            {"name": "orders", "error_code": 0, "error_name": "NONE", "error_message": None},
            {
                "name": "gone",
                "error_code": 3,
                "error_name": "UNKNOWN_TOPIC_OR_PARTITION",
                "error_message": "The topic 'gone' does not exist.",
            },
        ],
    }


async def test_delete_one_topic_by_path(client: Client, view: FakeView) -> None:
    view.topics_result = TopicsResult((TopicOutcome("orders", 89),), throttle_time_ms=2001)
    resp = await client.delete("/v1/topics/orders", headers={"X-Client-Id": "ops"})
    assert resp.status == 200
    assert resp.headers["Retry-After"] == "3"
    assert (await resp.json())["responses"][0]["error_name"] == "THROTTLING_QUOTA_EXCEEDED"
    # /v1/topics/delete is POST's path (DeleteTopics), not a topic so named: that one is deleted
    # by its name in POST /v1/topics/delete's body
    refused = await call(client, "DELETE", "/v1/topics/delete?timeout_ms=250", 405)
    assert refused["error_message"] == "method DELETE not allowed on /v1/topics/delete (allowed: POST)"
    await call(client, "POST", "/v1/topics/delete", 200, json={"topics": ["delete"], "timeout_ms": 250})
    assert view.requests == [
        DeleteTopics(("orders",), Requester("ANONYMOUS", "ops"), 30000),
        DeleteTopics(("delete",), ANONYMOUS, 250),
    ]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/v1/topics/t?timeout_ms=-1", 'timeout_ms: expected an integer 0..2147483647, got "-1"'),
        (
            "/v1/topics/t?timeout_ms=2147483648",
            'timeout_ms: expected an integer 0..2147483647, got "2147483648"',
        ),
        ("/v1/topics/t?timeout_ms=1.5", 'timeout_ms: expected an integer 0..2147483647, got "1.5"'),
        ("/v1/topics/t?timeout_ms=1&timeout_ms=2", "timeout_ms: given more than once"),
        ("/v1/topics/t?force=1", "force: unknown query parameter (allowed: timeout_ms)"),
    ],
)
async def test_bad_delete_by_path_is_400_and_reaches_no_controller(
    client: Client, view: FakeView, path: str, message: str
) -> None:
    reply = await call(client, "DELETE", path, 400)
    assert (reply["error_code"], reply["error_name"], reply["error_message"]) == (
        42,
        "INVALID_REQUEST",
        message,
    )
    assert view.requests == []
    with pytest.raises(InvalidRequest):
        parse_delete_topic("t", decode_query(URL(path).query.items(), DeleteTopicQuery), ANONYMOUS)


# --- POST /v1/topics/partitions (CreatePartitions) -------------------------------------------------


async def test_create_partitions_reaches_the_controller_and_answers_results(
    client: Client, view: FakeView
) -> None:
    raw = {
        "validate_only": False,
        "topics": [
            {"name": "orders", "count": 24, "assignments": None},
            {"name": "audit", "count": 4, "assignments": [[1, 2], [2, 3]]},
            {"name": "bare", "count": 2},
        ],
    }
    view.topics_result = TopicsResult(
        (TopicOutcome("orders"), TopicOutcome("audit", 60), TopicOutcome("bare", 37, "nope"))
    )
    reply = await call(client, "POST", "/v1/topics/partitions", 200, data=body(raw))
    assert view.requests == [
        CreatePartitions(
            (
                PartitionsToAdd("orders", 24),
                PartitionsToAdd("audit", 4, ((1, 2), (2, 3))),
                PartitionsToAdd("bare", 2),
            ),
            ANONYMOUS,
            False,
            30000,
        )
    ]
    assert reply["throttle_time_ms"] == 0
    assert reply["results"] == [
        {"name": "orders", "error_code": 0, "error_name": "NONE", "error_message": None},
        {"name": "audit", "error_code": 60, "error_name": "REASSIGNMENT_IN_PROGRESS", "error_message": None},
        {"name": "bare", "error_code": 37, "error_name": "INVALID_PARTITIONS", "error_message": "nope"},
    ]


# --- malformed bodies: 400/42 naming the field, nothing reaches the controller --------------------


PARSERS = {
    "/v1/topics": parse_create_topics,
    "/v1/topics/delete": parse_delete_topics,
    "/v1/topics/partitions": parse_create_partitions,
}


@pytest.mark.parametrize(("path", "raw", "message"), CASES, ids=[f"{p} {m}" for p, _, m in CASES])
async def test_a_malformed_body_is_400_invalid_request_naming_the_field_and_reaches_no_controller(
    client: Client, view: FakeView, path: str, raw: bytes, message: str
) -> None:
    reply = await call(client, "POST", path, 400, data=raw)
    assert (reply["error_code"], reply["error_name"]) == (42, "INVALID_REQUEST")
    assert reply["error_message"].startswith(message), reply["error_message"]
    assert view.requests == []
    with pytest.raises(InvalidRequest):
        PARSERS[path](raw, ANONYMOUS)


# --- what every write route shares -----------------------------------------------------------------

WRITES: list[tuple[str, str, bytes]] = [
    ("POST", "/v1/topics", b'{"topics": [{"name": "t"}]}'),
    ("POST", "/v1/topics/delete", b'{"topics": ["t"]}'),
    ("DELETE", "/v1/topics/t", b""),
    ("POST", "/v1/topics/partitions", b'{"topics": [{"name": "t", "count": 2}]}'),
    ("POST", "/v1/quotas", b'{"entries": [{"entity": {"user": "u"}, "ops": []}]}'),
    ("POST", "/v1/reassignments", b'{"topics": []}'),
    ("DELETE", "/v1/reassignments/t/0", b""),
]
WRITE_IDS = [f"{m} {p}" for m, p, _ in WRITES]
POSTS = [(p, raw) for m, p, raw in WRITES if m == "POST"]


@pytest.mark.parametrize(("path", "raw"), POSTS, ids=[p for p, _ in POSTS])
async def test_a_20_mib_body_is_413_in_the_uniform_error_object(
    client: Client, view: FakeView, path: str, raw: bytes
) -> None:
    resp = await client.post(path, data=io.BytesIO(raw + b" " * (20 * MiB)))
    assert resp.status == 413
    assert await resp.json() == {
        "error_code": 42,
        "error_name": "INVALID_REQUEST",
        "error_message": "request body too large (limit 10485760 bytes)",
    }
    assert view.requests == []


@pytest.mark.parametrize(
    ("path", "raw", "message"),
    [
        (
            "/v1/reassignments",
            b'{"topics": [], "timeout_ms": -1}',
            "timeout_ms: -1 is out of range (0..2147483647)",
        ),
        ("/v1/quotas", b'{"entries": [], "timeout_ms": 1}', "timeout_ms: unknown field"),
        ("/v1/quotas", b"{", "request body: invalid JSON"),
    ],
)
async def test_the_other_write_routes_are_as_strict(
    client: Client, view: FakeView, path: str, raw: bytes, message: str
) -> None:
    reply = await call(client, "POST", path, 400, data=raw)
    assert (reply["error_code"], reply["error_name"]) == (42, "INVALID_REQUEST")
    assert reply["error_message"].startswith(message), reply["error_message"]
    assert view.requests == []


@pytest.mark.parametrize("path", [p for p, _ in POSTS])
async def test_post_routes_take_no_query_parameters(client: Client, view: FakeView, path: str) -> None:
    raw = dict((p, r) for _, p, r in WRITES)[path]
    reply = await call(client, "POST", path + "?dry_run=1", 400, data=raw)
    assert reply["error_message"] == "dry_run: unknown query parameter (allowed: none)"
    assert view.requests == []


@pytest.mark.parametrize(("method", "path", "raw"), WRITES, ids=WRITE_IDS)
async def test_a_standby_answers_not_controller(
    client: Client, view: FakeView, method: str, path: str, raw: bytes
) -> None:
    view.fail_with = NotController()
    reply = await call(client, method, path, 503, data=raw)
    assert reply == {
        "error_code": 41,
        "error_name": "NOT_CONTROLLER",
        "error_message": "This is not the correct controller for this cluster.",
        "active_controller": {"id": 9000, "http": "http://127.0.0.1:8080"},
    }


TOKENS = {"adm1n": Principal("alice", Role.ADMIN), "v1ew": Principal("bob", Role.VIEWER)}


@pytest.mark.parametrize(("method", "path", "raw"), WRITES, ids=WRITE_IDS)
async def test_writes_need_an_admin_token(view: FakeView, method: str, path: str, raw: bytes) -> None:
    async with serve(view, TOKENS) as c:
        assert (await call(c, method, path, 401, data=raw))["error_code"] == 31
        denied = await call(c, method, path, 403, data=raw, headers={"Authorization": "Bearer v1ew"})
        assert denied["error_name"] == "CLUSTER_AUTHORIZATION_FAILED"
        assert view.requests == []
        await call(c, method, path, 200, data=raw, headers={"Authorization": "Bearer adm1n"})


async def test_the_caller_is_the_tokens_user_and_the_client_id_header(view: FakeView) -> None:
    admin = {"Authorization": "Bearer adm1n"}
    async with serve(view, TOKENS) as c:
        await call(
            c, "POST", "/v1/topics", 200, data=b'{"topics": []}', headers={**admin, "X-Client-Id": "app-1"}
        )
        await call(c, "POST", "/v1/topics/delete", 200, data=b'{"topics": []}', headers=admin)
        await call(
            c,
            "POST",
            "/v1/topics/partitions",
            200,
            data=b'{"topics": []}',
            headers={**admin, "X-Client-Id": ""},
        )
    assert [
        r.caller for r in view.requests if isinstance(r, CreateTopics | DeleteTopics | CreatePartitions)
    ] == [
        Requester("alice", "app-1"),
        Requester("alice", ""),
        Requester("alice", ""),
    ]


async def test_every_write_is_audited_with_user_and_client_id(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="reassignd.audit"):
        await call(client, "DELETE", "/v1/topics/orders", 200, headers={"X-Client-Id": "ops-cli"})
        await call(client, "GET", "/v1/quotas", 200, headers={"X-Client-Id": "reader"})
        await call(client, "PUT", "/v1/topics", 405)
        await call(client, "POST", "/v1/nowhere", 404)
    [entry] = [json.loads(r.getMessage()) for r in caplog.records if r.name == "reassignd.audit"]
    assert (entry["action"], entry["user"], entry["client_id"]) == (
        "DELETE /v1/topics/{topic}",
        "ANONYMOUS",
        "ops-cli",
    )
    assert (entry["topic"], entry["topics"], entry["result"]["status"]) == ("orders", ["orders"], 200)


async def test_the_audit_line_cannot_be_broken_by_the_path(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="reassignd.audit"):
        await call(client, "DELETE", "/v1/topics/a%0Aforged%20line", 200)
    [line] = [r.getMessage() for r in caplog.records if r.name == "reassignd.audit"]
    assert "\n" not in line  # the newline is escaped inside the JSON string
    assert json.loads(line)["topic"] == "a\nforged line"

"""The reassignment endpoints (POST/GET/DELETE /v1/reassignments), served by the real aiohttp app
over a real socket in front of a fake ControllerView that records what reaches the controller, and
two tiny real agents answering ``GET /replicas`` on loopback for the progress numbers."""

from __future__ import annotations

import io
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from typing import Any

import aiohttp
import msgspec
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from hypothesis import given
from hypothesis import strategies as st

from reassignd.agent_reports.fetch import agent_url, agent_urls, fetch_reports
from reassignd.agent_reports.progress import (
    CopyProgress,
    index_reports,
    involved_brokers,
    reassignment_progress,
)
from reassignd.contracts.queries import CancelQuery, ListReassignmentsQuery
from reassignd.control.replicas_report import ReplicaInfo, ReplicasReport
from reassignd.controller.api.port import ControllerView
from reassignd.controller.model.requests import (
    AlterPartitionResult,
    AlterReassignments,
    AlterResult,
    CancelMode,
    CancelReassignments,
)
from reassignd.controller.model.snapshot import (
    ActiveControllerAddress,
    BrokerView,
    ClusterSnapshot,
    ReassignmentView,
)
from reassignd.controller.settings import ControllerSettings
from reassignd.errors import InvalidRequest, NotController
from reassignd.http.app import build_app
from reassignd.http.auth import Principal, Role
from reassignd.http.query_door import decode_query
from reassignd.http.routes.reassignments import (
    ReassignmentFilter,
    alter_response_json,
    iso_utc,
    parse_alter_body,
    parse_cancel,
    parse_list_query,
)
from reassignd.testing.fake_view import FakeView as SharedFakeView
from tests.unit.http.reassignment_helpers import (
    KAFKA_REQUEST,
    MALFORMED,
    PLAN,
    Agent,
    body,
    info,
    report,
)

Client = TestClient[web.Request, web.Application]
GiB = 1024**3
MiB = 1024**2
NOV_21_10H_MS = 1_795_255_200_000  # 2026-11-21T10:00:00Z

ORDERS_0 = ReassignmentView(
    topic="orders",
    partition=0,
    replicas=(4, 5, 6, 1, 2, 3),
    adding_replicas=(4, 5, 6),
    removing_replicas=(1, 2, 3),
    target_replicas=(4, 5, 6),
    original_replicas=(1, 2, 3),
    source="api",
    started_at_ms=NOV_21_10H_MS,
    leader=1,
)
ORDERS_7 = ReassignmentView("orders", 7, (5, 2, 3), (5,), (1,), (5, 2, 3), (1, 2, 3), "zk", None, 2)
AUDIT_0 = ReassignmentView(
    "audit", 0, (2, 4, 1), (4,), (1,), (2, 4), (1, 2), "request", NOV_21_10H_MS + 1500, 2
)

REASSIGNMENTS = {(r.topic, r.partition): r for r in (ORDERS_7, ORDERS_0, AUDIT_0)}  # not in order on purpose

ACTIVE = ClusterSnapshot(
    controller_id=9000,
    active=True,
    controller_epoch=3,
    active_controller=ActiveControllerAddress(9000, "http://127.0.0.1:8080"),
    brokers={b: BrokerView(b, None, (f"PLAINTEXT://h:{9090 + b}",), 1000 + b) for b in range(1, 7)},
    reassignments=REASSIGNMENTS,
)
STANDBY = ClusterSnapshot(
    controller_id=9001,
    active=False,
    controller_epoch=3,
    active_controller=ActiveControllerAddress(9000, "http://127.0.0.1:8080"),
    brokers=ACTIVE.brokers,
)


def ok_for_each_target(request: AlterReassignments) -> AlterResult:
    return AlterResult(tuple(AlterPartitionResult(t, p) for (t, p), _ in request.targets))


@dataclass
class FakeView(SharedFakeView):
    """The one fake ControllerView, answering reassignment requests with ``alter_result`` /
    ``cancel_result`` (or raising ``fail_with``) and recording them in ``alters`` / ``cancels``."""

    current: ClusterSnapshot = ACTIVE
    alter_result: AlterResult | None = None  # None: NONE for each target, in request order
    cancel_result: AlterResult = field(default_factory=lambda: AlterResult(()))
    alters: list[AlterReassignments] = field(default_factory=list)
    cancels: list[CancelReassignments] = field(default_factory=list)

    async def alter_reassignments(self, request: AlterReassignments) -> AlterResult:
        self.alters.append(request)
        if self.fail_with is not None:
            raise self.fail_with
        return self.alter_result or ok_for_each_target(request)

    async def cancel_reassignments(self, request: CancelReassignments) -> AlterResult:
        self.cancels.append(request)
        if self.fail_with is not None:
            raise self.fail_with
        return self.cancel_result


SETTINGS = ControllerSettings(zk_connect="127.0.0.1:2181", http_port=0)


def test_fake_is_a_controller_view() -> None:
    view: ControllerView = FakeView()  # mypy checks the protocol here
    assert view.snapshot() is ACTIVE


@pytest.fixture
def view() -> FakeView:
    return FakeView()


@pytest.fixture
async def client(view: FakeView) -> AsyncIterator[Client]:
    async with TestClient(TestServer(build_app(view, SETTINGS))) as c:
        yield c


async def call(client: Client, method: str, path: str, status: int, **kwargs: Any) -> Any:
    resp = await client.request(method, path, **kwargs)
    assert resp.status == status, await resp.text()
    assert resp.content_type == "application/json"
    return await resp.json()


# --- POST /v1/reassignments: parsing -----------------------------------------------------------

EXPECTED = AlterReassignments(
    ((("orders", 0), (4, 5, 6)), (("orders", 1), (6, 4, 5)), (("audit", 0), (2, 4))), CancelMode.CANCEL
)


def test_kafkas_request_and_a_reassign_partitions_plan_parse_to_the_same_request() -> None:
    assert parse_alter_body(body(KAFKA_REQUEST)) == EXPECTED
    assert parse_alter_body(body(PLAN)) == EXPECTED


def test_order_duplicates_cancels_and_stop_mode_are_kept_for_the_controller() -> None:
    request = {
        "mode": "stop",
        "topics": [
            {
                "name": "t",
                "partitions": [{"partition": 3, "replicas": [1]}, {"partition": 1, "replicas": None}],
            },
            {"name": "t", "partitions": [{"partition": 3, "replicas": [2]}]},
        ],
    }
    assert parse_alter_body(body(request)) == AlterReassignments(
        ((("t", 3), (1,)), (("t", 1), None), (("t", 3), (2,))), CancelMode.STOP
    )


def test_replica_lists_the_controller_refuses_with_error_39_pass_through() -> None:
    """Empty, duplicate and negative replica lists are per-partition errors, not malformed JSON."""
    parts = [
        {"partition": 0, "replicas": []},
        {"partition": 1, "replicas": [1, 1]},
        {"partition": 2, "replicas": [-3]},
    ]
    parsed = parse_alter_body(body({"topics": [{"name": "t", "partitions": parts}]}))
    assert [replicas for _, replicas in parsed.targets] == [(), (1, 1), (-3,)]


def test_an_empty_request_is_a_request_an_empty_plan_is_not() -> None:
    assert parse_alter_body(b'{"topics": []}') == AlterReassignments(())
    with pytest.raises(InvalidRequest, match="Partition reassignment list cannot be empty"):
        parse_alter_body(
            b'{"version": 1, "partitions": []}'
        )  # a plan must move something, as in Kafka's tool
    # no "version": 1, as kafka-reassign-partitions (EarliestVersion) and admin reassign read it
    assert parse_alter_body(b'{"partitions": [{"topic": "t", "partition": 0, "replicas": [1]}]}') == (
        AlterReassignments(((("t", 0), (1,)),))
    )


topic_names = st.text(alphabet="abcxyz._-", min_size=1, max_size=8)
targets = st.lists(
    st.tuples(topic_names, st.integers(0, 2**31 - 1), st.lists(st.integers(-(2**31), 2**31 - 1), max_size=5)),
    max_size=8,
)


@given(targets)
def test_both_formats_carry_any_targets_in_order(items: list[tuple[str, int, list[int]]]) -> None:
    kafka = {"topics": [{"name": t, "partitions": [{"partition": p, "replicas": r}]} for t, p, r in items]}
    plan = {"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r} for t, p, r in items]}
    expected = AlterReassignments(tuple(((t, p), tuple(r)) for t, p, r in items))
    assert (
        parse_alter_body(body(kafka)) == expected
    )  # Kafka's shape: per-partition refusals are the controller's
    a_valid_plan = (
        bool(items)
        and len({(t, p) for t, p, _ in items}) == len(items)
        and all(t not in (".", "..") and r and len(set(r)) == len(r) and min(r) >= 0 for t, _, r in items)
    )
    if a_valid_plan:
        assert parse_alter_body(body(plan)) == expected
    else:  # the plan reader refuses a plan whole, as admin reassign and the legacy znode do
        with pytest.raises(InvalidRequest):
            parse_alter_body(body(plan))


@pytest.mark.parametrize(("raw", "message"), MALFORMED, ids=[m for _, m in MALFORMED])
async def test_a_malformed_body_is_400_invalid_request_naming_the_field_and_reaches_no_controller(
    client: Client, view: FakeView, raw: bytes, message: str
) -> None:
    reply = await call(client, "POST", "/v1/reassignments", 400, data=raw)
    assert (reply["error_code"], reply["error_name"]) == (42, "INVALID_REQUEST")
    assert reply["error_message"].startswith(message), reply["error_message"]
    assert view.alters == []
    with pytest.raises(InvalidRequest):
        parse_alter_body(raw)


async def test_a_20_mib_body_is_413_and_reaches_no_controller(client: Client, view: FakeView) -> None:
    resp = await client.post("/v1/reassignments", data=io.BytesIO(b" " * (20 * MiB)))
    assert resp.status == 413
    reply = await resp.json()
    assert (reply["error_code"], reply["error_message"]) == (
        42,
        "request body too large (limit 10485760 bytes)",
    )
    assert view.alters == []


# --- POST /v1/reassignments: answers -----------------------------------------------------------


async def test_both_formats_reach_the_controller_alike_and_are_answered_in_kafkas_shape(
    client: Client, view: FakeView
) -> None:
    for request in (KAFKA_REQUEST, PLAN):
        reply = await call(client, "POST", "/v1/reassignments", 200, json=request)
        assert reply == {
            "throttle_time_ms": 0,
            "error_code": 0,
            "error_name": "NONE",
            "error_message": None,
            "responses": [
                {
                    "name": "orders",
                    "partitions": [
                        {"partition": 0, "error_code": 0, "error_name": "NONE", "error_message": None},
                        {"partition": 1, "error_code": 0, "error_name": "NONE", "error_message": None},
                    ],
                },
                {
                    "name": "audit",
                    "partitions": [
                        {"partition": 0, "error_code": 0, "error_name": "NONE", "error_message": None}
                    ],
                },
            ],
        }
    assert view.alters == [EXPECTED, EXPECTED]


async def test_per_partition_errors_are_grouped_by_topic_in_order_of_first_appearance(
    client: Client, view: FakeView
) -> None:
    view.alter_result = AlterResult(
        (
            AlterPartitionResult(
                "b", 1, 39, "Duplicate replica ids in partition reassignment replica list: [1, 1]"
            ),
            AlterPartitionResult("a", 0),
            AlterPartitionResult("b", 0, 85),  # no message from the controller: Kafka's default
        )
    )
    reply = await call(client, "POST", "/v1/reassignments", 200, json={"topics": []})
    assert reply["responses"] == [
        {
            "name": "b",
            "partitions": [
                {
                    "partition": 1,
                    "error_code": 39,
                    "error_name": "INVALID_REPLICA_ASSIGNMENT",
                    "error_message": "Duplicate replica ids in partition reassignment replica list: [1, 1]",
                },
                {
                    "partition": 0,
                    "error_code": 85,
                    "error_name": "NO_REASSIGNMENT_IN_PROGRESS",
                    "error_message": "No partition reassignment is in progress.",
                },
            ],
        },
        {
            "name": "a",
            "partitions": [{"partition": 0, "error_code": 0, "error_name": "NONE", "error_message": None}],
        },
    ]


def test_nothing_to_answer_is_an_empty_list() -> None:
    assert msgspec.json.decode(msgspec.json.encode(alter_response_json(AlterResult(()))))["responses"] == []


async def test_a_standby_answers_not_controller_with_the_active_controller(
    client: Client, view: FakeView
) -> None:
    view.current = STANDBY
    view.fail_with = NotController()
    expected = {
        "error_code": 41,
        "error_name": "NOT_CONTROLLER",
        "error_message": "This is not the correct controller for this cluster.",
        "active_controller": {"id": 9000, "http": "http://127.0.0.1:8080"},
    }
    assert await call(client, "POST", "/v1/reassignments", 503, json=KAFKA_REQUEST) == expected
    assert await call(client, "DELETE", "/v1/reassignments/orders", 503) == expected


TOKENS = {"adm1n": Principal("alice", Role.ADMIN), "v1ew": Principal("bob", Role.VIEWER)}


async def test_reading_needs_a_viewer_and_writing_an_admin(view: FakeView) -> None:
    viewer = {"Authorization": "Bearer v1ew"}
    admin = {"Authorization": "Bearer adm1n"}
    async with TestClient(TestServer(build_app(view, SETTINGS, tokens=TOKENS))) as c:
        assert (await c.get("/v1/reassignments?topic=none")).status == 401
        assert (await c.post("/v1/reassignments", json={"topics": []})).status == 401
        assert (await c.get("/v1/reassignments?topic=none", headers=viewer)).status == 200
        denied = await c.post("/v1/reassignments", json={"topics": []}, headers=viewer)
        assert denied.status == 403
        assert (await denied.json())["error_code"] == 31
        assert (await c.delete("/v1/reassignments", headers=viewer)).status == 403
        assert view.alters == [] and view.cancels == []
        assert (await c.post("/v1/reassignments", json={"topics": []}, headers=admin)).status == 200
        assert (await c.delete("/v1/reassignments", headers=admin)).status == 200
        assert len(view.alters) == len(view.cancels) == 1


# --- GET /v1/reassignments ---------------------------------------------------------------------


async def test_list_shape_sorted_by_topic_then_partition(client: Client) -> None:
    reply = await call(client, "GET", "/v1/reassignments", 200)
    assert reply == {
        "error_code": 0,
        "error_name": "NONE",
        "error_message": None,
        "topics": [
            {
                "name": "audit",
                "partitions": [
                    {
                        "partition": 0,
                        "replicas": [2, 4, 1],
                        "adding_replicas": [4],
                        "removing_replicas": [1],
                        "target_replicas": [2, 4],
                        "original_replicas": [1, 2],
                        "source": "request",
                        "started_at": "2026-11-21T10:00:01Z",
                        "progress": None,  # no broker has a CONTROL endpoint here
                    }
                ],
            },
            {
                "name": "orders",
                "partitions": [
                    {
                        "partition": 0,
                        "replicas": [4, 5, 6, 1, 2, 3],
                        "adding_replicas": [4, 5, 6],
                        "removing_replicas": [1, 2, 3],
                        "target_replicas": [4, 5, 6],
                        "original_replicas": [1, 2, 3],
                        "source": "api",
                        "started_at": "2026-11-21T10:00:00Z",
                        "progress": None,
                    },
                    {
                        "partition": 7,
                        "replicas": [5, 2, 3],
                        "adding_replicas": [5],
                        "removing_replicas": [1],
                        "target_replicas": [5, 2, 3],
                        "original_replicas": [1, 2, 3],
                        "source": "zk",
                        "started_at": None,
                        "progress": None,
                    },
                ],
            },
        ],
    }


def shown(reply: Any) -> list[tuple[str, int]]:
    return [(t["name"], p["partition"]) for t in reply["topics"] for p in t["partitions"]]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", [("audit", 0), ("orders", 0), ("orders", 7)]),
        ("?topic=orders", [("orders", 0), ("orders", 7)]),
        ("?topic=orders&topic=audit", [("audit", 0), ("orders", 0), ("orders", 7)]),
        ("?topic=orders&partition=7", [("orders", 7)]),
        ("?topic=orders&topic=audit&partition=0", [("audit", 0), ("orders", 0)]),
        ("?partition=0", [("audit", 0), ("orders", 0)]),  # no topic given: every topic
        ("?partition=0&partition=7", [("audit", 0), ("orders", 0), ("orders", 7)]),
        ("?topic=nope", []),
        ("?topic=", []),  # an empty name matches nothing, as a topic Kafka does not know
        ("?topic=orders&partition=1", []),
    ],
)
async def test_list_filters(client: Client, query: str, expected: list[tuple[str, int]]) -> None:
    assert shown(await call(client, "GET", f"/v1/reassignments{query}", 200)) == expected


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("?partition=-1", 'partition: expected a non-negative integer, got "-1"'),
        ("?partition=x", 'partition: expected a non-negative integer, got "x"'),
        ("?partition=1.0", 'partition: expected a non-negative integer, got "1.0"'),
        ("?partition=", 'partition: expected a non-negative integer, got ""'),
        ("?partition=2147483648", 'partition: expected a non-negative integer, got "2147483648"'),
        ("?topics=orders", "topics: unknown query parameter (allowed: topic, partition)"),
    ],
)
async def test_bad_list_filters_are_400_invalid_request(client: Client, query: str, message: str) -> None:
    reply = await call(client, "GET", f"/v1/reassignments{query}", 400)
    assert (reply["error_code"], reply["error_message"]) == (42, message)


async def test_a_standby_answers_the_list_not_controller(client: Client, view: FakeView) -> None:
    view.current = STANDBY
    expected = {
        "error_code": 41,
        "error_name": "NOT_CONTROLLER",
        "error_message": "This is not the correct controller for this cluster.",
        "active_controller": {"id": 9000, "http": "http://127.0.0.1:8080"},
    }
    assert await call(client, "GET", "/v1/reassignments", 503) == expected
    assert await call(client, "GET", "/v1/reassignments?topic=orders&partition=0", 503) == expected
    # a malformed filter is the client's error wherever it is sent
    await call(client, "GET", "/v1/reassignments?partition=x", 400)


def test_iso_utc() -> None:
    assert iso_utc(NOV_21_10H_MS) == "2026-11-21T10:00:00Z"
    assert iso_utc(NOV_21_10H_MS + 999) == "2026-11-21T10:00:00Z"
    assert iso_utc(0) == "1970-01-01T00:00:00Z"
    assert iso_utc(None) is None
    assert iso_utc(10**20) is None  # not representable


# --- progress: the pure computation ------------------------------------------------------------


def replicas_of(**by_broker: list[ReplicaInfo]) -> dict[tuple[int, str, int], ReplicaInfo]:
    """``replicas_of(b1=[...], b4=[...])``: the index of those brokers' reports."""
    return index_reports({int(b[1:]): ReplicasReport(int(b[1:]), tuple(rs)) for b, rs in by_broker.items()})


def test_progress_sums_the_adding_replicas_against_the_leaders_log_end() -> None:
    replicas = replicas_of(
        b1=[info("orders", 0, 3 * GiB)],
        b4=[info("orders", 0, 1 * GiB, 2 * GiB, 20 * MiB)],
        b5=[info("orders", 0, 2 * GiB, 1 * GiB, 30 * MiB)],
        b6=[info("orders", 0, 4 * GiB, 0, 1.6)],  # looks ahead of the leader: capped at the total
    )
    total = 3 * (3 * GiB)
    done = 1 * GiB + 2 * GiB + 3 * GiB
    rate = 50 * MiB + 2
    assert reassignment_progress(ORDERS_0, replicas) == CopyProgress(
        total, done, rate, -(-(total - done) // rate)
    )
    assert -(-(total - done) // rate) == 62  # 3 GiB at 50 MiB/s: 61.44 s, rounded up


def test_progress_without_the_leaders_report_uses_each_replicas_lag() -> None:
    replicas = replicas_of(
        b4=[info("orders", 0, 1 * GiB, 2 * GiB, 10 * MiB)], b5=[info("orders", 0, 0, 3 * GiB, 0.0)]
    )
    assert reassignment_progress(ORDERS_0, replicas) == CopyProgress(6 * GiB, 1 * GiB, 10 * MiB, 512)


def test_progress_counts_only_adding_replicas_that_reported() -> None:
    replicas = replicas_of(
        b1=[info("orders", 0, 100)], b5=[info("orders", 0, 40, 60, 20.0)], b2=[info("orders", 0, 100)]
    )
    assert reassignment_progress(ORDERS_0, replicas) == CopyProgress(100, 40, 20, 3)


def test_no_rate_means_no_eta_and_nothing_left_means_eta_zero() -> None:
    stalled = replicas_of(b1=[info("orders", 0, 100)], b4=[info("orders", 0, 40, 60, 0.0)])
    assert reassignment_progress(ORDERS_0, stalled) == CopyProgress(100, 40, 0, None)
    nonsense = replicas_of(b1=[info("orders", 0, 100)], b4=[info("orders", 0, 40, 60, float("nan"))])
    assert reassignment_progress(ORDERS_0, nonsense) == CopyProgress(100, 40, 0, None)
    caught_up = replicas_of(b1=[info("orders", 0, 100)], b4=[info("orders", 0, 100, 0, 0.0)])
    assert reassignment_progress(ORDERS_0, caught_up) == CopyProgress(100, 100, 0, 0)


def test_no_adding_replica_reported_means_no_progress() -> None:
    assert reassignment_progress(ORDERS_0, {}) is None
    only_others = replicas_of(b1=[info("orders", 0, 100)], b4=[info("orders", 1, 5), info("audit", 0, 5)])
    assert reassignment_progress(ORDERS_0, only_others) is None


@given(
    st.integers(0, 2**40),
    st.lists(
        st.tuples(st.integers(0, 2**41), st.integers(0, 2**40), st.floats(0, 1e9)), min_size=1, max_size=3
    ),
    st.booleans(),
)
def test_progress_is_never_past_done_and_its_eta_covers_the_rest(
    leader_end: int, adding: list[tuple[int, int, float]], leader_reported: bool
) -> None:
    r = msgspec.structs.replace(ORDERS_0, adding_replicas=tuple(range(4, 4 + len(adding))))
    by_broker = {
        4 + i: ReplicasReport(4 + i, (info("orders", 0, e, lag, rate),))
        for i, (e, lag, rate) in enumerate(adding)
    }
    if leader_reported:
        by_broker[1] = ReplicasReport(1, (info("orders", 0, leader_end),))
    progress = reassignment_progress(r, index_reports(by_broker))
    assert progress is not None
    assert 0 <= progress.bytes_done <= progress.bytes_total
    remaining = progress.bytes_total - progress.bytes_done
    if remaining == 0:
        assert progress.eta_s == 0
    elif progress.bytes_per_s == 0:
        assert progress.eta_s is None
    else:
        assert progress.eta_s is not None
        assert (
            (progress.eta_s - 1) * progress.bytes_per_s < remaining <= progress.eta_s * progress.bytes_per_s
        )


def test_the_agents_asked_are_the_leaders_and_the_adding_replicas() -> None:
    assert involved_brokers([ORDERS_0, ORDERS_7]) == {1, 2, 4, 5, 6}
    assert involved_brokers([msgspec.structs.replace(ORDERS_7, leader=-1)]) == {5}


def test_agent_url_from_the_control_endpoint() -> None:
    assert agent_url(["PLAINTEXT://h:9092", "CONTROL://h:19092"]) == "http://h:19092"
    assert agent_url(["CONTROL://::1:19092"]) == "http://[::1]:19092"
    assert agent_url(["CONTROL://[::1]:19092"]) == "http://[::1]:19092"
    assert agent_url(["PLAINTEXT://h:9092"]) is None
    assert agent_url(["CONTROL://h"]) is None
    brokers = {4: BrokerView(4, None, ("CONTROL://a:1",), 1), 5: BrokerView(5, None, ("PLAINTEXT://b:2",), 1)}
    assert agent_urls(brokers, [6, 5, 4]) == {4: "http://a:1"}


# --- progress over HTTP: two real agents, one that is down -------------------------------------


def closed_port() -> int:
    """A loopback port nothing listens on (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


async def test_progress_comes_from_the_agents_and_an_agent_that_is_down_contributes_nothing(
    view: FakeView, serve_agent: Any
) -> None:
    leader_agent = Agent(report(1, info("orders", 0, 3 * GiB), info("audit", 0, 1 * GiB), leader=True))
    adding_agent = Agent(
        report(4, info("orders", 0, 1 * GiB, 2 * GiB, 20 * MiB), info("audit", 0, 100, 400, 50.0))
    )
    brokers = dict(ACTIVE.brokers)
    brokers[1] = BrokerView(1, None, ("PLAINTEXT://h:9091", await serve_agent(leader_agent)), 1001)
    brokers[4] = BrokerView(4, None, (await serve_agent(adding_agent),), 1004)
    brokers[5] = BrokerView(5, None, (f"CONTROL://127.0.0.1:{closed_port()}",), 1005)  # down
    view.current = replace(ACTIVE, brokers=brokers)
    async with TestClient(TestServer(build_app(view, SETTINGS))) as c:
        reply = await call(c, "GET", "/v1/reassignments", 200)
    progress = {(t["name"], p["partition"]): p["progress"] for t in reply["topics"] for p in t["partitions"]}
    assert progress == {
        # 5 is down, 6 has no CONTROL endpoint: only 4 counts, against leader 1's log end
        ("orders", 0): {"bytes_total": 3 * GiB, "bytes_done": 1 * GiB, "bytes_per_s": 20 * MiB, "eta_s": 103},
        # leader 2 has no agent: 4's own log end plus its lag
        ("audit", 0): {"bytes_total": 500, "bytes_done": 100, "bytes_per_s": 50, "eta_s": 8},
        # its only adding replica is on the broker that is down
        ("orders", 7): None,
    }
    assert (leader_agent.hits, adding_agent.hits) == (1, 1)


@pytest.mark.parametrize(
    "broken",
    [
        Agent(b"not json"),
        Agent({"error": "boom"}, status=500),
        Agent({"broker_id": 4, "replicas": [{"topic": "orders"}]}),  # not the wire format
        Agent({"broker_id": 9, "replicas": []}),  # another broker answers at 4's endpoint
        Agent(
            b'{"broker_id": 4, "replicas": [{"topic": "orders", "partition": 0, "leader": false, '
            b'"log_end_offset": 1, "lag_bytes": 1, "fetch_bytes_per_s": NaN, "in_isr": false}]}'
        ),
    ],
)
async def test_an_agent_answering_garbage_contributes_nothing(
    view: FakeView, serve_agent: Any, broken: Agent
) -> None:
    leader_agent = Agent(report(1, info("orders", 0, 3 * GiB), leader=True))
    brokers = dict(ACTIVE.brokers)
    brokers[1] = BrokerView(1, None, (await serve_agent(leader_agent),), 1001)
    brokers[4] = BrokerView(4, None, (await serve_agent(broken),), 1004)
    view.current = replace(ACTIVE, brokers=brokers, reassignments={("orders", 0): ORDERS_0})
    async with TestClient(TestServer(build_app(view, SETTINGS))) as c:
        reply = await call(c, "GET", "/v1/reassignments", 200)
    assert reply["topics"][0]["partitions"][0]["progress"] is None
    assert broken.hits == 1


async def test_agents_are_asked_only_when_there_is_something_to_show(
    view: FakeView, serve_agent: Any
) -> None:
    agent = Agent(report(1, info("orders", 0, 10), leader=True))
    brokers = dict(ACTIVE.brokers)
    brokers[1] = BrokerView(1, None, (await serve_agent(agent),), 1001)
    view.current = replace(ACTIVE, brokers=brokers)
    async with TestClient(TestServer(build_app(view, SETTINGS))) as c:
        assert (await call(c, "GET", "/v1/reassignments?topic=nope", 200))["topics"] == []
        view.current = replace(STANDBY, brokers=brokers)
        await call(c, "GET", "/v1/reassignments", 503)
        assert agent.hits == 0
        view.current = replace(ACTIVE, brokers=brokers)
        await call(c, "GET", "/v1/reassignments?topic=orders&partition=0", 200)
        assert agent.hits == 1


async def test_an_agent_that_hangs_is_given_up_on_after_the_timeout(serve_agent: Any) -> None:
    slow = Agent(report(4), delay_s=5.0)
    quick = Agent(report(5, info("t", 0, 1)))
    urls = {4: agent_url([await serve_agent(slow)]), 5: agent_url([await serve_agent(quick)])}
    async with aiohttp.ClientSession() as session:
        started = time.monotonic()
        reports = await fetch_reports(
            session, {b: u for b, u in urls.items() if u is not None}, timeout_s=0.2
        )
        assert time.monotonic() - started < 4  # the slow agent (5 s) was not waited for
    assert reports == {5: ReplicasReport(5, (info("t", 0, 1),))}


# --- DELETE /v1/reassignments[/{topic}[/{partition}]] ------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/v1/reassignments", CancelReassignments()),
        ("/v1/reassignments?mode=cancel", CancelReassignments()),
        ("/v1/reassignments?mode=stop", CancelReassignments(mode=CancelMode.STOP)),
        ("/v1/reassignments/orders", CancelReassignments("orders")),
        ("/v1/reassignments/orders?mode=stop", CancelReassignments("orders", mode=CancelMode.STOP)),
        ("/v1/reassignments/orders/7", CancelReassignments("orders", 7)),
        ("/v1/reassignments/orders/0?mode=stop", CancelReassignments("orders", 0, CancelMode.STOP)),
    ],
)
async def test_delete_variants_reach_the_controller(
    client: Client, view: FakeView, path: str, expected: CancelReassignments
) -> None:
    reply = await call(client, "DELETE", path, 200)
    assert view.cancels == [expected]
    assert reply == {
        "throttle_time_ms": 0,
        "error_code": 0,
        "error_name": "NONE",
        "error_message": None,
        "responses": [],
    }


async def test_delete_answers_in_the_alter_response_shape(client: Client, view: FakeView) -> None:
    view.cancel_result = AlterResult((AlterPartitionResult("orders", 3, 85),))
    assert (await call(client, "DELETE", "/v1/reassignments/orders/3", 200))["responses"] == [
        {
            "name": "orders",
            "partitions": [
                {
                    "partition": 3,
                    "error_code": 85,
                    "error_name": "NO_REASSIGNMENT_IN_PROGRESS",
                    "error_message": "No partition reassignment is in progress.",
                }
            ],
        }
    ]
    view.cancel_result = AlterResult(
        (
            AlterPartitionResult("orders", 0),
            AlterPartitionResult("audit", 0),
            AlterPartitionResult("orders", 7),
        )
    )
    reply = await call(client, "DELETE", "/v1/reassignments", 200)
    assert [(t["name"], [p["partition"] for p in t["partitions"]]) for t in reply["responses"]] == [
        ("orders", [0, 7]),
        ("audit", [0]),
    ]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/v1/reassignments?mode=revert", 'mode: expected "cancel" or "stop", got "revert"'),
        ("/v1/reassignments?mode=", 'mode: expected "cancel" or "stop", got ""'),
        ("/v1/reassignments?mode=STOP", 'mode: expected "cancel" or "stop", got "STOP"'),
        ("/v1/reassignments/orders?mode=stop&mode=cancel", "mode: given more than once"),
        ("/v1/reassignments/orders?force=1", "force: unknown query parameter (allowed: mode)"),
        ("/v1/reassignments/orders/-1", 'partition: expected a non-negative integer, got "-1"'),
        ("/v1/reassignments/orders/x", 'partition: expected a non-negative integer, got "x"'),
        ("/v1/reassignments/orders/1.0", 'partition: expected a non-negative integer, got "1.0"'),
        (
            "/v1/reassignments/orders/99999999999",
            'partition: expected a non-negative integer, got "99999999999"',
        ),
    ],
)
async def test_bad_delete_is_400_invalid_request_and_reaches_no_controller(
    client: Client, view: FakeView, path: str, message: str
) -> None:
    reply = await call(client, "DELETE", path, 400)
    assert (reply["error_code"], reply["error_message"]) == (42, message)
    assert view.cancels == []


def test_query_parsing_is_pure() -> None:
    assert parse_list_query(decode_query([], ListReassignmentsQuery)) == ReassignmentFilter()
    assert parse_list_query(
        decode_query([("topic", "a"), ("partition", "2"), ("topic", "b")], ListReassignmentsQuery)
    ) == ReassignmentFilter(frozenset({"a", "b"}), frozenset({2}))
    assert parse_cancel("t", "0", decode_query([("mode", "stop")], CancelQuery)) == CancelReassignments(
        "t", 0, CancelMode.STOP
    )
    assert parse_cancel(None, None, decode_query([], CancelQuery)) == CancelReassignments(None, None)

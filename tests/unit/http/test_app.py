"""The HTTP API's read endpoints, served by the real aiohttp app over a real socket, in front of a
small fake of the ControllerView protocol (the seam between the controller and the HTTP layer)."""

from __future__ import annotations

import io
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client import Counter

from reassignd.controller.api.port import ControllerView
from reassignd.controller.model.snapshot import ActiveControllerAddress, ClusterSnapshot
from reassignd.controller.settings import ControllerSettings
from reassignd.errors import NotController
from reassignd.http.app import build_app
from reassignd.http.auth import Principal, Role
from reassignd.http.operation import shadowed_paths
from reassignd.http.route_table import OPERATIONS
from reassignd.http.server import HttpServer
from reassignd.zk.values import ZkAccess
from tests.unit.http.fake_view import ACTIVE, FakeView

STANDBY = ClusterSnapshot(
    controller_id=9001,
    active=False,
    controller_epoch=3,
    active_controller=ActiveControllerAddress(9000, "http://127.0.0.1:8080"),
    brokers=ACTIVE.brokers,
)


SETTINGS = ControllerSettings(zk_connect="127.0.0.1:2181", http_port=0)


def test_fake_is_a_controller_view() -> None:
    view: ControllerView = FakeView()  # mypy checks the protocol here
    assert view.snapshot() is ACTIVE


@pytest.fixture
def view() -> FakeView:
    return FakeView()


@pytest.fixture
async def client(view: FakeView) -> AsyncIterator[TestClient[web.Request, web.Application]]:
    async with TestClient(TestServer(build_app(view, SETTINGS))) as c:
        yield c


async def get_json(client: TestClient[web.Request, web.Application], path: str, status: int) -> Any:
    resp = await client.get(path)
    assert resp.status == status, await resp.text()
    assert resp.content_type == "application/json"
    return await resp.json()


async def test_healthz(client: TestClient[web.Request, web.Application]) -> None:
    assert await get_json(client, "/healthz", 200) == {"status": "ok"}


async def test_readyz_when_active(client: TestClient[web.Request, web.Application]) -> None:
    assert await get_json(client, "/readyz", 200) == {"status": "ready"}


async def test_readyz_on_a_standby_that_knows_the_active_controller(
    client: TestClient[web.Request, web.Application], view: FakeView
) -> None:
    view.current = STANDBY
    assert await get_json(client, "/readyz", 200) == {"status": "ready"}


async def test_readyz_503_without_zookeeper(
    client: TestClient[web.Request, web.Application], view: FakeView
) -> None:
    view.connected = False
    body = await get_json(client, "/readyz", 503)
    assert body == {"status": "not ready", "reason": "not connected to ZooKeeper"}


async def test_readyz_503_when_no_controller_is_known(
    client: TestClient[web.Request, web.Application], view: FakeView
) -> None:
    view.current = replace(STANDBY, active_controller=None)
    body = await get_json(client, "/readyz", 503)
    assert body == {"status": "not ready", "reason": "no active controller known"}


async def test_metrics_serves_the_views_registry_in_text_format(
    client: TestClient[web.Request, web.Application], view: FakeView
) -> None:
    Counter("reassignd_test_events", "events seen", registry=view.registry).inc(3)
    resp = await client.get("/metrics")
    assert resp.status == 200
    assert resp.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    text = await resp.text()
    assert "reassignd_test_events_total 3.0" in text


async def test_status_shape(client: TestClient[web.Request, web.Application]) -> None:
    body = await get_json(client, "/v1/status", 200)
    assert body == {
        "controller_id": 9000,
        "active": True,
        "controller_epoch": 3,
        "active_controller": {"id": 9000, "http": "http://127.0.0.1:8080"},
        "zookeeper": {
            "connected": True,
            "session_id": "0x100000a962b0000",
            "principal": "anonymous",
            "tls": False,
            "acls": "open",
        },
        "brokers": {"live": [1, 2, 3]},
        "topics": 2,
        "partitions": 3,
        "reassigning_partitions": 1,
        "event_queue": {"size": 0, "queue_time_ms": {"p50": 0.2, "p99": 3.1}},
        "uptime_s": 5120,
        "problems": [{"path": "/brokers/topics/garbage", "reason": "invalid JSON at byte 1"}],
        "events": {"last_event_id": None, "history": 0},
    }


async def test_status_shows_how_the_controller_is_connected_to_zookeeper(
    view: FakeView, client: TestClient[web.Request, web.Application]
) -> None:
    view.access = ZkAccess("sasl:kafka", tls=True, set_acl=True)
    body = await get_json(client, "/v1/status", 200)
    assert body["zookeeper"] == {
        "connected": True,
        "session_id": "0x100000a962b0000",
        "principal": "sasl:kafka",
        "tls": True,
        "acls": "kafka",
    }


async def test_status_on_a_disconnected_standby_with_no_controller(
    client: TestClient[web.Request, web.Application], view: FakeView
) -> None:
    view.current = replace(STANDBY, active_controller=None, brokers={})
    view.connected = False
    view.session = None
    body = await get_json(client, "/v1/status", 200)
    assert body["active"] is False
    assert body["active_controller"] is None
    assert body["zookeeper"] == {
        "connected": False,
        "session_id": None,
        "principal": "anonymous",
        "tls": False,
        "acls": "open",
    }
    assert body["brokers"] == {"live": []}
    assert (body["topics"], body["partitions"], body["reassigning_partitions"]) == (0, 0, 0)


async def test_brokers_shape_sorted_by_id(client: TestClient[web.Request, web.Application]) -> None:
    body = await get_json(client, "/v1/brokers", 200)
    assert body == {
        "brokers": [
            {
                "id": 1,
                "rack": "r1",
                "endpoints": ["PLAINTEXT://h:9092", "CONTROL://h:19092"],
                "broker_epoch": 4294967301,
            },
            {
                "id": 2,
                "rack": "r2",
                "endpoints": ["PLAINTEXT://h:9093", "CONTROL://h:19093"],
                "broker_epoch": 4294967302,
            },
            {"id": 3, "rack": None, "endpoints": ["PLAINTEXT://h:9094"], "broker_epoch": 4294967303},
        ],
        "demoted": {},
    }


async def test_topics_shape_sorted_by_name(client: TestClient[web.Request, web.Application]) -> None:
    body = await get_json(client, "/v1/topics", 200)
    assert body == {
        "topics": [
            {"name": "audit", "partitions": 1, "replication_factor": 2, "reassigning_partitions": 0},
            # RF is partition 0's target replica count (RS − RR), as kafka-topics reports it
            {"name": "orders", "partitions": 2, "replication_factor": 3, "reassigning_partitions": 1},
        ]
    }


async def test_topic_shape(client: TestClient[web.Request, web.Application]) -> None:
    body = await get_json(client, "/v1/topics/orders", 200)
    assert body == {
        "name": "orders",
        "topic_id": "kqP0cOvlQ5Gx0r5VxD1x3g",
        "partitions": [
            {
                "partition": 0,
                "replicas": [4, 5, 6, 1, 2, 3],
                "leader": 1,
                "leader_epoch": 4,
                "isr": [1, 2, 3],
                "adding_replicas": [4, 5, 6],
                "removing_replicas": [1, 2, 3],
            },
            {
                "partition": 1,
                "replicas": [2, 3, 1],
                "leader": 2,
                "leader_epoch": 0,
                "isr": [2, 3, 1],
                "adding_replicas": [],
                "removing_replicas": [],
            },
        ],
    }


async def test_unknown_topic_is_404_with_kafka_error_3(
    client: TestClient[web.Request, web.Application],
) -> None:
    body = await get_json(client, "/v1/topics/nope", 404)
    assert body == {
        "error_code": 3,
        "error_name": "UNKNOWN_TOPIC_OR_PARTITION",
        "error_message": "Topic nope does not exist.",
    }


NOT_CONTROLLER_BODY = {
    "error_code": 41,
    "error_name": "NOT_CONTROLLER",
    "error_message": "This is not the correct controller for this cluster.",
    "active_controller": {"id": 9000, "http": "http://127.0.0.1:8080"},
}


async def test_a_standby_answers_its_status_and_health(
    client: TestClient[web.Request, web.Application], view: FakeView
) -> None:
    view.current = STANDBY
    status = await get_json(client, "/v1/status", 200)
    assert (status["controller_id"], status["active"]) == (9001, False)
    assert status["active_controller"] == {"id": 9000, "http": "http://127.0.0.1:8080"}
    assert await get_json(client, "/healthz", 200) == {"status": "ok"}
    assert await get_json(client, "/readyz", 200) == {"status": "ready"}
    assert (await get_json(client, "/v1/openapi.json", 200))["openapi"].startswith("3.1")
    assert (await client.get("/metrics")).status == 200


@pytest.mark.parametrize("path", ["/v1/brokers", "/v1/topics", "/v1/topics/orders", "/v1/topics/nope"])
async def test_a_standby_answers_data_reads_503_not_controller(
    client: TestClient[web.Request, web.Application], view: FakeView, path: str
) -> None:
    """Not an empty 200: a standby's snapshot has no cluster data, and a client that reads
    through it must learn where the data is."""
    view.current = STANDBY
    assert await get_json(client, path, 503) == NOT_CONTROLLER_BODY


async def test_a_standby_that_knows_no_active_controller_says_so(
    client: TestClient[web.Request, web.Application], view: FakeView
) -> None:
    view.current = replace(STANDBY, active_controller=None)
    assert await get_json(client, "/v1/topics", 503) == {**NOT_CONTROLLER_BODY, "active_controller": None}


async def test_unknown_route_is_404_invalid_request(client: TestClient[web.Request, web.Application]) -> None:
    body = await get_json(client, "/x", 404)
    assert body == {"error_code": 42, "error_name": "INVALID_REQUEST", "error_message": "no route GET /x"}


async def test_wrong_method_is_405_with_allow(client: TestClient[web.Request, web.Application]) -> None:
    resp = await client.post("/v1/status", json={})
    assert resp.status == 405
    assert "GET" in resp.headers["Allow"]
    body = await resp.json()
    assert (body["error_code"], body["error_name"]) == (42, "INVALID_REQUEST")
    assert body["error_message"].startswith("method POST not allowed on /v1/status")


async def test_body_over_10_mib_is_413(view: FakeView) -> None:
    async def echo_size(request: web.Request) -> web.Response:
        return web.json_response({"bytes": len(await request.read())})

    app = build_app(view, SETTINGS)
    app.router.add_post("/echo", echo_size)
    async with TestClient(TestServer(app)) as c:
        ok = await c.post("/echo", data=io.BytesIO(b"x" * (10 * 1024 * 1024)))
        assert ok.status == 200
        assert await ok.json() == {"bytes": 10 * 1024 * 1024}
        resp = await c.post("/echo", data=io.BytesIO(b"x" * (10 * 1024 * 1024 + 1)))
        assert resp.status == 413
        body = await resp.json()
        assert (body["error_code"], body["error_name"]) == (42, "INVALID_REQUEST")
        assert body["error_message"] == "request body too large (limit 10485760 bytes)"


async def test_unexpected_exception_is_500_logged_and_the_server_keeps_serving(
    client: TestClient[web.Request, web.Application], view: FakeView, caplog: pytest.LogCaptureFixture
) -> None:
    view.fail_with = RuntimeError("boom")
    with caplog.at_level(logging.ERROR, logger="reassignd.http.middleware"):
        body = await get_json(client, "/v1/topics", 500)
    assert (body["error_code"], body["error_name"]) == (-1, "UNKNOWN_SERVER_ERROR")
    assert any("GET /v1/topics" in r.getMessage() and r.exc_info for r in caplog.records)
    view.fail_with = None
    await get_json(client, "/v1/topics", 200)


async def test_not_controller_carries_the_active_controller(view: FakeView) -> None:
    async def write(request: web.Request) -> web.Response:
        raise NotController()

    view.current = STANDBY
    app = build_app(view, SETTINGS)
    app.router.add_post("/write", write)
    async with TestClient(TestServer(app)) as c:
        resp = await c.post("/write")
        assert resp.status == 503
        assert await resp.json() == {
            "error_code": 41,
            "error_name": "NOT_CONTROLLER",
            "error_message": "This is not the correct controller for this cluster.",
            "active_controller": {"id": 9000, "http": "http://127.0.0.1:8080"},
        }


TOKENS = {"adm1n": Principal("alice", Role.ADMIN), "v1ew": Principal("bob", Role.VIEWER)}


async def test_bearer_tokens_and_roles(view: FakeView) -> None:
    async def write(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    app = build_app(view, SETTINGS, tokens=TOKENS)
    app.router.add_post("/v1/write", write)
    async with TestClient(TestServer(app)) as c:
        # public endpoints need no token
        assert (await c.get("/healthz")).status == 200
        assert (await c.get("/readyz")).status == 200
        assert (await c.get("/metrics")).status == 200
        # missing or unknown token: 401
        missing = await c.get("/v1/status")
        assert missing.status == 401
        assert missing.headers["WWW-Authenticate"].startswith("Bearer")
        assert (await missing.json())["error_code"] == 31
        assert (await c.get("/v1/status", headers={"Authorization": "Bearer nope"})).status == 401
        # a viewer reads but may not write: 403 CLUSTER_AUTHORIZATION_FAILED
        viewer = {"Authorization": "Bearer v1ew"}
        assert (await c.get("/v1/status", headers=viewer)).status == 200
        denied = await c.post("/v1/write", headers=viewer)
        assert denied.status == 403
        assert (await denied.json())["error_name"] == "CLUSTER_AUTHORIZATION_FAILED"
        # an admin does everything
        admin = {"Authorization": "Bearer adm1n"}
        assert (await c.post("/v1/write", headers=admin)).status == 200


async def test_http_server_logs_one_listening_line_with_the_real_port(
    view: FakeView, caplog: pytest.LogCaptureFixture
) -> None:
    server = HttpServer(build_app(view, SETTINGS), "127.0.0.1", 0)
    with caplog.at_level(logging.INFO, logger="reassignd.http.server"):
        url = await server.start()
    try:
        assert url.startswith("http://127.0.0.1:")
        assert int(url.rsplit(":", 1)[1]) > 0
        lines = [r.getMessage() for r in caplog.records if r.name == "reassignd.http.server"]
        assert lines == [f"listening on {url}"]
        async with TestClient(TestServer(web.Application())) as c:
            resp = await c.session.get(f"{url}/healthz")
            assert resp.status == 200
    finally:
        await server.stop()
        await server.stop()  # idempotent


def test_the_fixed_paths_a_topic_path_also_matches_are_their_operations_alone() -> None:
    assert shadowed_paths(OPERATIONS) == {"/v1/topics/delete": ("POST",), "/v1/topics/partitions": ("POST",)}
    # the topic parameter of /v1/topics/{topic} leaves those names out of the document
    [describe] = [o for o in OPERATIONS if (o.method, o.path) == ("GET", "/v1/topics/{topic}")]
    [topic] = [p for p in describe.parameters if p.get("name") == "topic"]
    excluded = set(topic["schema"]["not"]["enum"])
    assert {path.rsplit("/", 1)[1] for path in shadowed_paths(OPERATIONS)} <= excluded


async def test_every_path_allows_exactly_its_documented_methods(
    client: TestClient[web.Request, web.Application],
) -> None:
    """What schemathesis' Allow check (ST205) asks of every path: an undeclared method is 405 and
    ``Allow`` lists the path's own methods (HEAD with GET) — on /v1/topics/delete too, which
    /v1/topics/{topic} would match."""
    declared: dict[str, set[str]] = {}
    for op in OPERATIONS:
        declared.setdefault(op.path, set()).add(op.method)
    for path, methods in declared.items():
        url = re.sub(r"\{[a-z_]+\}", "1", path)
        for method in ("OPTIONS", "PATCH", *({"GET", "PUT", "DELETE"} - methods)):
            resp = await client.request(method, url)
            assert resp.status == 405, (method, url, await resp.text())
            allowed = set(resp.headers["Allow"].split(",")) - {"HEAD"}
            assert allowed == methods, (method, url, resp.headers["Allow"])


async def test_a_topic_action_path_is_not_a_topic_named_so(
    client: TestClient[web.Request, web.Application], view: FakeView
) -> None:
    for path in ("/v1/topics/delete", "/v1/topics/partitions"):
        for method in ("GET", "DELETE", "HEAD"):
            resp = await client.request(method, path)
            assert (resp.status, resp.headers["Allow"]) == (405, "POST"), (method, path)
    assert view.requests == []  # DELETE /v1/topics/partitions deleted no topic "partitions"

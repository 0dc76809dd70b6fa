"""``POST /v1/brokers/{id}/demote|promote`` and ``reassignd admin demote|promote``: the route's
input and answer, the command line, the lines printed, against the real HTTP app in front of the
fake controller (the controller side runs in tests/integration/test_demotion.py)."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestServer

from reassignd.admin.demote import report, run_demote
from reassignd.admin.demote_command import AdminDemoteCommand, DemoteSettings
from reassignd.config import ConfigError, load_command
from reassignd.contracts.reassignments import DemotionResponse, TopicPartitionResult
from reassignd.controller.model.admin_requests import DemotionResult, ElectionResult
from reassignd.errors import UnknownBroker
from reassignd.http.app import build_app
from reassignd.testing.fake_view import SETTINGS, FakeView, call, serve

URL = "http://127.0.0.1:8080"
REFUSED = ElectionResult("t", 1, 83, "broker 3 is the only live in-sync replica of t-1")


def command(*args: str) -> DemoteSettings:
    parsed = load_command(["admin", *args, "--bootstrap-controller", URL], {})
    assert isinstance(parsed, AdminDemoteCommand)
    return parsed.settings


def test_the_command_line() -> None:
    assert command("demote", "--broker", "3") == DemoteSettings("demote", 3, URL)
    assert command("promote", "--broker", "0").path == "/v1/brokers/0/promote"


@pytest.mark.parametrize("broker", ["-1", "x", "2147483648", ""])
def test_a_bad_broker_id_is_a_bad_argument(broker: str) -> None:
    with pytest.raises(ConfigError, match="--broker: expected a broker id"):
        command("demote", "--broker", broker)


def test_the_lines_printed() -> None:
    outcome = DemotionResponse(
        3,
        1,
        1,
        (
            TopicPartitionResult("t", 0, 0, "NONE", None),
            TopicPartitionResult("t", 1, 83, "ELIGIBLE_LEADERS_NOT_AVAILABLE", "no other in-sync replica"),
        ),
    )
    assert report("demote", outcome) == (
        [
            "Refused t-1: ELIGIBLE_LEADERS_NOT_AVAILABLE (83): no other in-sync replica",
            "Broker 3 demoted: 1 partition(s) done, 1 leadership(s) moved, 1 refused.",
        ],
        True,
    )
    assert report("promote", DemotionResponse(3, 0, 0, ())) == (["Broker 3: nothing to promote."], False)


async def test_the_route_answers_per_partition() -> None:
    view = FakeView(demotion_result=DemotionResult(3, (ElectionResult("t", 0), REFUSED), 1))
    async with serve(view) as client:
        body = await call(client, "POST", "/v1/brokers/3/demote", 200)
        assert body == {
            "broker_id": 3,
            "leaders_moved": 1,
            "refused": 1,
            "partitions": [
                {"topic": "t", "partition": 0, "error_code": 0, "error_name": "NONE", "error_message": None},
                {
                    "topic": "t",
                    "partition": 1,
                    "error_code": 83,
                    "error_name": "ELIGIBLE_LEADERS_NOT_AVAILABLE",
                    "error_message": REFUSED.error_message,
                },
            ],
        }
        await call(client, "POST", "/v1/brokers/3/promote", 200)
    assert view.demotions == [(3, False), (3, True)]


@pytest.mark.parametrize("broker", ["x", "-1", "2147483648", "01x"])
async def test_a_bad_broker_id_is_400_and_asks_nothing(broker: str) -> None:
    view = FakeView()
    async with serve(view) as client:
        body = await call(client, "POST", f"/v1/brokers/{broker}/demote", 400)
    assert body["error_code"] == 42 and body["error_message"].startswith("broker_id: expected a broker id")
    assert view.demotions == []


async def test_an_unknown_broker_is_404() -> None:
    view = FakeView(fail_with=UnknownBroker("no broker 77: none is registered and no replica names it"))
    async with serve(view) as client:
        body = await call(client, "POST", "/v1/brokers/77/demote", 404)
    assert (body["error_code"], body["error_message"]) == (
        42,
        "no broker 77: none is registered and no replica names it",
    )


@pytest.fixture
async def served() -> AsyncIterator[tuple[FakeView, str]]:
    view = FakeView()
    server = TestServer(build_app(view, SETTINGS), host="127.0.0.1")
    await server.start_server()
    try:
        yield view, f"http://127.0.0.1:{server.port}"
    finally:
        await server.close()


async def test_a_run_posts_and_prints(served: tuple[FakeView, str]) -> None:
    view, url = served
    view.demotion_result = DemotionResult(3, (ElectionResult("t", 0),), 1)
    out = io.StringIO()
    assert await run_demote(DemoteSettings("demote", 3, url, request_timeout_s=10), out) == 0
    assert out.getvalue() == "Broker 3 demoted: 1 partition(s) done, 1 leadership(s) moved, 0 refused.\n"
    assert view.demotions == [(3, False)]

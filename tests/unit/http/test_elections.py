"""Leader elections over HTTP (POST /v1/elections): the real aiohttp app on a real socket in front
of a fake ControllerView. The body is read strictly (nothing malformed reaches the controller),
the controller's per-partition answers come back grouped by topic in Kafka's shape, a viewer is
refused and a standby answers 503."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import pytest

from reassignd.controller.model.admin_requests import ElectionResult, ElectionType, ElectLeaders
from reassignd.errors import InvalidRequest, NotController
from reassignd.http.auth import Principal, Role
from reassignd.http.routes.elections import parse_elect_body
from reassignd.testing.fake_view import ACTIVE, Client, FakeView, call, serve
from tests.unit.http.election_cases import MALFORMED


@pytest.fixture
def view() -> FakeView:
    return FakeView()


@pytest.fixture
async def client(view: FakeView) -> AsyncIterator[Client]:
    async with serve(view) as c:
        yield c


async def test_named_partitions_reach_the_controller_and_its_answers_come_back(
    client: Client, view: FakeView
) -> None:
    view.election_results = [
        ElectionResult("t", 0),
        ElectionResult("t", 1, 84, "Leader election not needed for topic partition."),
        ElectionResult("u", 0, 80, "The preferred leader was not available."),
        ElectionResult("gone", 3, 3),
    ]
    body = {
        "election_type": "preferred",
        "partitions": [
            {"topic": "t", "partition": 0},
            {"topic": "t", "partition": 1},
            {"topic": "u", "partition": 0},
            {"topic": "gone", "partition": 3},
        ],
    }
    reply = await call(client, "POST", "/v1/elections", 200, json=body)
    assert view.requests == [
        ElectLeaders(ElectionType.PREFERRED, (("t", 0), ("t", 1), ("u", 0), ("gone", 3)))
    ]
    assert reply == {
        "throttle_time_ms": 0,
        "error_code": 0,
        "error_name": "NONE",
        "error_message": None,
        "replica_election_results": [
            {
                "topic": "t",
                "partitions": [
                    {"partition": 0, "error_code": 0, "error_name": "NONE", "error_message": None},
                    {
                        "partition": 1,
                        "error_code": 84,
                        "error_name": "ELECTION_NOT_NEEDED",
                        "error_message": "Leader election not needed for topic partition.",
                    },
                ],
            },
            {
                "topic": "u",
                "partitions": [
                    {
                        "partition": 0,
                        "error_code": 80,
                        "error_name": "PREFERRED_LEADER_NOT_AVAILABLE",
                        "error_message": "The preferred leader was not available.",
                    }
                ],
            },
            {
                "topic": "gone",
                "partitions": [
                    {
                        "partition": 3,
                        "error_code": 3,
                        "error_name": "UNKNOWN_TOPIC_OR_PARTITION",
                        "error_message": "The partition does not exist.",
                    }
                ],
            },
        ],
    }


async def test_null_partitions_ask_for_every_partition(client: Client, view: FakeView) -> None:
    view.election_results = []
    reply = await call(
        client, "POST", "/v1/elections", 200, json={"election_type": "unclean", "partitions": None}
    )
    assert view.requests == [ElectLeaders(ElectionType.UNCLEAN, None)]
    assert reply["replica_election_results"] == []


async def test_a_viewer_may_not_elect() -> None:
    view = FakeView()
    tokens = {"v": Principal("bob", Role.VIEWER), "a": Principal("alice", Role.ADMIN)}
    body = {"election_type": "preferred", "partitions": None}
    async with serve(view, tokens) as c:
        await call(c, "POST", "/v1/elections", 401, json=body)
        denied = await call(c, "POST", "/v1/elections", 403, json=body, headers={"Authorization": "Bearer v"})
        assert denied["error_code"] == 31
        assert view.requests == []
        await call(c, "POST", "/v1/elections", 200, json=body, headers={"Authorization": "Bearer a"})
        assert len(view.requests) == 1


async def test_a_standby_answers_503_not_controller() -> None:
    standby = FakeView(current=dataclasses.replace(ACTIVE, controller_id=9001, active=False))
    standby.fail_with = NotController()  # what ControllerApi raises on a standby
    async with serve(standby) as c:
        body = {"election_type": "preferred", "partitions": None}
        reply = await call(c, "POST", "/v1/elections", 503, json=body)
    assert reply["error_code"] == 41
    assert reply["active_controller"] == {"id": 9000, "http": "http://127.0.0.1:8080"}


async def test_a_query_parameter_is_refused(client: Client, view: FakeView) -> None:
    body = {"election_type": "preferred", "partitions": None}
    reply = await call(client, "POST", "/v1/elections?election_type=unclean", 400, json=body)
    assert reply["error_message"].startswith("election_type: unknown query parameter")
    assert view.requests == []


@pytest.mark.parametrize(("raw", "message"), MALFORMED, ids=[m for _, m in MALFORMED])
async def test_a_malformed_body_is_400_invalid_request_naming_the_field_and_reaches_no_controller(
    client: Client, view: FakeView, raw: bytes, message: str
) -> None:
    reply = await call(client, "POST", "/v1/elections", 400, data=raw)
    assert (reply["error_code"], reply["error_name"]) == (42, "INVALID_REQUEST")
    assert reply["error_message"].startswith(message), reply["error_message"]
    assert view.requests == []
    with pytest.raises(InvalidRequest):
        parse_elect_body(raw)

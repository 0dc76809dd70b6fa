"""``POST /v1/log-dirs/moves`` at the door: strict parsing (each refusal names the field and
nothing is forwarded), the admin role, a standby's 503, an unregistered broker's 404, a broker
without a CONTROL endpoint answered KAFKA_STORAGE_ERROR per replica, and the answer's shape.
Forwarding to a real agent: tests/integration/test_jbod_admin.py."""

from __future__ import annotations

from dataclasses import replace

import pytest

from reassignd.control.log_dir_moves import LogDirMove
from reassignd.controller.model.snapshot import BrokerView
from reassignd.errors import InvalidRequest
from reassignd.http.auth import Principal, Role
from reassignd.http.routes.log_dirs import moves_json, parse_moves_body
from reassignd.testing.fake_view import ACTIVE, FakeView, call, serve
from tests.unit.http.log_dir_move_cases import MALFORMED, MOVE

PATH = "/v1/log-dirs/moves"


@pytest.mark.parametrize(("raw", "message"), MALFORMED, ids=[m for _, m in MALFORMED])
async def test_a_malformed_body_is_400_naming_the_field(raw: bytes, message: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        parse_moves_body(raw)
    assert str(refused.value).startswith(message), str(refused.value)
    async with serve(FakeView()) as c:
        reply = await call(c, "POST", PATH, 400, data=raw)
    assert (reply["error_code"], reply["error_name"]) == (42, "INVALID_REQUEST")
    assert reply["error_message"].startswith(message), reply["error_message"]


def test_a_body_read() -> None:
    raw = b'{"broker": 3, "moves": [{"topic": "t", "partition": 0, "dir": "/d2"}, {"topic": "u", "partition": 4, "dir": "/d1"}]}'
    assert parse_moves_body(raw) == (3, (LogDirMove("t", 0, "/d2"), LogDirMove("u", 4, "/d1")))


async def test_an_unregistered_broker_is_404_and_a_query_400() -> None:
    async with serve(FakeView()) as c:
        reply = await call(c, "POST", PATH, 404, json={"broker": 7, "moves": [MOVE]})
        assert reply["error_code"] == 42
        assert reply["error_message"] == "broker 7 is not registered: nothing was forwarded"
        reply = await call(c, "POST", PATH + "?broker=1", 400, json={"broker": 7, "moves": [MOVE]})
        assert reply["error_message"].startswith("broker: unknown query parameter")


async def test_a_broker_without_an_agent_endpoint_gets_56_per_replica() -> None:
    view = FakeView(current=replace(ACTIVE, brokers={1: BrokerView(1, None, ("PLAINTEXT://h:9092",), 5)}))
    async with serve(view) as c:
        reply = await call(c, "POST", PATH, 200, json={"broker": 1, "moves": [MOVE]})
    assert reply["broker"] == 1
    assert [
        (r["topic"], r["partition"], r["dir"], r["error_code"], r["error_name"]) for r in reply["results"]
    ] == [("t", 0, "/d2", 56, "KAFKA_STORAGE_ERROR")]
    assert "broker 1's agent did not move t-0" in reply["results"][0]["error_message"]


async def test_a_viewer_may_not_and_a_standby_answers_503() -> None:
    tokens = {"v": Principal("viewer", Role.VIEWER)}
    async with serve(FakeView(), tokens) as c:
        reply = await call(
            c, "POST", PATH, 403, json={"broker": 1, "moves": [MOVE]}, headers={"Authorization": "Bearer v"}
        )
        assert reply["error_code"] == 31
    standby = FakeView(current=replace(ACTIVE, active=False))
    async with serve(standby) as c:
        reply = await call(c, "POST", PATH, 503, json={"broker": 1, "moves": [MOVE]})
        assert reply["error_code"] == 41


def test_the_answer_names_each_code() -> None:
    moves = (LogDirMove("t", 0, "/d2"), LogDirMove("t", 1, "/x"), LogDirMove("u", 0, "/d1"))
    answer = moves_json(2, moves, [(0, None), (57, None), (9, None)])
    assert [(r.error_code, r.error_name) for r in answer.results] == [
        (0, "NONE"),
        (57, "LOG_DIR_NOT_FOUND"),
        (9, "REPLICA_NOT_AVAILABLE"),
    ]
    assert answer.results[0].error_message is None
    assert answer.results[1].error_message == "broker 2 has no log dir /x"
    assert answer.results[2].error_message is not None and "keeps /d1" in (answer.results[2].error_message)
    no_room = moves_json(
        2, moves[:1], [(56, "t-0: 9 bytes do not fit in log dir /d2: 1 of its 10 bytes are free")]
    )
    assert no_room.results[0].error_message == (
        "broker 2: t-0: 9 bytes do not fit in log dir /d2: 1 of its 10 bytes are free"
    )

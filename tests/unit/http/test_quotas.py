"""Client quotas over HTTP (GET/POST /v1/quotas): the real aiohttp app on a real socket in front of
a fake ControllerView; entries decided by the HTTP layer (unsupported keys, repeated keys, invalid
entities, no ops) never reach the controller and keep their place in the answer."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from reassignd.contracts.queries import DescribeQuotasQuery
from reassignd.contracts.requests import QuotaAlteration, QuotaEntity, QuotaOp
from reassignd.controller.model.from_contracts import merge_quota_results, quota_entry_of
from reassignd.controller.model.requests import (
    AlterQuotas,
    QuotaAlterationResult,
    QuotaChange,
    QuotaDescription,
)
from reassignd.errors import InvalidRequest
from reassignd.http.query_door import decode_query
from reassignd.http.routes.quotas import parse_alter_quotas
from reassignd.testing.fake_view import Client, FakeView, call, serve
from tests.unit.http.quota_helpers import MALFORMED, entry

RATE = "controller_mutation_rate"


@pytest.fixture
def view() -> FakeView:
    return FakeView()


@pytest.fixture
async def client(view: FakeView) -> AsyncIterator[Client]:
    async with serve(view) as c:
        yield c


def body(obj: Any) -> bytes:
    return json.dumps(obj).encode()


# --- GET /v1/quotas (DescribeClientQuotas) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", (None, None)),
        ("?user=alice", ("alice", None)),
        ("?client_id=app", (None, "app")),
        ("?user=%3Cdefault%3E&client_id=app", ("<default>", "app")),
    ],
)
async def test_describe_passes_the_filter(
    client: Client, view: FakeView, query: str, expected: tuple[str | None, str | None]
) -> None:
    await call(client, "GET", "/v1/quotas" + query, 200)
    assert view.described == [expected]


async def test_describe_shape(client: Client, view: FakeView) -> None:
    view.descriptions = (
        QuotaDescription("alice", None, ((RATE, 2.0),)),
        QuotaDescription("alice", "app", ((RATE, 0.5),)),
        QuotaDescription(None, "<default>", ((RATE, 10.0),)),
    )
    assert await call(client, "GET", "/v1/quotas", 200) == {
        "entries": [
            {"entity": {"user": "alice"}, "values": {RATE: 2.0}},
            {"entity": {"user": "alice", "client_id": "app"}, "values": {RATE: 0.5}},
            {"entity": {"client_id": "<default>"}, "values": {RATE: 10.0}},
        ]
    }


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("?user=a&user=b", "user: given more than once"),
        ("?client_id=", "client_id: expected a name, got an empty string"),
        ("?user=", "user: expected a name, got an empty string"),
        ("?client-id=app", "client-id: unknown query parameter (allowed: user, client_id)"),
    ],
)
async def test_a_bad_describe_filter_is_400(client: Client, view: FakeView, query: str, message: str) -> None:
    reply = await call(client, "GET", "/v1/quotas" + query, 400)
    assert (reply["error_code"], reply["error_message"]) == (42, message)
    assert view.described == []


def test_describe_query_parsing_is_pure() -> None:
    assert decode_query([], DescribeQuotasQuery) == DescribeQuotasQuery(None, None)
    assert decode_query([("client_id", "c"), ("user", "u")], DescribeQuotasQuery) == DescribeQuotasQuery(
        "u", "c"
    )


# --- POST /v1/quotas (AlterClientQuotas) -----------------------------------------------------------


async def test_alter_sends_the_valid_entries_and_answers_every_entry_in_order(
    client: Client, view: FakeView
) -> None:
    raw = {
        "entries": [
            entry({"user": "alice", "client_id": "app"}, (RATE, 2.0)),
            entry({"user": "bob"}, ("producer_byte_rate", 1024)),
            entry({"client_id": "<default>"}, (RATE, None)),
            entry({}, (RATE, 1)),
            entry({"user": "carol"}, (RATE, 1), (RATE, 2)),
            entry({"user": "dave"}),
            entry({"user": "erin"}, (RATE, 3)),
        ]
    }
    view.quota_results = (
        QuotaAlterationResult("alice", "app"),
        QuotaAlterationResult(None, "<default>"),
        QuotaAlterationResult("erin", None, 42, "controller_mutation_rate must be non-negative"),
    )
    reply = await call(client, "POST", "/v1/quotas", 200, data=body(raw))
    assert view.requests == [
        AlterQuotas(
            (
                QuotaChange("alice", "app", 2.0),
                QuotaChange(None, "<default>", None),
                QuotaChange("erin", None, 3.0),
            )
        )
    ]
    ok = {"error_code": 0, "error_name": "NONE", "error_message": None}
    bad = {"error_code": 42, "error_name": "INVALID_REQUEST"}
    assert reply == {
        "entries": [
            {"entity": {"user": "alice", "client_id": "app"}, **ok},
            {
                "entity": {"user": "bob"},
                **bad,
                "error_message": 'Unsupported quota key "producer_byte_rate": only controller_mutation_rate can be altered',
            },
            {"entity": {"client_id": "<default>"}, **ok},
            {"entity": {}, **bad, "error_message": "Invalid empty client quota entity"},
            {
                "entity": {"user": "carol"},
                **bad,
                "error_message": "Duplicate quota key controller_mutation_rate in the entry's ops",
            },
            {"entity": {"user": "dave"}, **ok},
            {
                "entity": {"user": "erin"},
                **bad,
                "error_message": "controller_mutation_rate must be non-negative",
            },
        ]
    }


async def test_an_all_local_request_still_asks_the_controller(client: Client, view: FakeView) -> None:
    """So a standby answers NOT_CONTROLLER even when nothing would be written."""
    await call(client, "POST", "/v1/quotas", 200, data=b'{"entries": []}')
    await call(client, "POST", "/v1/quotas", 200, data=body({"entries": [entry({"user": "u"}, ("x", 1))]}))
    assert view.requests == [AlterQuotas(()), AlterQuotas(())]


def test_planning_checks_the_entity_before_the_keys() -> None:
    def plan(entity: QuotaEntity, *ops: tuple[str, float | None]) -> QuotaChange | QuotaAlterationResult:
        return quota_entry_of(QuotaAlteration(entity, tuple(QuotaOp(k, v) for k, v in ops)))

    assert plan(QuotaEntity(), ("x", 1.0)) == QuotaAlterationResult(
        None, None, 42, "Invalid empty client quota entity"
    )
    assert plan(QuotaEntity(user="", client_id="app")).error_message == "Empty user not supported"  # type: ignore[union-attr]
    assert plan(QuotaEntity(user="u", client_id="")).error_message == "Empty client-id not supported"  # type: ignore[union-attr]
    assert plan(QuotaEntity(user="", client_id="app"), ("x", 1.0)).error_message == "Empty user not supported"  # type: ignore[union-attr]
    assert plan(QuotaEntity(user="u"), (RATE, -1.0)) == QuotaChange(
        "u", None, -1.0
    )  # the controller's to refuse


def test_a_controller_answering_the_wrong_number_of_entries_is_a_bug() -> None:
    plans = [QuotaChange("u", None, 1.0)]
    with pytest.raises(RuntimeError, match="answered 0 quota entries for 1 sent"):
        merge_quota_results(plans, ())
    with pytest.raises(RuntimeError, match="answered 2 quota entries for 1 sent"):
        merge_quota_results(plans, (QuotaAlterationResult("u", None),) * 2)


async def test_a_wrong_count_from_the_controller_is_a_500_not_a_wrong_answer(
    client: Client, view: FakeView
) -> None:
    view.quota_results = ()
    raw = body({"entries": [entry({"user": "u"}, (RATE, 1))]})
    reply = await call(client, "POST", "/v1/quotas", 500, data=raw)
    assert reply["error_code"] == -1


@pytest.mark.parametrize(("raw", "message"), MALFORMED, ids=[m for _, m in MALFORMED])
async def test_a_malformed_body_is_400_invalid_request_naming_the_field_and_reaches_no_controller(
    client: Client, view: FakeView, raw: bytes, message: str
) -> None:
    reply = await call(client, "POST", "/v1/quotas", 400, data=raw)
    assert (reply["error_code"], reply["error_name"]) == (42, "INVALID_REQUEST")
    assert reply["error_message"].startswith(message), reply["error_message"]
    assert view.requests == []
    with pytest.raises(InvalidRequest):
        parse_alter_quotas(raw)


def test_integer_values_are_doubles() -> None:
    parsed = parse_alter_quotas(body({"entries": [entry({"user": "u"}, (RATE, 3))]}))
    assert parsed == (QuotaAlteration(QuotaEntity(user="u"), (QuotaOp(RATE, 3.0),)),)
    assert isinstance(parsed[0].ops[0].value, float)

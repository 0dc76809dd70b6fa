"""Query strings are decoded once, at the door, into their contract structs
(``reassignd/contracts/queries.py``): the rules (unknown parameter, repeatable or single, decimal
digits, ranges, empty names) hold for every struct, the words are each field's, every operation
the route table lists decodes the struct it documents, and the document's query parameters are
the structs' fields."""

from __future__ import annotations

import json
import re

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reassignd.contracts import queries as qs
from reassignd.errors import InvalidRequest
from reassignd.http.openapi import openapi_document
from reassignd.http.query_door import decode_query, fields, parameters
from reassignd.http.route_table import OPERATIONS
from reassignd.int_limits import INT32_MAX
from reassignd.testing.fake_view import FakeView, call, serve
from tests.examples import examples


def refusal(pairs: list[tuple[str, str]], contract: type[qs.Query]) -> str:
    with pytest.raises(InvalidRequest) as e:
        decode_query(pairs, contract)
    return str(e.value)


# --- the route table and the document --------------------------------------------------------------

# The operations that do not read their query (a parameter is ignored, as before the door).
UNREAD = {
    "healthz", "readyz", "metrics", "openapi", "statusPage", "statusPageScript", "statusPageStyle",
    "whoami", "status", "listBrokers", "listTopics", "describeTopic", "listBatches", "describeBatch",
}  # fmt: skip


def test_every_change_and_every_filtered_read_decodes_a_query_struct() -> None:
    assert {op.operation_id for op in OPERATIONS if op.query is None} == UNREAD
    assert all(op.method == "GET" for op in OPERATIONS if op.query is None)


def test_the_documents_query_parameters_are_the_structs_fields() -> None:
    document = openapi_document()
    for op in OPERATIONS:
        assert all(p["in"] != "query" for p in op.parameters), op.operation_id  # none written by hand
        documented = document["paths"][op.path][op.method.lower()].get("parameters", [])
        in_query = [p for p in documented if p["in"] == "query"]
        params = fields(op.query) if op.query is not None else ()
        assert [p["name"] for p in in_query] == [p.name for p in params], op.operation_id
        for doc, param in zip(in_query, params, strict=True):
            assert (doc["schema"].get("type") == "array") == param.repeatable, (op.operation_id, param.name)
        assert in_query == list(parameters(op.query) if op.query is not None else ())


@pytest.mark.parametrize("contract", [op.query for op in OPERATIONS if op.query is not None])
def test_every_query_struct_refuses_an_unknown_parameter_naming_its_fields(contract: type[qs.Query]) -> None:
    names = ", ".join(contract.__struct_fields__) or "none"
    assert refusal([("zz", "1")], contract) == f"zz: unknown query parameter (allowed: {names})"
    assert decode_query([], contract) == contract()


async def test_a_handler_reads_the_struct_its_route_declares() -> None:
    async with serve(FakeView()) as c:
        reply = await call(c, "GET", "/v1/reassignments?topic=a&partition=x", 400)
        assert reply["error_message"] == 'partition: expected a non-negative integer, got "x"'
        reply = await call(c, "POST", "/v1/elections?x=1", 400, json={})
        assert reply["error_message"] == "x: unknown query parameter (allowed: none)"
        for broker in ("²", "١", "+1", " 1"):  # isdigit() took the first two (500, and broker 1)
            reply = await call(c, "GET", "/v1/log-dirs", 400, params={"broker": broker})
            assert reply["error_message"] == f"broker: must be a broker id, got {broker!r}"


# --- the rules -------------------------------------------------------------------------------------


def test_repeatable_and_single_parameters() -> None:
    assert decode_query([("topic", "a"), ("topic", "b"), ("partition", "0")], qs.ListReassignmentsQuery) == (
        qs.ListReassignmentsQuery(("a", "b"), (0,))
    )
    assert refusal([("mode", "stop"), ("mode", "stop")], qs.CancelQuery) == "mode: given more than once"
    assert decode_query([], qs.CancelQuery).mode == "cancel"
    assert decode_query([("mode", "stop")], qs.CancelQuery).mode == "stop"
    assert refusal([("mode", "Stop")], qs.CancelQuery) == 'mode: expected "cancel" or "stop", got "Stop"'


def test_empty_names_are_refused_in_each_fields_words() -> None:
    # a topic filter matching nothing: as Kafka lists for a topic it does not know
    assert decode_query([("topic", "")], qs.ListReassignmentsQuery).topic == ("",)
    assert refusal([("user", "")], qs.DescribeQuotasQuery) == "user: expected a name, got an empty string"
    assert decode_query([("topic", "")], qs.EventsQuery).topic == ("",)  # a filter matching nothing


def test_fields_are_checked_in_the_structs_order_the_values_in_the_querys() -> None:
    # user is the struct's first field: its refusal wins though client_id came first
    assert refusal([("client_id", ""), ("user", "")], qs.DescribeQuotasQuery).startswith("user: ")
    pairs = [("partition", "x"), ("topic", "t"), ("partition", "y")]
    assert refusal(pairs, qs.ListReassignmentsQuery) == 'partition: expected a non-negative integer, got "x"'


DECIMAL = re.compile(r"[0-9]{1,10}")


@settings(max_examples=examples(300), deadline=None)
@given(
    st.one_of(
        st.integers(-5, 2**32).map(str),
        st.text(st.sampled_from("0123456789+- ._e²١\u00a0x"), max_size=12),
    )
)
def test_an_integer_is_ten_decimal_digits_at_most_within_its_range(text: str) -> None:
    accepted = DECIMAL.fullmatch(text) is not None and int(text) <= INT32_MAX
    for contract, name, message in (
        (qs.ListReassignmentsQuery, "partition", f"expected a non-negative integer, got {json.dumps(text)}"),
        (qs.DeleteTopicQuery, "timeout_ms", f"expected an integer 0..{INT32_MAX}, got {json.dumps(text)}"),
        (qs.LogDirsQuery, "broker", f"must be a broker id, got {text[:40]!r}"),
    ):
        if accepted:
            value = getattr(decode_query([(name, text)], contract), name)
            assert value in (int(text), (int(text),))
        else:
            assert refusal([(name, text)], contract) == f"{name}: {message}"


@settings(max_examples=examples(300), deadline=None)
@given(
    st.one_of(
        st.floats(allow_nan=True).map(str), st.text(st.sampled_from("0123456789.-+e_ nainf"), max_size=8)
    )
)
def test_seconds_are_what_float_reads_above_zero_and_up_to_a_day(text: str) -> None:
    try:
        value: float | None = float(text)
    except ValueError:
        value = None
    for name in ("heartbeat_s", "max_s"):
        if value is None:
            assert refusal([(name, text)], qs.EventsQuery) == f"{name}: must be a number of seconds"
        elif 0 < value <= 86_400:
            assert getattr(decode_query([(name, text)], qs.EventsQuery), name) == value
        else:
            assert refusal([(name, text)], qs.EventsQuery) == f"{name}: must be > 0 and at most 86400"


def test_a_query_struct_holds_only_what_the_door_reads() -> None:
    class Bad(qs.Query, frozen=True):
        when: msgspec.Raw | None = None

    with pytest.raises(TypeError, match="when"):
        decode_query([], Bad)

"""The HTTP door: a body decoded once by msgspec into its contract struct, the strict reader asked
only for a refusal's wording, repeated keys refused, msgspec's refusals mapped to our form."""

from __future__ import annotations

import re

import msgspec
import pytest

from reassignd.contracts.requests import CreateTopicsRequest, KafkaAlterReassignments, NewTopic
from reassignd.controller.model.requests import AlterReassignments, Requester
from reassignd.errors import InvalidRequest
from reassignd.http.door import decode_request, integral_numbers, members_present, refuse
from reassignd.http.routes.reassignments import parse_alter_body
from reassignd.http.routes.topics import parse_create_topics


def _never(body: bytes) -> None:
    raise AssertionError(f"the strict reader was asked about {body!r}")


def test_a_body_msgspec_accepts_is_built_from_its_struct_without_the_strict_reader() -> None:
    body = (
        b'{"topics": [{"name": "t", "partitions": [{"partition": 3, "replicas": [1, 2]}]}], "mode": "stop"}'
    )
    built = decode_request(body, KafkaAlterReassignments, lambda r: r, _never)
    assert built.topics[0].partitions[0].replicas == (1, 2)
    assert built.mode == "stop"


def test_a_refused_body_is_worded_by_the_strict_reader() -> None:
    asked: list[bytes] = []

    def explain(body: bytes) -> None:
        asked.append(body)
        raise InvalidRequest("topics: the strict reader's words")

    with pytest.raises(InvalidRequest, match="the strict reader's words"):
        decode_request(b'{"topics": 1}', KafkaAlterReassignments, lambda r: r, explain)
    assert asked == [b'{"topics": 1}']


def test_msgspec_refusing_what_the_strict_reader_accepts_is_refused_with_the_field_named() -> None:
    with pytest.raises(InvalidRequest, match=r"^timeout_ms: expected `int` >= 0$"):
        decode_request(b'{"topics": [], "timeout_ms": -1}', CreateTopicsRequest, lambda r: r, lambda _: None)
    # the strict reader lets a lone surrogate through; msgspec does not, and decides
    body = b'{"topics": [{"name": "\\ud800", "partitions": []}]}'
    with pytest.raises(InvalidRequest, match=r"^request body: invalid JSON: .*surrogate"):
        parse_alter_body(body)


def test_a_repeated_key_msgspec_lets_through_is_refused_naming_it() -> None:
    for body, message in (
        (b'{"topics": [1], "topics": []}', "topics: duplicate field"),
        (b'{"topics": [{"name": "a", "name": "b", "partitions": []}]}', "topics[0].name: duplicate field"),
    ):
        with pytest.raises(InvalidRequest, match=f"^{re.escape(message)}$"):
            parse_alter_body(body)


def test_a_colon_in_a_string_takes_the_strict_reader_and_is_accepted() -> None:
    body = b'{"topics": [{"name": "t", "configs": {"a": "b:c"}}], "validate_only": false}'
    create = parse_create_topics(body, Requester())
    assert create.topics[0].configs == {"a": "b:c"}
    assert not create.validate_only
    assert parse_alter_body(b'{"topics": []}') == AlterReassignments(())
    with pytest.raises(InvalidRequest, match=r"^request body: invalid JSON"):  # as the plan reader
        parse_alter_body(b'\xef\xbb\xbf{"topics": []}')


def test_msgspec_refusals_take_our_form_path_first() -> None:
    with pytest.raises(msgspec.ValidationError) as invalid:
        msgspec.json.decode(b'{"topics": [{"name": 1}]}', type=CreateTopicsRequest)
    with pytest.raises(InvalidRequest, match=r"^topics\[0\]\.name: expected `str`, got `int`$"):
        refuse(invalid.value)
    with pytest.raises(msgspec.DecodeError) as malformed:
        msgspec.json.decode(b'{"topics": [', type=CreateTopicsRequest)
    with pytest.raises(InvalidRequest, match=r"^request body: invalid JSON: Input data was truncated$"):
        refuse(malformed.value)


def test_members_present_counts_what_the_struct_proves_present() -> None:
    # name (required), configs' two keys and configs itself; the defaults prove nothing
    topic = NewTopic("t", configs={"a": "1", "b": None})
    assert members_present(topic) == 1 + 1 + 2
    assert members_present(CreateTopicsRequest((topic,), timeout_ms=5)) == 1 + 4 + 1
    assert members_present(NewTopic("t", num_partitions=3, assignments={"0": (1, 2)})) == 1 + 1 + 1 + 1


def test_an_integral_number_with_a_fraction_or_an_exponent_is_the_integer() -> None:
    as_integers = parse_alter_body(
        b'{"topics": [{"name": "t", "partitions": [{"partition": 3, "replicas": [1, 20]}]}], "timeout_ms": 500}'
    )
    for written in (
        b'{"topics": [{"name": "t", "partitions": [{"partition": 3.0, "replicas": [1e0, 2e1]}]}], "timeout_ms": 5e2}',
        b'{"topics": [{"name": "t", "partitions": [{"partition": 30e-1, "replicas": [1.00, 20.0]}]}], "timeout_ms": 500.0}',
    ):
        assert parse_alter_body(written) == as_integers
    # a plan, read by the plan reader (the second tier) once the door has written the integers
    plan = b'{"version": 1.0, "partitions": [{"topic": "t", "partition": 0.0, "replicas": [4.0, 5e0]}]}'
    assert parse_alter_body(plan) == AlterReassignments(((("t", 0), (4, 5)),))
    create = parse_create_topics(
        b'{"topics": [{"name": "t", "num_partitions": -1.0, "replication_factor": -0.0}]}', Requester()
    )
    assert (create.topics[0].num_partitions, create.topics[0].replication_factor) == (-1, 0)


def test_a_number_that_is_not_integral_is_refused_in_the_same_words() -> None:
    for body, message in (
        (
            b'{"topics": [{"name": "t", "partitions": [{"partition": 1.5, "replicas": [1.0]}]}]}',
            "topics[0].partitions[0].partition: expected a non-negative integer, got a number",
        ),
        (
            b'{"topics": [{"name": "t", "partitions": [{"partition": 1.0, "replicas": [1.0, 2.25]}]}]}',
            "topics[0].partitions[0].replicas: expected a list of integers or null; item 1 is a number",
        ),
        # out of every range: left as written, refused as out of range or as not an integer
        (b'{"topics": [], "timeout_ms": 1e30}', "timeout_ms: expected an integer, got a number"),
        (b'{"topics": [], "timeout_ms": 3e9}', "timeout_ms: 3000000000 is out of range (0..2147483647)"),
        # a repeated key is still seen: the integers are written in place, byte for byte otherwise
        (
            b'{"topics": [{"name": "t", "partitions": [{"partition": 1.0, "partition": 2}]}]}',
            "topics[0].partitions[0].partition: duplicate field",
        ),
    ):
        with pytest.raises(InvalidRequest, match=f"^{re.escape(message)}"):
            parse_alter_body(body)


def test_integral_numbers_rewrites_only_numbers_outside_strings() -> None:
    assert (
        integral_numbers(b'{"a": [2.0, 1e1, -3.00e+2, 0.5e1, -0.0, 2.5]}')
        == b'{"a": [2, 10, -300, 5, 0, 2.5]}'
    )
    assert integral_numbers(b'{"v1.0": "2.0 \\" 3e0", "n": 2.0}') == b'{"v1.0": "2.0 \\" 3e0", "n": 2}'
    assert integral_numbers(b'{"a": 2.5, "b": "1.0"}') is None  # nothing to write: no second decode
    assert integral_numbers(b'{"a": 2}') is None
    assert integral_numbers(b'{"a": 2.0') is None  # not JSON: refused as sent
    assert integral_numbers(b'{"a": 1e100}') is None  # past int64: left to be refused

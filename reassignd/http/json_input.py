"""Strict reading of request input: JSON bodies, their fields, query strings. Pure.

Every ``expect_*`` returns the value when it has the documented shape and otherwise raises
:class:`InvalidRequest` (HTTP 400, error 42) with a message that starts with the offending
field's path (``topics[0].assignments["1"]: ...``; ``request body: ...`` for the whole body), so
nothing malformed reaches the controller. The strict readers of each resource's bodies (in
``routes/``) are built from them and read a body only when msgspec refused it at the door
(:mod:`reassignd.http.door`), to word the refusal; query strings are decoded at their own door
(:mod:`reassignd.http.query_door`). The request structs
(``reassignd.contracts.requests``) state the same rules, and the OpenAPI schemas are generated
from them. The readers are :mod:`reassignd.strict_json`'s; this module gives them the HTTP
error and adds what only requests have (broker id lists, ``timeout_ms``).
"""

from __future__ import annotations

from typing import Any, Literal, NoReturn, overload

from reassignd import strict_json
from reassignd.errors import InvalidRequest
from reassignd.int_limits import INT32_MAX, INT32_MIN
from reassignd.strict_json import is_int, json_type

BODY = "request body"

# strict_json's readers, refusing with 400 INVALID_REQUEST
_READ = strict_json.Reader(InvalidRequest, BODY)
expect_map = _READ.mapping
expect_list = _READ.array
expect_string = _READ.text
expect_bool = _READ.boolean
expect_number = _READ.number


def fail(path: str, message: str) -> NoReturn:
    _READ.fail(path, message)


def decode_body(body: bytes) -> Any:
    """The body as JSON (any value); 400 for anything that is not strict, standard JSON."""
    try:
        return strict_json.loads_tracking(body)
    except RecursionError:
        fail("", "invalid JSON: nested too deeply")
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError, NaN/Infinity, huge ints
        fail("", f"invalid JSON: {e}")


def decode_object(body: bytes, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """The body as a JSON object with exactly the given fields (required ones present)."""
    doc = decode_body(body)
    if not isinstance(doc, dict):
        fail("", f"expected a JSON object, got {json_type(doc)}")
    return expect_object(doc, "", required, optional)


def expect_object(
    value: Any, path: str, required: tuple[str, ...], optional: tuple[str, ...] = ()
) -> dict[str, Any]:
    """An object with exactly these fields (the required ones present), no field twice."""
    return _READ.obj(value, path, required, optional)


def expect_int(value: Any, path: str, low: int, high: int) -> int:
    return _READ.integer(value, path, low, high)


def expect_int32(value: Any, path: str) -> int:
    return _READ.integer(value, path, INT32_MIN, INT32_MAX)


def expect_timeout_ms(doc: dict[str, Any], default: int) -> int:
    """The optional ``timeout_ms`` field: 0..2^31−1 milliseconds."""
    if "timeout_ms" not in doc:
        return default
    return expect_int(doc["timeout_ms"], "timeout_ms", 0, INT32_MAX)


@overload
def expect_broker_ids(value: Any, path: str, *, nullable: Literal[False]) -> tuple[int, ...]: ...


@overload
def expect_broker_ids(value: Any, path: str, *, nullable: bool) -> tuple[int, ...] | None: ...


def expect_broker_ids(value: Any, path: str, *, nullable: bool) -> tuple[int, ...] | None:
    """A replica list as given: empty, duplicate or negative lists are the controller's to refuse
    (a per-item Kafka error); only the JSON shape and the int32 range are checked here."""
    expected = "expected a list of integers or null" if nullable else "expected a list of integers"
    if value is None and nullable:
        return None
    if not isinstance(value, list):
        fail(path, f"{expected}, got {json_type(value)}")
    for i, item in enumerate(value):
        if not is_int(item):
            fail(path, f"{expected}; item {i} is {json_type(item)}")
        if not INT32_MIN <= item <= INT32_MAX:
            fail(path, f"{expected}; item {i} ({item}) is out of range for a broker id")
    return tuple(value)

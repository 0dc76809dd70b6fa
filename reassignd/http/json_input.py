"""Strict reading of request input: JSON bodies, their fields, query strings. Pure.

Every ``expect_*`` returns the value when it has the documented shape and otherwise raises
:class:`InvalidRequest` (HTTP 400, error 42) with a message that starts with the offending
field's path (``topics[0].assignments["1"]: ...``; ``request body: ...`` for the whole body), so
nothing malformed reaches the controller. The request parsers of each resource (in ``routes/``)
are built from these, and the OpenAPI document (``openapi_schemas``) states the same rules as
JSON Schema.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any, Literal, NoReturn, overload

from reassignd.errors import InvalidRequest
from reassignd.strict_json import is_int as is_int  # noqa: PLC0414 (the readers' names)
from reassignd.strict_json import json_type as json_type  # noqa: PLC0414

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
INT16_MIN = -(2**15)
INT16_MAX = 2**15 - 1

BODY = "request body"


class _Object(dict[str, Any]):
    """A decoded JSON object that remembers the keys it saw more than once (``json`` keeps the
    last silently; a strict parser refuses them)."""

    __slots__ = ("duplicates",)

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__()
        duplicates: list[str] = []
        for key, value in pairs:
            if key in self:
                duplicates.append(key)
            self[key] = value
        self.duplicates = tuple(duplicates)


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


def loads_strict(body: bytes) -> Any:
    """Standard JSON only (no NaN/Infinity), objects as dicts that know their duplicate keys."""
    return json.loads(body, object_pairs_hook=_Object, parse_constant=_reject_constant)


def fail(path: str, message: str) -> NoReturn:
    raise InvalidRequest(f"{path or BODY}: {message}")


def field_path(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def decode_body(body: bytes) -> Any:
    """The body as JSON (any value); 400 for anything that is not strict, standard JSON."""
    try:
        return loads_strict(body)
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
    if not isinstance(value, dict):
        fail(path, f"expected an object, got {json_type(value)}")
    for key in getattr(value, "duplicates", ()):
        fail(field_path(path, key), "duplicate field")
    for key in value:
        if key not in required and key not in optional:
            fail(field_path(path, key), "unknown field")
    for key in required:
        if key not in value:
            fail(field_path(path, key), "missing required field")
    return value


def expect_map(value: Any, path: str) -> dict[str, Any]:
    """An object with keys of the caller's choosing (a map), duplicates refused."""
    if not isinstance(value, dict):
        fail(path, f"expected an object, got {json_type(value)}")
    for key in getattr(value, "duplicates", ()):
        fail(f"{path}[{json.dumps(key)}]", "duplicate key")
    return value


def expect_list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        fail(path, f"expected an array, got {json_type(value)}")
    return value


def expect_string(value: Any, path: str) -> str:
    if not isinstance(value, str):
        fail(path, f"expected a string, got {json_type(value)}")
    return value


def expect_bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        fail(path, f"expected a boolean, got {json_type(value)}")
    return value


def expect_int(value: Any, path: str, low: int, high: int) -> int:
    if not is_int(value):
        fail(path, f"expected an integer, got {json_type(value)}")
    if not low <= value <= high:
        fail(path, f"{value} is out of range ({low}..{high})")
    return int(value)


def expect_int32(value: Any, path: str) -> int:
    return expect_int(value, path, INT32_MIN, INT32_MAX)


def expect_number(value: Any, path: str) -> float:
    """A finite JSON number (integer or not; booleans are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        fail(path, f"expected a number, got {json_type(value)}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):  # 1e400 decodes to inf
        fail(path, "out of range for a double")
    return number


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


# --- query strings -------------------------------------------------------------------------------


def query_params(pairs: Iterable[tuple[str, str]], allowed: tuple[str, ...]) -> dict[str, list[str]]:
    """The query's values by name; 400 for a name not in ``allowed``."""
    found: dict[str, list[str]] = {}
    for key, value in pairs:
        if key not in allowed:
            shown = ", ".join(allowed) if allowed else "none"
            fail(key, f"unknown query parameter (allowed: {shown})")
        found.setdefault(key, []).append(value)
    return found


def single_param(found: dict[str, list[str]], name: str) -> str | None:
    """A query parameter given at most once (None when absent)."""
    values = found.get(name)
    if values is None:
        return None
    if len(values) > 1:
        fail(name, "given more than once")
    return values[0]

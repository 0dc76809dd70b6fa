"""Strict JSON: the one owner of reading untrusted JSON. Pure, standard library only.

- :func:`loads` accepts standard JSON in UTF-8 and nothing else: no repeated key in an object, no
  NaN or Infinity, no lone surrogate, nested at most as deep as Python goes. Every refusal is a
  :class:`StrictJsonError` whose text is one line ("invalid JSON at byte 7", "duplicate key
  \\"topic\\""). The ZooKeeper codecs and the plan format read with it.
- :func:`loads_tracking` is the same reader for documents whose repeated keys are refused later,
  with their path, by :class:`Reader` (the HTTP request bodies).
- :func:`fast_object` is its fast path (the ZooKeeper codecs' JSON reading): what :func:`loads`
  returns for an object, or None wherever it might refuse; it never raises.
- :class:`Reader`: typed readers of a decoded document whose every refusal starts with the
  offending value's path (``topics[0].partition: expected an integer, got a string``). The HTTP
  layer, the API client and the control channel each read with one, raising their own error.
- The numeric limits of Kafka's wire types (int16, int32, int64).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any, NoReturn

from reassignd.int_limits import INT32_MAX, INT32_MIN, INT64_MAX

_KINDS: dict[type[object], str] = {type(None): "null", bool: "boolean", int: "number", float: "number"}
_KINDS.update({str: "string", list: "array", dict: "object"})


class StrictJsonError(ValueError):
    """Bytes that are not strict JSON; ``reason`` says why in one line."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def quote(text: str) -> str:
    """``text`` as a one-line JSON string literal, cut short for an error message."""
    return json.dumps(text if len(text) <= 60 else text[:60] + "...")


def kind(value: object) -> str:
    """A decoded value's JSON type: ``object``, ``array``, ``string``, ``number``, ..."""
    return _KINDS.get(type(value), type(value).__name__)


def json_type(value: object) -> str:
    """A decoded value's type with its article, for messages: ``got a string``, ``got null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def is_int(value: object) -> bool:
    """A JSON integer (``true`` is not 1)."""
    return isinstance(value, int) and not isinstance(value, bool)


def utf8_text(data: bytes | None, what: str = "data") -> str:
    if data is None:
        raise StrictJsonError(f"{what} is null")
    if not data:
        raise StrictJsonError(f"{what} is empty")
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        raise StrictJsonError(f"not valid UTF-8 at byte {e.start + 1}") from None


def _pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
    obj: dict[str, object] = {}
    for key, value in pairs:
        if key in obj:
            raise StrictJsonError(f"invalid JSON: duplicate key {quote(key)}")
        obj[key] = value
    return obj


def _constant(name: str) -> object:
    raise StrictJsonError(f"invalid JSON: {name} is not a JSON value")


def loads(data: bytes | None, what: str = "data") -> object:
    """The JSON value in ``data``, or :class:`StrictJsonError`. ``what`` names null or empty data
    in the error ("znode data is empty")."""
    text = utf8_text(data, what)
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
        if "\\u" in text:  # an escape like \ud800 makes a lone surrogate, which UTF-8 cannot carry
            json.dumps(value, ensure_ascii=False).encode()
    except StrictJsonError:
        raise
    except json.JSONDecodeError as e:
        raise StrictJsonError(f"invalid JSON at byte {len(text[: e.pos].encode()) + 1}") from None
    except UnicodeEncodeError:
        raise StrictJsonError("invalid JSON: a \\u escape makes a lone surrogate") from None
    except RecursionError:
        raise StrictJsonError("invalid JSON: nested too deeply") from None
    except ValueError:  # an integer beyond the interpreter's digit limit
        raise StrictJsonError("invalid JSON: number too long") from None
    return value


# --- documents whose repeated keys are refused with their path -------------------------------------


class JsonObject(dict[str, Any]):
    """A decoded JSON object that remembers the keys it saw more than once (``json`` keeps the
    last silently); :meth:`Reader.obj` and :meth:`Reader.mapping` refuse them."""

    __slots__ = ("duplicates",)

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__()
        duplicates: list[str] = []
        for key, value in pairs:
            if key in self:
                duplicates.append(key)
            self[key] = value
        self.duplicates = tuple(duplicates)


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON value")


def loads_tracking(data: bytes | str) -> Any:
    """Standard JSON only (no NaN or Infinity), objects as :class:`JsonObject`. Raises ValueError
    (json's own message, or the constant's) for anything else."""
    return json.loads(data, object_pairs_hook=JsonObject, parse_constant=_no_constant)


# --- the fast path: what loads returns, or None where it might refuse or differ --------------------


# The C scanner loads uses, with a cheap pairs hook: a NaN or Infinity literal, or a repeated key,
# raises, and fast_object returns None.


def _unique_pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
    if len(obj := dict(pairs)) != len(pairs):
        raise ValueError("a repeated key")
    return obj


_FAST = json.JSONDecoder(object_pairs_hook=_unique_pairs, parse_constant=_no_constant)


def fast_object(data: bytes | None) -> dict[str, object] | None:
    """What :func:`loads` returns for ``data`` when that is an object, or None: for bytes that start
    with the object (no whitespace, BOM or other encoding before it) and end with it, are UTF-8,
    and hold no ``\\u`` escape (so no lone surrogate), no NaN or Infinity and no repeated key."""
    if type(data) is not bytes or b"\\u" in data:
        return None
    try:
        text = data.decode()
        obj, end = _FAST.raw_decode(text)
    except (ValueError, RecursionError):  # not UTF-8 or JSON; a constant, repeated key, long number
        return None
    return obj if type(obj) is dict and end == len(text) else None


# --- typed readers -----------------------------------------------------------------------------------


def field_path(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class Reader:
    """Typed readers of a decoded document: the one strict-reader family. A value of the wrong
    shape raises ``error(f"{path}: {message}")``, ``path`` naming the value (``root`` for the whole
    document). A subclass may word the two common refusals (:meth:`wrong_type`,
    :meth:`out_of_range`) its own way: the znode codecs' reader does
    (:mod:`reassignd.zk.json_fields`)."""

    __slots__ = ("error", "root")

    def __init__(self, error: Callable[[str], Exception], root: str) -> None:
        self.error = error
        self.root = root

    def fail(self, path: str, message: str) -> NoReturn:
        raise self.error(f"{path or self.root}: {message}")

    def wrong_type(self, path: str, expected: str, value: object) -> NoReturn:
        """``expected`` with its article: ``an integer``."""
        self.fail(path, f"expected {expected}, got {json_type(value)}")

    def out_of_range(self, path: str, value: int, low: int, high: int) -> NoReturn:
        self.fail(path, f"{value} is out of range ({low}..{high})")

    def obj(
        self, value: Any, path: str, required: tuple[str, ...], optional: tuple[str, ...] | None = ()
    ) -> dict[str, Any]:
        """An object with the ``required`` members and no repeated key; any other member is refused
        unless it is ``optional`` (``optional=None``: every other member is ignored)."""
        if not isinstance(value, dict):
            self.wrong_type(path, "an object", value)
        for key in getattr(value, "duplicates", ()):
            self.fail(field_path(path, key), "duplicate field")
        if optional is not None:
            for key in value:
                if key not in required and key not in optional:
                    self.fail(field_path(path, key), "unknown field")
        for key in required:
            if key not in value:
                self.fail(field_path(path, key), "missing required field")
        return value

    def mapping(self, value: Any, path: str) -> dict[str, Any]:
        """An object with keys of the caller's choosing (a map), no repeated key."""
        if not isinstance(value, dict):
            self.wrong_type(path, "an object", value)
        for key in getattr(value, "duplicates", ()):
            self.fail(f"{path}[{json.dumps(key)}]", "duplicate key")
        return value

    def array(self, value: Any, path: str) -> list[Any]:
        if not isinstance(value, list):
            self.wrong_type(path, "an array", value)
        return value

    def text(self, value: Any, path: str) -> str:
        if not isinstance(value, str):
            self.wrong_type(path, "a string", value)
        return value

    def boolean(self, value: Any, path: str) -> bool:
        if not isinstance(value, bool):
            self.wrong_type(path, "a boolean", value)
        return value

    def integer(self, value: Any, path: str, low: int = INT32_MIN, high: int = INT64_MAX) -> int:
        if not is_int(value):
            self.wrong_type(path, "an integer", value)
        if not low <= value <= high:
            self.out_of_range(path, value, low, high)
        return int(value)

    def integers(self, value: Any, path: str, low: int = INT32_MIN, high: int = INT32_MAX) -> tuple[int, ...]:
        """An array of integers in ``low..high``."""
        items = self.array(value, path)
        for index, item in enumerate(items):
            self.integer(item, f"{path}[{index}]", low, high)
        return tuple(items)

    def texts(self, value: Any, path: str) -> tuple[str, ...]:
        items = self.array(value, path)
        for index, item in enumerate(items):
            self.text(item, f"{path}[{index}]")
        return tuple(items)

    def number(self, value: Any, path: str) -> float:
        """A finite JSON number (integer or not; booleans are not numbers)."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.wrong_type(path, "a number", value)
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):  # 1e400 decodes to inf
            self.fail(path, "out of range for a double")
        return number

    def member(self, obj: Any, key: str, path: str) -> Any:
        """A required member of an object read leniently (other members ignored)."""
        return self.obj(obj, path, (key,), None)[key]

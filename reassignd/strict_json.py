"""Strict JSON: the one reference reader of untrusted JSON bytes. Pure, standard library only.

:func:`loads` accepts standard JSON in UTF-8 and nothing else: no repeated key in an object, no
NaN or Infinity, no lone surrogate, nested at most as deep as Python goes. Every refusal is a
:class:`StrictJsonError` whose text is one line ("invalid JSON at byte 7", "duplicate key
\\"topic\\""). The ZooKeeper codecs and the plan format read with it; callers add where the bytes
came from.
"""

from __future__ import annotations

import json

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

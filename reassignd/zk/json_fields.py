"""The JSON machinery under ``zk/codec.py``: a znode's bytes read into a JSON object, typed field
readers that name the field in their one-line error, and the checked compact writer.

A codec decodes in two tiers. The first is typed (a msgspec struct: ``zk/codec.py``,
``zk/admin_codec.py``, the executor's ``journal_typed.py``): it returns what the strict path would,
or gives up wherever that path might refuse or return something else; it never raises and never
words an error. The second, only on its giving up, is the strict path:
:func:`load_object_strictly` and the ``read_*`` functions, the single source of every decoding
error. So a codec accepts, refuses and words exactly as the strict path alone would.
:func:`load_object` reads every decoder's JSON the same way (its first tier,
``strict_json.fast_object``, is strict JSON's own).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import NoReturn, TypeGuard, TypeVar

from reassignd import strict_json
from reassignd.int_limits import INT32_MAX, INT32_MIN, INT64_MAX
from reassignd.strict_json import fast_object
from reassignd.topic_partition import Replicas

_T = TypeVar("_T")


class CodecError(ValueError):
    """A znode's content could not be decoded; ``reason`` says why in one line."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# Its public home: tracebacks, reprs in logs and pickles name reassignd.zk.codec.CodecError.
CodecError.__module__ = "reassignd.zk.codec"

DIGITS = re.compile(r"[0-9]{1,19}")
_PARTITION = re.compile(r"0|[1-9][0-9]{0,9}")
_UUID = re.compile(r"[A-Za-z0-9_-]{21}[AQgw]")  # 16 bytes: the last char holds 2 bits and 4 zeros


def quote(text: str) -> str:
    """``text`` as a one-line JSON string literal, cut short for an error message."""
    return strict_json.quote(text)


# --- reading and writing JSON --------------------------------------------------------------------


def utf8_text(data: bytes | None) -> str:
    try:
        return strict_json.utf8_text(data, "znode data")
    except strict_json.StrictJsonError as e:
        raise CodecError(e.reason) from None


def load_object(data: bytes | None) -> dict[str, object]:
    """The JSON object in ``data``: :func:`fast_object` if it can vouch for it, else strictly."""
    obj = fast_object(data)
    return load_object_strictly(data) if obj is None else obj


def load_object_strictly(data: bytes | None) -> dict[str, object]:
    """The reference reader (:mod:`reassignd.strict_json`), and the only one that words an error:
    a JSON object, in UTF-8, with no repeated key, no NaN or Infinity, no lone surrogate."""
    try:
        value = strict_json.loads(data, "znode data")
    except strict_json.StrictJsonError as e:
        raise CodecError(e.reason) from None
    if type(value) is not dict:
        raise CodecError(f"expected a JSON object, got {strict_json.kind(value)}")
    return value


# What json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False) builds per call.
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def compact_json(obj: dict[str, object]) -> bytes:
    return _COMPACT.encode(obj).encode()


def dump(what: str, obj: dict[str, object], decode: Callable[[bytes], object]) -> bytes:
    """Compact JSON of ``obj``, once ``decode`` has accepted it."""
    try:
        data = compact_json(obj)
        decode(data)
    except (CodecError, UnicodeEncodeError, TypeError) as e:
        raise ValueError(f"cannot encode {what}: {getattr(e, 'reason', e)}") from None
    return data


# --- typed fields (``where`` names the field in messages: ``partitions["0"]``) ---------------------


def field_name(where: str, key: str) -> str:
    return f"{where}[{quote(key)}]"


def get_field(obj: Mapping[str, object], key: str, where: str = "") -> object:
    try:
        return obj[key]
    except KeyError:
        raise CodecError(f"missing field '{where}{key}'") from None


class FieldReader(strict_json.Reader):
    """The one strict-reader family (:class:`strict_json.Reader`) in the znode codecs' wording:
    ``field 'leader' must be an integer, got string``, raised as :class:`CodecError`."""

    __slots__ = ()

    def wrong_type(self, path: str, expected: str, value: object) -> NoReturn:
        raise CodecError(f"field '{path}' must be {expected}, got {strict_json.kind(value)}")

    def out_of_range(self, path: str, value: int, low: int, high: int) -> NoReturn:
        raise CodecError(f"field '{path}' must be between {low} and {high}, got {value}")


FIELDS = FieldReader(CodecError, "znode data")
read_str = FIELDS.text
read_list = FIELDS.array
read_object = FIELDS.mapping


def read_int(value: object, where: str, lo: int = 0, hi: int = INT32_MAX) -> int:
    return FIELDS.integer(value, where, lo, hi)


def read_optional(obj: Mapping[str, object], key: str, read: Callable[[object, str], _T]) -> _T | None:
    """``read`` the field if it is present and not null."""
    value = obj.get(key)
    return None if value is None else read(value, key)


def read_version(obj: Mapping[str, object], supported: tuple[int, ...]) -> int:
    version = get_field(obj, "version")
    if type(version) is not int:
        FIELDS.wrong_type("version", "an integer", version)
    if version not in supported:
        raise CodecError(f"unsupported version {version} (expected {', '.join(map(str, supported))})")
    return version


def read_decimal(value: object, where: str) -> int:
    """Milliseconds written as a decimal string, as Kafka writes timestamps."""
    text = read_str(value, where)
    if not DIGITS.fullmatch(text) or int(text) > INT64_MAX:
        raise CodecError(f"field '{where}' must be a decimal string of milliseconds, got {quote(text)}")
    return int(text)


def read_partition(key: str, where: str) -> int:
    if not _PARTITION.fullmatch(key) or int(key) > INT32_MAX:
        raise CodecError(f"field '{where}' has key {quote(key)}, which is not a partition number")
    return int(key)


def read_replicas(value: object, where: str, *, allow_empty: bool = False, recorded: bool = True) -> Replicas:
    """32-bit integers; a ``recorded`` replica list (not an intake's) is broker ids, each once."""
    items = read_list(value, where)
    replicas = tuple(read_int(item, f"{where}[{i}]", lo=INT32_MIN) for i, item in enumerate(items))
    if recorded and not (replicas or allow_empty):
        raise CodecError(f"field '{where}' must not be empty")
    seen: set[int] = set()
    for broker_id in replicas if recorded else ():
        if broker_id < 0:
            raise CodecError(f"field '{where}' has negative replica id {broker_id}")
        if broker_id in seen:
            raise CodecError(f"field '{where}' has duplicate replica id {broker_id}")
        seen.add(broker_id)
    return replicas


def read_uuid(value: object, where: str) -> str:
    if not _UUID.fullmatch(text := read_str(value, where)):
        raise CodecError(f"field '{where}' must be a 22-character base64 UUID, got {quote(text)}")
    return text


# --- for the typed tiers: what the strict readers accept -----------------------------------------


def fast_uuid(value: object) -> TypeGuard[str]:
    """True if :func:`read_uuid` accepts ``value``."""
    return type(value) is str and _UUID.fullmatch(value) is not None

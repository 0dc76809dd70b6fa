"""The HTTP door of request bodies: each body is decoded once, by msgspec, into its contract struct
(:mod:`reassignd.contracts.requests`), and the route builds its request from that struct. Pure.

msgspec decides what is accepted. Its refusals do not name the field in our words, so a body it
refuses is read again, only then, by the route's strict reader (:mod:`reassignd.http.json_input`,
the second tier), which raises :class:`~reassignd.errors.InvalidRequest` (400, error 42) with the
offending field's path and the message the API has always given (``topics[0].partitions[1].partition:
expected a non-negative integer, got -1``). Should the strict reader find nothing to refuse, the
refusal is msgspec's, mapped to the same form in one place (:func:`refuse`): its ``$.field`` path
becomes the message's leading path.

One rule msgspec does not keep: a key repeated in an object (msgspec lets the last one win; we
refuse it, naming the field). The door rules it out cheaply: each member of an object is written
with one ``:`` outside strings, so when the body's colons equal the members the decoded struct
proves present (:func:`members_present`, a lower bound), no key was repeated; otherwise (a colon
in a string, a member given its default value) the strict reader reads the body too.

An integer may be written with a fraction or an exponent (``2.0``, ``2e0``, ``20e-1``) where it
is integral: JSON Schema's ``integer`` admits it and a user means 2 by it, so the door does too
(Kafka's own JSON readers refuse it; the ZooKeeper codecs and the plan reader, when they read a
znode, still do). Neither tier is asked to know: only when a body is refused, and it is JSON that
holds such a number, the door writes each one as the integer it is (:func:`integral_numbers`, the
bytes otherwise unchanged, so repeated keys are still seen) and decodes the body again, both tiers
alike. A body msgspec accepts never pays for it; ``2.5`` is still refused, in the same words.

Bodies are UTF-8 without a byte order mark (RFC 8259), as the plan reader has always wanted them:
the standard library's reader guessed a BOM, UTF-16 and UTF-32 in Kafka's shape; msgspec refuses
them, so the API now refuses them in every shape.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, NoReturn, TypeVar

import msgspec
import msgspec.inspect as mi

from reassignd.errors import InvalidRequest
from reassignd.http.json_input import fail

S = TypeVar("S", bound=msgspec.Struct)
R = TypeVar("R")


def decode_request(
    body: bytes, contract: type[S], build: Callable[[S], R], explain: Callable[[bytes], R | None]
) -> R:
    """The request in ``body``: decoded as ``contract`` and built by ``build``.

    ``explain`` is the route's strict reader, called only when msgspec refuses the body or a
    repeated key is not ruled out: it raises in our words, returns None when it finds nothing to
    refuse, or returns the request when the body is another shape the route reads itself (a
    ``kafka-reassign-partitions`` plan). A refused body that holds an integral number written
    with a fraction or an exponent is decoded again with each written as an integer."""
    try:
        return _decode(body, contract, build, explain)
    except InvalidRequest:
        integral = integral_numbers(body)
        if integral is None:
            raise
        return _decode(integral, contract, build, explain)


def _decode(
    body: bytes, contract: type[S], build: Callable[[S], R], explain: Callable[[bytes], R | None]
) -> R:
    try:
        value = msgspec.json.decode(body, type=contract)
    except (msgspec.MsgspecError, UnicodeDecodeError) as e:  # a string that is not UTF-8: the latter
        other = explain(body)
        if other is not None:
            return other
        refuse(e)
    if body.count(b":") != members_present(value):
        other = explain(body)
        if other is not None:
            return other
    return build(value)


# A JSON string (skipped as it is) or a JSON number; group 1: a number with a fraction or an exponent.
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)')
_MAYBE_INEXACT = re.compile(rb"[0-9][.eE]")  # where such a number could be: most bodies have none
# Past this many digits a number is out of every integer field's range (int64 has 19) and stays
# as written, to be refused: an exponent of a billion is not worth a billion-digit integer.
_INTEGRAL_DIGITS_MAX = 20


def integral_numbers(body: bytes) -> bytes | None:
    """``body`` with every integral number written with a fraction or an exponent written as an
    integer (``2.0``, ``2e0``, ``20e-1`` → ``2``; ``-0.0`` → ``0``), the rest byte for byte; None
    when it holds none, or is not JSON (its refusal then quotes it as sent)."""
    if _MAYBE_INEXACT.search(body) is None:
        return None
    try:
        msgspec.json.decode(body)
    except (msgspec.MsgspecError, UnicodeDecodeError):
        return None
    changed = False

    def integral(match: re.Match[bytes]) -> bytes:
        nonlocal changed
        number = match.group(1)
        if number is None or number.isdigit() or number[1:].isdigit():  # a string, or an integer
            return match.group(0)
        value = Decimal(number.decode())
        if value.adjusted() >= _INTEGRAL_DIGITS_MAX or value != value.to_integral_value():
            return number
        changed = True
        return str(int(value)).encode()

    rewritten = _TOKEN.sub(integral, body)
    return rewritten if changed else None


def refuse(error: msgspec.MsgspecError | UnicodeDecodeError) -> NoReturn:
    """msgspec's refusal as ours: ``<path>: <message>`` (``request body: ...`` for the whole body).

    ``Expected `int` >= 0 - at `$.topics[0].partitions[1].partition``` becomes
    ``topics[0].partitions[1].partition: expected `int` >= 0``; malformed JSON is ``request
    body: invalid JSON: ...``."""
    text = str(error)
    if not isinstance(error, msgspec.ValidationError):
        fail("", f"invalid JSON: {text.removeprefix('JSON is malformed: ')}")
    message, _, where = text.partition(" - at `$")
    path = where.removesuffix("`").removeprefix(".")
    fail(path, message[:1].lower() + message[1:])


@dataclass(frozen=True, slots=True)
class _Shape:
    """What counting a struct's members needs: its required fields, its other fields with their
    defaults, and the fields whose values may hold objects (structs or maps)."""

    required: int
    optional: tuple[tuple[str, Any], ...]
    nested: tuple[str, ...]


_SHAPES: dict[type[msgspec.Struct], _Shape] = {}


def _holds_objects(info: mi.Type) -> bool:
    if isinstance(info, mi.StructType | mi.DictType):
        return True
    if isinstance(info, mi.Metadata):
        return _holds_objects(info.type)
    if isinstance(info, mi.UnionType):
        return any(_holds_objects(t) for t in info.types)
    if isinstance(info, mi.VarTupleType | mi.ListType | mi.TupleType):
        items = info.item_types if isinstance(info, mi.TupleType) else (info.item_type,)
        return any(_holds_objects(t) for t in items)
    return isinstance(info, mi.AnyType)


def _shape(cls: type[msgspec.Struct]) -> _Shape:
    if (known := _SHAPES.get(cls)) is not None:
        return known
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    optional = tuple(
        (f.name, f.default if f.default is not msgspec.NODEFAULT else msgspec.UNSET)
        for f in info.fields
        if not f.required
    )
    nested = tuple(f.name for f in info.fields if _holds_objects(f.type))
    _SHAPES[cls] = shape = _Shape(sum(f.required for f in info.fields), optional, nested)
    return shape


def members_present(value: object) -> int:
    """How many object members a decoded value proves its JSON held, at least: each required
    field, each field whose value is not its default, each key of a map, all the way down."""
    if isinstance(value, msgspec.Struct):
        shape = _shape(type(value))
        count = shape.required
        for name, default in shape.optional:
            field_value = getattr(value, name)
            if field_value is not default and not _same(field_value, default):
                count += 1
        for name in shape.nested:
            count += members_present(getattr(value, name))
        return count
    if isinstance(value, dict):
        return len(value) + sum(members_present(v) for v in value.values())
    if isinstance(value, tuple | list) and value:
        first = value[0]
        if isinstance(first, msgspec.Struct):
            shape = _shape(cls := type(first))
            if not shape.optional and not shape.nested and all(type(v) is cls for v in value):
                return shape.required * len(value)  # e.g. 10,000 partitions, counted at once
        return sum(members_present(v) for v in value)
    return 0


def _same(value: object, default: object) -> bool:
    return type(value) is type(default) and value == default

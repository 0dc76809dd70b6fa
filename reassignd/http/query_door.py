"""The HTTP door of query strings: each operation's query is decoded once, into its contract
struct (:mod:`reassignd.contracts.queries`), before its handler runs; the handler reads typed
fields (:func:`query_of`). Pure but for the handler wrapper.

The rules, in one place: a parameter that is not a field is refused, naming the allowed ones
(``unknown query parameter (allowed: topic, partition)``; ``none`` for ``NoQuery``); a field
that is not a tuple is given at most once (``given more than once``); an integer is 1 to 10 ASCII
decimal digits, a number what ``float`` reads; msgspec checks the rest of the field's annotations,
and a refusal is worded by the field's ``extra`` (see the contracts module). Fields are checked in
the struct's order, each field's count before its values, the values in the query's order; the
first problem is the answer (400, error 42, the parameter's name as the path).

The OpenAPI document's query parameters are generated from the same structs
(:func:`parameters`), so the document and the parser cannot drift.
"""

from __future__ import annotations

import functools
import json
import re
import types
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NoReturn, TypeVar, Union, get_args, get_origin, get_type_hints

import msgspec
from aiohttp import web
from aiohttp.typedefs import Handler

from reassignd.contracts.queries import Query
from reassignd.http.json_input import fail

Q = TypeVar("Q", bound=Query)
Json = dict[str, Any]

DECIMAL = re.compile(r"[0-9]{1,10}")  # an integer in a URL: ASCII digits, no sign, no space
_QUERY = web.RequestKey("query", Query)  # the request's decoded query, set by the door


@dataclass(frozen=True, slots=True)
class _Param:
    """One field of a query struct, as the door reads it."""

    name: str
    repeatable: bool
    item: Any  # the value's type, annotations included (what msgspec.convert checks)
    kind: type  # int, float or str: how the text is read before msgspec checks it
    description: str | None
    refusal: str | None
    out_of_range: str | None


def _unwrap(hint: Any) -> tuple[Any, bool]:
    """A field's value type and whether the field repeats: ``X | None`` and ``tuple[X, ...]`` off."""
    if get_origin(hint) in (Union, types.UnionType):
        hint = next(a for a in get_args(hint) if a is not type(None))
    if get_origin(hint) is tuple:
        return get_args(hint)[0], True
    return hint, False


def _param(name: str, hint: Any) -> _Param:
    item, repeatable = _unwrap(hint)
    base: Any = item
    metas: tuple[msgspec.Meta, ...] = ()
    if get_origin(item) is Annotated:
        base, *rest = get_args(item)
        metas = tuple(m for m in rest if isinstance(m, msgspec.Meta))
    kind = str if get_origin(base) is Literal else base
    if kind not in (int, float, str):
        raise TypeError(f"query parameter {name}: {base!r} is not int, float, str or a Literal")
    extra: dict[str, Any] = {k: v for m in metas for k, v in (m.extra or {}).items()}
    description = next((m.description for m in reversed(metas) if m.description), None)
    return _Param(name, repeatable, item, kind, description, extra.get("refusal"), extra.get("out_of_range"))


_FIELDS: dict[type[Query], tuple[_Param, ...]] = {}


def fields(contract: type[Query]) -> tuple[_Param, ...]:
    """The struct's parameters, in its fields' order."""
    if (known := _FIELDS.get(contract)) is None:
        hints = get_type_hints(contract, include_extras=True)
        known = _FIELDS[contract] = tuple(_param(name, hints[name]) for name in contract.__struct_fields__)
    return known


def decode_query(pairs: Iterable[tuple[str, str]], contract: type[Q]) -> Q:
    """The query in ``pairs`` as ``contract``, or 400 naming the parameter."""
    params = fields(contract)
    names = tuple(p.name for p in params)
    found: dict[str, list[str]] = {}
    for key, text in pairs:
        if key not in names:
            fail(key, f"unknown query parameter (allowed: {', '.join(names) if names else 'none'})")
        found.setdefault(key, []).append(text)
    values: dict[str, Any] = {}
    for param in params:
        texts = found.get(param.name)
        if texts is None:
            continue
        if not param.repeatable and len(texts) > 1:
            fail(param.name, "given more than once")
        read = tuple(_value(param, text) for text in texts)
        values[param.name] = read if param.repeatable else read[0]
    return contract(**values)


def _value(param: _Param, text: str) -> Any:
    raw: object = text
    if param.kind is int:
        if DECIMAL.fullmatch(text) is None:
            _refuse(param, text, param.refusal)
        raw = int(text)
    elif param.kind is float:
        try:
            raw = float(text)
        except ValueError:
            _refuse(param, text, param.refusal)
    try:
        return msgspec.convert(raw, param.item)
    except msgspec.ValidationError as e:
        _refuse(param, text, param.out_of_range or param.refusal or _lower(str(e)))


def _refuse(param: _Param, text: str, message: str | None) -> NoReturn:
    fail(param.name, (message or "invalid value").format(quoted=json.dumps(text), short=repr(text[:40])))


def _lower(message: str) -> str:
    message = message.partition(" - at `$")[0]
    return message[:1].lower() + message[1:]


# --- the handler's side ----------------------------------------------------------------------------


def reading_query(contract: type[Query], handler: Handler) -> Handler:
    """``handler`` behind the door: the query decoded as ``contract`` before it runs (400 for a
    query it refuses), kept on the request for :func:`query_of`."""

    @functools.wraps(handler)  # __wrapped__: the handler
    async def door(request: web.Request) -> web.StreamResponse:
        request[_QUERY] = decode_query(request.query.items(), contract)
        return await handler(request)

    return door


def query_of(request: web.Request, contract: type[Q]) -> Q:
    """The request's query, decoded at the door as the route table declares; the handler names
    the struct it reads, and a route table that declares another is a bug, not a bad request."""
    value = request.get(_QUERY)
    if not isinstance(value, contract):
        raise TypeError(
            f"the route table decodes {type(value).__name__} for a handler reading {contract.__name__}"
        )
    return value


# --- the OpenAPI document's side -------------------------------------------------------------------


def parameters(contract: type[Query]) -> tuple[Json, ...]:
    """The struct's fields as OpenAPI query parameters: each optional, a tuple field an array
    (``?topic=a&topic=b``), the value's schema from its annotations."""
    out: list[Json] = []
    for param in fields(contract):
        schema = msgspec.json.schema(param.item)
        schema.pop("description", None)
        doc: Json = {"name": param.name, "in": "query", "required": False}
        if param.description is not None:
            doc["description"] = param.description
        if param.repeatable:
            doc.update(schema={"type": "array", "items": schema}, style="form", explode=True)
        else:
            doc["schema"] = schema
        out.append(doc)
    return tuple(out)

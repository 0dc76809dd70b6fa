"""The HTTP API's side of the audit trail (:mod:`reassignd.stream.audit`): one entry per request
that needs the admin role and reached a route, whatever its outcome (401, 403, 400, 41 included;
unknown routes and methods are not changes). The outermost middleware writes it once the answer
is known; a route says what its request named with :func:`note` (the path's topic, partition and
batch id are taken from the path)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import msgspec
from aiohttp import web
from aiohttp.typedefs import Handler

from reassignd.controller.model.requests import (
    AlterQuotas,
    AlterReassignments,
    CancelReassignments,
    CreatePartitions,
    CreateTopics,
    DeleteTopics,
)
from reassignd.executor.model import BatchSpec
from reassignd.http import auth
from reassignd.http.callers import client_id_of
from reassignd.http.keys import PRINCIPAL
from reassignd.stream.audit import AuditEntry, AuditTrail, capped, partition_names, result_of

AUDIT = web.AppKey("audit", AuditTrail)
NAMED = web.RequestKey[dict[str, Any]]("audit_named")  # set by the route (note)

Named = (
    AlterReassignments
    | CancelReassignments
    | CreateTopics
    | DeleteTopics
    | CreatePartitions
    | AlterQuotas
    | BatchSpec
)


def named_of(request: Named) -> dict[str, Any]:
    """What a parsed request names, for its audit entry. Pure."""
    match request:
        case AlterReassignments(targets=targets, mode=mode):
            return {
                "partitions": partition_names(tp for tp, _ in targets),
                "targets": {f"{t}-{p}": None if r is None else list(r) for (t, p), r in targets},
                "mode": mode.value,
            }
        case CancelReassignments(topic=topic, partition=partition, mode=mode):
            scope = {} if topic is None else {"topic": topic}
            return scope | ({} if partition is None else {"partition": partition}) | {"mode": mode.value}
        case CreateTopics(topics=topics, validate_only=validate_only):
            return {"topics": [t.name for t in topics]} | ({"validate_only": True} if validate_only else {})
        case DeleteTopics(names=names):
            return {"topics": list(names)}
        case CreatePartitions(topics=topics, validate_only=validate_only):
            return {"topics": [t.name for t in topics]} | ({"validate_only": True} if validate_only else {})
        case AlterQuotas(entries=alterations):
            return {
                "entities": [
                    ",".join(
                        f"{k}={v}" for k, v in (("user", a.user), ("client_id", a.client_id)) if v is not None
                    )
                    for a in alterations
                ]
            }
        case BatchSpec(batch_id=batch_id, partitions=partitions):
            return {"batch_id": batch_id, "partitions": partition_names(p.tp for p in partitions)}


def note(request: web.Request, parsed: Named) -> None:
    """Record what ``parsed`` (the route's parsed request) names, for the audit entry."""
    request[NAMED] = named_of(parsed)


def _path_names(match_info: Mapping[str, str]) -> dict[str, Any]:
    named: dict[str, Any] = {}
    for key in ("topic", "partition", "batch_id"):
        if key in match_info:
            value = match_info[key]
            named[key] = int(value) if key == "partition" and value.isdigit() else value
    return named


def _answer(response: web.StreamResponse) -> Any:
    if isinstance(response, web.Response) and isinstance(response.body, bytes | bytearray):
        try:
            return msgspec.json.decode(response.body)
        except msgspec.DecodeError:
            return None
    return None


def entry_of(request: web.Request, response: web.StreamResponse | None) -> AuditEntry:
    principal = request.get(PRINCIPAL)
    route = request.match_info.route.resource
    path = route.canonical if route is not None else request.path
    named = _path_names(request.match_info) | request.get(NAMED, {})
    if response is None:
        result: dict[str, Any] = {"error_name": "CANCELLED"}  # the client went away first
    else:
        result = result_of(_answer(response), status=response.status)
    return AuditEntry(
        via="http",
        action=f"{request.method} {path}",
        user=None if principal is None else principal.user,
        client_id=client_id_of(request),
        source=request.remote or "",
        named=capped(named),
        result=result,
    )


def audited(request: web.Request) -> bool:
    """A change that reached a route: needs the admin role (not a 404 or 405)."""
    return (
        auth.required_role(request.method, request.path) is auth.Role.ADMIN
        and request.match_info.http_exception is None
    )


@web.middleware
async def audit_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The outermost middleware: the answer it sees is the final one (errors already mapped)."""
    if not audited(request):
        return await handler(request)
    try:
        response = await handler(request)
    except asyncio.CancelledError:
        request.app[AUDIT].record(entry_of(request, None))
        raise
    request.app[AUDIT].record(entry_of(request, response))
    return response

"""One declaration per HTTP operation: what ``reassignd.http.route_table`` lists, from which the app
registers its routes (``reassignd.http.app``) and the OpenAPI document writes its paths
(``reassignd.http.openapi``). Pure data, and the answers every operation shares (authentication,
bad requests, a standby's 503, the uniform error object).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec
from aiohttp.typedefs import Handler

from reassignd.contracts.errors import Error, NotControllerError
from reassignd.contracts.queries import Query
from reassignd.contracts.requests import NOT_DOTS
from reassignd.http.auth import Role
from reassignd.http.openapi_base import ETAG, Schema

Json = dict[str, Any]
Contract = type[msgspec.Struct]

VIEWER = Role.VIEWER
ADMIN = Role.ADMIN


@dataclass(frozen=True)
class Answer:
    """One documented answer: a contract struct's JSON, a JSON schema without a struct, a string in
    other media types (or ``media_schemas``' own schema), or no body (``304``); ``links`` name the
    operations its values address (OpenAPI links, which a stateful fuzzer follows)."""

    description: str
    contract: Contract | None = None
    headers: Mapping[str, Json] | None = None
    media: tuple[str, ...] = ()
    schema: Schema | None = None
    links: Mapping[str, Json] | None = None
    media_schemas: Mapping[str, Schema] | None = None


def link(operation_id: str, description: str, **parameters: str) -> Json:
    """An OpenAPI link to ``operation_id``, its parameters given as runtime expressions
    (``$response.body#/...``)."""
    return {"operationId": operation_id, "parameters": parameters, "description": description}


@dataclass(frozen=True)
class Operation:
    """A method on a path: its handler, the role it needs (None: public), its request contract (a
    struct, or the union alias of ``POST /v1/reassignments``), its answers by status, its path and
    header ``parameters``, and its ``query``: the struct the door decodes the query string into
    before the handler runs (:mod:`reassignd.http.query_door`; ``NoQuery``: any parameter is
    refused), from which the document's query parameters are generated; None: the query is not
    read."""

    method: str
    path: str
    handler: Handler
    operation_id: str
    summary: str
    tag: str
    role: Role | None
    responses: Mapping[str, Answer]
    parameters: tuple[Json, ...] = ()
    request: object | None = None
    description: str | None = None
    extra: Json = field(default_factory=dict)
    query: type[Query] | None = None

    @property
    def contracts(self) -> tuple[Contract, ...]:
        """The answers' contract structs."""
        return tuple(a.contract for a in self.responses.values() if a.contract is not None)


def shadowed_paths(operations: Iterable[Operation]) -> dict[str, tuple[str, ...]]:
    """Each fixed path of ``operations`` that a path with parameters also matches
    (``/v1/topics/delete`` and ``/v1/topics/{topic}``), with the methods declared on it, sorted.
    Such a path is its operations' alone: the app answers any other method there 405 with these
    in ``Allow`` (not the other path's operation on a resource so named), and the parameter's
    schema leaves the name out."""
    templates = [o.path.split("/") for o in operations if "{" in o.path]
    out: dict[str, set[str]] = {}
    for op in operations:
        if "{" in op.path:
            continue
        parts = op.path.split("/")
        if any(_matches(parts, t) for t in templates):
            out.setdefault(op.path, set()).add(op.method)
    return {path: tuple(sorted(methods)) for path, methods in out.items()}


def _matches(parts: list[str], template: list[str]) -> bool:
    return len(parts) == len(template) and all(
        t == p or (t.startswith("{") and t.endswith("}")) for p, t in zip(parts, template, strict=True)
    )


def path_param(name: str, schema: Schema) -> Json:
    return {"name": name, "in": "path", "required": True, "schema": schema}


# any name (an illegal one is answered per topic, as Kafka does) but "." and "..", which a client
# resolves away before sending the path
TOPIC = path_param("topic", {"type": "string", "minLength": 1, **NOT_DOTS})
# the actions on every topic under /v1/topics/ (POST /v1/topics/delete, /v1/topics/partitions):
# those paths are theirs (shadowed_paths), so /v1/topics/{topic} does not name a topic so called
TOPIC_ACTIONS = ("delete", "partitions")
TOPIC_UNDER_TOPICS = {
    **path_param("topic", {"type": "string", "minLength": 1, "not": {"enum": [".", "..", *TOPIC_ACTIONS]}}),
    "description": "not delete or partitions (legal topic names in Kafka): those paths are POST's "
    "alone, any other method there 405; such a topic is listed by GET /v1/topics and deleted by "
    "POST /v1/topics/delete",
}

PARTITIONS_PER_REQUEST = (
    "more partitions than `--max-partitions-per-request` (default 50,000) answers every one of them "
    "42 INVALID_REQUEST, the limit named in the message; nothing of it is queued."
)


def error(description: str, headers: Mapping[str, Json] | None = None) -> Answer:
    """An answer in the uniform error object."""
    return Answer(description, Error, headers)


RETRY_AFTER = {
    "Retry-After": {
        "description": "seconds (rounded up) before a throttled topic may be retried; only when "
        "throttle_time_ms > 0",
        "schema": {"type": "integer", "minimum": 1},
    }
}
AUTH = {
    "401": error(
        "missing or unknown bearer token (error 31)", {"WWW-Authenticate": {"schema": {"type": "string"}}}
    ),
    "403": error("the token's role may not do this (error 31 CLUSTER_AUTHORIZATION_FAILED)"),
}
DEFAULT = {"default": error("any other failure, in the uniform error object")}
BAD_REQUEST = {
    "400": error(
        "malformed JSON, wrong type, unknown field or out-of-range value (error 42 INVALID_REQUEST, "
        "the message names the field); nothing was changed"
    )
}
TOO_LARGE = {"413": error("request body over 10 MiB")}
NOT_CONTROLLER = {
    "503": Answer(
        "this instance is a standby (error 41 NOT_CONTROLLER) and says where the active one is; "
        "only the active controller holds the cluster's data and changes it",
        NotControllerError,
    )
}
NOT_MODIFIED = {"304": Answer("If-None-Match named the current answer's ETag: no body", headers=ETAG)}


def read(ok: Answer, *extra: Mapping[str, Answer]) -> dict[str, Answer]:
    """A viewer's answers: ``ok``, the authentication failures, ``extra`` and the default."""
    return {"200": ok, **AUTH, **{k: v for e in extra for k, v in e.items()}, **DEFAULT}


def write(ok: Answer, *, body: bool = True) -> dict[str, Answer]:
    """An admin's change: ``ok``, a bad request, the authentication failures, a body too large
    (with ``body``), a standby's refusal and the default."""
    return {
        "200": ok,
        **BAD_REQUEST,
        **AUTH,
        **(TOO_LARGE if body else {}),
        **NOT_CONTROLLER,
        **DEFAULT,
    }

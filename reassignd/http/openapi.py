"""The OpenAPI 3.1 document served at ``GET /v1/openapi.json``: its paths generated from the route
table (``reassignd.http.route_table``, which the app registers too), its schemas from the contract
structs the table names. ``tests/unit/http/test_openapi.py`` checks it, and the schemathesis test
fuzzes a real controller with it.
"""

from __future__ import annotations

import functools
from importlib import metadata

from reassignd.http.openapi_base import Schema, ref
from reassignd.http.openapi_components import component_schemas
from reassignd.http.openapi_schemas import request_schema_name
from reassignd.http.operation import Answer, Contract, Json, Operation
from reassignd.http.query_door import parameters as query_parameters
from reassignd.http.route_table import OPERATIONS


def _answer(answer: Answer) -> Json:
    out: Json = {"description": answer.description}
    content: Json = {}
    if answer.contract is not None:
        content["application/json"] = {"schema": ref(answer.contract.__name__)}
    elif answer.schema is not None:
        content["application/json"] = {"schema": answer.schema}
    media_schemas = answer.media_schemas or {}
    for media in answer.media:
        content[media] = {"schema": media_schemas.get(media, {"type": "string"})}
    if content:
        out["content"] = content
    if answer.headers:
        out["headers"] = dict(answer.headers)
    if answer.links:
        out["links"] = dict(answer.links)
    return out


def _operation(op: Operation) -> Json:
    out: Json = {
        "operationId": op.operation_id,
        "summary": op.summary,
        "tags": [op.tag],
        "responses": {status: _answer(a) for status, a in op.responses.items()},
    }
    if op.description:
        out["description"] = op.description
    in_path = [p for p in op.parameters if p["in"] == "path"]
    others = [p for p in op.parameters if p["in"] != "path"]  # headers
    documented = [*in_path, *(query_parameters(op.query) if op.query is not None else ()), *others]
    if documented:
        out["parameters"] = documented
    if op.request is not None:
        schema: Schema = ref(request_schema_name(op.request))
        out["requestBody"] = {"required": True, "content": {"application/json": {"schema": schema}}}
    if op.role is None:
        out["security"] = []
    return out


def paths(operations: tuple[Operation, ...]) -> Json:
    """The document's paths, generated from the route table."""
    out: Json = {}
    for op in operations:
        out.setdefault(op.path, {})[op.method.lower()] = _operation(op)
    return out


def answer_contracts(operations: tuple[Operation, ...]) -> tuple[Contract, ...]:
    """Every answer's struct the operations name, once each, in order."""
    return tuple(dict.fromkeys(c for op in operations for c in op.contracts))


def _version() -> str:
    try:
        return metadata.version("reassignd")
    except metadata.PackageNotFoundError:
        return "0.0.0"


@functools.cache
def openapi_document() -> Json:
    """The whole document (built once; callers must not modify it)."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "reassignd",
            "version": _version(),
            "description": "The HTTP API of a reassignd controller: Kafka's admin "
            "messages in snake_case, Kafka's error codes and names. Request bodies are read "
            "strictly: an unknown field, a wrong type or an out-of-range value is refused with "
            "400 and error 42 INVALID_REQUEST naming the field, before anything changes. An integer "
            "may be written with a fraction or an exponent where it is integral (2.0 and 2e0 are "
            "2, as JSON Schema's integer has it, in every body; 2.5 is refused). One exception to "
            "the strictness: a kafka-reassign-partitions plan is read by the reader of `reassignd "
            "admin reassign` and the legacy znode, ignoring unknown fields as Kafka's tool does.",
        },
        "paths": paths(OPERATIONS),
        "components": {
            "schemas": component_schemas(answer_contracts(OPERATIONS)),
            "securitySchemes": {
                "bearerAuth": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "a token from --auth-tokens; viewer: every GET, admin: everything. "
                    "Without a tokens file (loopback only) every caller is ANONYMOUS admin.",
                }
            },
        },
        "security": [{"bearerAuth": []}],
    }

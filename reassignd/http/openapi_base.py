"""The helpers the OpenAPI document's hand-written parts are built with: the request schemas
(``openapi_schemas``) and the paths (``openapi``); the answers' schemas are generated
(``openapi_components``). Pure."""

from __future__ import annotations

from typing import Any

from reassignd.strict_json import INT32_MAX, INT32_MIN

Schema = dict[str, Any]


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def closed(required: dict[str, Schema], optional: dict[str, Schema] | None = None) -> Schema:
    """An object with exactly these fields (the required ones present)."""
    schema: Schema = {
        "type": "object",
        "properties": {**required, **(optional or {})},
        "additionalProperties": False,
    }
    if required:
        schema["required"] = list(required)
    return schema


def shape(required: dict[str, Schema], optional: dict[str, Schema] | None = None) -> Schema:
    """A response object: these fields at least."""
    return {"type": "object", "properties": {**required, **(optional or {})}, "required": list(required)}


def tolerant(required: dict[str, Schema], optional: dict[str, Schema] | None = None) -> Schema:
    """An object with these fields that ignores any other (the plan format, as Kafka's tool)."""
    return {**shape(required, optional), "additionalProperties": True}


def array(items: Schema) -> Schema:
    return {"type": "array", "items": items}


def nullable(schema: Schema) -> Schema:
    if isinstance(schema.get("type"), str):
        return {**schema, "type": [schema["type"], "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def integer(minimum: int, maximum: int) -> Schema:
    return {"type": "integer", "minimum": minimum, "maximum": maximum}


STRING: Schema = {"type": "string"}
BOOLEAN: Schema = {"type": "boolean"}
NUMBER: Schema = {"type": "number"}
INTEGER: Schema = {"type": "integer"}
INT32: Schema = integer(INT32_MIN, INT32_MAX)


# conditional reads (the answers kept encoded: reassignd.http.answers)
ETAG = {
    "ETag": {
        "description": "names this answer; send it back in If-None-Match to be answered 304 while "
        "nothing the answer shows has changed",
        "schema": {"type": "string"},
    }
}
NOT_MODIFIED = {
    "304": {"description": "If-None-Match named the current answer's ETag: no body", "headers": ETAG}
}
IF_NONE_MATCH = {
    "name": "If-None-Match",
    "in": "header",
    "required": False,
    "description": "an ETag of an earlier answer (or several, comma-separated)",
    "schema": {"type": "string"},
}

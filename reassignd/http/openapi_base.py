"""The helpers the OpenAPI document's declared parts are built with: the route table's parameters
and headers (``route_table``, ``operation``) and the oneOf of ``openapi_schemas``; the schemas are
generated (``openapi_schemas``, ``openapi_components``). Pure."""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def integer(minimum: int, maximum: int) -> Schema:
    return {"type": "integer", "minimum": minimum, "maximum": maximum}


# conditional reads (the answers kept encoded: reassignd.http.answers)
ETAG = {
    "ETag": {
        "description": "names this answer; send it back in If-None-Match to be answered 304 while "
        "nothing the answer shows has changed",
        "schema": {"type": "string"},
    }
}
IF_NONE_MATCH = {
    "name": "If-None-Match",
    "in": "header",
    "required": False,
    "description": "an ETag of an earlier answer (or several, comma-separated)",
    "schema": {"type": "string"},
}

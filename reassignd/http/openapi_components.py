"""The OpenAPI document's components: the answers' schemas generated from the contract's structs
(``reassignd.contracts``), next to the request schemas (``openapi_schemas``). Pure.

A generated response object lists its fields (the required ones: those without a default) and
leaves the object open, so adding a field is not a breaking change.
"""

from __future__ import annotations

import msgspec

from reassignd.http.openapi_base import Schema
from reassignd.http.openapi_schemas import SCHEMAS as REQUEST_SCHEMAS

REF_TEMPLATE = "#/components/schemas/{name}"


def answer_schemas(answers: tuple[type[msgspec.Struct], ...]) -> dict[str, Schema]:
    """The components of the answers' structs (and the structs they nest), by struct name."""
    _, components = msgspec.json.schema_components(answers, ref_template=REF_TEMPLATE)
    return components


def component_schemas(contracts: tuple[type[msgspec.Struct], ...]) -> dict[str, Schema]:
    """Every schema of the document's components: the answers' (generated from ``answers``, the
    structs the route table names) and the requests'."""
    answers = answer_schemas(contracts)
    clash = answers.keys() & REQUEST_SCHEMAS.keys()
    if clash:
        raise ValueError(f"an answer's struct has a request schema's name: {sorted(clash)}")
    return {**REQUEST_SCHEMAS, **answers}

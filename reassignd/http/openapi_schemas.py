"""The JSON Schemas of the OpenAPI document's request bodies, as strict as their parsers. Pure.

All are generated from the request structs (``reassignd.contracts.requests``: closed objects,
integer ranges, nullable fields, patterns, and the few rules a struct's annotations carry as
extra JSON Schema). Two things are written here, as no struct states them: the choice of either
shape for ``POST /v1/reassignments`` (a oneOf of two generated components: msgspec generates a
union of two structs only with a tag field, which neither shape has), and that a plan's objects
ignore unknown fields (msgspec writes ``additionalProperties`` only for a closed struct). The
answers' schemas are generated too (``openapi_components``). ``tests/unit/http/test_openapi.py`` checks
that each request schema accepts exactly what its parser accepts.
"""

from __future__ import annotations

import msgspec

from reassignd.contracts.requests import (
    REQUESTS,
    AlterReassignmentsRequest,
    KafkaAlterReassignments,
    PlanPartition,
    ReassignmentPlan,
)
from reassignd.http.openapi_base import Schema, ref

_, GENERATED = msgspec.json.schema_components(REQUESTS, ref_template="#/components/schemas/{name}")

# A plan's objects ignore unknown fields (as Kafka's tool does): said aloud, as for the closed ones.
TOLERANT = (ReassignmentPlan.__name__, PlanPartition.__name__)
for _name in TOLERANT:
    GENERATED[_name] = {**GENERATED[_name], "additionalProperties": True}

# The oneOf of POST /v1/reassignments (reassignd.contracts.requests.AlterReassignmentsRequest).
HAND_WRITTEN: dict[str, Schema] = {
    "AlterReassignmentsRequest": {
        "oneOf": [ref(KafkaAlterReassignments.__name__), ref(ReassignmentPlan.__name__)],
        "description": "Kafka's AlterPartitionReassignments, or a kafka-reassign-partitions plan",
    },
}

# The request schemas, by component name.
SCHEMAS: dict[str, Schema] = {**HAND_WRITTEN, **GENERATED}


def request_schema_name(request: object) -> str:
    """The component name of a request contract: a struct's name, or the hand-written oneOf's for
    the union of ``POST /v1/reassignments``."""
    if request == AlterReassignmentsRequest:
        return "AlterReassignmentsRequest"
    if isinstance(request, type) and issubclass(request, msgspec.Struct) and request.__name__ in SCHEMAS:
        return request.__name__
    raise ValueError(f"no request schema for {request!r}")

"""The OpenAPI document's components: the answers' schemas generated from the contract's structs
(``reassignd.contracts``), next to the request schemas (``openapi_schemas``). Pure.

A generated response object lists its fields (the required ones: those without a default) and
leaves the object open, so adding a field is not a breaking change.
"""

from __future__ import annotations

import msgspec

from reassignd.contracts import admin, batches, cluster, errors, reassignments
from reassignd.http.openapi_base import Schema
from reassignd.http.openapi_schemas import SCHEMAS as REQUEST_SCHEMAS

REF_TEMPLATE = "#/components/schemas/{name}"

# Every answer's struct the paths name (the nested ones come with them).
ANSWERS: tuple[type[msgspec.Struct], ...] = (
    errors.Error,
    errors.NotControllerError,
    cluster.Health,
    cluster.Readiness,
    cluster.Caller,
    cluster.HandOver,
    cluster.Status,
    cluster.Brokers,
    cluster.Topics,
    cluster.Topic,
    cluster.LogDirs,
    cluster.MoveLogDirsResponse,
    reassignments.AlterReassignmentsResponse,
    reassignments.ListReassignmentsResponse,
    reassignments.ElectLeadersResponse,
    reassignments.DemotionResponse,
    admin.CreateTopicsResponse,
    admin.DeleteTopicsResponse,
    admin.CreatePartitionsResponse,
    admin.DescribeQuotasResponse,
    admin.AlterQuotasResponse,
    batches.BatchStatus,
    batches.SubmitBatchResponse,
    batches.Batches,
)


def answer_schemas() -> dict[str, Schema]:
    """The answers' components, by struct name."""
    _, components = msgspec.json.schema_components(ANSWERS, ref_template=REF_TEMPLATE)
    return components


def component_schemas() -> dict[str, Schema]:
    """Every schema of the document's components: the answers' (generated) and the requests'."""
    answers = answer_schemas()
    clash = answers.keys() & REQUEST_SCHEMAS.keys()
    if clash:
        raise ValueError(f"an answer's struct has a request schema's name: {sorted(clash)}")
    return {**REQUEST_SCHEMAS, **answers}

"""The route table's operations that move partitions and leaders: reassignments, elections,
demotions and batches (``route_table`` lists them with the others)."""

from __future__ import annotations

from reassignd.contracts import batches, reassignments
from reassignd.contracts import queries as qs
from reassignd.contracts import requests as rq
from reassignd.http.openapi_base import ETAG, IF_NONE_MATCH, integer
from reassignd.http.operation import (
    ADMIN,
    BAD_REQUEST,
    NOT_CONTROLLER,
    NOT_MODIFIED,
    PARTITIONS_PER_REQUEST,
    TOPIC,
    VIEWER,
    Answer,
    Json,
    Operation,
    error,
    link,
    path_param,
    read,
    write,
)
from reassignd.http.routes import batches as batch_routes
from reassignd.http.routes import demotions, elections
from reassignd.http.routes import reassignments as reassignment_routes
from reassignd.int_limits import INT32_MAX

# "." and ".." are refused as batch ids, and no client sends them in a path (it resolves them away)
BATCH_ID = path_param("batch_id", {"type": "string", "pattern": f"^{rq.BATCH_ID_PATTERN}$", **rq.NOT_DOTS})
PARTITION = path_param("partition", integer(0, INT32_MAX))
BROKER_ID = path_param("broker_id", integer(0, INT32_MAX))
_UNKNOWN_BATCH = {"404": error("no batch has this id (error 42)")}
_BATCH_ACTIONS = ("pause", "resume", "stop", "rollback")


def batch_links(batch_id: str) -> dict[str, Json]:
    """Links from an answer naming a batch (``batch_id``: where, a runtime expression) to the
    operations on it."""
    return {
        "describe": link("describeBatch", "the batch's status", batch_id=batch_id),
        "picture": link("batchPicture", "the batch's picture", batch_id=batch_id),
        **{a: link(f"{a}Batch", f"{a} the batch", batch_id=batch_id) for a in _BATCH_ACTIONS},
    }


_BATCH_STATUS = Answer(
    "the batch's status", batches.BatchStatus, links=batch_links("$response.body#/batch_id")
)
_BATCH_CONTROLS = (
    ("pause", batch_routes.pause_batch, "pause a batch: it starts nothing new, moves in flight go on"),
    ("resume", batch_routes.resume_batch, "resume a paused batch"),
    (
        "stop",
        batch_routes.stop_batch,
        "stop a batch: pending moves dropped, running ones reverted to their original replicas",
    ),
    (
        "rollback",
        batch_routes.rollback_batch,
        "stop a batch, then move each of its completed partitions back in a new batch "
        "(named in rollback_batch_id)",
    ),
)
_ALTER_ANSWER = Answer(
    "per-partition results (HTTP 200 even when some failed)", reassignments.AlterReassignmentsResponse
)
_FIRST_TOPIC = "$response.body#/responses/0/name"
_ALTERED = Answer(
    _ALTER_ANSWER.description,
    _ALTER_ANSWER.contract,
    links={
        "cancelTopic": link("cancelTopicReassignments", "cancel the first topic's", topic=_FIRST_TOPIC),
        "cancelPartition": link(
            "cancelPartitionReassignment",
            "cancel the first partition's",
            topic=_FIRST_TOPIC,
            partition="$response.body#/responses/0/partitions/0/partition",
        ),
        "list": link("listReassignments", "the first topic's reassignments", topic=_FIRST_TOPIC),
    },
)
_DEMOTIONS = (
    (
        "demote",
        demotions.demote,
        "move every leadership off the broker: its partitions' replica orders with it "
        "last (the same replica sets), then preferred elections; it stays in the ISRs (admin)",
    ),
    (
        "promote",
        demotions.promote,
        "restore the replica orders the broker's demotion recorded, and elect their first replicas (admin)",
    ),
)


def _cancel(path: str, operation_id: str, summary: str, *parameters: Json) -> Operation:
    return Operation(
        "DELETE",
        path,
        reassignment_routes.cancel_reassignments,
        operation_id,
        summary,
        "reassignments",
        ADMIN,
        write(_ALTER_ANSWER, body=False),
        parameters,
        query=qs.CancelQuery,
    )


REASSIGNMENTS = (
    Operation(
        "GET",
        "/v1/reassignments",
        reassignment_routes.list_reassignments,
        "listReassignments",
        "ListPartitionReassignments",
        "reassignments",
        VIEWER,
        read(
            Answer("partitions being reassigned", reassignments.ListReassignmentsResponse, ETAG),
            NOT_MODIFIED,
            BAD_REQUEST,
            NOT_CONTROLLER,
        ),
        (IF_NONE_MATCH,),
        query=qs.ListReassignmentsQuery,
    ),
    Operation(
        "POST",
        "/v1/reassignments",
        reassignment_routes.alter_reassignments,
        "alterReassignments",
        "AlterPartitionReassignments",
        "reassignments",
        ADMIN,
        write(_ALTERED),
        request=rq.AlterReassignmentsRequest,
        description="A request naming " + PARTITIONS_PER_REQUEST,
        query=qs.NoQuery,
    ),
    _cancel("/v1/reassignments", "cancelReassignments", "cancel every reassignment"),
    _cancel(
        "/v1/reassignments/{topic}",
        "cancelTopicReassignments",
        "cancel one topic's reassignments",
        TOPIC,
    ),
    _cancel(
        "/v1/reassignments/{topic}/{partition}",
        "cancelPartitionReassignment",
        "cancel one partition's reassignment (85 if it was not moving)",
        TOPIC,
        PARTITION,
    ),
    Operation(
        "POST",
        "/v1/elections",
        elections.elect_leaders,
        "electLeaders",
        "ElectLeaders: preferred or unclean leader elections, for named partitions or all",
        "elections",
        ADMIN,
        write(
            Answer(
                "per-partition results (HTTP 200 even when some failed)", reassignments.ElectLeadersResponse
            )
        ),
        request=rq.ElectLeadersRequest,
        description="A request naming " + PARTITIONS_PER_REQUEST,
        query=qs.NoQuery,
    ),
    *(
        Operation(
            "POST",
            f"/v1/brokers/{{broker_id}}/{verb}",
            handler,
            f"{verb}Broker",
            summary,
            "brokers",
            ADMIN,
            {
                **write(
                    Answer(
                        "per-partition results (HTTP 200 even when some were refused)",
                        reassignments.DemotionResponse,
                    ),
                    body=False,
                ),
                "404": error("no such broker: not registered, in no replica list, not demoted (error 42)"),
            },
            (BROKER_ID,),
            query=qs.NoQuery,
        )
        for verb, handler, summary in _DEMOTIONS
    ),
)

BATCHES = (
    Operation(
        "GET",
        "/v1/batches",
        batch_routes.list_batches,
        "listBatches",
        "every batch the active controller knows, with its progress (no running moves)",
        "batches",
        VIEWER,
        read(
            Answer(
                "batches, oldest first",
                batches.Batches,
                links=batch_links("$response.body#/batches/0/batch_id"),
            ),
            NOT_CONTROLLER,
        ),
    ),
    Operation(
        "POST",
        "/v1/batches",
        batch_routes.submit_batch,
        "submitBatch",
        "submit a batch of moves to the executor",
        "batches",
        ADMIN,
        {
            **write(
                Answer(
                    "the batch and per-partition results",
                    batches.SubmitBatchResponse,
                    links=batch_links("$response.body#/batch/batch_id"),
                )
            ),
            "409": error(
                "the batch id names a batch submitted with another body (error 10004 BATCH_ID_IN_USE)"
            ),
        },
        request=rq.SubmitBatchRequest,
        description="A batch of more partitions than `--max-partitions-per-request` (default "
        "50,000) is refused whole, 400 with 42 INVALID_REQUEST naming the limit.",
        query=qs.NoQuery,
    ),
    Operation(
        "GET",
        "/v1/batches/{batch_id}",
        batch_routes.describe_batch,
        "describeBatch",
        "one batch's status, with its moves in flight",
        "batches",
        VIEWER,
        read(_BATCH_STATUS, _UNKNOWN_BATCH, NOT_CONTROLLER),
        (BATCH_ID,),
    ),
    Operation(
        "GET",
        "/v1/batches/{batch_id}/picture.svg",
        batch_routes.batch_picture,
        "batchPicture",
        "every broker's bytes, replicas and preferred leaders before the batch and once its "
        "moves land, as an SVG image (three grouped bar charts; per log dir for brokers whose agents "
        "report several)",
        "batches",
        VIEWER,
        read(
            Answer(
                "the picture; each bar carries data-broker, data-metric, data-phase and data-value attributes",
                media=("image/svg+xml",),
            ),
            _UNKNOWN_BATCH,
            NOT_CONTROLLER,
        ),
        (BATCH_ID,),
        query=qs.NoQuery,
    ),
    *(
        Operation(
            "POST",
            f"/v1/batches/{{batch_id}}/{action}",
            handler,
            f"{action}Batch",
            summary,
            "batches",
            ADMIN,
            {
                **write(_BATCH_STATUS, body=False),
                **_UNKNOWN_BATCH,
                "400": error("an unknown query parameter (error 42)"),
                "409": error("the batch's state does not allow this (error 42)"),
            },
            (BATCH_ID,),
            query=qs.NoQuery,
        )
        for action, handler, summary in _BATCH_CONTROLS
    ),
)

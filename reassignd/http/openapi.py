"""The OpenAPI 3.1 document served at ``GET /v1/openapi.json``: every route, its parameters,
request body and answers. Pure data; ``tests/unit/http/test_openapi.py`` keeps it in sync with the
routes the app registers, and the schemathesis test fuzzes a real controller with it.
"""

from __future__ import annotations

import functools
from importlib import metadata
from typing import Any

from reassignd.contracts.requests import BATCH_ID_PATTERN
from reassignd.http.openapi_base import (
    ETAG,
    IF_NONE_MATCH,
    NOT_MODIFIED,
    Schema,
    array,
    integer,
    ref,
)
from reassignd.http.openapi_components import component_schemas
from reassignd.int_limits import INT32_MAX

Json = dict[str, Any]

CLIENT_ID_HEADER = "X-Client-Id"


def _json(schema: Schema) -> Json:
    return {"application/json": {"schema": schema}}


def _answer(description: str, schema: Schema, headers: Json | None = None) -> Json:
    answer: Json = {"description": description, "content": _json(schema)}
    if headers:
        answer["headers"] = headers
    return answer


ERROR = ref("Error")
RETRY_AFTER = {
    "Retry-After": {
        "description": "seconds (rounded up) before a throttled topic may be retried; only when "
        "throttle_time_ms > 0",
        "schema": {"type": "integer", "minimum": 1},
    }
}
_AUTH = {
    "401": _answer(
        "missing or unknown bearer token (error 31)",
        ERROR,
        {"WWW-Authenticate": {"schema": {"type": "string"}}},
    ),
    "403": _answer("the token's role may not do this (error 31 CLUSTER_AUTHORIZATION_FAILED)", ERROR),
}
_DEFAULT = {"default": _answer("any other failure, in the uniform error object", ERROR)}
_BAD_REQUEST = {
    "400": _answer(
        "malformed JSON, wrong type, unknown field or out-of-range value (error 42 INVALID_REQUEST, "
        "the message names the field); nothing was changed",
        ERROR,
    )
}
_TOO_LARGE = {"413": _answer("request body over 10 MiB", ERROR)}
_NOT_CONTROLLER = {
    "503": _answer(
        "this instance is a standby (error 41 NOT_CONTROLLER) and says where the active one is; "
        "only the active controller holds the cluster's data and changes it",
        ref("NotControllerError"),
    )
}


def _read(ok: Json, *extra: Json) -> Json:
    return {"200": ok, **_AUTH, **{k: v for e in extra for k, v in e.items()}, **_DEFAULT}


def _write(ok: Json, *, body: bool = True) -> Json:
    return {
        "200": ok,
        **_BAD_REQUEST,
        **_AUTH,
        **(_TOO_LARGE if body else {}),
        **_NOT_CONTROLLER,
        **_DEFAULT,
    }


PARTITIONS_PER_REQUEST = (
    "more partitions than `--max-partitions-per-request` (default 50,000) answers every one of them "
    "42 INVALID_REQUEST, the limit named in the message; nothing of it is queued."
)


def _operation(
    operation_id: str,
    summary: str,
    tag: str,
    responses: Json,
    *,
    parameters: list[Json] | None = None,
    body: Schema | None = None,
    public: bool = False,
    description: str | None = None,
) -> Json:
    op: Json = {"operationId": operation_id, "summary": summary, "tags": [tag], "responses": responses}
    if description:
        op["description"] = description
    if parameters:
        op["parameters"] = parameters
    if body is not None:
        op["requestBody"] = {"required": True, "content": _json(body)}
    if public:
        op["security"] = []
    return op


def _path_param(name: str, schema: Schema) -> Json:
    return {"name": name, "in": "path", "required": True, "schema": schema}


def _query(name: str, schema: Schema, description: str, *, repeatable: bool = False) -> Json:
    param: Json = {"name": name, "in": "query", "required": False, "description": description}
    if repeatable:
        param.update(schema=array(schema), style="form", explode=True)
    else:
        param["schema"] = schema
    return param


TOPIC = _path_param("topic", {"type": "string", "minLength": 1})
BATCH_ID = _path_param("batch_id", {"type": "string", "pattern": f"^{BATCH_ID_PATTERN}$"})
PARTITION = _path_param("partition", integer(0, INT32_MAX))
BROKER_ID = _path_param("broker_id", integer(0, INT32_MAX))
MODE = _query(
    "mode",
    {"enum": ["cancel", "stop"]},
    "cancel (default): back to the original replicas; stop: keep adding replicas already in the ISR",
)
CLIENT_ID = {
    "name": CLIENT_ID_HEADER,
    "in": "header",
    "required": False,
    "description": "the client id quotas are charged to (empty when absent); logged",
    "schema": {"type": "string"},
}


_UNKNOWN_BATCH = {"404": _answer("no batch has this id (error 42)", ERROR)}
_CONTROLS = {
    "pause": "pause a batch: it starts nothing new, moves in flight go on",
    "resume": "resume a paused batch",
    "stop": "stop a batch: pending moves dropped, running ones reverted to their original replicas",
    "rollback": "stop a batch, then move each of its completed partitions back in a new batch "
    "(named in rollback_batch_id)",
}


def _batch_paths() -> Json:
    status = _answer("the batch's status", ref("BatchStatus"))
    paths: Json = {
        "/v1/batches": {
            "get": _operation(
                "listBatches",
                "every batch the active controller knows, with its progress (no running moves)",
                "batches",
                _read(_answer("batches, oldest first", ref("Batches")), _NOT_CONTROLLER),
            ),
            "post": _operation(
                "submitBatch",
                "submit a batch of moves to the executor",
                "batches",
                {
                    **_write(_answer("the batch and per-partition results", ref("SubmitBatchResponse"))),
                    "409": _answer(
                        "the batch id names a batch submitted with another body (error 10004 BATCH_ID_IN_USE)",
                        ERROR,
                    ),
                },
                body=ref("SubmitBatchRequest"),
                description="A batch of more partitions than `--max-partitions-per-request` (default "
                "50,000) is refused whole, 400 with 42 INVALID_REQUEST naming the limit.",
            ),
        },
        "/v1/batches/{batch_id}": {
            "get": _operation(
                "describeBatch",
                "one batch's status, with its moves in flight",
                "batches",
                _read(status, _UNKNOWN_BATCH, _NOT_CONTROLLER),
                parameters=[BATCH_ID],
            )
        },
        "/v1/batches/{batch_id}/picture.svg": {
            "get": _operation(
                "batchPicture",
                "every broker's bytes, replicas and preferred leaders before the batch and once its "
                "moves land, as an SVG image (three grouped bar charts; per log dir for brokers whose agents "
                "report several)",
                "batches",
                _read(
                    {
                        "description": "the picture; each bar carries data-broker, data-metric, "
                        "data-phase and data-value attributes",
                        "content": {"image/svg+xml": {"schema": {"type": "string"}}},
                    },
                    _UNKNOWN_BATCH,
                    _NOT_CONTROLLER,
                ),
                parameters=[BATCH_ID],
            )
        },
    }
    for action, summary in _CONTROLS.items():
        responses = {
            **_write(status, body=False),
            **_UNKNOWN_BATCH,
            "400": _answer(
                "the batch's state does not allow this (error 42), or an unknown query parameter", ERROR
            ),
        }
        paths[f"/v1/batches/{{batch_id}}/{action}"] = {
            "post": _operation(f"{action}Batch", summary, "batches", responses, parameters=[BATCH_ID])
        }
    return paths


def _paths() -> Json:
    alter_answer = _answer(
        "per-partition results (HTTP 200 even when some failed)", ref("AlterReassignmentsResponse")
    )
    cancel = functools.partial(_operation, tag="reassignments", responses=_write(alter_answer, body=False))
    return {
        "/healthz": {
            "get": _operation(
                "healthz", "process is alive", "health", {"200": _answer("alive", ref("Health"))}, public=True
            )
        },
        "/readyz": {
            "get": _operation(
                "readyz",
                "connected to ZooKeeper and active or following a known active controller",
                "health",
                {
                    "200": _answer("ready", ref("Readiness")),
                    "503": _answer("not ready, with the reason", ref("Readiness")),
                },
                public=True,
            )
        },
        "/metrics": {
            "get": _operation(
                "metrics",
                "Prometheus metrics (text format; OpenMetrics when asked for); the families that "
                "name quota users, client ids or batches only with a token (any role) when the "
                "controller has a tokens file, their unlabelled sums for everyone",
                "health",
                {
                    "200": {
                        "description": "metrics",
                        "content": {
                            "text/plain": {"schema": {"type": "string"}},
                            "application/openmetrics-text": {"schema": {"type": "string"}},
                        },
                    },
                    "401": _AUTH["401"],
                },
                public=True,
            )
        },
        "/v1/openapi.json": {
            "get": _operation(
                "openapi", "this document", "meta", _read(_answer("OpenAPI 3.1", {"type": "object"}))
            )
        },
        "/": {
            "get": _operation(
                "statusPage",
                "the status page (HTML; it reads this API with the user's token)",
                "page",
                {
                    "200": {
                        "description": "the page",
                        "content": {"text/html": {"schema": {"type": "string"}}},
                    }
                },
                public=True,
            )
        },
        "/ui/app.js": {
            "get": _operation(
                "statusPageScript",
                "the status page's script",
                "page",
                {
                    "200": {
                        "description": "the script",
                        "content": {"text/javascript": {"schema": {"type": "string"}}},
                    }
                },
                public=True,
            )
        },
        "/ui/style.css": {
            "get": _operation(
                "statusPageStyle",
                "the status page's style",
                "page",
                {
                    "200": {
                        "description": "the style",
                        "content": {"text/css": {"schema": {"type": "string"}}},
                    }
                },
                public=True,
            )
        },
        "/v1/whoami": {
            "get": _operation(
                "whoami",
                "the caller's user and role (the status page shows admin actions to admins)",
                "cluster",
                _read(_answer("the caller", ref("Caller"))),
            )
        },
        "/v1/events": {
            "get": _operation(
                "events",
                "the controller's event records as server-sent events (text/event-stream): "
                "id <controller_epoch>-<sequence>, event <type>, data the record's JSON",
                "cluster",
                _read(
                    {
                        "description": "the stream (history after Last-Event-ID first, then live)",
                        "content": {"text/event-stream": {"schema": {"type": "string"}}},
                    },
                    _BAD_REQUEST,
                    {
                        "503": _answer(
                            "as many streams are open as --events-max-subscribers allows; retry later",
                            ERROR,
                            {"Retry-After": {"schema": {"type": "integer", "minimum": 1}}},
                        )
                    },
                ),
                parameters=[
                    _query("type", {"type": "string"}, "only records of these types", repeatable=True),
                    _query("topic", {"type": "string"}, "only records about these topics", repeatable=True),
                    _query("batch", {"type": "string"}, "only records about these batches", repeatable=True),
                    _query(
                        "last_event_id",
                        {"type": "string", "pattern": "^[0-9]+-[0-9]+$"},
                        "resume after this record (as the Last-Event-ID header)",
                    ),
                    _query(
                        "heartbeat_s",
                        {"type": "number", "exclusiveMinimum": 0, "maximum": 86400},
                        "heartbeat period",
                    ),
                    _query(
                        "max_s",
                        {"type": "number", "exclusiveMinimum": 0, "maximum": 86400},
                        "end the stream after",
                    ),
                ],
            )
        },
        "/v1/controller/resign": {
            "post": _operation(
                "resignController",
                "planned hand-over: this active instance gives its role up after the event in hand, a "
                "standby wins at once, queued requests are answered 41 naming it (admin)",
                "cluster",
                _write(
                    _answer(
                        "the hand-over happened: the instance that won the role, or null if none did "
                        "(then this one took it again)",
                        ref("HandOver"),
                    ),
                    body=False,
                ),
            )
        },
        "/v1/status": {
            "get": _operation(
                "status", "this instance and the cluster", "cluster", _read(_answer("status", ref("Status")))
            )
        },
        "/v1/log-dirs": {
            "get": _operation(
                "describeLogDirs",
                "replicas and their sizes per broker, in the JSON kafka-log-dirs --describe prints",
                "cluster",
                _read(_answer("log dirs", ref("LogDirs")), _BAD_REQUEST, _NOT_CONTROLLER),
                parameters=[_query("broker", integer(0, INT32_MAX), "only these brokers", repeatable=True)],
            )
        },
        "/v1/log-dirs/moves": {
            "post": _operation(
                "moveLogDirs",
                "AlterReplicaLogDirs for one broker: move its replicas between its log dirs, forwarded to "
                "its agent as Kafka's request goes to the broker (admin)",
                "cluster",
                {
                    **_write(
                        _answer(
                            "per-replica results (HTTP 200 even when some were refused): 0, "
                            "9 REPLICA_NOT_AVAILABLE (not hosted yet: the dir is kept for when it comes), "
                            "57 LOG_DIR_NOT_FOUND, 56 KAFKA_STORAGE_ERROR",
                            ref("MoveLogDirsResponse"),
                        )
                    ),
                    "404": _answer("the broker is not registered (error 42); nothing was forwarded", ERROR),
                },
                body=ref("MoveLogDirsRequest"),
            )
        },
        "/v1/brokers": {
            "get": _operation(
                "listBrokers",
                "live brokers",
                "cluster",
                _read(_answer("brokers", ref("Brokers")), _NOT_CONTROLLER),
            )
        },
        "/v1/topics": {
            "get": _operation(
                "listTopics",
                "topics",
                "cluster",
                _read(_answer("topics", ref("Topics"), ETAG), NOT_MODIFIED, _NOT_CONTROLLER),
                parameters=[IF_NONE_MATCH],
            ),
            "post": _operation(
                "createTopics",
                "CreateTopics",
                "topics",
                _write(_answer("per-topic results", ref("CreateTopicsResponse"), RETRY_AFTER)),
                parameters=[CLIENT_ID],
                body=ref("CreateTopicsRequest"),
                description="Each topic is checked before anything is written and answered on its own: "
                "a name given twice fails every copy (42), an illegal name 17, a null config value 42, a "
                "config name Kafka does not know, a value of the wrong type or out of range, or configs "
                "that would not fit one ZooKeeper znode 40 INVALID_CONFIG; the other topics are created.",
            ),
        },
        "/v1/topics/{topic}": {
            "get": _operation(
                "describeTopic",
                "one topic's partitions",
                "cluster",
                _read(
                    _answer("the topic", ref("Topic"), ETAG),
                    NOT_MODIFIED,
                    {"404": _answer("no such topic (error 3)", ERROR)},
                    _NOT_CONTROLLER,
                ),
                parameters=[TOPIC, IF_NONE_MATCH],
            ),
            "delete": _operation(
                "deleteTopic",
                "DeleteTopics for one topic",
                "topics",
                _write(_answer("the topic's result", ref("DeleteTopicsResponse"), RETRY_AFTER), body=False),
                parameters=[
                    TOPIC,
                    _query("timeout_ms", integer(0, INT32_MAX), "milliseconds (default 30000)"),
                    CLIENT_ID,
                ],
            ),
        },
        "/v1/topics/delete": {
            "post": _operation(
                "deleteTopics",
                "DeleteTopics",
                "topics",
                _write(_answer("per-topic results", ref("DeleteTopicsResponse"), RETRY_AFTER)),
                parameters=[CLIENT_ID],
                body=ref("DeleteTopicsRequest"),
            )
        },
        "/v1/topics/partitions": {
            "post": _operation(
                "createPartitions",
                "CreatePartitions",
                "topics",
                _write(_answer("per-topic results", ref("CreatePartitionsResponse"), RETRY_AFTER)),
                parameters=[CLIENT_ID],
                body=ref("CreatePartitionsRequest"),
                description="A request adding " + PARTITIONS_PER_REQUEST,
            )
        },
        "/v1/reassignments": {
            "get": _operation(
                "listReassignments",
                "ListPartitionReassignments",
                "reassignments",
                _read(
                    _answer("partitions being reassigned", ref("ListReassignmentsResponse"), ETAG),
                    NOT_MODIFIED,
                    _BAD_REQUEST,
                    _NOT_CONTROLLER,
                ),
                parameters=[
                    _query("topic", {"type": "string", "minLength": 1}, "only these topics", repeatable=True),
                    _query("partition", integer(0, INT32_MAX), "only these partitions", repeatable=True),
                    IF_NONE_MATCH,
                ],
            ),
            "post": _operation(
                "alterReassignments",
                "AlterPartitionReassignments",
                "reassignments",
                _write(alter_answer),
                body=ref("AlterReassignmentsRequest"),
                description="A request naming " + PARTITIONS_PER_REQUEST,
            ),
            "delete": cancel("cancelReassignments", "cancel every reassignment", parameters=[MODE]),
        },
        "/v1/reassignments/{topic}": {
            "delete": cancel(
                "cancelTopicReassignments", "cancel one topic's reassignments", parameters=[TOPIC, MODE]
            )
        },
        "/v1/reassignments/{topic}/{partition}": {
            "delete": cancel(
                "cancelPartitionReassignment",
                "cancel one partition's reassignment (85 if it was not moving)",
                parameters=[TOPIC, PARTITION, MODE],
            )
        },
        "/v1/elections": {
            "post": _operation(
                "electLeaders",
                "ElectLeaders: preferred or unclean leader elections, for named partitions or all",
                "elections",
                _write(
                    _answer(
                        "per-partition results (HTTP 200 even when some failed)", ref("ElectLeadersResponse")
                    )
                ),
                body=ref("ElectLeadersRequest"),
                description="A request naming " + PARTITIONS_PER_REQUEST,
            )
        },
        **{
            f"/v1/brokers/{{broker_id}}/{verb}": {
                "post": _operation(
                    f"{verb}Broker",
                    summary,
                    "brokers",
                    {
                        **_write(
                            _answer(
                                "per-partition results (HTTP 200 even when some were refused)",
                                ref("DemotionResponse"),
                            ),
                            body=False,
                        ),
                        "404": _answer(
                            "no such broker: not registered, in no replica list, not demoted (error 42)",
                            ERROR,
                        ),
                    },
                    parameters=[BROKER_ID],
                )
            }
            for verb, summary in (
                (
                    "demote",
                    "move every leadership off the broker: its partitions' replica orders with it "
                    "last (the same replica sets), then preferred elections; it stays in the ISRs (admin)",
                ),
                (
                    "promote",
                    "restore the replica orders the broker's demotion recorded, and elect their "
                    "first replicas (admin)",
                ),
            )
        },
        **_batch_paths(),
        "/v1/quotas": {
            "get": _operation(
                "describeQuotas",
                "DescribeClientQuotas: the configured entities matching the filter (none: every one)",
                "quotas",
                _read(_answer("entities and their values", ref("DescribeQuotasResponse")), _BAD_REQUEST),
                parameters=[
                    _query(
                        "user",
                        {"type": "string", "minLength": 1},
                        "this user's entities (<default>: the default; <<default>: the name <default>)",
                    ),
                    _query(
                        "client_id",
                        {"type": "string", "minLength": 1},
                        "this client id's entities (<default>: the default; <<default>: the name <default>)",
                    ),
                ],
            ),
            "post": _operation(
                "alterQuotas",
                "AlterClientQuotas for controller_mutation_rate",
                "quotas",
                _write(_answer("per-entity results", ref("AlterQuotasResponse"))),
                body=ref("AlterQuotasRequest"),
                description="An entity whose config znode path (its names URL-encoded as Kafka "
                "sanitizes them) would be over 4,096 bytes is answered 42 INVALID_REQUEST and nothing "
                "is written.",
            ),
        },
    }


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
            "400 and error 42 INVALID_REQUEST naming the field, before anything changes. Integers "
            "must be written as JSON integers (2, not 2.0 or 2e0, which JSON Schema's integer "
            "would admit), as Kafka's own JSON readers require. One exception: a "
            "kafka-reassign-partitions plan is read exactly as `reassignd admin reassign` and the "
            "legacy znode read it, ignoring unknown fields as Kafka's tool does.",
        },
        "paths": _paths(),
        "components": {
            "schemas": component_schemas(),
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

"""The JSON Schemas of the OpenAPI document: request bodies (as strict as their parsers) and
responses. Pure data, built with a few small helpers.

Request schemas state exactly what the parsers in ``routes/`` accept: every object is closed
(``additionalProperties: false``), integers carry their ranges, nullable fields say so. Response schemas list the fields the README
promises and leave objects open, so adding a field is not a breaking change.
"""

from __future__ import annotations

from typing import Any

from reassignd.executor.model import PLAN_ID_MAX, BatchState, MoveState
from reassignd.http.batch_requests import BATCH_ID_PATTERN, INT64_MAX, LIMIT_FIELDS, STRATEGIES
from reassignd.strict_json import INT16_MAX, INT16_MIN, INT32_MAX, INT32_MIN

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

# A partition id as an object key (``assignments``): canonical decimal, 0..2^31−1.
PARTITION_KEY_PATTERN = (
    "^(0|[1-9][0-9]{0,8}|1[0-9]{9}|20[0-9]{8}|21[0-3][0-9]{7}|214[0-6][0-9]{6}|2147[0-3][0-9]{5}"
    "|21474[0-7][0-9]{4}|214748[0-2][0-9]{3}|2147483[0-5][0-9]{2}|21474836[0-3][0-9]|214748364[0-7])$"
)

# --- shared pieces ---------------------------------------------------------------------------------

COMMON: dict[str, Schema] = {
    "Error": shape(
        {
            "error_code": {"type": "integer", "description": "Kafka's numeric error code (ours ≥ 10000)"},
            "error_name": {"type": "string", "description": "Kafka's name of the code"},
            "error_message": nullable(STRING),
        }
    ),
    "NotControllerError": {
        "allOf": [
            ref("Error"),
            shape({"active_controller": nullable(ref("ActiveController"))}),
        ]
    },
    "ActiveController": shape({"id": INTEGER, "http": nullable(STRING)}),
    "TimeoutMs": {**integer(0, INT32_MAX), "description": "milliseconds"},
    "PartitionId": integer(0, INT32_MAX),
    "BrokerIds": {
        **array(INT32),
        "description": "broker ids; empty, repeated or unknown ids are per-item errors (39)",
    },
}

# --- reassignments ---------------------------------------------------------------------------------

REASSIGNMENTS: dict[str, Schema] = {
    "AlterReassignmentsRequest": {
        "oneOf": [ref("KafkaAlterReassignments"), ref("ReassignmentPlan")],
        "description": "Kafka's AlterPartitionReassignments, or a kafka-reassign-partitions plan",
    },
    "KafkaAlterReassignments": closed(
        {
            "topics": array(
                closed(
                    {
                        "name": STRING,
                        "partitions": array(
                            closed({"partition": ref("PartitionId"), "replicas": nullable(ref("BrokerIds"))})
                        ),
                    }
                )
            )
        },
        {"timeout_ms": ref("TimeoutMs"), "mode": {"enum": ["cancel", "stop"]}},
    ),
    # The one plan reader's rules (reassignd.plan_format): unknown fields ignored, as Kafka's tool
    # does; beyond JSON Schema: log_dirs as long as replicas, each partition once.
    "ReassignmentPlan": {
        "description": "a kafka-reassign-partitions plan, read by the same reader as `reassignd admin "
        "reassign` and the legacy znode: version 1 when absent, unknown fields ignored, and one bad "
        "line (an empty or repeated replica list, an illegal topic name, a partition given twice, "
        "log_dirs of another length than replicas) refuses the whole plan",
        **tolerant(
            {
                "partitions": {
                    **array(
                        tolerant(
                            {
                                "topic": {
                                    "type": "string",
                                    "pattern": "^[a-zA-Z0-9._-]{1,249}$",
                                    "not": {"enum": [".", ".."]},
                                },
                                "partition": ref("PartitionId"),
                                "replicas": {
                                    **array(integer(0, INT32_MAX)),
                                    "minItems": 1,
                                    "uniqueItems": True,
                                    "description": "broker ids, each once",
                                },
                            },
                            {"log_dirs": array(STRING)},
                        )
                    ),
                    "minItems": 1,
                }
            },
            # absent: 1, Kafka's EarliestVersion (kafka-reassign-partitions reads it so)
            {"version": {"type": "integer", "const": 1}},
        ),
    },
    "AlterReassignmentsResponse": {
        "allOf": [
            ref("Error"),
            shape(
                {
                    "throttle_time_ms": INTEGER,
                    "responses": array(
                        shape(
                            {
                                "name": STRING,
                                "partitions": array(
                                    {"allOf": [ref("Error"), shape({"partition": ref("PartitionId")})]}
                                ),
                            }
                        )
                    ),
                }
            ),
        ]
    },
    "ListReassignmentsResponse": {
        "allOf": [
            ref("Error"),
            shape({"topics": array(shape({"name": STRING, "partitions": array(ref("Reassignment"))}))}),
        ]
    },
    "Reassignment": shape(
        {
            "partition": ref("PartitionId"),
            "replicas": array(INTEGER),
            "adding_replicas": array(INTEGER),
            "removing_replicas": array(INTEGER),
            "target_replicas": array(INTEGER),
            "original_replicas": array(INTEGER),
            "source": {"enum": ["api", "zk", "request", "batch"]},
            "started_at": nullable({"type": "string", "format": "date-time"}),
            "progress": nullable(
                shape(
                    {
                        "bytes_total": INTEGER,
                        "bytes_done": INTEGER,
                        "bytes_per_s": INTEGER,
                        "eta_s": nullable(INTEGER),
                    }
                )
            ),
        }
    ),
}

# --- leader elections ----------------------------------------------------------------------------

ELECTIONS: dict[str, Schema] = {
    "ElectLeadersRequest": closed(
        {
            "election_type": {
                "enum": ["preferred", "unclean"],
                "description": "preferred: each partition's first replica leads, if it is live and in the "
                "ISR; unclean: a partition without a live leader gets the first live replica, in the "
                "ISR or not (data it never copied is lost)",
            },
            "partitions": {
                **nullable(array(closed({"topic": STRING, "partition": ref("PartitionId")}))),
                "description": "null: every partition (the answer then leaves out the partitions that "
                "needed no election)",
            },
        }
    ),
    "ElectLeadersResponse": {
        "allOf": [
            ref("Error"),
            shape(
                {
                    "throttle_time_ms": INTEGER,
                    "replica_election_results": array(
                        shape(
                            {
                                "topic": STRING,
                                "partitions": array(
                                    {
                                        "allOf": [ref("Error"), shape({"partition": ref("PartitionId")})],
                                        "description": "0 elected, 84 ELECTION_NOT_NEEDED, 80 "
                                        "PREFERRED_LEADER_NOT_AVAILABLE, 83 ELIGIBLE_LEADERS_NOT_AVAILABLE, "
                                        "3 UNKNOWN_TOPIC_OR_PARTITION",
                                    }
                                ),
                            }
                        )
                    ),
                }
            ),
        ]
    },
}

# --- topics ----------------------------------------------------------------------------------------

TOPICS: dict[str, Schema] = {
    "CreateTopicsRequest": closed(
        {"topics": array(ref("NewTopic"))},
        {"timeout_ms": ref("TimeoutMs"), "validate_only": BOOLEAN},
    ),
    "NewTopic": closed(
        {"name": STRING},
        {
            "num_partitions": {**INT32, "description": "-1 or absent: the broker default"},
            "replication_factor": {
                **integer(INT16_MIN, INT16_MAX),
                "description": "-1 or absent: the broker default",
            },
            "assignments": nullable(
                {
                    "type": "object",
                    "propertyNames": {"pattern": PARTITION_KEY_PATTERN},
                    "additionalProperties": ref("BrokerIds"),
                    "description": 'partition id → replicas, e.g. {"0": [1, 2], "1": [2, 3]}',
                }
            ),
            "configs": {"type": "object", "additionalProperties": nullable(STRING)},
        },
    ),
    "DeleteTopicsRequest": closed({"topics": array(STRING)}, {"timeout_ms": ref("TimeoutMs")}),
    "CreatePartitionsRequest": closed(
        {
            "topics": array(
                closed(
                    {"name": STRING, "count": {**INT32, "description": "the new total partition count"}},
                    {"assignments": nullable(array(ref("BrokerIds")))},
                )
            )
        },
        {"timeout_ms": ref("TimeoutMs"), "validate_only": BOOLEAN},
    ),
    "TopicResult": {"allOf": [shape({"name": STRING}), ref("Error")]},
    "CreateTopicsResponse": shape(
        {
            "throttle_time_ms": INTEGER,
            "topics": array(
                {
                    "allOf": [
                        ref("TopicResult"),
                        {
                            "type": "object",
                            "properties": {"num_partitions": INTEGER, "replication_factor": INTEGER},
                        },
                    ]
                }
            ),
        }
    ),
    "DeleteTopicsResponse": shape({"throttle_time_ms": INTEGER, "responses": array(ref("TopicResult"))}),
    "CreatePartitionsResponse": shape({"throttle_time_ms": INTEGER, "results": array(ref("TopicResult"))}),
}

# --- quotas ----------------------------------------------------------------------------------------

QUOTAS: dict[str, Schema] = {
    "QuotaEntity": closed(
        {},
        {
            "user": {"type": "string", "description": '"<default>" names the default user'},
            "client_id": {"type": "string", "description": '"<default>" names the default client id'},
        },
    ),
    "AlterQuotasRequest": closed(
        {
            "entries": array(
                closed(
                    {
                        "entity": ref("QuotaEntity"),
                        "ops": array(
                            closed(
                                {
                                    "key": {
                                        "type": "string",
                                        "description": "only controller_mutation_rate; another key "
                                        "fails the entry with 42",
                                    },
                                    "value": {**nullable(NUMBER), "description": "null removes the key"},
                                }
                            )
                        ),
                    }
                )
            )
        }
    ),
    "AlterQuotasResponse": shape(
        {"entries": array({"allOf": [shape({"entity": {"type": "object"}}), ref("Error")]})}
    ),
    "DescribeQuotasResponse": shape(
        {
            "entries": array(
                shape(
                    {
                        "entity": {"type": "object", "additionalProperties": STRING},
                        "values": {"type": "object", "additionalProperties": NUMBER},
                    }
                )
            )
        }
    ),
}

# --- batches (the executor) -----------------------------------------------------------------------

_DATE_TIME: Schema = nullable({"type": "string", "format": "date-time"})

BATCHES: dict[str, Schema] = {
    "BatchId": {
        "type": "string",
        "pattern": f"^{BATCH_ID_PATTERN}$",
        "not": {"enum": [".", ".."]},
        "description": "a znode name: 1-249 characters of A-Z, a-z, 0-9, '.', '_', '-' (not '.' or '..')",
    },
    "SubmitBatchRequest": {
        **closed(
            {"partitions": array(ref("BatchPartitionSpec"))},
            {
                "batch_id": {**ref("BatchId"), "description": "generated (b-<32 hex digits>) when absent"},
                "plan_id": nullable({"type": "string", "maxLength": PLAN_ID_MAX}),
                "priority": {**INT32, "description": "higher runs first (default 0)"},
                "throttle_bytes_per_s": {
                    **nullable(integer(1, INT64_MAX)),
                    "description": "replication throttle the batch sets while it runs (absent or null: none)",
                },
                "limits": closed(
                    {},
                    {
                        **{
                            name: {
                                **integer(1, INT32_MAX),
                                "description": "default: the controller's setting",
                            }
                            for name in LIMIT_FIELDS
                        },
                        "adaptive": {
                            **nullable(ref("AdaptiveLimits")),
                            "description": "adaptive concurrency: each broker's cap of moves starts at "
                            "moves_per_broker (within the bounds), rises by one while the cluster is healthy "
                            "and halves when it is not; null: fixed caps; absent: the controller's default "
                            "(--batch-adaptive-moves-per-broker)",
                        },
                    },
                ),
                "strategy": {
                    **array({"enum": list(STRATEGIES)}),
                    "uniqueItems": True,
                    "not": {
                        "allOf": [
                            {"contains": {"const": "small_first"}},
                            {"contains": {"const": "large_first"}},
                        ]
                    },
                    "description": "applied in this order; small_first and large_first exclude each other",
                },
            },
        ),
        "description": "a partition listed twice (same topic and partition) is refused with 400 too",
    },
    "BatchPartitionSpec": closed(
        {"topic": STRING, "partition": ref("PartitionId"), "replicas": ref("BrokerIds")},
        {
            "expected_replicas": {
                **nullable(ref("BrokerIds")),
                "description": "the replicas the plan assumed, in order: others are refused (10002 STALE_PLAN)",
            }
        },
    ),
    "AdaptiveLimits": {
        **closed({"min": integer(1, INT32_MAX), "max": integer(1, INT32_MAX)}),
        "description": "bounds of every broker's cap; max below min is refused with 400 (error 42)",
    },
    "BatchLimits": shape(
        {**{name: INTEGER for name in LIMIT_FIELDS}, "adaptive": nullable(ref("AdaptiveLimits"))}
    ),
    "BatchStatus": shape(
        {
            "batch_id": STRING,
            "plan_id": nullable(STRING),
            "owner": {**nullable(STRING), "description": "self-healing for the batches self-healing submits"},
            "state": {"enum": [s.value for s in BatchState]},
            "priority": INTEGER,
            "created_at": _DATE_TIME,
            "updated_at": _DATE_TIME,
            "counts": shape({s.value: INTEGER for s in MoveState}),
            "bytes_total": INTEGER,
            "bytes_done": INTEGER,
            "bytes_per_s": INTEGER,
            "eta_s": nullable(INTEGER),
            "limits": ref("BatchLimits"),
            "broker_caps": {
                "type": "object",
                "additionalProperties": INTEGER,
                "description": "adaptive concurrency: the cap of each broker (by id) an adjustment moved "
                "from the initial one",
            },
            "throttle_bytes_per_s": nullable(INTEGER),
            "stuck": array(shape({"topic": STRING, "partition": ref("PartitionId")})),
            "throttles": shape({"brokers": array(INTEGER), "topics": array(STRING)}),
            "rollback_of": nullable(STRING),
            "rollback_batch_id": nullable(STRING),
        },
        {"running": array(ref("RunningMove"))},
    ),
    "BatchStatusWithRunning": {
        "allOf": [ref("BatchStatus"), shape({"running": array(ref("RunningMove"))})],
    },
    "RunningMove": shape(
        {
            "topic": STRING,
            "partition": ref("PartitionId"),
            "original_replicas": array(INTEGER),
            "target_replicas": array(INTEGER),
            "started_at": _DATE_TIME,
            "bytes_done": INTEGER,
            "bytes_total": INTEGER,
            "bytes_per_s": INTEGER,
            "stuck": BOOLEAN,
        }
    ),
    "SubmitBatchResponse": shape(
        {
            "batch": ref("BatchStatusWithRunning"),
            "partitions": array(
                {"allOf": [shape({"topic": STRING, "partition": ref("PartitionId")}), ref("Error")]}
            ),
            "created": {
                "type": "boolean",
                "description": "false: the same id and body were submitted before",
            },
        }
    ),
    "Batches": shape({"batches": array(ref("BatchStatus"))}),
}

# --- the cluster view ------------------------------------------------------------------------------

CLUSTER: dict[str, Schema] = {
    "Health": shape({"status": {"const": "ok"}}),
    "Readiness": shape({"status": {"enum": ["ready", "not ready"]}}, {"reason": STRING}),
    "Status": shape(
        {
            "controller_id": INTEGER,
            "active": BOOLEAN,
            "controller_epoch": INTEGER,
            "active_controller": nullable(ref("ActiveController")),
            "zookeeper": shape({"connected": BOOLEAN, "session_id": nullable(STRING)}),
            "brokers": shape({"live": array(INTEGER)}),
            "topics": INTEGER,
            "partitions": INTEGER,
            "reassigning_partitions": INTEGER,
            "event_queue": shape(
                {"size": INTEGER, "queue_time_ms": {"type": "object", "additionalProperties": NUMBER}}
            ),
            "uptime_s": INTEGER,
            "problems": array(shape({"path": STRING, "reason": STRING})),
        },
        {
            "self_healing": shape(  # the active controller's (docs/operations.md, "Self-healing")
                {
                    "enabled": BOOLEAN,
                    "broker_grace_s": NUMBER,
                    "brokers": array(
                        shape(
                            {
                                "broker_id": INTEGER,
                                "lost_at_ms": INTEGER,
                                "heal_at_ms": INTEGER,
                                "state": {"enum": ["waiting", "healing", "incomplete"]},
                                "batch_ids": array(STRING),
                                "replicas": INTEGER,
                            }
                        )
                    ),
                    "recent": array(
                        shape(
                            {
                                "broker_id": INTEGER,
                                "batch_id": nullable(STRING),
                                "outcome": {"enum": ["completed", "returned", "incomplete", "failed"]},
                                "reason": STRING,
                                "at_ms": INTEGER,
                            }
                        )
                    ),
                }
            ),
            "events": shape(
                {"last_event_id": nullable(STRING), "history": INTEGER},
                {
                    "kafka": shape(
                        {
                            "topic": STRING,
                            "connected": BOOLEAN,
                            "sent": INTEGER,
                            "dropped": INTEGER,
                            "buffered": INTEGER,
                        }
                    )
                },
            ),
        },
    ),
    "LogDirs": shape(
        {
            "version": {"const": 1},
            "brokers": array(
                shape(
                    {
                        "broker": INTEGER,
                        "logDirs": array(
                            shape(
                                {
                                    "logDir": STRING,
                                    "error": nullable(STRING),
                                    "partitions": array(
                                        shape(
                                            {
                                                "partition": STRING,
                                                "size": INTEGER,
                                                "offsetLag": INTEGER,
                                                "isFuture": BOOLEAN,
                                            }
                                        )
                                    ),
                                }
                            )
                        ),
                    }
                )
            ),
        }
    ),
    "Brokers": shape(
        {
            "brokers": array(
                shape(
                    {
                        "id": INTEGER,
                        "rack": nullable(STRING),
                        "endpoints": array(STRING),
                        "broker_epoch": INTEGER,
                    }
                )
            )
        }
    ),
    "Topics": shape(
        {
            "topics": array(
                shape(
                    {
                        "name": STRING,
                        "partitions": INTEGER,
                        "replication_factor": INTEGER,
                        "reassigning_partitions": INTEGER,
                    }
                )
            )
        }
    ),
    "Topic": shape(
        {
            "name": STRING,
            "topic_id": nullable(STRING),
            "partitions": array(
                shape(
                    {
                        "partition": ref("PartitionId"),
                        "replicas": array(INTEGER),
                        "leader": INTEGER,
                        "leader_epoch": INTEGER,
                        "isr": array(INTEGER),
                        "adding_replicas": array(INTEGER),
                        "removing_replicas": array(INTEGER),
                    }
                )
            ),
        }
    ),
}

DEMOTIONS: dict[str, Schema] = {
    "DemotionResponse": shape(
        {
            "broker_id": INTEGER,
            "leaders_moved": {**INTEGER, "description": "leaderships the elections moved"},
            "refused": {**INTEGER, "description": "partitions refused (error_code not 0)"},
            "partitions": array(
                {
                    "allOf": [
                        ref("Error"),
                        shape({"topic": STRING, "partition": ref("PartitionId")}),
                    ],
                    "description": "each partition acted on (0) or refused: 83 ELIGIBLE_LEADERS_NOT_AVAILABLE "
                    "(no other live in-sync replica can lead), 60 REASSIGNMENT_IN_PROGRESS (being moved), "
                    "10002 STALE_PLAN (promote: its replicas changed since the demotion)",
                }
            ),
        }
    ),
}

SCHEMAS: dict[str, Schema] = {
    **COMMON,
    **REASSIGNMENTS,
    **ELECTIONS,
    **DEMOTIONS,
    **BATCHES,
    **TOPICS,
    **QUOTAS,
    **CLUSTER,
}

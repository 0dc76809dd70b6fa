"""The JSON Schemas of the OpenAPI document: request bodies (as strict as their parsers) and
responses. Pure data, built with a few small helpers.

Request schemas state exactly what the parsers in ``routes/`` accept: every object is closed
(``additionalProperties: false``), integers carry their ranges, nullable fields say so. Response schemas list the fields the README
promises and leave objects open, so adding a field is not a breaking change.
"""

from __future__ import annotations

from reassignd.http.openapi_base import (
    BOOLEAN,
    INT32,
    INTEGER,
    NUMBER,
    STRING,
    Schema,
    array,
    closed,
    integer,
    nullable,
    ref,
    shape,
    tolerant,
)
from reassignd.http.openapi_batch_schemas import BATCHES
from reassignd.strict_json import INT16_MAX, INT16_MIN, INT32_MAX

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
            ),
            "demoted": {
                "type": "object",
                "additionalProperties": INTEGER,
                "description": "each demoted broker (by id, registered or not): the partitions whose "
                "replica order its demotion recorded, which promote restores",
            },
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

"""The JSON Schemas of the OpenAPI document's request bodies, as strict as their parsers. Pure
data, built with a few small helpers.

The responses' schemas are generated from the contract's structs (``openapi_components``); the
request schemas stay written here because they state what the strict parsers in ``routes/`` and
``batch_requests`` accept beyond what a struct says: every object closed
(``additionalProperties: false``), integers with their ranges, nullable fields, patterns, a plan
that ignores unknown fields and a oneOf of two request shapes (``tests/unit/test_openapi.py``
checks that each schema accepts exactly what its parser accepts).
"""

from __future__ import annotations

from reassignd.executor.model import PLAN_ID_MAX
from reassignd.http.batch_requests import BATCH_ID_PATTERN, INT64_MAX, LIMIT_FIELDS, STRATEGIES
from reassignd.http.openapi_base import (
    BOOLEAN,
    INT32,
    NUMBER,
    STRING,
    Schema,
    array,
    closed,
    integer,
    nullable,
    ref,
    tolerant,
)
from reassignd.strict_json import INT16_MAX, INT16_MIN, INT32_MAX

# A partition id as an object key (``assignments``): canonical decimal, 0..2^31−1.
PARTITION_KEY_PATTERN = (
    "^(0|[1-9][0-9]{0,8}|1[0-9]{9}|20[0-9]{8}|21[0-3][0-9]{7}|214[0-6][0-9]{6}|2147[0-3][0-9]{5}"
    "|21474[0-7][0-9]{4}|214748[0-2][0-9]{3}|2147483[0-5][0-9]{2}|21474836[0-3][0-9]|214748364[0-7])$"
)

# --- shared pieces ---------------------------------------------------------------------------------

COMMON: dict[str, Schema] = {
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
}

# --- batches (the executor) -----------------------------------------------------------------------

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
                            "moves_per_broker (within the bounds), rises by half (at least one) while the cluster is healthy "
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
}

# The request schemas, by component name.
SCHEMAS: dict[str, Schema] = {**COMMON, **REASSIGNMENTS, **ELECTIONS, **BATCHES, **TOPICS, **QUOTAS}

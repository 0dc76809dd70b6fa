"""The batch executor's JSON Schemas in the OpenAPI document (``POST /v1/batches`` and the
batch statuses), apart from ``openapi_schemas`` for size. Pure data."""

from __future__ import annotations

from reassignd.executor.model import PLAN_ID_MAX, BatchState, MoveState
from reassignd.http.batch_requests import BATCH_ID_PATTERN, INT64_MAX, LIMIT_FIELDS, STRATEGIES
from reassignd.http.openapi_base import (
    BOOLEAN,
    INT32,
    INTEGER,
    STRING,
    Schema,
    array,
    closed,
    integer,
    nullable,
    ref,
    shape,
)
from reassignd.strict_json import INT32_MAX

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

"""The JSON Schemas of the OpenAPI document's request bodies, as strict as their parsers. Pure.

Most are generated from the request structs (``reassignd.contracts.requests``: closed objects,
integer ranges, nullable fields, patterns). The ones written here state rules no struct states:
a kafka-reassign-partitions plan (unknown fields ignored, as Kafka's tool does; ``version`` a
constant), the choice of either shape for ``POST /v1/reassignments`` (a oneOf), and a batch
(an id that is not ``.`` or ``..``, strategies that exclude each other). The answers' schemas
are generated too (``openapi_components``). ``tests/unit/test_openapi.py`` checks that each
request schema accepts exactly what its parser accepts.
"""

from __future__ import annotations

import msgspec

from reassignd.contracts.requests import REQUESTS
from reassignd.executor.model import PLAN_ID_MAX
from reassignd.http.batch_requests import BATCH_ID_PATTERN, INT64_MAX, LIMIT_FIELDS, STRATEGIES
from reassignd.http.openapi_base import (
    INT32,
    STRING,
    Schema,
    array,
    closed,
    integer,
    nullable,
    ref,
    tolerant,
)
from reassignd.strict_json import INT32_MAX

# --- shared pieces ---------------------------------------------------------------------------------

COMMON: dict[str, Schema] = {
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

# The request schemas, by component name: the hand-written ones and the generated ones.
HAND_WRITTEN: dict[str, Schema] = {**COMMON, **REASSIGNMENTS, **BATCHES}
_, GENERATED = msgspec.json.schema_components(REQUESTS, ref_template="#/components/schemas/{name}")
SCHEMAS: dict[str, Schema] = {**HAND_WRITTEN, **GENERATED}

"""The HTTP API's request bodies: ElectLeaders, CreateTopics, DeleteTopics, CreatePartitions,
AlterClientQuotas, AlterPartitionReassignments (Kafka's shape, or a kafka-reassign-partitions plan)
and a batch (``POST /v1/batches``). Pure.

The OpenAPI document's schemas of these bodies are generated from these structs (closed objects,
integer ranges, nullable fields, patterns, and as ``extra_json_schema`` the few rules no
annotation states: a name that is not ``.`` or ``..``, replicas each once, strategies that exclude
each other), clients encode them (``reassignd.api_client``, ``admin reassign``), and the server
decodes each body into its struct at the door (``reassignd.http.door``), reading a body msgspec
refuses again with its strict reader (``reassignd.strict_json`` and the routes) only for the
exact error message; ``tests/unit/http/test_openapi.py`` checks that each schema accepts exactly
what its strict reader accepts and that every body that reader accepts is a value of its struct
meaning the same. What a struct cannot say: the oneOf of the two reassignment shapes
(composed in ``reassignd/http/openapi_schemas.py``), and the rules JSON Schema cannot state,
which the descriptions state in words: a batch's ``max`` below ``min``, a partition listed twice
in a batch or a plan, ``log_dirs`` of another length than ``replicas``, a batch's log dir past
255 bytes in UTF-8, a replica moved to two log dirs (the routes' builders, ``plan_format`` and
``executor.model.spec_error`` refuse them with 400, error 42; the schemathesis test takes that
answer to a schema-valid body only for these rules, ``tests/integration/api_fuzz.py``).
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, UnsetType

from reassignd.int_limits import INT16_MAX, INT16_MIN, INT32_MAX, INT32_MIN, INT64_MAX

# A partition id as an object key (``assignments``): canonical decimal, 0..2^31−1.
PARTITION_KEY_PATTERN = (
    "^(0|[1-9][0-9]{0,8}|1[0-9]{9}|20[0-9]{8}|21[0-3][0-9]{7}|214[0-6][0-9]{6}|2147[0-3][0-9]{5}"
    "|21474[0-7][0-9]{4}|214748[0-2][0-9]{3}|2147483[0-5][0-9]{2}|21474836[0-3][0-9]|214748364[0-7])$"
)

Int32 = Annotated[int, msgspec.Meta(ge=INT32_MIN, le=INT32_MAX)]
PartitionId = Annotated[int, msgspec.Meta(ge=0, le=INT32_MAX)]
TimeoutMs = Annotated[int, msgspec.Meta(ge=0, le=INT32_MAX, description="milliseconds")]
BrokerIds = Annotated[
    tuple[Int32, ...],
    msgspec.Meta(description="broker ids; empty, repeated or unknown ids are per-item errors (39)"),
]
PartitionKey = Annotated[str, msgspec.Meta(pattern=PARTITION_KEY_PATTERN)]


class _Closed(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """A request object: an unknown field is refused (400, error 42 naming it)."""


# --- AlterPartitionReassignments (Kafka's shape) ---------------------------------------------------


class ReassignablePartition(_Closed, frozen=True):
    partition: PartitionId
    replicas: BrokerIds | None  # null: cancel the partition's move


class ReassignableTopic(_Closed, frozen=True):
    name: str
    partitions: tuple[ReassignablePartition, ...]


class KafkaAlterReassignments(_Closed, frozen=True):
    topics: tuple[ReassignableTopic, ...]
    timeout_ms: TimeoutMs | UnsetType = UNSET
    mode: Literal["cancel", "stop"] | UnsetType = UNSET


# --- ElectLeaders ----------------------------------------------------------------------------------


class ElectionPartition(_Closed, frozen=True):
    topic: str
    partition: PartitionId


class ElectLeadersRequest(_Closed, frozen=True):
    election_type: Annotated[
        Literal["preferred", "unclean"],
        msgspec.Meta(
            description="preferred: each partition's first replica leads, if it is live and in the "
            "ISR; unclean: a partition without a live leader gets the first live replica, in the "
            "ISR or not (data it never copied is lost)"
        ),
    ]
    partitions: Annotated[
        tuple[ElectionPartition, ...] | None,
        msgspec.Meta(
            description="null: every partition (the answer then leaves out the partitions that "
            "needed no election)"
        ),
    ]


# --- topics ----------------------------------------------------------------------------------------


class NewTopic(_Closed, frozen=True):
    name: str
    num_partitions: Annotated[Int32, msgspec.Meta(description="-1 or absent: the broker default")] = -1
    replication_factor: Annotated[
        int, msgspec.Meta(ge=INT16_MIN, le=INT16_MAX, description="-1 or absent: the broker default")
    ] = -1
    assignments: Annotated[
        dict[PartitionKey, BrokerIds] | None,
        msgspec.Meta(description='partition id → replicas, e.g. {"0": [1, 2], "1": [2, 3]}'),
    ] = None
    configs: dict[str, str | None] | UnsetType = UNSET


class CreateTopicsRequest(_Closed, frozen=True):
    topics: tuple[NewTopic, ...]
    timeout_ms: TimeoutMs | UnsetType = UNSET
    validate_only: bool = False


class DeleteTopicsRequest(_Closed, frozen=True):
    topics: tuple[str, ...]
    timeout_ms: TimeoutMs | UnsetType = UNSET


class NewPartitions(_Closed, frozen=True):
    name: str
    count: Annotated[Int32, msgspec.Meta(description="the new total partition count")]
    assignments: tuple[BrokerIds, ...] | None = None


class CreatePartitionsRequest(_Closed, frozen=True):
    topics: tuple[NewPartitions, ...]
    timeout_ms: TimeoutMs | UnsetType = UNSET
    validate_only: bool = False


# --- quotas ----------------------------------------------------------------------------------------


_LITERAL_DEFAULT = ' (a name literally "<default>" is written "<<default>", one more "<")'


class QuotaEntity(_Closed, frozen=True):
    user: (
        Annotated[str, msgspec.Meta(description='"<default>" names the default user' + _LITERAL_DEFAULT)]
        | UnsetType
    ) = UNSET
    client_id: (
        Annotated[str, msgspec.Meta(description='"<default>" names the default client id' + _LITERAL_DEFAULT)]
        | UnsetType
    ) = UNSET


class QuotaOp(_Closed, frozen=True):
    key: Annotated[
        str, msgspec.Meta(description="only controller_mutation_rate; another key fails the entry with 42")
    ]
    value: Annotated[float | None, msgspec.Meta(description="null removes the key")]


class QuotaAlteration(_Closed, frozen=True):
    entity: QuotaEntity
    ops: tuple[QuotaOp, ...]


class AlterQuotasRequest(_Closed, frozen=True):
    entries: tuple[QuotaAlteration, ...]


# --- a kafka-reassign-partitions plan (POST /v1/reassignments' other shape) -----------------------

# A topic name, as Kafka's tool checks it: 1-249 characters of A-Z, a-z, 0-9, '.', '_', '-'.
TOPIC_NAME_PATTERN = "^[a-zA-Z0-9._-]{1,249}$"
# "." and ".." name no znode, and a URL path cannot carry them (clients resolve them away)
NOT_DOTS = {"not": {"enum": [".", ".."]}}


class _Tolerant(msgspec.Struct, frozen=True, kw_only=True):
    """A plan's object: unknown fields are ignored, as Kafka's tool ignores them."""


class PlanPartition(_Tolerant, frozen=True, kw_only=True):
    topic: Annotated[str, msgspec.Meta(pattern=TOPIC_NAME_PATTERN, extra_json_schema=NOT_DOTS)]
    partition: PartitionId
    replicas: Annotated[
        tuple[PartitionId, ...],
        msgspec.Meta(
            min_length=1, description="broker ids, each once", extra_json_schema={"uniqueItems": True}
        ),
    ]
    log_dirs: tuple[str, ...] | UnsetType = UNSET


class ReassignmentPlan(_Tolerant, frozen=True, kw_only=True):
    """a kafka-reassign-partitions plan, read by the same reader as `reassignd admin reassign` and the legacy znode: version 1 when absent, unknown fields ignored, and one bad line (an empty or repeated replica list, an illegal topic name, a partition given twice, log_dirs of another length than replicas) refuses the whole plan"""

    # absent: 1, Kafka's EarliestVersion (kafka-reassign-partitions reads it so)
    version: Annotated[Literal[1], msgspec.Meta(description="1, the only version (absent: 1)")] = 1
    partitions: Annotated[tuple[PlanPartition, ...], msgspec.Meta(min_length=1)]


# POST /v1/reassignments takes either shape (the document's AlterReassignmentsRequest, a oneOf).
AlterReassignmentsRequest = KafkaAlterReassignments | ReassignmentPlan

# --- POST /v1/log-dirs/moves ----------------------------------------------------------------------

MAX_LOG_DIR_MOVES = 50_000  # per request (a plan's replicas on one broker)
LOG_DIR_MAX = 4096  # characters: PATH_MAX


class LogDirMoveSpec(_Closed, frozen=True):
    topic: Annotated[str, msgspec.Meta(pattern=TOPIC_NAME_PATTERN, extra_json_schema=NOT_DOTS)]
    partition: PartitionId
    dir: Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=LOG_DIR_MAX,
            description="the broker's log dir the replica is to live in (one of its --log-dirs)",
        ),
    ]


class MoveLogDirsRequest(_Closed, frozen=True):
    """AlterReplicaLogDirs for one broker: move its replicas between its log dirs (each replica
    named once; the broker must be registered). Forwarded to the broker's agent, as Kafka's
    request goes straight to the broker; no znode is written."""

    broker: PartitionId
    moves: Annotated[tuple[LogDirMoveSpec, ...], msgspec.Meta(min_length=1, max_length=MAX_LOG_DIR_MOVES)]


# --- POST /v1/batches ------------------------------------------------------------------------------

PLAN_ID_MAX = 1000  # characters (reassignd.executor.model checks the same)
BATCH_ID_PATTERN = r"[A-Za-z0-9._-]{1,249}"  # a znode name, like a topic's (not "." or "..")
BatchId = Annotated[
    str,
    msgspec.Meta(
        pattern=f"^{BATCH_ID_PATTERN}$",
        extra_json_schema=NOT_DOTS,
        description="a znode name: 1-249 characters of A-Z, a-z, 0-9, '.', '_', '-' (not '.' or '..'); "
        "generated (b-<32 hex digits>) when absent",
    ),
]
# Cruise Control's replica movement strategies (reassignd.executor.model.Strategy), chained in order.
StrategyName = Literal["small_first", "large_first", "postpone_under_replicated", "spread_brokers"]
Cap = Annotated[int, msgspec.Meta(ge=1, le=INT32_MAX)]
DefaultedCap = Annotated[
    int, msgspec.Meta(ge=1, le=INT32_MAX, description="default: the controller's setting")
]


class AdaptiveLimits(_Closed, frozen=True):
    """bounds of every broker's cap; max below min is refused with 400 (error 42)"""

    min: Cap
    max: Cap


class BatchLimitsSpec(_Closed, frozen=True):
    """each limit left out: the controller's setting"""

    moves_per_broker: DefaultedCap | UnsetType = UNSET
    moves_in_cluster: DefaultedCap | UnsetType = UNSET
    leader_moves_per_broker: DefaultedCap | UnsetType = UNSET
    adaptive: (
        Annotated[
            AdaptiveLimits | None,
            msgspec.Meta(
                description="adaptive concurrency: each broker's cap of moves starts at moves_per_broker "
                "(within the bounds), rises by half (at least one) while the cluster is healthy and "
                "halves when it is not; null: fixed caps; absent: the controller's default "
                "(--batch-adaptive-moves-per-broker)"
            ),
        ]
        | UnsetType
    ) = UNSET


# A batch's log dir: "any" or an absolute path of at most BATCH_LOG_DIR_MAX bytes in UTF-8 (the
# characters are bounded here; the bytes, which JSON Schema cannot count, in the description and
# reassignd.executor.model, whose journal entries count on them)
BATCH_LOG_DIR_MAX = 255
BatchLogDir = Annotated[str, msgspec.Meta(pattern="^(/|any$)", max_length=BATCH_LOG_DIR_MAX)]


class BatchPartitionSpec(_Closed, frozen=True):
    topic: str
    partition: PartitionId
    replicas: BrokerIds
    expected_replicas: (
        Annotated[
            BrokerIds | None,
            msgspec.Meta(
                description="the replicas the plan assumed, in order: others are refused (10002 STALE_PLAN)"
            ),
        ]
        | UnsetType
    ) = UNSET
    log_dirs: (
        Annotated[
            tuple[BatchLogDir, ...] | None,
            msgspec.Meta(
                description="JBOD: one log dir per replica, as many as its replicas, each 'any' (not "
                f"pinned) or an absolute path of at most {BATCH_LOG_DIR_MAX} bytes in UTF-8 (past it: "
                "400); pinned replicas move between the dirs of their broker once the partition is at "
                "its replicas"
            ),
        ]
        | UnsetType
    ) = UNSET


class SubmitBatchRequest(_Closed, frozen=True, kw_only=True):
    """a partition listed twice (same topic and partition) is refused with 400 too"""

    partitions: tuple[BatchPartitionSpec, ...]
    batch_id: BatchId | UnsetType = UNSET
    plan_id: Annotated[str, msgspec.Meta(max_length=PLAN_ID_MAX)] | UnsetType | None = UNSET
    priority: Annotated[Int32, msgspec.Meta(description="higher runs first (default 0)")] | UnsetType = UNSET
    throttle_bytes_per_s: (
        Annotated[
            Annotated[int, msgspec.Meta(ge=1, le=INT64_MAX)] | None,
            msgspec.Meta(
                description="replication throttle the batch sets while it runs (absent or null: none)"
            ),
        ]
        | UnsetType
    ) = UNSET
    limits: BatchLimitsSpec | UnsetType = UNSET
    strategy: (
        Annotated[
            tuple[StrategyName, ...],
            msgspec.Meta(
                description="applied in this order; small_first and large_first exclude each other",
                # beyond a struct: each once, and not both sizes (JSON Schema states it, msgspec cannot)
                extra_json_schema={
                    "uniqueItems": True,
                    "not": {
                        "allOf": [
                            {"contains": {"const": "small_first"}},
                            {"contains": {"const": "large_first"}},
                        ]
                    },
                },
            ),
        ]
        | UnsetType
    ) = UNSET


# The request bodies generated into the OpenAPI document (their nested objects come with them).
REQUESTS: tuple[type[msgspec.Struct], ...] = (
    KafkaAlterReassignments,
    ReassignmentPlan,
    ElectLeadersRequest,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    CreatePartitionsRequest,
    AlterQuotasRequest,
    SubmitBatchRequest,
    MoveLogDirsRequest,
)

"""The HTTP API's request bodies whose every rule a struct states: ElectLeaders, CreateTopics,
DeleteTopics, CreatePartitions, AlterClientQuotas and Kafka's AlterPartitionReassignments. Pure.

The OpenAPI document's schemas of these bodies are generated from these structs (closed objects,
integer ranges, nullable fields, patterns), and a client may encode them. The server still reads
every request body with its strict parser (``reassignd.strict_json`` and the routes), which gives
the exact error messages; ``tests/unit/test_openapi.py`` checks that each schema accepts exactly
what its parser accepts. The bodies with rules a struct cannot state (a kafka-reassign-partitions
plan, a batch) keep hand-written schemas (``reassignd/http/openapi_schemas.py``).
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, UnsetType

INT16_MIN, INT16_MAX = -(2**15), 2**15 - 1
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

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


class QuotaEntity(_Closed, frozen=True):
    user: Annotated[str, msgspec.Meta(description='"<default>" names the default user')] | UnsetType = UNSET
    client_id: (
        Annotated[str, msgspec.Meta(description='"<default>" names the default client id')] | UnsetType
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


# The request bodies generated into the OpenAPI document (their nested objects come with them).
REQUESTS: tuple[type[msgspec.Struct], ...] = (
    KafkaAlterReassignments,
    ElectLeadersRequest,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    CreatePartitionsRequest,
    AlterQuotasRequest,
)

"""The HTTP API's answers to Kafka's topic and quota admin messages: CreateTopics, DeleteTopics,
CreatePartitions, DescribeClientQuotas and AlterClientQuotas, in snake_case. Pure."""

from __future__ import annotations

import msgspec

from reassignd.contracts.errors import ErrorCode, ErrorName


class TopicResult(msgspec.Struct, frozen=True):
    name: str
    error_code: ErrorCode
    error_name: ErrorName
    error_message: str | None

    @property
    def ok(self) -> bool:
        return self.error_code == 0


class CreatedTopic(msgspec.Struct, frozen=True, omit_defaults=True):
    """CreateTopics' entry: the sizes appear when known (what was, or would be, created)."""

    name: str
    error_code: ErrorCode
    error_name: ErrorName
    error_message: str | None
    num_partitions: int | None = None
    replication_factor: int | None = None

    @property
    def ok(self) -> bool:
        return self.error_code == 0


class CreateTopicsResponse(msgspec.Struct, frozen=True):
    throttle_time_ms: int
    topics: tuple[CreatedTopic, ...]


class DeleteTopicsResponse(msgspec.Struct, frozen=True):
    throttle_time_ms: int
    responses: tuple[TopicResult, ...]


class CreatePartitionsResponse(msgspec.Struct, frozen=True):
    throttle_time_ms: int
    results: tuple[TopicResult, ...]


# --- quotas ----------------------------------------------------------------------------------------


class QuotaEntityName(msgspec.Struct, frozen=True, omit_defaults=True):
    """A quota entity: its user and/or client id (``"<default>"`` names the default; a name
    literally ``<default>`` is written ``"<<default>"``, one more ``<``, and any name made of
    ``<``s then ``default>`` likewise)."""

    user: str | None = None
    client_id: str | None = None


class DescribedQuota(msgspec.Struct, frozen=True):
    entity: QuotaEntityName
    values: dict[str, float]


class DescribeQuotasResponse(msgspec.Struct, frozen=True):
    entries: tuple[DescribedQuota, ...]


class QuotaResult(msgspec.Struct, frozen=True):
    entity: QuotaEntityName
    error_code: ErrorCode
    error_name: ErrorName
    error_message: str | None


class AlterQuotasResponse(msgspec.Struct, frozen=True):
    entries: tuple[QuotaResult, ...]

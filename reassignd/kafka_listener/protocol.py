"""The wire codec: kafka-python's ``kafka.protocol`` message classes (generated from Kafka's own
JSON schemas) used server-side, the table of what is served, and the fixed header prefix.

A request frame is ``INT32 size | INT16 api_key | INT16 api_version | INT32 correlation_id |
client_id | [tags] | body``. The first eight bytes are the same in every header version, so the
version is checked against :data:`SERVED` on them *before* anything is decoded (kafka-python
raises on versions it does not know). Responses are encoded with ``API_VERSION`` set before
``with_header`` (the setter assumes a request header otherwise).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from kafka.protocol.admin import (
    AlterClientQuotasRequest,
    AlterConfigsRequest,
    AlterPartitionReassignmentsRequest,
    AlterReplicaLogDirsRequest,
    CreatePartitionsRequest,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    DescribeClientQuotasRequest,
    DescribeClusterRequest,
    DescribeConfigsRequest,
    DescribeLogDirsRequest,
    DescribeTopicPartitionsRequest,
    DescribeUserScramCredentialsRequest,
    ElectLeadersRequest,
    IncrementalAlterConfigsRequest,
    ListPartitionReassignmentsRequest,
)
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest
from kafka.protocol.sasl import SaslAuthenticateRequest, SaslHandshakeRequest
from kafka.protocol.schemas import BaseField

from reassignd.errors import kafka_wire_code

# API keys (Kafka's ApiKeys)
METADATA = 3
SASL_HANDSHAKE = 17
API_VERSIONS = 18
CREATE_TOPICS = 19
DELETE_TOPICS = 20
DESCRIBE_CONFIGS = 32
ALTER_CONFIGS = 33
ALTER_REPLICA_LOG_DIRS = 34
DESCRIBE_LOG_DIRS = 35
SASL_AUTHENTICATE = 36
CREATE_PARTITIONS = 37
ELECT_LEADERS = 43
INCREMENTAL_ALTER_CONFIGS = 44
ALTER_PARTITION_REASSIGNMENTS = 45
LIST_PARTITION_REASSIGNMENTS = 46
DESCRIBE_CLIENT_QUOTAS = 48
ALTER_CLIENT_QUOTAS = 49
DESCRIBE_USER_SCRAM_CREDENTIALS = 50
DESCRIBE_CLUSTER = 60
DESCRIBE_TOPIC_PARTITIONS = 75

UNSUPPORTED_VERSION = 35


@dataclass(frozen=True, slots=True)
class Api:
    key: int
    name: str
    min_version: int
    max_version: int
    request: Any  # the kafka.protocol request class

    @property
    def response_fields(self) -> list[dict[str, Any]]:
        """The response's schema (Kafka's JSON), as kafka-python carries it."""
        module = __import__(self.request.__module__, fromlist=["_"])
        fields: list[dict[str, Any]] = getattr(
            module, self.request.__name__.replace("Request", "Response")
        ).json["fields"]
        return fields


# Exactly what is advertised in ApiVersions and served; anything else closes the connection.
SERVED: dict[int, Api] = {
    api.key: api
    for api in (
        Api(METADATA, "Metadata", 0, 12, MetadataRequest),
        Api(SASL_HANDSHAKE, "SaslHandshake", 0, 1, SaslHandshakeRequest),
        Api(API_VERSIONS, "ApiVersions", 0, 3, ApiVersionsRequest),
        Api(CREATE_TOPICS, "CreateTopics", 0, 7, CreateTopicsRequest),
        Api(DELETE_TOPICS, "DeleteTopics", 0, 6, DeleteTopicsRequest),
        Api(DESCRIBE_CONFIGS, "DescribeConfigs", 0, 4, DescribeConfigsRequest),
        Api(ALTER_CONFIGS, "AlterConfigs", 0, 2, AlterConfigsRequest),
        Api(ALTER_REPLICA_LOG_DIRS, "AlterReplicaLogDirs", 0, 2, AlterReplicaLogDirsRequest),
        Api(DESCRIBE_LOG_DIRS, "DescribeLogDirs", 0, 4, DescribeLogDirsRequest),
        Api(SASL_AUTHENTICATE, "SaslAuthenticate", 0, 2, SaslAuthenticateRequest),
        Api(CREATE_PARTITIONS, "CreatePartitions", 0, 3, CreatePartitionsRequest),
        Api(ELECT_LEADERS, "ElectLeaders", 0, 2, ElectLeadersRequest),
        Api(INCREMENTAL_ALTER_CONFIGS, "IncrementalAlterConfigs", 0, 1, IncrementalAlterConfigsRequest),
        Api(
            ALTER_PARTITION_REASSIGNMENTS,
            "AlterPartitionReassignments",
            0,
            0,
            AlterPartitionReassignmentsRequest,
        ),
        Api(
            LIST_PARTITION_REASSIGNMENTS,
            "ListPartitionReassignments",
            0,
            0,
            ListPartitionReassignmentsRequest,
        ),
        Api(DESCRIBE_CLIENT_QUOTAS, "DescribeClientQuotas", 0, 1, DescribeClientQuotasRequest),
        Api(ALTER_CLIENT_QUOTAS, "AlterClientQuotas", 0, 1, AlterClientQuotasRequest),
        Api(
            DESCRIBE_USER_SCRAM_CREDENTIALS,
            "DescribeUserScramCredentials",
            0,
            0,
            DescribeUserScramCredentialsRequest,
        ),
        Api(DESCRIBE_CLUSTER, "DescribeCluster", 0, 1, DescribeClusterRequest),
        Api(DESCRIBE_TOPIC_PARTITIONS, "DescribeTopicPartitions", 0, 0, DescribeTopicPartitionsRequest),
    )
}

PREFIX = struct.Struct(">hhi")


class FrameError(ValueError):
    """A frame that cannot be a request (too short, undecodable); the connection is closed."""


@dataclass(frozen=True, slots=True)
class Prefix:
    api_key: int
    api_version: int
    correlation_id: int


def parse_prefix(payload: bytes) -> Prefix:
    if len(payload) < PREFIX.size:
        raise FrameError(f"a frame of {len(payload)} bytes is shorter than a request header")
    api_key, api_version, correlation_id = PREFIX.unpack_from(payload)
    return Prefix(api_key, api_version, correlation_id)


def served(prefix: Prefix) -> Api | None:
    """The API when its key and version are served, else None."""
    api = SERVED.get(prefix.api_key)
    if api is None or not api.min_version <= prefix.api_version <= api.max_version:
        return None
    return api


_NULLABLE_TYPES = ("string", "bytes", "records")


def _in(versions: str | None, version: int) -> bool:
    if not versions:
        return False
    low, high = BaseField.parse_versions(versions)
    return bool(low <= version <= high)


def null_problem(fields: list[dict[str, Any]], obj: Any, version: int) -> str | None:
    """The first field that is null where the schema does not allow it at ``version`` (the
    decoder lets a null length through; Kafka's refuses it), or None."""
    for f in fields:
        if "taggedVersions" in f or not _in(f["versions"], version):
            continue
        value = getattr(obj, BaseField.underscore_name(f["name"]), None)
        kind: str = f["type"]
        if value is None:
            if not _in(f.get("nullableVersions"), version) and (
                kind.startswith("[]") or kind in _NULLABLE_TYPES
            ):
                return str(f["name"])
            continue
        if kind == "[]string" and any(v is None for v in value):
            return str(f["name"])
        if "fields" in f:
            for item in value if kind.startswith("[]") else (value,):
                problem = null_problem(f["fields"], item, version)
                if problem is not None:
                    return f"{f['name']}.{problem}"
    return None


def decode_request(api: Api, payload: bytes, version: int) -> Any:
    """The request with its header (``.header.client_id``); raises FrameError when garbled."""
    try:
        request = api.request.decode(payload, version=version, header=True)
    except (ValueError, TypeError, IndexError, KeyError, UnicodeDecodeError, OverflowError, MemoryError) as e:
        raise FrameError(f"cannot decode {api.name} v{version}: {type(e).__name__}: {e}") from None
    except Exception as e:  # the generated decoders raise whatever their codecs raise
        raise FrameError(f"cannot decode {api.name} v{version}: {type(e).__name__}: {e}") from None
    problem = null_problem(api.request.json["fields"], request, version)
    if problem is not None:
        raise FrameError(f"{api.name} v{version}: {problem} is null, which it may not be")
    return request


def to_kafka_codes(fields: list[dict[str, Any]], obj: Any, version: int) -> None:
    """Every ``ErrorCode`` field of a response (at any depth) as Kafka's code
    (:func:`reassignd.errors.kafka_wire_code`): our own codes >= 10000 never reach the wire."""
    for f in fields:
        if "taggedVersions" in f or not _in(f["versions"], version):
            continue
        attr = BaseField.underscore_name(f["name"])
        value = getattr(obj, attr, None)
        if value is None:
            continue
        if f["name"] == "ErrorCode" and isinstance(value, int):
            mapped = kafka_wire_code(value)
            if mapped != value:
                setattr(obj, attr, mapped)
        elif "fields" in f:
            for item in value if f["type"].startswith("[]") else (value,):
                to_kafka_codes(f["fields"], item, version)


def encode_response(response: Any, version: int, correlation_id: int) -> bytes:
    """A complete frame (size prefix, response header, body)."""
    response.API_VERSION = version  # before with_header(): see the module docstring
    response.with_header(correlation_id=correlation_id)
    data: bytes = response.encode(header=True, framed=True)
    return data


@dataclass(frozen=True, slots=True)
class Encoded:
    """A response already encoded (a cached one): its frame with any correlation id; the one
    of the request answered is written over it (the first field of every response header)."""

    frame: bytes

    def for_request(self, correlation_id: int) -> bytes:
        out = bytearray(self.frame)
        struct.pack_into(">i", out, 4, correlation_id)
        return bytes(out)


def api_versions_table() -> list[Any]:
    ApiVersion = ApiVersionsResponse.ApiVersion
    return [
        ApiVersion(api_key=a.key, min_version=a.min_version, max_version=a.max_version)
        for a in sorted(SERVED.values(), key=lambda a: a.key)
    ]


def unsupported_api_versions(correlation_id: int) -> bytes:
    """KIP-511: ApiVersions at a version above ours is answered UNSUPPORTED_VERSION with a v0
    body carrying our ranges, so the client retries at our maximum."""
    response = ApiVersionsResponse(error_code=UNSUPPORTED_VERSION, api_keys=api_versions_table())
    return encode_response(response, 0, correlation_id)

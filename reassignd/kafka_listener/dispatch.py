"""Which handler answers which API, how a request is answered when its handler fails (its error
on every item it names), and which APIs change the cluster (a connection runs those strictly
after what came before them, as Kafka serves one request per connection at a time)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from reassignd.kafka_listener import (
    cluster,
    configs,
    elections,
    log_dirs,
    protocol,
    quotas,
    reassignments,
    replica_log_dirs,
    scram,
    topic_partitions,
    topics,
)
from reassignd.kafka_listener.context import RequestContext

Handler = Callable[[RequestContext, Any], Awaitable[Any]]
# (request, version, error code, message) -> the response with that error on every item
Refusal = Callable[[Any, int, int, str], Any]

HANDLERS: dict[int, Handler] = {
    protocol.API_VERSIONS: cluster.api_versions,
    protocol.METADATA: cluster.metadata,
    protocol.DESCRIBE_CLUSTER: cluster.describe_cluster,
    protocol.CREATE_TOPICS: topics.create_topics,
    protocol.DELETE_TOPICS: topics.delete_topics,
    protocol.CREATE_PARTITIONS: topics.create_partitions,
    protocol.ALTER_PARTITION_REASSIGNMENTS: reassignments.alter_partition_reassignments,
    protocol.LIST_PARTITION_REASSIGNMENTS: reassignments.list_partition_reassignments,
    protocol.DESCRIBE_CONFIGS: configs.describe_configs,
    protocol.ALTER_CONFIGS: configs.alter_configs,
    protocol.INCREMENTAL_ALTER_CONFIGS: configs.incremental_alter_configs,
    protocol.DESCRIBE_CLIENT_QUOTAS: quotas.describe_client_quotas,
    protocol.ALTER_CLIENT_QUOTAS: quotas.alter_client_quotas,
    protocol.DESCRIBE_LOG_DIRS: log_dirs.describe_log_dirs,
    protocol.ALTER_REPLICA_LOG_DIRS: replica_log_dirs.alter_replica_log_dirs,
    protocol.ELECT_LEADERS: elections.elect_leaders,
    protocol.DESCRIBE_USER_SCRAM_CREDENTIALS: scram.describe_user_scram_credentials,
    protocol.DESCRIBE_TOPIC_PARTITIONS: topic_partitions.describe_topic_partitions,
}

REFUSALS: dict[int, Refusal] = {
    protocol.API_VERSIONS: cluster.api_versions_refusal,
    protocol.METADATA: cluster.metadata_refusal,
    protocol.DESCRIBE_CLUSTER: cluster.describe_cluster_refusal,
    protocol.CREATE_TOPICS: topics.create_topics_refusal,
    protocol.DELETE_TOPICS: topics.delete_topics_refusal,
    protocol.CREATE_PARTITIONS: topics.create_partitions_refusal,
    protocol.ALTER_PARTITION_REASSIGNMENTS: reassignments.alter_refusal,
    protocol.LIST_PARTITION_REASSIGNMENTS: reassignments.list_refusal,
    protocol.DESCRIBE_CONFIGS: configs.describe_configs_refusal,
    protocol.ALTER_CONFIGS: configs.alter_configs_refusal,
    protocol.INCREMENTAL_ALTER_CONFIGS: configs.incremental_alter_configs_refusal,
    protocol.DESCRIBE_CLIENT_QUOTAS: quotas.describe_client_quotas_refusal,
    protocol.ALTER_CLIENT_QUOTAS: quotas.alter_client_quotas_refusal,
    protocol.DESCRIBE_LOG_DIRS: log_dirs.describe_log_dirs_refusal,
    protocol.ALTER_REPLICA_LOG_DIRS: replica_log_dirs.alter_replica_log_dirs_refusal,
    protocol.ELECT_LEADERS: elections.elect_leaders_refusal,
    protocol.DESCRIBE_USER_SCRAM_CREDENTIALS: scram.describe_user_scram_credentials_refusal,
    protocol.DESCRIBE_TOPIC_PARTITIONS: topic_partitions.describe_topic_partitions_refusal,
}
assert REFUSALS.keys() == HANDLERS.keys(), "every API served has its refusal"

MUTATIONS = frozenset(
    {
        protocol.CREATE_TOPICS,
        protocol.DELETE_TOPICS,
        protocol.CREATE_PARTITIONS,
        protocol.ALTER_PARTITION_REASSIGNMENTS,
        protocol.ALTER_CONFIGS,
        protocol.INCREMENTAL_ALTER_CONFIGS,
        protocol.ALTER_CLIENT_QUOTAS,
        protocol.ELECT_LEADERS,
        protocol.ALTER_REPLICA_LOG_DIRS,
    }
)

# answered before authentication (and by the connection itself, not by a handler: SASL)
BEFORE_AUTH = frozenset({protocol.API_VERSIONS, protocol.SASL_HANDSHAKE, protocol.SASL_AUTHENTICATE})

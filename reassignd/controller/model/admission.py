"""Admission at the door: every request is checked here, completely, before it enters the
controller's event queue (``api/controller_api.py`` calls these), so nothing of a refused request
or item is written and a request's content can never fail the event that handles it. Pure: the
request in, per item the error to answer (or None: admitted) out.

What is checked here is what does not depend on the cluster: names (topics, broker resource ids,
quota entities), config keys against Kafka's set and values against their types, encoded sizes
against ZooKeeper's limit, duplicates, and the number of partitions a request names
(``--max-partitions-per-request``). What depends on the cluster (a topic exists, a broker is
alive, a quota is left) is decided in the event, where the same rules are checked again as a
safety net.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from reassignd.controller.model.admin_requests import ResourceAlteration, ResourceType
from reassignd.controller.model.config_rules import (
    DUPLICATE_RESOURCE,
    INVALID_REQUEST,
    config_size_problem,
    duplicated_resources,
    known_name,
    plan_alteration,
    resource_key,
    value_problem,
)
from reassignd.controller.model.requests import QuotaChange, TopicToCreate
from reassignd.errors import InvalidConfig, InvalidRequest, InvalidTopic, ReassigndError
from reassignd.quotas.config_store import quota_path
from reassignd.topic_partition import TopicPartition, topic_name_problem


def alteration_problem(alteration: ResourceAlteration) -> tuple[int, str] | None:
    """AlterConfigs or IncrementalAlterConfigs, one resource: Kafka's rules (resource name,
    duplicate keys, known names, values by type, operations) on the changes themselves, and their
    encoded size. The merge with the stored config is checked again in the event."""
    planned = plan_alteration(alteration, {})
    return planned if isinstance(planned, tuple) else None


def alterations_problems(alterations: Sequence[ResourceAlteration]) -> list[tuple[int, str] | None]:
    """AlterConfigs or IncrementalAlterConfigs, the whole request: per resource, in request order,
    the error it is answered (None: admitted). A resource named more than once is refused 42 in
    every entry and nothing of it is written (Kafka's ConfigAdminManager), then each resource on
    its own (``alteration_problem``)."""
    keys = [resource_key(a.resource.type, a.resource.name) for a in alterations]
    duplicated = duplicated_resources(keys)
    return [
        (INVALID_REQUEST, DUPLICATE_RESOURCE) if key in duplicated else alteration_problem(a)
        for key, a in zip(keys, alterations, strict=True)
    ]


def topic_configs_error(configs: Mapping[str, str | None]) -> ReassigndError | None:
    """CreateTopics, one topic's configs: null values (42), then Kafka's LogConfig.validate: names
    (40 ``Unknown topic config name``), values by type (40), then the encoded size (40)."""
    nulls = [k for k, v in configs.items() if v is None]
    if nulls:
        return InvalidRequest(f"Null value not supported for topic configs : {','.join(nulls)}")
    given = {k: v for k, v in configs.items() if v is not None}
    for name, value in given.items():
        if not known_name(ResourceType.TOPIC, name):
            return InvalidConfig(f"Unknown topic config name: {name}")
        problem = value_problem(name, value)
        if problem is not None:
            return InvalidConfig(problem)
    too_big = config_size_problem(given)
    return None if too_big is None else InvalidConfig(too_big)


DUPLICATE_TOPIC = "Found multiple entries for this topic."


def new_topics_errors(topics: Sequence[TopicToCreate]) -> list[ReassigndError | None]:
    """CreateTopics: per entry, in request order, the error it is answered (None: admitted to the
    event). A name given more than once fails every copy (42, KafkaApis); then the name (17),
    then the configs."""
    duplicated = {name for name, n in Counter(t.name for t in topics).items() if n > 1}
    errors: list[ReassigndError | None] = []
    for topic in topics:
        if topic.name in duplicated:
            errors.append(InvalidRequest(DUPLICATE_TOPIC))
            continue
        name_problem = topic_name_problem(topic.name)
        errors.append(
            InvalidTopic(name_problem) if name_problem is not None else topic_configs_error(topic.configs)
        )
    return errors


def quota_entry_error(entry: QuotaChange) -> ReassigndError | None:
    """AlterClientQuotas, one entry: the entity (names, the length of its znode path) and the value
    (``config_store.quota_path``, which the event uses too)."""
    try:
        quota_path(entry.user, entry.client_id, entry.controller_mutation_rate)
    except ReassigndError as e:
        return e
    return None


def too_many_partitions(count: int, limit: int, what: str) -> InvalidRequest | None:
    """42 when a request names more than ``limit`` partitions (``--max-partitions-per-request``)."""
    if count <= limit:
        return None
    return InvalidRequest(
        f"{what} names {count} partitions, more than the {limit} one request may name "
        f"(--max-partitions-per-request); split it"
    )


def distinct_partitions(partitions: Iterable[TopicPartition]) -> int:
    return len(set(partitions))

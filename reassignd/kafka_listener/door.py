"""The Kafka listener's door: kafka-python's decoded admin request converted into the contract
struct the HTTP API decodes its body into (:mod:`reassignd.contracts.requests`), one function per
request kind, so that one builder (:mod:`reassignd.controller.model.from_contracts`) makes the
controller's request for both doors. Pure.

The wire's types already hold (an INT32 is one, a STRING a string), so a struct is built, not
validated: the rules a struct's annotations state are the HTTP door's msgspec check, and the
builders and the controller's admission check the rest for both doors. What only Kafka's wire can
carry is refused here, in Kafka's words: an election type other than 0 or 1, a quota entity type
other than ``user`` and ``client-id`` or given twice. What only Kafka's wire carries beside the
struct stays with the handler: the request version (``validate_only`` from CreateTopics v1, the
strict quota from the versions in :data:`reassignd.kafka_listener.topics.STRICT_FROM`), DeleteTopics'
topic ids, the broker whose port AlterReplicaLogDirs came to.
"""

from __future__ import annotations

from typing import Any, Literal

from msgspec import UNSET

from reassignd.contracts import requests as contract
from reassignd.controller.model.admin_requests import ElectionType
from reassignd.controller.model.requests import QuotaAlterationResult
from reassignd.zk.paths import spell_entity_name

INVALID_REQUEST = 42
USER = "user"
CLIENT_ID = "client-id"

_ELECTION_NAMES: dict[int, Literal["preferred", "unclean"]] = {
    ElectionType.PREFERRED: "preferred",
    ElectionType.UNCLEAN: "unclean",
}


def _timeout_ms(value: int) -> int:
    return max(0, value)  # a negative timeout is no wait, as Kafka takes it


# --- AlterPartitionReassignments -------------------------------------------------------------------


def alter_reassignments(request: Any) -> contract.KafkaAlterReassignments:
    """A null replica list cancels the partition's move, as in Kafka."""
    return contract.KafkaAlterReassignments(
        topics=tuple(
            contract.ReassignableTopic(
                t.name,
                tuple(
                    contract.ReassignablePartition(
                        p.partition_index, None if p.replicas is None else tuple(p.replicas)
                    )
                    for p in t.partitions
                ),
            )
            for t in request.topics
        ),
        timeout_ms=_timeout_ms(request.timeout_ms),
    )


# --- topics ----------------------------------------------------------------------------------------


def new_topic(t: Any) -> contract.NewTopic:
    """A partition's assignment keyed as the contract keys it (its id in decimal)."""
    assignments = (
        {str(a.partition_index): tuple(a.broker_ids) for a in t.assignments} if t.assignments else None
    )
    return contract.NewTopic(
        name=t.name,
        num_partitions=t.num_partitions,
        replication_factor=t.replication_factor,
        assignments=assignments,
        configs={c.name: c.value for c in t.configs or ()},
    )


def create_topics(request: Any, version: int) -> contract.CreateTopicsRequest:
    """``validate_only`` from v1 (v0 has none)."""
    return contract.CreateTopicsRequest(
        topics=tuple(new_topic(t) for t in request.topics),
        timeout_ms=_timeout_ms(request.timeout_ms),
        validate_only=bool(request.validate_only) if version >= 1 else False,
    )


def delete_topics(names: list[str], request: Any) -> contract.DeleteTopicsRequest:
    """``names``: the topics named, by name or (v6) by an id a topic has."""
    return contract.DeleteTopicsRequest(tuple(names), _timeout_ms(request.timeout_ms))


def create_partitions(request: Any) -> contract.CreatePartitionsRequest:
    return contract.CreatePartitionsRequest(
        topics=tuple(
            contract.NewPartitions(
                t.name,
                t.count,
                None if t.assignments is None else tuple(tuple(a.broker_ids) for a in t.assignments),
            )
            for t in request.topics
        ),
        timeout_ms=_timeout_ms(request.timeout_ms),
        validate_only=bool(request.validate_only),
    )


# --- ElectLeaders ----------------------------------------------------------------------------------


def elect_leaders(request: Any, version: int) -> contract.ElectLeadersRequest | str:
    """The request, or Kafka's message for an election type it does not know (v0 has none: a
    preferred election)."""
    code = request.election_type if version >= 1 else ElectionType.PREFERRED
    election = _ELECTION_NAMES.get(code)
    if election is None:
        return f"Unknown election type {code}"
    partitions = (
        None
        if request.topic_partitions is None
        else tuple(
            contract.ElectionPartition(t.topic, p) for t in request.topic_partitions for p in t.partitions
        )
    )
    return contract.ElectLeadersRequest(election, partitions)


# --- AlterClientQuotas -----------------------------------------------------------------------------


def quota_alteration(entry: Any) -> contract.QuotaAlteration | QuotaAlterationResult:
    """One entry, its entity names spelled as the HTTP API spells them (the default ``<default>``),
    or its answer when its entity names a type other than ``user`` and ``client-id``, or one twice.
    An op that removes its key has no value."""
    user: str | None = None
    client_id: str | None = None
    for e in entry.entity:
        name = spell_entity_name(e.entity_name)  # None is the default, a string its literal name
        if e.entity_type == USER and user is None:
            user = name
        elif e.entity_type == CLIENT_ID and client_id is None:
            client_id = name
        else:
            return QuotaAlterationResult(
                user, client_id, INVALID_REQUEST, f"Unsupported or repeated entity type {e.entity_type!r}"
            )
    entity = contract.QuotaEntity(UNSET if user is None else user, UNSET if client_id is None else client_id)
    ops = tuple(contract.QuotaOp(op.key, None if op.remove else float(op.value)) for op in entry.ops)
    return contract.QuotaAlteration(entity, ops)


# --- AlterReplicaLogDirs ---------------------------------------------------------------------------


def log_dir_moves(request: Any) -> tuple[contract.LogDirMoveSpec, ...]:
    """Every (topic, partition, dir) the request names, in its order: the moves of
    :class:`~reassignd.contracts.requests.MoveLogDirsRequest`, whose broker is the one whose port
    the request came to (the request names none)."""
    return tuple(
        contract.LogDirMoveSpec(t.name, p, d.path)
        for d in request.dirs or ()
        for t in d.topics or ()
        for p in t.partitions
    )

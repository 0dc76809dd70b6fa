"""The Kafka listener's side of the audit trail (:mod:`reassignd.stream.audit`): one entry per
request of a mutating API (:data:`~reassignd.kafka_listener.dispatch.MUTATIONS`), whatever its
outcome — refused for the principal's role, answered NOT_CONTROLLER, validate-only — written by
the connection once the handler has answered. What a request names is read from the request as
decoded (one small function per API); the result from the response, as for HTTP. Pure but for
:func:`audit`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reassignd.kafka_listener.context import RequestContext
from reassignd.stream.audit import AuditEntry, AuditTrail, capped, result_of
from reassignd.zk.paths import spell_entity_name

Doc = dict[str, Any]
RESOURCE_TYPES = {2: "topic", 4: "broker", 8: "broker_logger"}


def _topics(doc: Doc) -> Doc:
    return {"topics": [t.get("name") for t in doc.get("topics") or ()]}


def _delete_topics(doc: Doc) -> Doc:
    names = doc.get("topic_names") or [t.get("name") or t.get("topic_id") for t in doc.get("topics") or ()]
    return {"topics": [str(n) for n in names]}


def _reassignments(doc: Doc) -> Doc:
    targets = {
        f"{t.get('name')}-{p.get('partition_index')}": p.get("replicas")
        for t in doc.get("topics") or ()
        for p in t.get("partitions") or ()
    }
    return {"partitions": list(targets), "targets": targets}


def _configs(doc: Doc) -> Doc:
    resources = doc.get("resources") or ()
    return {
        "resources": [
            f"{RESOURCE_TYPES.get(r.get('resource_type'), r.get('resource_type'))}:{r.get('resource_name')}"
            for r in resources
        ],
        "configs": sorted({c.get("name") for r in resources for c in r.get("configs") or ()}),
    }


def _quotas(doc: Doc) -> Doc:
    return {
        "entities": [
            ",".join(
                f"{e.get('entity_type')}={spell_entity_name(e.get('entity_name'))}"
                for e in entry.get("entity") or ()
            )
            for entry in doc.get("entries") or ()
        ]
    }


def _elections(doc: Doc) -> Doc:
    chosen = doc.get("topic_partitions")
    election = {0: "preferred", 1: "unclean"}.get(doc.get("election_type", 0), doc.get("election_type"))
    partitions = (
        None
        if chosen is None
        else [f"{t.get('topic')}-{p}" for t in chosen for p in t.get("partitions") or ()]
    )
    return {"election_type": election, "partitions": partitions}


def _log_dir_moves(doc: Doc) -> Doc:
    return {
        "moves": {
            f"{t.get('name')}-{p}": d.get("path")
            for d in doc.get("dirs") or ()
            for t in d.get("topics") or ()
            for p in t.get("partitions") or ()
        }
    }


NAMED: dict[str, Callable[[Doc], Doc]] = {
    "CreateTopics": _topics,
    "DeleteTopics": _delete_topics,
    "CreatePartitions": _topics,
    "AlterPartitionReassignments": _reassignments,
    "AlterConfigs": _configs,
    "IncrementalAlterConfigs": _configs,
    "AlterClientQuotas": _quotas,
    "ElectLeaders": _elections,
    "AlterReplicaLogDirs": _log_dir_moves,
}


def _as_dict(message: Any) -> Doc:
    to_dict = getattr(message, "to_dict", None)
    result = to_dict() if callable(to_dict) else None
    return result if isinstance(result, dict) else {}


def named_of(api_name: str, request: Doc) -> Doc:
    """What the request names, with ``validate_only`` when it asked for that only."""
    named = NAMED[api_name](request) if api_name in NAMED else {}
    if request.get("validate_only"):
        named["validate_only"] = True
    return capped(named)


def entry_of(api_name: str, ctx: RequestContext, source: str, request: Any, response: Any) -> AuditEntry:
    """``response`` None: the handler failed (the connection closes without an answer)."""
    result = (
        {"error_code": -1, "error_name": "UNKNOWN_SERVER_ERROR"}
        if response is None
        else result_of(_as_dict(response))
    )
    return AuditEntry(
        via="kafka",
        action=api_name,
        user=ctx.principal.user,
        client_id=ctx.client_id,
        source=source,
        named=named_of(api_name, _as_dict(request)),
        result=result,
    )


def audit(
    trail: AuditTrail | None, api_name: str, ctx: RequestContext, source: str, request: Any, response: Any
) -> None:
    if trail is not None:
        trail.record(entry_of(api_name, ctx, source, request, response))

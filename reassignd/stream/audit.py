"""The audit trail: one entry per mutating request, from the HTTP API and the Kafka listener alike.

An entry says who (``user``, ``client_id``, ``source`` address), through what (``via``: ``http``
or ``kafka``), did what (``action``: ``POST /v1/reassignments`` or a Kafka API name such as
``AlterPartitionReassignments``), naming which partitions or entities, with which ``result``
(the HTTP status, the top-level error code, and the per-item error codes that were not 0, with
Kafka's name of each such code). Each
entry is written twice by :class:`AuditTrail`: one JSON line on the ``reassignd.audit`` logger
(under ``"audit"`` with ``--log-format json``), and one ``audit`` record on the event stream
(SSE and the Kafka topic). Refused requests (401, 403, 400, 41 NOT_CONTROLLER) are entries too.

The functions building an entry are pure; lists longer than :data:`MAX_NAMES` keep their first
names and say how many there were (``<key>_count``), so a 10,000-partition request stays one
readable line.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from reassignd.contracts.records import Audit
from reassignd.errors import error_name
from reassignd.stream.record_log import RecordLog
from reassignd.zk.paths import spell_entity_name

LOGGER = "reassignd.audit"
RECORD_TYPE = "audit"
MAX_NAMES = 1000

_NAME_KEYS = ("name", "topic", "resource_name", "topic_name")
_PARTITION_KEYS = ("partition", "partition_index", "partition_id")
# where per-item results sit in the answers (HTTP JSON and Kafka's responses alike)
_ITEM_LISTS = (
    "responses",
    "partitions",
    "topics",
    "results",
    "entries",
    "replica_election_results",
    "partition_result",
)


@dataclass(frozen=True, slots=True)
class AuditEntry:
    via: str  # "http" or "kafka"
    action: str
    user: str | None  # None: no principal (a missing or unknown token)
    client_id: str
    source: str  # the peer's address
    named: Mapping[str, Any] = field(default_factory=dict)  # partitions, topics, entities...
    result: Mapping[str, Any] = field(default_factory=dict)

    def fields(self) -> dict[str, Any]:
        """The record's fields (and the log line's object), in a stable order."""
        return {
            "via": self.via,
            "action": self.action,
            "user": self.user,
            "client_id": self.client_id,
            "source": self.source,
            **self.named,
            "result": dict(self.result),
        }


def capped(named: Mapping[str, Any]) -> dict[str, Any]:
    """``named`` with every list (and dict) over :data:`MAX_NAMES` cut, and its length beside it."""
    out: dict[str, Any] = {}
    for key, value in named.items():
        if isinstance(value, list | tuple) and len(value) > MAX_NAMES:
            out[key], out[f"{key}_count"] = list(value[:MAX_NAMES]), len(value)
        elif isinstance(value, dict) and len(value) > MAX_NAMES:
            out[key], out[f"{key}_count"] = dict(list(value.items())[:MAX_NAMES]), len(value)
        else:
            out[key] = list(value) if isinstance(value, tuple) else value
    return out


def partition_names(tps: Iterable[tuple[str, int]]) -> list[str]:
    return [f"{topic}-{partition}" for topic, partition in tps]


def _spelled(name: Any) -> Any:
    """A Kafka entity name as the HTTP API spells it (None: ``<default>``)."""
    return spell_entity_name(name) if name is None or isinstance(name, str) else name


def _entity_name(entity: Any) -> str | None:
    if isinstance(entity, dict):  # HTTP: {"user": "alice", "client_id": "app"}
        parts = [f"{k}={v}" for k, v in entity.items() if v is not None]
        return ",".join(parts) or None
    if isinstance(entity, list):  # Kafka: [{"entity_type": "user", "entity_name": "alice"}]
        parts = [
            f"{e.get('entity_type')}={_spelled(e.get('entity_name'))}" for e in entity if isinstance(e, dict)
        ]
        return ",".join(parts) or None
    return None


def _item_name(node: Mapping[str, Any], topic: str | None) -> str | None:
    partition: int | None = next((node[k] for k in _PARTITION_KEYS if isinstance(node.get(k), int)), None)
    own: str | None = next((node[k] for k in _NAME_KEYS if isinstance(node.get(k), str)), None)
    if partition is not None and (own or topic):
        return f"{own or topic}-{partition}"
    if own is not None:
        return own
    return _entity_name(node.get("entity"))


def item_errors(answer: Any) -> dict[str, int]:
    """The per-item error codes other than 0 in an answer (HTTP JSON, or a Kafka response as a
    dict), by item: ``"orders-3"``, ``"orders"``, ``"user=alice"``. The top level is not an item."""
    return {name: code for name, (code, _) in failed_items(answer).items()}


def failed_items(answer: Any) -> dict[str, tuple[int, str | None]]:
    """``item_errors`` with each item's error message (None: the answer has none)."""
    errors: dict[str, tuple[int, str | None]] = {}

    def walk(node: Any, topic: str | None) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, topic)
            return
        if not isinstance(node, dict):
            return
        name = _item_name(node, topic)
        code = node.get("error_code")
        if name is not None and isinstance(code, int) and not isinstance(code, bool) and code != 0:
            message = node.get("error_message")
            errors[name] = (code, message if isinstance(message, str) else None)
        inner = next((node[k] for k in _NAME_KEYS if isinstance(node.get(k), str)), topic)
        for key in _ITEM_LISTS:
            if key in node:
                walk(node[key], inner)

    if isinstance(answer, dict):
        for key in _ITEM_LISTS:
            if key in answer:
                walk(answer[key], None)
    return errors


def result_of(answer: Any, *, status: int | None = None) -> dict[str, Any]:
    """An entry's ``result`` from the answer: the HTTP status (when there is one), the top-level
    error code and message, and the items that failed."""
    doc = answer if isinstance(answer, dict) else {}
    code = doc.get("error_code")
    top = code if isinstance(code, int) and not isinstance(code, bool) else 0
    result: dict[str, Any] = {} if status is None else {"status": status}
    result |= {"error_code": top, "error_name": error_name(top)}
    if top != 0 and isinstance(doc.get("error_message"), str):
        result["error_message"] = doc["error_message"]
    failed = failed_items(doc)
    errors = {name: code for name, (code, _) in failed.items()}
    if errors:
        result |= capped({"errors": errors})
        # why each item was refused, as it was answered (a NOAUTH names the znode and the session)
        messages = {name: message for name, (_, message) in failed.items() if message}
        if messages:
            result |= capped({"error_messages": messages})
        # Kafka's name of each code refused per item, once per code (the status page shows them)
        result["error_names"] = {str(code): error_name(code) for code in sorted(set(errors.values()))}
    return result


class AuditTrail:
    """Writes each entry to the ``reassignd.audit`` logger and, when there is one, the event log,
    with ``controller_id``: the instance that served the request (a standby's refusals are
    audited too, under its own epoch). Never raises: a failure to audit is logged, and the
    request is answered regardless."""

    def __init__(
        self,
        records: RecordLog | None,
        controller_id: int | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        self.records = records
        self.controller_id = controller_id
        self.log = logger or logging.getLogger(LOGGER)

    def record(self, entry: AuditEntry) -> None:
        try:
            fields = {"controller_id": self.controller_id, **entry.fields()}
            self.log.info(
                "%s",
                json.dumps(fields, separators=(",", ":"), ensure_ascii=False, default=str),
                extra={"audit": fields},
            )
            if self.records is not None:
                self.records.emit(
                    Audit(
                        controller_id=self.controller_id,
                        via=entry.via,
                        action=entry.action,
                        user=entry.user,
                        client_id=entry.client_id,
                        source=entry.source,
                        named=dict(entry.named),
                        result=dict(entry.result),
                    )
                )
        except Exception:
            self.log.exception("could not audit %s %s by %s", entry.via, entry.action, entry.user)

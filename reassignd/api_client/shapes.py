"""The controller's reassignment JSON as the API client reads it, and its requests. Pure.

Each ``decode_*`` takes a decoded JSON body and returns typed values, or raises
:class:`ResponseError` (one line) when the body is not the documented shape.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from reassignd.api_client.errors import ResponseError
from reassignd.errors import error_name
from reassignd.strict_json import Reader
from reassignd.topic_partition import Replicas, TopicPartition

NO_REASSIGNMENT_IN_PROGRESS = 85


@dataclass(frozen=True, slots=True)
class PartitionResult:
    """One partition's result in AlterPartitionReassignments' response."""

    tp: TopicPartition
    error_code: int
    error_name: str
    error_message: str | None

    @property
    def ok(self) -> bool:
        return self.error_code == 0


@dataclass(frozen=True, slots=True)
class Progress:
    bytes_total: int
    bytes_done: int
    bytes_per_s: float | None
    eta_s: float | None


@dataclass(frozen=True, slots=True)
class Reassignment:
    """One entry of ListPartitionReassignments."""

    tp: TopicPartition
    replicas: Replicas
    adding: Replicas
    removing: Replicas
    progress: Progress | None = None


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    """One partition of ``GET /v1/topics/{topic}``."""

    replicas: Replicas
    adding: Replicas

    @property
    def original(self) -> Replicas:
        """RS − AR: the replicas before the move in flight (the replicas when none is)."""
        return tuple(r for r in self.replicas if r not in self.adding)


# --- typed access (strict_json's readers, refusing with ResponseError) ------------------------------

_READ = Reader(ResponseError, "response")


def _get(obj: Any, key: str, where: str) -> Any:
    return _READ.member(obj, key, where)


def _list(value: Any, where: str) -> list[Any]:
    return _READ.array(value, where)


def _int(value: Any, where: str) -> int:
    return _READ.integer(value, where)


def _str(value: Any, where: str) -> str:
    return _READ.text(value, where)


def _ids(value: Any, where: str) -> Replicas:
    return _READ.integers(value, where)


def _number_or_none(value: Any, where: str) -> float | None:
    return None if value is None else _READ.number(value, where)


# --- responses -------------------------------------------------------------------------------------


def decode_alter_response(body: Any) -> list[PartitionResult]:
    """AlterPartitionReassignments' response (also the answer of ``DELETE /v1/reassignments``)."""
    results: list[PartitionResult] = []
    for t in _list(_get(body, "responses", "response"), "responses"):
        name = _str(_get(t, "name", "responses[]"), "responses[].name")
        for p in _list(_get(t, "partitions", name), name):
            code = _int(_get(p, "error_code", name), f"{name}.error_code")
            message = p.get("error_message")
            results.append(
                PartitionResult(
                    (name, _int(_get(p, "partition", name), f"{name}.partition")),
                    code,
                    p.get("error_name") if isinstance(p.get("error_name"), str) else error_name(code),
                    message if isinstance(message, str) else None,
                )
            )
    return results


def _progress(value: Any, where: str) -> Progress | None:
    if value is None:
        return None
    return Progress(
        bytes_total=_int(_get(value, "bytes_total", where), f"{where}.bytes_total"),
        bytes_done=_int(_get(value, "bytes_done", where), f"{where}.bytes_done"),
        bytes_per_s=_number_or_none(value.get("bytes_per_s"), f"{where}.bytes_per_s"),
        eta_s=_number_or_none(value.get("eta_s"), f"{where}.eta_s"),
    )


def decode_list_response(body: Any) -> dict[TopicPartition, Reassignment]:
    """ListPartitionReassignments: the partitions being reassigned."""
    found: dict[TopicPartition, Reassignment] = {}
    for t in _list(_get(body, "topics", "response"), "topics"):
        name = _str(_get(t, "name", "topics[]"), "topics[].name")
        for p in _list(_get(t, "partitions", name), name):
            tp = (name, _int(_get(p, "partition", name), f"{name}.partition"))
            where = f"{name}-{tp[1]}"
            found[tp] = Reassignment(
                tp,
                replicas=_ids(_get(p, "replicas", where), f"{where}.replicas"),
                adding=_ids(_get(p, "adding_replicas", where), f"{where}.adding_replicas"),
                removing=_ids(_get(p, "removing_replicas", where), f"{where}.removing_replicas"),
                progress=_progress(p.get("progress"), f"{where}.progress"),
            )
    return found


def decode_topic(body: Any) -> dict[int, PartitionInfo]:
    """``GET /v1/topics/{topic}``: partition id → replicas and adding replicas."""
    name = _str(_get(body, "name", "topic"), "name")
    partitions: dict[int, PartitionInfo] = {}
    for p in _list(_get(body, "partitions", name), name):
        pid = _int(_get(p, "partition", name), f"{name}.partition")
        where = f"{name}-{pid}"
        partitions[pid] = PartitionInfo(
            _ids(_get(p, "replicas", where), f"{where}.replicas"),
            _ids(p.get("adding_replicas", []), f"{where}.adding_replicas"),
        )
    return partitions


# --- requests --------------------------------------------------------------------------------------


def cancel_request(partitions: Iterable[TopicPartition]) -> dict[str, Any]:
    """AlterPartitionReassignments with ``replicas: null`` for each partition (Kafka's --cancel)."""
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for topic, partition in sorted(partitions):
        by_topic.setdefault(topic, []).append({"partition": partition, "replicas": None})
    return {"topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()]}

"""An agent's report of its replicas (``GET /replicas``): what the controller's progress, the
log dirs and the batches' sizes read. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reassignd.control.wire import WireError, read_bool, read_int, read_list, read_obj, read_str


@dataclass(frozen=True, slots=True)
class ReplicaInfo:
    """One entry of ``GET /replicas``."""

    topic: str
    partition: int
    leader: bool
    log_end_offset: int
    lag_bytes: int
    fetch_bytes_per_s: float
    in_isr: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "leader": self.leader,
            "log_end_offset": self.log_end_offset,
            "lag_bytes": self.lag_bytes,
            "fetch_bytes_per_s": self.fetch_bytes_per_s,
            "in_isr": self.in_isr,
        }

    @staticmethod
    def from_json(raw: Any) -> ReplicaInfo:
        obj = read_obj(raw, "replica")
        rate = obj.get("fetch_bytes_per_s")
        if not isinstance(rate, int | float) or isinstance(rate, bool):
            raise WireError("field 'fetch_bytes_per_s' must be a number")
        return ReplicaInfo(
            read_str(obj, "topic"),
            read_int(obj, "partition"),
            read_bool(obj, "leader"),
            read_int(obj, "log_end_offset"),
            read_int(obj, "lag_bytes"),
            float(rate),
            read_bool(obj, "in_isr"),
        )


@dataclass(frozen=True, slots=True)
class ReplicasReport:
    """``GET /replicas``: every replica the agent hosts (nothing it was told to delete), and how
    many full LeaderAndIsr sets it completed and stray replicas those deleted (since it started),
    and its replication rate (``replication_bytes_per_s``: its bandwidth per direction, absent from
    agents that predate it)."""

    broker_id: int
    replicas: tuple[ReplicaInfo, ...]
    full_requests_completed: int = 0
    stray_replicas_deleted: int = 0
    replication_bytes_per_s: float | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "broker_id": self.broker_id,
            "replicas": [r.to_json() for r in self.replicas],
            "full_requests_completed": self.full_requests_completed,
            "stray_replicas_deleted": self.stray_replicas_deleted,
        }
        if self.replication_bytes_per_s is not None:
            out["replication_bytes_per_s"] = self.replication_bytes_per_s
        return out

    @staticmethod
    def from_json(raw: Any) -> ReplicasReport:
        obj = read_obj(raw, "report")
        return ReplicasReport(
            read_int(obj, "broker_id"),
            tuple(ReplicaInfo.from_json(r) for r in read_list(obj, "replicas")),
            read_int(obj, "full_requests_completed") if "full_requests_completed" in obj else 0,
            read_int(obj, "stray_replicas_deleted") if "stray_replicas_deleted" in obj else 0,
            _rate(obj.get("replication_bytes_per_s")),
        )


def _rate(value: Any) -> float | None:
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
        raise WireError("field 'replication_bytes_per_s' must be a non-negative number")
    return float(value)

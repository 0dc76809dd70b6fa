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
    log_dir: str | None = None  # absent from an agent without --log-dirs (its one dir)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "topic": self.topic,
            "partition": self.partition,
            "leader": self.leader,
            "log_end_offset": self.log_end_offset,
            "lag_bytes": self.lag_bytes,
            "fetch_bytes_per_s": self.fetch_bytes_per_s,
            "in_isr": self.in_isr,
        }
        if self.log_dir is not None:
            out["log_dir"] = self.log_dir
        return out

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
            read_str(obj, "log_dir") if "log_dir" in obj else None,
        )


@dataclass(frozen=True, slots=True)
class FutureInfo:
    """A replica being moved into a log dir of the same broker (KIP-113's future replica): its
    size so far and its lag (the current replica's size minus what was copied)."""

    topic: str
    partition: int
    size_bytes: int
    lag_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "size_bytes": self.size_bytes,
            "lag_bytes": self.lag_bytes,
        }

    @staticmethod
    def from_json(raw: Any) -> FutureInfo:
        obj = read_obj(raw, "future replica")
        return FutureInfo(
            read_str(obj, "topic"),
            read_int(obj, "partition"),
            read_int(obj, "size_bytes"),
            read_int(obj, "lag_bytes"),
        )


@dataclass(frozen=True, slots=True)
class LogDirInfo:
    """One log dir of an agent with ``--log-dirs``: the bytes of its replicas (future ones
    included), its capacity and what is left of it (-1 both: no capacity given), the future
    replicas being written to it."""

    path: str
    size_bytes: int
    total_bytes: int
    usable_bytes: int
    futures: tuple[FutureInfo, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "size_bytes": self.size_bytes,
            "total_bytes": self.total_bytes,
            "usable_bytes": self.usable_bytes,
            "futures": [f.to_json() for f in self.futures],
        }

    @staticmethod
    def from_json(raw: Any) -> LogDirInfo:
        obj = read_obj(raw, "log dir")
        return LogDirInfo(
            read_str(obj, "path"),
            read_int(obj, "size_bytes"),
            read_int(obj, "total_bytes"),
            read_int(obj, "usable_bytes"),
            tuple(FutureInfo.from_json(f) for f in read_list(obj, "futures")),
        )


@dataclass(frozen=True, slots=True)
class ReplicasReport:
    """``GET /replicas``: every replica the agent hosts (nothing it was told to delete), and how
    many full LeaderAndIsr sets it completed and stray replicas those deleted (since it started),
    and its replication rate (``replication_bytes_per_s``: its bandwidth per direction, absent from
    agents that predate it), and its log dirs (``log_dirs``: only from an agent given ``--log-dirs``;
    then each replica names its dir)."""

    broker_id: int
    replicas: tuple[ReplicaInfo, ...]
    full_requests_completed: int = 0
    stray_replicas_deleted: int = 0
    replication_bytes_per_s: float | None = None
    log_dirs: tuple[LogDirInfo, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "broker_id": self.broker_id,
            "replicas": [r.to_json() for r in self.replicas],
            "full_requests_completed": self.full_requests_completed,
            "stray_replicas_deleted": self.stray_replicas_deleted,
        }
        if self.replication_bytes_per_s is not None:
            out["replication_bytes_per_s"] = self.replication_bytes_per_s
        if self.log_dirs is not None:
            out["log_dirs"] = [d.to_json() for d in self.log_dirs]
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
            tuple(LogDirInfo.from_json(d) for d in read_list(obj, "log_dirs")) if "log_dirs" in obj else None,
        )


def _rate(value: Any) -> float | None:
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
        raise WireError("field 'replication_bytes_per_s' must be a non-negative number")
    return float(value)

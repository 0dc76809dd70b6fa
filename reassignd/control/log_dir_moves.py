"""Moving replicas between the log dirs of one broker (KIP-113), as the Kafka listener asks a
broker agent: ``POST /log-dirs/alter`` on its CONTROL endpoint. Pure.

Kafka's AlterReplicaLogDirs goes straight to the broker and touches no znode, so this request
comes from whoever serves AlterReplicaLogDirs (the listener, and the HTTP API's
``POST /v1/log-dirs/moves``) directly, not through the controller's queue. An agent without
``--log-dirs`` has one dir: a move to it is a no-op. Each replica gets Kafka's error code: NONE,
LOG_DIR_NOT_FOUND (the broker has no such dir), REPLICA_NOT_AVAILABLE (the broker does not host
it) or KAFKA_STORAGE_ERROR (the replica does not fit in the dir's free capacity; the result's
``error_message`` says so).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reassignd.control.wire import read_int, read_list, read_obj, read_str

ALTER_LOG_DIRS_PATH = "/log-dirs/alter"


def single_log_dir(broker_id: int) -> str:
    """The name the Kafka listener gives the one log dir of an agent without ``--log-dirs`` (the
    agent takes it, and ``/sim``, as its dir)."""
    return f"/sim/broker-{broker_id}"


REPLICA_NOT_AVAILABLE = 9
KAFKA_STORAGE_ERROR = 56
LOG_DIR_NOT_FOUND = 57


@dataclass(frozen=True, slots=True)
class LogDirMove:
    topic: str
    partition: int
    log_dir: str

    def to_json(self) -> dict[str, Any]:
        return {"topic": self.topic, "partition": self.partition, "log_dir": self.log_dir}

    @staticmethod
    def from_json(raw: Any) -> LogDirMove:
        obj = read_obj(raw, "move")
        return LogDirMove(read_str(obj, "topic"), read_int(obj, "partition"), read_str(obj, "log_dir"))


@dataclass(frozen=True, slots=True)
class AlterLogDirsRequest:
    moves: tuple[LogDirMove, ...]

    def to_json(self) -> dict[str, Any]:
        return {"moves": [m.to_json() for m in self.moves]}

    @staticmethod
    def from_json(raw: Any) -> AlterLogDirsRequest:
        obj = read_obj(raw, "request")
        return AlterLogDirsRequest(tuple(LogDirMove.from_json(m) for m in read_list(obj, "moves")))


@dataclass(frozen=True, slots=True)
class AgentLogDirMoveResult:
    topic: str
    partition: int
    error_code: int
    # why the agent refused (KAFKA_STORAGE_ERROR: no room in the dir); absent when it has no word
    error_message: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "topic": self.topic,
            "partition": self.partition,
            "error_code": self.error_code,
        }
        if self.error_message is not None:
            out["error_message"] = self.error_message
        return out

    @staticmethod
    def from_json(raw: Any) -> AgentLogDirMoveResult:
        obj = read_obj(raw, "result")
        return AgentLogDirMoveResult(
            read_str(obj, "topic"),
            read_int(obj, "partition"),
            read_int(obj, "error_code"),
            read_str(obj, "error_message") if "error_message" in obj else None,
        )


@dataclass(frozen=True, slots=True)
class AlterLogDirsResponse:
    results: tuple[AgentLogDirMoveResult, ...]

    def to_json(self) -> dict[str, Any]:
        return {"results": [r.to_json() for r in self.results]}

    @staticmethod
    def from_json(raw: Any) -> AlterLogDirsResponse:
        obj = read_obj(raw, "response")
        return AlterLogDirsResponse(
            tuple(AgentLogDirMoveResult.from_json(r) for r in read_list(obj, "results"))
        )

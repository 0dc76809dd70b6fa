"""The HTTP API's answers about the batch executor: ``POST /v1/batches``, ``GET /v1/batches``,
``GET /v1/batches/{batch_id}`` and the batch controls (pause, resume, stop, rollback). Pure."""

from __future__ import annotations

from typing import Annotated

import msgspec

from reassignd.contracts.errors import PartitionId
from reassignd.contracts.reassignments import TopicPartitionResult

Ids = tuple[int, ...]

BATCH_STATES = ("pending", "running", "paused", "completed", "stopped", "rolled_back", "failed")

_DATE_TIME = msgspec.Meta(extra_json_schema={"format": "date-time"})
DateTime = Annotated[str, _DATE_TIME] | None


class AdaptiveBounds(msgspec.Struct, frozen=True):
    """Bounds of every broker's cap of moves (adaptive concurrency)."""

    min: int
    max: int


class BatchLimits(msgspec.Struct, frozen=True):
    moves_per_broker: int
    moves_in_cluster: int
    leader_moves_per_broker: int
    adaptive: AdaptiveBounds | None


class MoveCounts(msgspec.Struct, frozen=True):
    """The batch's moves by state."""

    pending: int
    running: int
    completed: int
    cancelled: int
    failed: int


class RunningMove(msgspec.Struct, frozen=True):
    topic: str
    partition: PartitionId
    original_replicas: Ids
    target_replicas: Ids
    started_at: DateTime
    bytes_done: int
    bytes_total: int
    bytes_per_s: int
    stuck: bool


class StuckPartition(msgspec.Struct, frozen=True):
    topic: str
    partition: PartitionId


class Throttles(msgspec.Struct, frozen=True):
    brokers: Ids
    topics: tuple[str, ...]


class _BatchHead(msgspec.Struct, frozen=True, kw_only=True):
    """The fields every batch answer opens with (``BatchSummary``, ``BatchStatus``); the rest follow
    in each, in the order the server writes them (``running``, the full answer's only extra field,
    sits between ``throttle_bytes_per_s`` and ``stuck``)."""

    batch_id: str
    plan_id: str | None
    owner: Annotated[
        str | None, msgspec.Meta(description="self-healing for the batches self-healing submits")
    ]
    state: Annotated[str, msgspec.Meta(extra_json_schema={"enum": list(BATCH_STATES)})]
    priority: int
    created_at: DateTime
    updated_at: DateTime
    counts: MoveCounts
    bytes_total: int
    bytes_done: int
    bytes_per_s: int
    eta_s: int | None
    limits: BatchLimits
    broker_caps: Annotated[
        dict[str, int],
        msgspec.Meta(
            description="adaptive concurrency: the cap of each broker (by id) an adjustment moved "
            "from the initial one"
        ),
    ]
    throttle_bytes_per_s: int | None


class BatchSummary(_BatchHead, frozen=True, kw_only=True):
    """A batch in the list: its status without its moves in flight (running)."""

    stuck: tuple[StuckPartition, ...]
    throttles: Throttles
    rollback_of: str | None
    rollback_batch_id: str | None


class BatchStatus(_BatchHead, frozen=True, kw_only=True):
    """A batch's status with its moves in flight (running): describe, the controls, a submission."""

    running: tuple[RunningMove, ...]
    stuck: tuple[StuckPartition, ...]
    throttles: Throttles
    rollback_of: str | None
    rollback_batch_id: str | None


# What ``admin batch`` and the feeder read of either answer.
AnyBatchStatus = BatchSummary | BatchStatus


class SubmitBatchResponse(msgspec.Struct, frozen=True):
    batch: BatchStatus
    partitions: tuple[TopicPartitionResult, ...]
    created: Annotated[bool, msgspec.Meta(description="false: the same id and body were submitted before")]


class Batches(msgspec.Struct, frozen=True):
    """``GET /v1/batches``: oldest first (then by id)."""

    batches: tuple[BatchSummary, ...]

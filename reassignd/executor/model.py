"""A batch of moves and everything the executor records about it. Pure values.

A :class:`BatchSpec` is what a client submitted, with the controller's defaults filled in; it never
changes. A :class:`Batch` is the spec plus what became of it: one :class:`BatchMove` per accepted
partition, one :class:`SubmitRefusal` per refused one, the batch's state, and the throttle values it
replaced. Every change is a new value (``dataclasses.replace``), made by the functions of
``submit.py`` and ``lifecycle.py``.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from reassignd.topic_partition import Replicas, TopicPartition

# What a batch replaced, per broker or topic: config key -> its value before (None: it was unset).
ThrottleValues = Mapping[str, str | None]

# Longer messages are cut (a 1,000-broker "live broker list" stays out of the journal): at most
# this many bytes once written as a JSON string.
ERROR_MESSAGE_MAX_BYTES = 320
PLAN_ID_MAX = 1000
_BATCH_ID = re.compile(r"[A-Za-z0-9._-]{1,249}")  # a znode name, like a topic's


class BatchState(enum.StrEnum):
    PENDING = "pending"  # accepted, nothing started yet
    RUNNING = "running"
    PAUSED = "paused"  # starts nothing new; moves in flight go on
    COMPLETED = "completed"
    STOPPED = "stopped"  # pending dropped, running reverted
    ROLLED_BACK = "rolled_back"  # stopped, and a reverse batch was created
    FAILED = "failed"  # every move ended, at least one failed

    @property
    def unfinished(self) -> bool:
        return self in _UNFINISHED


_UNFINISHED = frozenset({BatchState.PENDING, BatchState.RUNNING, BatchState.PAUSED})


class BatchMoveState(enum.StrEnum):
    """A batch move as its batch's status, metrics and journal name it: derived, not kept
    (:attr:`BatchMove.state`). ``running`` is a move the batch started that has not ended: its
    partition moves (the partition's ``Move`` record names the batch, ``Move.batch``) or, once at
    its target, its replicas move between log dirs."""

    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    FAILED = "failed"


class BatchMoveEnd(enum.StrEnum):
    """How a batch move ended (its journal's ``state``)."""

    COMPLETED = "completed"
    CANCELLED = "cancelled"
    FAILED = "failed"


_ENDED_STATE = {end: BatchMoveState(end.value) for end in BatchMoveEnd}


class Strategy(enum.StrEnum):
    """Cruise Control's replica movement strategies, chained in the order given."""

    SMALL_FIRST = "small_first"
    LARGE_FIRST = "large_first"
    POSTPONE_UNDER_REPLICATED = "postpone_under_replicated"
    SPREAD_BROKERS = "spread_brokers"  # round-robin across destination brokers


@dataclass(frozen=True, slots=True)
class Adaptive:
    """Adaptive concurrency (``limits.adaptive``): each broker's cap of moves, within these
    bounds, raised while the cluster is healthy and halved when it is not (``adaptive.py``)."""

    min: int
    max: int


@dataclass(frozen=True, slots=True)
class Limits:
    """Caps a batch starts its moves under, counted over every move in flight in the cluster."""

    moves_per_broker: int  # incoming (AR) and, separately, outgoing (RR) moves per broker
    moves_in_cluster: int
    leader_moves_per_broker: int
    adaptive: Adaptive | None = None  # None: moves_per_broker holds for every broker

    @property
    def initial_cap(self) -> int:
        """Every broker's cap until an adjustment changes it: ``moves_per_broker``, within the
        adaptive bounds."""
        if self.adaptive is None:
            return self.moves_per_broker
        return min(max(self.moves_per_broker, self.adaptive.min), self.adaptive.max)


ANY_LOG_DIR = "any"  # Kafka's plan format: a replica not pinned to a log dir
LOG_DIR_MAX = 255  # bytes of a log dir's path, at most (a journal entry's worst case counts on it)

LogDirs = tuple[str, ...]  # one per replica of a replica list, ANY_LOG_DIR where not pinned


def pinned_dirs(replicas: Replicas, log_dirs: LogDirs | None) -> dict[int, str]:
    """The replicas pinned to a log dir: broker -> dir (``"any"`` and None pin nothing)."""
    if log_dirs is None:
        return {}
    return {b: d for b, d in zip(replicas, log_dirs, strict=True) if d != ANY_LOG_DIR}


@dataclass(frozen=True, slots=True)
class PartitionSpec:
    topic: str
    partition: int
    replicas: Replicas  # the target
    expected_replicas: Replicas | None = None  # what the plan assumed, in order
    log_dirs: LogDirs | None = None  # JBOD: the dir of each target replica (KIP-113), if any pinned

    @property
    def tp(self) -> TopicPartition:
        return (self.topic, self.partition)


@dataclass(frozen=True, slots=True)
class BatchSpec:
    batch_id: str
    partitions: tuple[PartitionSpec, ...]
    limits: Limits
    plan_id: str | None = None
    priority: int = 0  # higher runs first
    throttle_bytes_per_s: int | None = None
    strategy: tuple[Strategy, ...] = ()
    owner: str | None = None  # who submitted it when not a client: "self-healing"


OWNER_MAX = 64


def _limits_error(limits: Limits) -> str | None:
    for name in ("moves_per_broker", "moves_in_cluster", "leader_moves_per_broker"):
        if getattr(limits, name) < 1:
            return f"limits.{name} must be at least 1"
    if (adaptive := limits.adaptive) is not None:
        if adaptive.min < 1:
            return "limits.adaptive.min must be at least 1"
        if adaptive.max < adaptive.min:
            return (
                f"limits.adaptive.max ({adaptive.max}) must be at least limits.adaptive.min ({adaptive.min})"
            )
    return None


def spec_error(spec: BatchSpec) -> str | None:
    """Why a spec cannot be a batch at all (HTTP 400, nothing written), or None."""
    if not _BATCH_ID.fullmatch(spec.batch_id) or spec.batch_id in (".", ".."):
        return f"batch_id {spec.batch_id!r} must be 1-249 characters of A-Z, a-z, 0-9, '.', '_', '-'"
    if (reason := _limits_error(spec.limits)) is not None:
        return reason
    if spec.owner is not None and not 0 < len(spec.owner) <= OWNER_MAX:
        return f"owner must be 1-{OWNER_MAX} characters"
    if spec.plan_id is not None and len(spec.plan_id) > PLAN_ID_MAX:
        return f"plan_id must be at most {PLAN_ID_MAX} characters"
    if spec.throttle_bytes_per_s is not None and spec.throttle_bytes_per_s < 1:
        return "throttle_bytes_per_s must be at least 1"
    if len(set(spec.strategy)) != len(spec.strategy):
        return "strategy names a strategy twice"
    if {Strategy.SMALL_FIRST, Strategy.LARGE_FIRST} <= set(spec.strategy):
        return "strategy cannot hold both small_first and large_first"
    seen: set[TopicPartition] = set()
    for p in spec.partitions:
        if p.log_dirs is not None and (reason := _log_dirs_error(p)) is not None:
            return reason
        if p.tp in seen:
            return f"partition {p.topic}-{p.partition} is listed twice"
        seen.add(p.tp)
    return None


def _log_dirs_error(p: PartitionSpec) -> str | None:
    assert p.log_dirs is not None
    where = f"partition {p.topic}-{p.partition}"
    if len(p.log_dirs) != len(p.replicas):
        return f"{where}: log_dirs names {len(p.log_dirs)} dirs for {len(p.replicas)} replicas"
    for d in p.log_dirs:
        if (reason := log_dir_error(where, d)) is not None:
            return reason
    return None


def log_dir_error(where: str, d: str) -> str | None:
    """Why ``d`` cannot be a log dir of a batch's partition (``where``: the partition), or None."""
    if d != ANY_LOG_DIR and not d.startswith("/"):
        return f"{where}: log_dirs entries are absolute paths or 'any', got {d[:80]!r}"
    if len(d.encode()) > LOG_DIR_MAX:
        return f"{where}: a log dir is at most {LOG_DIR_MAX} bytes in UTF-8, got {len(d.encode())}"
    return None


def canonical_body(spec: BatchSpec) -> tuple[object, ...]:
    """What makes two submissions of one ``batch_id`` the same batch: every field of the spec but
    the id, partitions in (topic, partition) order (their order in the body does not count),
    replica lists and strategies in their own order (it does). An omitted optional field and
    its default are equal because the spec holds the resolved value."""
    partitions = tuple(
        sorted(
            (p.topic, p.partition, p.replicas, p.expected_replicas, p.log_dirs or None)
            for p in spec.partitions
        )
    )
    return (
        spec.plan_id,
        spec.priority,
        partitions,
        spec.throttle_bytes_per_s,
        spec.limits,
        spec.strategy,
        spec.owner,
    )


def _json_bytes(text: str) -> int:
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def capped(message: str | None) -> str | None:
    """``message`` cut to fit ERROR_MESSAGE_MAX_BYTES as a JSON string, marked with ``...``."""
    if message is None or _json_bytes(message) <= ERROR_MESSAGE_MAX_BYTES:
        return message
    cut = message[: ERROR_MESSAGE_MAX_BYTES // 2]
    while _json_bytes(cut) + 3 > ERROR_MESSAGE_MAX_BYTES:
        cut = cut[: len(cut) * 3 // 4]
    return cut + "..."


@dataclass(frozen=True, slots=True)
class BatchMove:
    """One accepted partition: what the batch needs of it, no lifecycle beside its partition's
    ``Move``. ``spec`` is its entry in the batch's spec (the same value): its target and the log
    dirs it pins are read there, not copied (the journal writes them once, in that entry).
    ``origins`` are the replicas before the move, in their order (the journal's ``previous``):
    recorded at submission, refreshed when the move starts; cancel, stop and rollback restore
    them. ``started_at_ms`` (the journal's ``started_ms``) is set when the batch starts the move
    — journaled before its topic znode is written — and ``ended`` says how it ended;
    :attr:`state` is derived from the two."""

    spec: PartitionSpec
    origins: Replicas
    ended: BatchMoveEnd | None = None  # None: pending (not started) or running (started)
    started_at_ms: int | None = None
    finished_ms: int | None = None
    error_message: str | None = None  # why it failed or was cancelled, when not by the batch
    size_bytes: int | None = None  # the partition's size when submitted (its leader's report), if known
    # JBOD: the dirs the replicas were in when the batch asked their agents to move them to the
    # spec's (for a stop or rollback), and when it asked (journaled before the agents are asked:
    # a new controller checks their reports, then asks)
    original_log_dirs: LogDirs | None = None
    dirs_asked_ms: int | None = None

    @property
    def state(self) -> BatchMoveState:
        if self.ended is not None:
            return _ENDED_STATE[self.ended]
        return BatchMoveState.PENDING if self.started_at_ms is None else BatchMoveState.RUNNING

    @property
    def target(self) -> Replicas:
        """TRS: the spec's replicas."""
        return self.spec.replicas

    @property
    def pinned(self) -> dict[int, str]:
        """The target replicas the spec pins to a log dir: broker -> dir."""
        return pinned_dirs(self.spec.replicas, self.spec.log_dirs)


@dataclass(frozen=True, slots=True)
class SubmitRefusal:
    """A partition refused at submission: its error code and message."""

    error_code: int
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class Batch:
    spec: BatchSpec
    state: BatchState
    created_ms: int
    updated_ms: int
    moves: Mapping[TopicPartition, BatchMove]  # accepted partitions, in the spec's order
    refusals: Mapping[TopicPartition, SubmitRefusal] = field(default_factory=dict)
    chunk_size: int = 1  # partitions per journal chunk, fixed at submission (journal.py)
    broker_throttles: Mapping[int, ThrottleValues] = field(default_factory=dict)
    topic_throttles: Mapping[str, ThrottleValues] = field(default_factory=dict)
    rollback_of: str | None = None  # the batch this one reverses
    rollback_batch_id: str | None = None  # the batch that reverses this one
    # adaptive concurrency: the brokers whose cap an adjustment moved from the initial one
    broker_caps: Mapping[int, int] = field(default_factory=dict)

    @property
    def batch_id(self) -> str:
        return self.spec.batch_id

    def in_state(self, state: BatchMoveState) -> Iterator[tuple[TopicPartition, BatchMove]]:
        return ((tp, m) for tp, m in self.moves.items() if m.state is state)

    def cap(self, broker: int) -> int:
        """The broker's cap of this batch's moves (``limits.moves_per_broker`` unless adaptive
        concurrency moved it)."""
        return self.broker_caps.get(broker, self.spec.limits.initial_cap)

    def counts(self) -> dict[BatchMoveState, int]:
        counts = dict.fromkeys(BatchMoveState, 0)
        for move in self.moves.values():
            counts[move.state] += 1
        return counts

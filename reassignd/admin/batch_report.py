"""``reassignd admin batch``: the batch endpoints' JSON as the client reads it, and the lines it
prints. Pure.

Each ``decode_*`` takes a decoded JSON body (the README's "Batches") and returns typed values, or
raises :class:`~reassignd.api_client.errors.ResponseError` (one line) when the body is not the
documented shape. The lines reuse ``admin reassign``'s spelling of partitions, broker lists,
bytes and progress (``orders-0``, ``4,5,6``, ``progress: 31% (125.0 MiB of 400.0 MiB), ...``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reassignd.admin.report import bytes_text, progress_text, result_text
from reassignd.api_client.errors import ResponseError
from reassignd.api_client.shapes import PartitionResult, Progress
from reassignd.errors import error_name
from reassignd.plan_format import ids_text, tp_text
from reassignd.strict_json import Reader
from reassignd.topic_partition import Replicas, TopicPartition

UNFINISHED = ("pending", "running", "paused")
MOVE_STATES = ("pending", "running", "completed", "cancelled", "failed")
NO_BATCHES = "No batches."


@dataclass(frozen=True, slots=True)
class RunningMove:
    tp: TopicPartition
    original: Replicas
    target: Replicas
    started_at: str | None
    bytes_done: int
    bytes_total: int
    bytes_per_s: int
    stuck: bool


@dataclass(frozen=True, slots=True)
class BatchStatus:
    batch_id: str
    plan_id: str | None
    state: str
    priority: int
    created_at: str | None
    updated_at: str | None
    counts: dict[str, int]
    bytes_total: int
    bytes_done: int
    bytes_per_s: int
    eta_s: int | None
    limits: dict[str, int]
    throttle_bytes_per_s: int | None
    running: tuple[RunningMove, ...] | None  # None: not shown (GET /v1/batches)
    stuck: tuple[TopicPartition, ...]
    throttled_brokers: tuple[int, ...]
    throttled_topics: tuple[str, ...]
    rollback_of: str | None
    rollback_batch_id: str | None
    adaptive: tuple[int, int] | None = None  # limits.adaptive: (min, max)
    broker_caps: dict[int, int] | None = None  # adaptive concurrency's caps, where moved
    owner: str | None = None


@dataclass(frozen=True, slots=True)
class Submitted:
    batch: BatchStatus
    partitions: tuple[PartitionResult, ...]
    created: bool

    @property
    def refused(self) -> list[PartitionResult]:
        return [p for p in self.partitions if not p.ok]


# --- typed access (strict_json's readers, refusing with ResponseError) ----------------------------------------------------------------------------------


_READ = Reader(ResponseError, "batch")


def _get(obj: Any, key: str, where: str) -> Any:
    return _READ.member(obj, key, where)


def _int(value: Any, where: str, *, nullable: bool = False) -> Any:
    return None if value is None and nullable else _READ.integer(value, where)


def _str(value: Any, where: str, *, nullable: bool = False) -> Any:
    return None if value is None and nullable else _READ.text(value, where)


def _list(value: Any, where: str) -> list[Any]:
    return _READ.array(value, where)


def _ids(value: Any, where: str) -> Replicas:
    return _READ.integers(value, where)


def _tp(obj: Any, where: str) -> TopicPartition:
    return (_str(_get(obj, "topic", where), f"{where}.topic"), _int(_get(obj, "partition", where), where))


def _running(obj: Any, where: str) -> RunningMove:
    def field(key: str) -> Any:
        return _get(obj, key, where)

    stuck = field("stuck")
    if not isinstance(stuck, bool):
        raise ResponseError(f"{where}.stuck: expected a boolean")
    return RunningMove(
        tp=_tp(obj, where),
        original=_ids(field("original_replicas"), f"{where}.original_replicas"),
        target=_ids(field("target_replicas"), f"{where}.target_replicas"),
        started_at=_str(field("started_at"), f"{where}.started_at", nullable=True),
        bytes_done=_int(field("bytes_done"), f"{where}.bytes_done"),
        bytes_total=_int(field("bytes_total"), f"{where}.bytes_total"),
        bytes_per_s=_int(field("bytes_per_s"), f"{where}.bytes_per_s"),
        stuck=stuck,
    )


def decode_status(doc: Any, where: str = "batch") -> BatchStatus:
    def field(key: str) -> Any:
        return _get(doc, key, where)

    counts_doc, limits_doc, throttles = field("counts"), field("limits"), field("throttles")
    running = None
    if isinstance(doc, dict) and "running" in doc:
        running = tuple(
            _running(r, f"{where}.running[{i}]")
            for i, r in enumerate(_list(doc["running"], f"{where}.running"))
        )
    return BatchStatus(
        batch_id=_str(field("batch_id"), f"{where}.batch_id"),
        plan_id=_str(field("plan_id"), f"{where}.plan_id", nullable=True),
        state=_str(field("state"), f"{where}.state"),
        priority=_int(field("priority"), f"{where}.priority"),
        created_at=_str(field("created_at"), f"{where}.created_at", nullable=True),
        updated_at=_str(field("updated_at"), f"{where}.updated_at", nullable=True),
        counts={s: _int(_get(counts_doc, s, f"{where}.counts"), f"{where}.counts.{s}") for s in MOVE_STATES},
        bytes_total=_int(field("bytes_total"), f"{where}.bytes_total"),
        bytes_done=_int(field("bytes_done"), f"{where}.bytes_done"),
        bytes_per_s=_int(field("bytes_per_s"), f"{where}.bytes_per_s"),
        eta_s=_int(field("eta_s"), f"{where}.eta_s", nullable=True),
        limits={k: _int(v, f"{where}.limits.{k}") for k, v in dict(limits_doc).items() if k != "adaptive"}
        if isinstance(limits_doc, dict)
        else {},
        throttle_bytes_per_s=_int(
            field("throttle_bytes_per_s"), f"{where}.throttle_bytes_per_s", nullable=True
        ),
        running=running,
        stuck=tuple(
            _tp(s, f"{where}.stuck[{i}]") for i, s in enumerate(_list(field("stuck"), f"{where}.stuck"))
        ),
        throttled_brokers=_ids(
            _get(throttles, "brokers", f"{where}.throttles"), f"{where}.throttles.brokers"
        ),
        throttled_topics=tuple(
            _str(t, f"{where}.throttles.topics")
            for t in _list(_get(throttles, "topics", f"{where}.throttles"), f"{where}.throttles.topics")
        ),
        rollback_of=_str(doc.get("rollback_of"), f"{where}.rollback_of", nullable=True),
        rollback_batch_id=_str(doc.get("rollback_batch_id"), f"{where}.rollback_batch_id", nullable=True),
        adaptive=_adaptive(limits_doc.get("adaptive") if isinstance(limits_doc, dict) else None, where),
        broker_caps=_caps(doc.get("broker_caps"), f"{where}.broker_caps"),
        owner=_str(doc.get("owner"), f"{where}.owner", nullable=True),
    )


def _adaptive(value: Any, where: str) -> tuple[int, int] | None:
    if value is None:
        return None
    at = f"{where}.limits.adaptive"
    return (_int(_get(value, "min", at), f"{at}.min"), _int(_get(value, "max", at), f"{at}.max"))


def _caps(value: Any, where: str) -> dict[int, int] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(k, str) and k.isdigit() for k in value):
        raise ResponseError(f"{where}: expected an object of broker ids")
    return {int(k): _int(v, f"{where}.{k}") for k, v in value.items()}


def decode_list(doc: Any) -> list[BatchStatus]:
    listed = _list(_get(doc, "batches", "answer"), "batches")
    return [decode_status(b, f"batches[{i}]") for i, b in enumerate(listed)]


def _outcome(obj: Any, where: str) -> PartitionResult:
    code = _int(_get(obj, "error_code", where), f"{where}.error_code")
    name = obj.get("error_name") if isinstance(obj.get("error_name"), str) else error_name(code)
    message = obj.get("error_message")
    return PartitionResult(_tp(obj, where), code, name, message if isinstance(message, str) else None)


def decode_submitted(doc: Any) -> Submitted:
    partitions = _list(_get(doc, "partitions", "answer"), "partitions")
    created = doc.get("created", True)
    return Submitted(
        batch=decode_status(_get(doc, "batch", "answer")),
        partitions=tuple(_outcome(p, f"partitions[{i}]") for i, p in enumerate(partitions)),
        created=created is not False,
    )


# --- lines -----------------------------------------------------------------------------------------


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def state_text(state: str) -> str:
    return state.replace("_", " ")


def counts_text(counts: dict[str, int], *, all_states: bool = False) -> str:
    """``120 pending, 10 running, 70 completed`` (states with no move left out unless asked)."""
    shown = [f"{counts.get(s, 0)} {s}" for s in MOVE_STATES if all_states or counts.get(s, 0)]
    return ", ".join(shown) if shown else "none"


def batch_progress_text(status: BatchStatus) -> str | None:
    """``progress: 50% (50.0 GiB of 100.0 GiB), 500.0 MiB/s, about 102 s left.``; rate and time
    left only while the batch is unfinished; None while no size is known."""
    if status.bytes_total <= 0:
        return None
    unfinished = status.state in UNFINISHED
    rate = status.bytes_per_s if unfinished and status.bytes_per_s > 0 else None
    eta = status.eta_s if unfinished and rate is not None else None
    return progress_text(Progress(status.bytes_total, status.bytes_done, rate, eta))


def list_line(status: BatchStatus) -> str:
    """``plan-7f3a-0001: running. moves: 120 pending, 10 running. progress: ... 2 stuck.``"""
    line = f"{status.batch_id}: {state_text(status.state)}. moves: {counts_text(status.counts)}."
    if (progress := batch_progress_text(status)) is not None:
        line += f" {progress}"
    if status.stuck:
        line += f" {len(status.stuck)} stuck."
    return line


def list_lines(statuses: Sequence[BatchStatus]) -> list[str]:
    return [list_line(s) for s in statuses] if statuses else [NO_BATCHES]


def limits_text(status: BatchStatus) -> str:
    limits = status.limits
    parts = [
        f"{_n(limits.get('moves_per_broker', 0), 'move')} per broker",
        f"{limits.get('moves_in_cluster', 0)} in the cluster",
        f"{_n(limits.get('leader_moves_per_broker', 0), 'leader move')} per broker",
    ]
    text = "limits: " + ", ".join(parts) + "."
    if status.adaptive is not None:
        low, high = status.adaptive
        text += f" adaptive: {low} to {high} moves per broker."
        if status.broker_caps:
            caps = ", ".join(f"{b}: {c}" for b, c in sorted(status.broker_caps.items()))
            text += f" caps now: {caps}."
    if status.throttle_bytes_per_s is not None:
        text += f" throttle: {bytes_text(status.throttle_bytes_per_s)}/s."
    return text


def running_line(move: RunningMove) -> str:
    """``orders-3: 1,2,3 -> 4,5,6. progress: 50% (1.0 GiB of 2.0 GiB), 3.0 MiB/s. STUCK``"""
    line = f"{tp_text(move.tp)}: {ids_text(move.original)} -> {ids_text(move.target)}."
    if move.started_at is not None:
        line += f" started {move.started_at}."
    if move.bytes_total > 0:
        rate = move.bytes_per_s
        left = move.bytes_total - move.bytes_done
        eta = -(-left // rate) if rate > 0 else None
        line += " " + progress_text(Progress(move.bytes_total, move.bytes_done, rate, eta))
    if move.stuck:
        line += " STUCK"
    return line


def describe_lines(status: BatchStatus) -> list[str]:
    about = [f"priority {status.priority}"]
    if status.plan_id is not None:
        about.insert(0, f"plan {status.plan_id}")
    if status.owner is not None:
        about.insert(0, f"owner {status.owner}")
    lines = [
        f"Batch {status.batch_id}: {state_text(status.state)} ({', '.join(about)}).",
        f"created {status.created_at or 'unknown'}, updated {status.updated_at or 'unknown'}.",
        f"moves: {counts_text(status.counts, all_states=True)}.",
    ]
    if (progress := batch_progress_text(status)) is not None:
        lines.append(progress)
    lines.append(limits_text(status))
    if status.throttled_brokers or status.throttled_topics:
        brokers = ids_text(status.throttled_brokers) or "none"
        topics = ",".join(status.throttled_topics) or "none"
        lines.append(f"throttles set on brokers: {brokers}; topics: {topics}.")
    if status.rollback_of is not None:
        lines.append(f"rolls back batch {status.rollback_of}.")
    if status.rollback_batch_id is not None:
        lines.append(f"rolled back by batch {status.rollback_batch_id}.")
    if status.running:
        lines.append("Running moves:")
        lines.extend(running_line(m) for m in status.running)
    if status.stuck:
        lines.append(f"Stuck moves: {','.join(tp_text(tp) for tp in status.stuck)}")
    return lines


def submitted_lines(answer: Submitted) -> list[str]:
    b = answer.batch
    refused = answer.refused
    accepted = len(answer.partitions) - len(refused)
    if answer.created:
        head = f"Submitted batch {b.batch_id}: {_n(accepted, 'partition')} accepted"
    else:
        head = f"Batch {b.batch_id} was submitted before with this body: {_n(accepted, 'partition')} accepted"
    head += f", {len(refused)} refused. state: {state_text(b.state)}."
    lines = [head]
    if refused:
        lines.append(f"Refused partition{'' if len(refused) == 1 else 's'} of batch {b.batch_id}:")
        lines.extend(result_text(r) for r in sorted(refused, key=lambda r: r.tp))
    return lines


def control_line(action: str, status: BatchStatus) -> str:
    """What a pause, resume, stop or rollback left: the batch's state, and for a rollback the
    reverse batch."""
    line = f"Batch {status.batch_id}: {state_text(status.state)}. moves: {counts_text(status.counts)}."
    if action == "rollback" and status.rollback_batch_id is not None:
        line += f" Batch {status.rollback_batch_id} moves its completed partitions back."
    return line

"""``reassignd admin batch``: the lines it prints from the batch endpoints' answers (the
contract's structs, ``reassignd.contracts.batches``, as the API client decodes them). Pure.

The lines reuse ``admin reassign``'s spelling of partitions, broker lists, bytes and progress
(``orders-0``, ``4,5,6``, ``progress: 31% (125.0 MiB of 400.0 MiB), ...``).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from reassignd.admin.report import RefusedPartition, bytes_text, progress_text, result_text
from reassignd.contracts.batches import AnyBatchStatus, BatchStatus, RunningMove, SubmitBatchResponse
from reassignd.plan_format import ids_text, tp_text
from reassignd.topic_partition import TopicPartition

UNFINISHED = ("pending", "running", "paused")
MOVE_STATES = ("pending", "running", "completed", "cancelled", "failed")
NO_BATCHES = "No batches."


def refused(answer: SubmitBatchResponse) -> list[RefusedPartition]:
    """The partitions the batch refused (each with its error)."""
    return [((p.topic, p.partition), p) for p in answer.partitions if not p.ok]


def _counts(status: AnyBatchStatus) -> dict[str, int]:
    return msgspec.structs.asdict(status.counts)


def _stuck(status: AnyBatchStatus) -> list[TopicPartition]:
    return [(s.topic, s.partition) for s in status.stuck]


# --- lines -----------------------------------------------------------------------------------------


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def state_text(state: str) -> str:
    return state.replace("_", " ")


def counts_text(counts: dict[str, int], *, all_states: bool = False) -> str:
    """``120 pending, 10 running, 70 completed`` (states with no move left out unless asked)."""
    shown = [f"{counts.get(s, 0)} {s}" for s in MOVE_STATES if all_states or counts.get(s, 0)]
    return ", ".join(shown) if shown else "none"


def batch_progress_text(status: AnyBatchStatus) -> str | None:
    """``progress: 50% (50.0 GiB of 100.0 GiB), 500.0 MiB/s, about 102 s left.``; rate and time
    left only while the batch is unfinished; None while no size is known."""
    if status.bytes_total <= 0:
        return None
    unfinished = status.state in UNFINISHED
    rate = status.bytes_per_s if unfinished and status.bytes_per_s > 0 else None
    eta = status.eta_s if unfinished and rate is not None else None
    return progress_text(status.bytes_total, status.bytes_done, rate, eta)


def list_line(status: AnyBatchStatus) -> str:
    """``plan-7f3a-0001: running. moves: 120 pending, 10 running. progress: ... 2 stuck.``"""
    line = f"{status.batch_id}: {state_text(status.state)}. moves: {counts_text(_counts(status))}."
    if (progress := batch_progress_text(status)) is not None:
        line += f" {progress}"
    if status.stuck:
        line += f" {len(status.stuck)} stuck."
    return line


def list_lines(statuses: Sequence[AnyBatchStatus]) -> list[str]:
    return [list_line(s) for s in statuses] if statuses else [NO_BATCHES]


def limits_text(status: AnyBatchStatus) -> str:
    limits = status.limits
    parts = [
        f"{_n(limits.moves_per_broker, 'move')} per broker",
        f"{limits.moves_in_cluster} in the cluster",
        f"{_n(limits.leader_moves_per_broker, 'leader move')} per broker",
    ]
    text = "limits: " + ", ".join(parts) + "."
    if limits.adaptive is not None:
        text += f" adaptive: {limits.adaptive.min} to {limits.adaptive.max} moves per broker."
        if status.broker_caps:
            by_broker = sorted((int(b), c) for b, c in status.broker_caps.items())
            caps = ", ".join(f"{b}: {c}" for b, c in by_broker)
            text += f" caps now: {caps}."
    if status.throttle_bytes_per_s is not None:
        text += f" throttle: {bytes_text(status.throttle_bytes_per_s)}/s."
    return text


def running_line(move: RunningMove) -> str:
    """``orders-3: 1,2,3 -> 4,5,6. progress: 50% (1.0 GiB of 2.0 GiB), 3.0 MiB/s. STUCK``"""
    tp = (move.topic, move.partition)
    line = f"{tp_text(tp)}: {ids_text(move.original_replicas)} -> {ids_text(move.target_replicas)}."
    if move.started_at is not None:
        line += f" started {move.started_at}."
    if move.bytes_total > 0:
        rate = move.bytes_per_s
        left = move.bytes_total - move.bytes_done
        eta = -(-left // rate) if rate > 0 else None
        line += " " + progress_text(move.bytes_total, move.bytes_done, rate, eta)
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
        f"moves: {counts_text(_counts(status), all_states=True)}.",
    ]
    if (progress := batch_progress_text(status)) is not None:
        lines.append(progress)
    lines.append(limits_text(status))
    if status.throttles.brokers or status.throttles.topics:
        brokers = ids_text(status.throttles.brokers) or "none"
        topics = ",".join(status.throttles.topics) or "none"
        lines.append(f"throttles set on brokers: {brokers}; topics: {topics}.")
    if status.rollback_of is not None:
        lines.append(f"rolls back batch {status.rollback_of}.")
    if status.rollback_batch_id is not None:
        lines.append(f"rolled back by batch {status.rollback_batch_id}.")
    if status.running:
        lines.append("Running moves:")
        lines.extend(running_line(m) for m in status.running)
    if status.stuck:
        lines.append(f"Stuck moves: {','.join(tp_text(tp) for tp in _stuck(status))}")
    return lines


def submitted_lines(answer: SubmitBatchResponse) -> list[str]:
    b = answer.batch
    refusals = refused(answer)
    accepted = len(answer.partitions) - len(refusals)
    if answer.created:
        head = f"Submitted batch {b.batch_id}: {_n(accepted, 'partition')} accepted"
    else:
        head = f"Batch {b.batch_id} was submitted before with this body: {_n(accepted, 'partition')} accepted"
    head += f", {len(refusals)} refused. state: {state_text(b.state)}."
    lines = [head]
    if refusals:
        lines.append(f"Refused partition{'' if len(refusals) == 1 else 's'} of batch {b.batch_id}:")
        lines.extend(result_text(tp, r) for tp, r in sorted(refusals, key=lambda f: f[0]))
    return lines


def control_line(action: str, status: BatchStatus) -> str:
    """What a pause, resume, stop or rollback left: the batch's state, and for a rollback the
    reverse batch."""
    line = f"Batch {status.batch_id}: {state_text(status.state)}. moves: {counts_text(_counts(status))}."
    if action == "rollback" and status.rollback_batch_id is not None:
        line += f" Batch {status.rollback_batch_id} moves its completed partitions back."
    return line

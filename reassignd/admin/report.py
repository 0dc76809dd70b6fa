"""What ``reassignd admin reassign`` prints: Kafka's ``kafka-reassign-partitions`` lines. Pure.

Where Kafka's tool has a line for something, the line is Kafka's (Kafka 3.x,
``ReassignPartitionsCommand``); reassignd adds lines only for what Kafka has no word for
(progress, partitions that were not moving, KIP-236's znodes).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from reassignd.admin.plan import plan_json
from reassignd.contracts.reassignments import Reassignment
from reassignd.plan_format import ids_text, tp_text
from reassignd.topic_partition import Replicas, TopicPartition
from reassignd.zk.admin_codec import LegacyReassignmentEntry

NONE_ACTIVE = "None of the specified partition reassignments are active."
NONE_FOUND = "No partition reassignments found."


def _s(items: Sequence[object]) -> str:
    return "" if len(items) == 1 else "s"


def _tps(tps: Iterable[TopicPartition]) -> str:
    return ",".join(tp_text(tp) for tp in sorted(tps))


# --- --execute and --additional --------------------------------------------------------------------


def rollback_text(current: Mapping[TopicPartition, Sequence[int]]) -> str:
    """Kafka prints this before it starts anything, so the operator can go back."""
    return (
        f"Current partition replica assignment\n\n{plan_json(current)}\n\n"
        "Save this to use as the --reassignment-json-file option during rollback"
    )


def started_line(tps: Sequence[TopicPartition]) -> str:
    return f"Successfully started partition reassignment{_s(tps)} for {_tps(tps)}"


def submitted_line(tps: Sequence[TopicPartition], path: str) -> str:
    return f"Successfully submitted partition reassignment{_s(tps)} for {_tps(tps)} in {path}"


class ErrorResult(Protocol):
    """A partition's error in an answer (``PartitionResult``, a batch's ``TopicPartitionResult``)."""

    @property
    def error_name(self) -> str: ...

    @property
    def error_message(self) -> str | None: ...


RefusedPartition = tuple[TopicPartition, ErrorResult]


def result_text(tp: TopicPartition, result: ErrorResult) -> str:
    """``orders-0: INVALID_REPLICA_ASSIGNMENT: Empty replica list ...`` (code name, then message)."""
    message = f": {result.error_message}" if result.error_message else ""
    return f"{tp_text(tp)}: {result.error_name}{message}"


def failed_lines(header: str, failed: Sequence[RefusedPartition]) -> list[str]:
    return [header, *(result_text(tp, r) for tp, r in sorted(failed, key=lambda f: f[0]))]


def execute_errors(failed: Sequence[RefusedPartition]) -> list[str]:
    return failed_lines("Error reassigning partition(s):", failed)


# --- --cancel and --cancel-all ---------------------------------------------------------------------


def cancelled_line(tps: Sequence[TopicPartition]) -> str:
    return f"Successfully cancelled partition reassignment{_s(tps)} for: {_tps(tps)}"


def not_moving_line(tps: Sequence[TopicPartition]) -> str:
    return f"No partition reassignment was in progress for: {_tps(tps)}"


def cancel_errors(failed: Sequence[RefusedPartition]) -> list[str]:
    return failed_lines(f"Error cancelling partition reassignment{_s(failed)} for:", failed)


# --- --verify --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class VerifyState:
    """Kafka's PartitionReassignmentState; ``current`` is None for a partition that does not exist."""

    tp: TopicPartition
    current: Replicas | None
    target: Replicas
    done: bool


def verify_states(
    targets: Mapping[TopicPartition, Replicas],
    moving: Mapping[TopicPartition, Reassignment],
    current: Mapping[TopicPartition, Replicas],
) -> list[VerifyState]:
    """As Kafka decides: a partition listed as being reassigned is in progress (whatever its
    target); any other is done, and complete when its replicas equal the target (order counts)."""
    states: list[VerifyState] = []
    for tp in sorted(targets):
        if tp in moving:
            states.append(VerifyState(tp, moving[tp].replicas, targets[tp], done=False))
        else:
            states.append(VerifyState(tp, current.get(tp), targets[tp], done=True))
    return states


def verify_line(state: VerifyState) -> str:
    tp = tp_text(state.tp)
    if not state.done:
        return f"Reassignment of partition {tp} is still in progress."
    if state.current == state.target:
        return f"Reassignment of partition {tp} is complete."
    if state.current is None:
        return f"There is no active reassignment of partition {tp}, and the partition does not exist."
    return (
        f"There is no active reassignment of partition {tp}, but replica set is "
        f"{ids_text(state.current)} rather than {ids_text(state.target)}."
    )


def verify_lines(states: Sequence[VerifyState]) -> list[str]:
    return ["Status of partition reassignment:", *(verify_line(s) for s in states)]


# --- --list ----------------------------------------------------------------------------------------


def bytes_text(n: float) -> str:
    """IEC units with one decimal: ``512 B``, ``1.5 KiB``, ``3.0 GiB``."""
    if n < 1024:
        return f"{n:.0f} B"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        n /= 1024
        if n < 1024 or unit == "TiB":
            break
    return f"{n:.1f} {unit}"


def progress_text(bytes_total: int, bytes_done: int, bytes_per_s: float | None, eta_s: float | None) -> str:
    """`` progress: 31% (125.0 MiB of 400.0 MiB), 47.1 MiB/s, about 6 s left.`` (no rate or time
    left when None)."""
    percent = 100 * bytes_done // bytes_total if bytes_total > 0 else 0
    parts = [f"progress: {percent}% ({bytes_text(bytes_done)} of {bytes_text(bytes_total)})"]
    if bytes_per_s is not None:
        parts.append(f"{bytes_text(bytes_per_s)}/s")
    if eta_s is not None:
        parts.append(f"about {eta_s:.0f} s left")
    return ", ".join(parts) + "."


def list_line(tp: TopicPartition, r: Reassignment) -> str:
    """Kafka's ``orders-0: replicas: 4,5,6,1,2,3. adding: 4,5,6. removing: 1,2,3.``, then
    reassignd's progress when an agent reported it."""
    line = f"{tp_text(tp)}: replicas: {ids_text(r.replicas)}."
    if r.adding_replicas:
        line += f" adding: {ids_text(r.adding_replicas)}."
    if r.removing_replicas:
        line += f" removing: {ids_text(r.removing_replicas)}."
    if (g := r.progress) is not None:
        line += " " + progress_text(g.bytes_total, g.bytes_done, g.bytes_per_s, g.eta_s)
    return line


def list_lines(reassignments: Mapping[TopicPartition, Reassignment]) -> list[str]:
    if not reassignments:
        return [NONE_FOUND]
    return [
        "Current partition reassignments:",
        *(list_line(tp, reassignments[tp]) for tp in sorted(reassignments)),
    ]


# --- --rollback (KIP-236) --------------------------------------------------------------------------


def pending_line(entry: LegacyReassignmentEntry) -> str:
    original = "unknown (not yet accepted by the controller)"
    if entry.original_replicas is not None:
        original = ids_text(entry.original_replicas) + "."
    return (
        f"{tp_text((entry.topic, entry.partition))}: replicas: {ids_text(entry.replicas)}. "
        f"original_replicas: {original}"
    )


def pending_lines(entries: Sequence[LegacyReassignmentEntry], path: str) -> list[str]:
    if not entries:
        return [f"There are no pending reassignments in {path}."]
    ordered = sorted(entries, key=lambda e: (e.topic, e.partition))
    return [f"Rolling back the current pending reassignments in {path}:", *(pending_line(e) for e in ordered)]

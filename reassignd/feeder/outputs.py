"""The plan's files: ``plan.json``, ``rollback.json``, ``batches.json``, ``summary.txt`` and
``plan.svg``. Pure.

``plan.json`` and ``rollback.json`` are ``kafka-reassign-partitions`` plans (the moved partitions'
new and original replicas). ``batches.json`` holds the ordered ``POST /v1/batches`` bodies, each
with ``expected_replicas`` (what the plan assumed, so a partition moved since is refused as
STALE_PLAN rather than moved) and a ``batch_id`` derived from the plan id, so a feeder that
restarts submits the same ids again and the controller answers the batches it already has.
``plan.svg`` draws each broker's bytes, replicas and preferred leaders before and after the plan
(:mod:`reassignd.plan_picture`), per log directory for brokers with several. Partitions whose
replicas change directory (the ``disk`` goal) carry ``log_dirs`` in ``plan.json``,
``rollback.json`` and their batch entries: one path per replica, ``"any"`` where not pinned.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from reassignd.admin.plan import plan_json
from reassignd.broker.settings import DEFAULT_REPLICATION_BYTES_PER_S
from reassignd.feeder.disks import ANY_DIR, DirLoad, usage_spread
from reassignd.feeder.loads import BYTES, LEADERS, REPLICAS, Load, balance
from reassignd.feeder.model import CURRENT, ORIGINAL, PARTITION, TOPIC, Row
from reassignd.feeder.planner import PlanResult
from reassignd.feeder.predict import MOVES_IN_CLUSTER, MOVES_PER_BROKER, BatchPrediction, predict_batch
from reassignd.plan_picture import Holder, HolderLoad, plan_svg

DEFAULT_BATCH_SIZE = 100


Entry = tuple[Row, tuple[str, ...] | None]  # a changed partition and its log_dirs (None: "any")


def plan_id(result: PlanResult) -> str:
    """``plan-`` and 12 hex digits of a digest of the goals and moves: the same plan, the same id."""
    digest = hashlib.sha256()
    digest.update(json.dumps([str(g) for g in result.goals]).encode())
    for row in result.moves:
        digest.update(json.dumps([row[TOPIC], row[PARTITION], row[ORIGINAL], row[CURRENT]]).encode())
    for m in result.dir_moves:
        digest.update(json.dumps([m.topic, m.partition, m.broker, m.from_dir, m.to_dir]).encode())
    return "plan-" + digest.hexdigest()[:12]


def plan_file(result: PlanResult) -> str:
    entries = result.entries()
    dirs = {(r[TOPIC], r[PARTITION]): d for r, d in entries if d is not None}
    return plan_json({(r[TOPIC], r[PARTITION]): r[CURRENT] for r, _ in entries}, dirs) + "\n"


def rollback_file(result: PlanResult) -> str:
    entries = result.entries()
    return (
        plan_json({(r[TOPIC], r[PARTITION]): r[ORIGINAL] for r, _ in entries}, result.rollback_dirs()) + "\n"
    )


def batch_rows(result: PlanResult, batch_size: int) -> list[list[Entry]]:
    """The moves in batches of ``batch_size``: leadership-only reorders first (no data, quick),
    then by topic and partition (directory moves copy data too)."""
    ordered = sorted(
        result.entries(),
        key=lambda e: (
            set(e[0][CURRENT]) != set(e[0][ORIGINAL]) or e[1] is not None,
            e[0][TOPIC],
            e[0][PARTITION],
        ),
    )
    return [ordered[i : i + batch_size] for i in range(0, len(ordered), batch_size)]


def batch_body(pid: str, index: int, entries: Sequence[Entry]) -> dict[str, Any]:
    partitions: list[dict[str, Any]] = []
    for r, dirs in entries:
        p: dict[str, Any] = {
            "topic": r[TOPIC],
            "partition": r[PARTITION],
            "replicas": list(r[CURRENT]),
            "expected_replicas": list(r[ORIGINAL]),
        }
        if dirs is not None:
            p["log_dirs"] = list(dirs)
        partitions.append(p)
    return {"batch_id": f"{pid}-{index + 1:04d}", "plan_id": pid, "partitions": partitions}


def _prediction_json(batch_id: str, p: BatchPrediction) -> dict[str, Any]:
    return {
        "batch_id": batch_id,
        "moves": p.moves,
        "bytes": p.bytes,
        "bytes_in_per_broker": {str(b): v for b, v in p.bytes_in.items()},
        "bytes_out_per_broker": {str(b): v for b, v in p.bytes_out.items()},
        "makespan_s": round(p.makespan_s, 3),
        "lower_bound_s": round(p.lower_bound_s, 3),
    }


def batches_document(
    result: PlanResult, created_at: str, batch_size: int = DEFAULT_BATCH_SIZE
) -> dict[str, Any]:
    pid = plan_id(result)
    chunks = batch_rows(result, batch_size)
    bodies = [batch_body(pid, i, rows) for i, rows in enumerate(chunks)]
    predictions = [predict_batch([r for r, _ in rows]) for rows in chunks]
    return {
        "plan_id": pid,
        "created_at": created_at,
        "goals": [str(g) for g in result.goals],
        "batches": bodies,
        "predicted": {
            "moves": len(result.moves),
            "bytes": result.copied_bytes,
            "makespan_s": round(sum(p.makespan_s for p in predictions), 3),
            "lower_bound_s": round(sum(p.lower_bound_s for p in predictions), 3),
            "broker_bytes_per_s": DEFAULT_REPLICATION_BYTES_PER_S,
            "caps": {"moves_per_broker": MOVES_PER_BROKER, "moves_in_cluster": MOVES_IN_CLUSTER},
            "bytes_per_broker_before": {str(b): v[BYTES] for b, v in sorted(result.before.items())},
            "bytes_per_broker_after": {str(b): v[BYTES] for b, v in sorted(result.after.items())},
            **_dir_figures(result),
            "batches": [_prediction_json(b["batch_id"], p) for b, p in zip(bodies, predictions, strict=True)],
        },
    }


def _dir_json(loads: Mapping[tuple[int, str], DirLoad]) -> dict[str, dict[str, dict[str, Any]]]:
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for (b, d), v in sorted(loads.items()):
        usage = v.usage()
        out.setdefault(str(b), {})[d] = {
            "bytes": v.size_bytes,
            "replicas": v.replicas,
            "capacity_bytes": v.capacity_bytes,
            "usage": None if usage is None else round(usage, 6),
        }
    return out


def _dir_figures(result: PlanResult) -> dict[str, Any]:
    """JBOD: every (broker, log dir)'s bytes, replicas, capacity and usage before and after, and
    the directory moves (absent when the input gives no directories)."""
    if not result.dirs_before:
        return {}
    return {
        "dir_moves": len(result.dir_moves),
        "dir_move_bytes": sum(m.size_bytes for m in result.dir_moves),
        "log_dirs_before": _dir_json(result.dirs_before),
        "log_dirs_after": _dir_json(result.dirs_after),
    }


def _gib(n: float) -> str:
    return f"{n / 2**30:,.2f} GiB"


def _balance_line(name: str, result: PlanResult, index: int, holders: Sequence[int]) -> str:
    before = balance(result.before[b][index] for b in holders)
    after = balance(result.after[b][index] for b in holders)
    return f"  {name:<9} max/mean {before:.3f} -> {after:.3f}"


def summary_text(result: PlanResult, document: dict[str, Any]) -> str:
    """What the plan does, for a person: moves, bytes, balance before and after."""
    leaving = {b for s in result.steps for b in s.leaving}
    holders = [b for b in sorted(result.after) if b not in leaving]
    predicted = document["predicted"]
    reorders = sum(1 for r in result.moves if set(r[CURRENT]) == set(r[ORIGINAL]))
    lines = [
        f"plan {document['plan_id']}: {', '.join(document['goals']) or 'no goal'}",
        f"partitions moved: {len(result.moves)} ({reorders} only change their preferred leader)",
        f"bytes to copy: {_gib(result.copied_bytes)} ({result.copied_bytes} bytes)",
    ]
    for step in result.steps:
        if step.lower_bound:
            unit = "bytes" if step.metric == "bytes" else step.metric
            lines.append(f"  {step.goal}: needs at least {step.lower_bound} {unit} moved")
    lines += [
        f"batches: {len(document['batches'])}, predicted makespan {predicted['makespan_s']:.0f} s "
        f"(bound {predicted['lower_bound_s']:.0f} s; one batch after the other, "
        f"{MOVES_PER_BROKER} moves per broker, {DEFAULT_REPLICATION_BYTES_PER_S / 2**20:.0f} MiB/s per broker)",
        f"balance over {len(holders)} brokers (max/mean, before -> after):",
        _balance_line("bytes", result, BYTES, holders),
        _balance_line("replicas", result, REPLICAS, holders),
        _balance_line("leaders", result, LEADERS, holders),
    ]
    if result.dirs_before:
        spread_before, spread_after = usage_spread(result.dirs_before), usage_spread(result.dirs_after)
        if spread_before:
            worst_b = max(spread_before.values())
            worst_a = max(spread_after.get(b, 1.0) for b in spread_before)
            lines.append(
                f"log dirs: {len(result.dir_moves)} replicas move between dirs "
                f"({_gib(sum(m.size_bytes for m in result.dir_moves))}); fullest dir's usage over its "
                f"broker's, worst broker: {worst_b:.3f} -> {worst_a:.3f}"
            )
    if not result.moves and not result.dir_moves:
        lines.append("nothing to move: the cluster already meets the goals (plan.json lists no partition)")
    for b, n in result.left_behind.items():
        lines.append(f"warning: broker {b} still holds {n} replicas (byte cap, or no broker could take them)")
    return "\n".join(lines) + "\n"


def _holder_loads(
    loads: Mapping[int, Load], dirs: Mapping[tuple[int, str], DirLoad]
) -> dict[Holder, HolderLoad]:
    """One holder per broker, or per log directory for brokers with several (a replica whose
    directory is not known yet counts under ``any``)."""
    several = {b for b, n in Counter(b for b, d in dirs if d != ANY_DIR).items() if n > 1}
    out = {
        Holder(b): HolderLoad(v[BYTES], v[REPLICAS], v[LEADERS]) for b, v in loads.items() if b not in several
    }
    for (b, d), v in dirs.items():
        if b in several:
            out[Holder(b, d)] = HolderLoad(v.size_bytes, v.replicas, v.leaders)
    return out


def picture_file(result: PlanResult, document: dict[str, Any]) -> str:
    """``plan.svg``: every broker's bytes, replicas and preferred leaders before and after the
    plan (the figures ``summary.txt`` balances), per log directory where a broker has several,
    titled with the plan's id and goals."""
    goals = ", ".join(document["goals"]) or "no goal"
    subtitle = f"{goals}; {len(result.moves)} partitions moved, {_gib(result.copied_bytes)} to copy"
    return plan_svg(
        f"plan {document['plan_id']}",
        _holder_loads(result.before, result.dirs_before),
        _holder_loads(result.after, result.dirs_after),
        subtitle,
    )

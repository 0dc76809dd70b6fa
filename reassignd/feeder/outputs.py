"""The plan's files: ``plan.json``, ``rollback.json``, ``batches.json``, ``summary.txt`` and
``plan.svg``. Pure.

``plan.json`` and ``rollback.json`` are ``kafka-reassign-partitions`` plans (the moved partitions'
new and original replicas). ``batches.json`` holds the ordered ``POST /v1/batches`` bodies, each
with ``expected_replicas`` (what the plan assumed, so a partition moved since is refused as
STALE_PLAN rather than moved) and a ``batch_id`` derived from the plan id, so a feeder that
restarts submits the same ids again and the controller answers the batches it already has.
``plan.svg`` draws each broker's bytes, replicas and preferred leaders before and after the plan
(:mod:`reassignd.plan_picture`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from reassignd.admin.plan import plan_json
from reassignd.broker.settings import DEFAULT_REPLICATION_BYTES_PER_S
from reassignd.feeder.loads import BYTES, LEADERS, REPLICAS, Load, balance
from reassignd.feeder.model import CURRENT, ORIGINAL, PARTITION, TOPIC, Row
from reassignd.feeder.planner import PlanResult
from reassignd.feeder.predict import MOVES_IN_CLUSTER, MOVES_PER_BROKER, BatchPrediction, predict_batch
from reassignd.plan_picture import Holder, HolderLoad, plan_svg

DEFAULT_BATCH_SIZE = 100


def plan_id(result: PlanResult) -> str:
    """``plan-`` and 12 hex digits of a digest of the goals and moves: the same plan, the same id."""
    digest = hashlib.sha256()
    digest.update(json.dumps([str(g) for g in result.goals]).encode())
    for row in result.moves:
        digest.update(json.dumps([row[TOPIC], row[PARTITION], row[ORIGINAL], row[CURRENT]]).encode())
    return "plan-" + digest.hexdigest()[:12]


def plan_file(result: PlanResult) -> str:
    return plan_json({(r[TOPIC], r[PARTITION]): r[CURRENT] for r in result.moves}) + "\n"


def rollback_file(result: PlanResult) -> str:
    return plan_json({(r[TOPIC], r[PARTITION]): r[ORIGINAL] for r in result.moves}) + "\n"


def batch_rows(result: PlanResult, batch_size: int) -> list[list[Row]]:
    """The moves in batches of ``batch_size``: leadership-only reorders first (no data, quick),
    then by topic and partition."""
    ordered = sorted(
        result.moves, key=lambda r: (set(r[CURRENT]) != set(r[ORIGINAL]), r[TOPIC], r[PARTITION])
    )
    return [ordered[i : i + batch_size] for i in range(0, len(ordered), batch_size)]


def batch_body(pid: str, index: int, rows: Sequence[Row]) -> dict[str, Any]:
    return {
        "batch_id": f"{pid}-{index + 1:04d}",
        "plan_id": pid,
        "partitions": [
            {
                "topic": r[TOPIC],
                "partition": r[PARTITION],
                "replicas": list(r[CURRENT]),
                "expected_replicas": list(r[ORIGINAL]),
            }
            for r in rows
        ],
    }


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
    predictions = [predict_batch(rows) for rows in chunks]
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
            "batches": [_prediction_json(b["batch_id"], p) for b, p in zip(bodies, predictions, strict=True)],
        },
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
    if not result.moves:
        lines.append("nothing to move: the cluster already meets the goals (plan.json lists no partition)")
    for b, n in result.left_behind.items():
        lines.append(f"warning: broker {b} still holds {n} replicas (byte cap, or no broker could take them)")
    return "\n".join(lines) + "\n"


def _holder_loads(loads: Mapping[int, Load]) -> dict[Holder, HolderLoad]:
    return {Holder(b): HolderLoad(v[BYTES], v[REPLICAS], v[LEADERS]) for b, v in loads.items()}


def picture_file(result: PlanResult, document: dict[str, Any]) -> str:
    """``plan.svg``: every broker's bytes, replicas and preferred leaders before and after the
    plan (the figures ``summary.txt`` balances), titled with the plan's id and goals."""
    goals = ", ".join(document["goals"]) or "no goal"
    subtitle = f"{goals}; {len(result.moves)} partitions moved, {_gib(result.copied_bytes)} to copy"
    return plan_svg(
        f"plan {document['plan_id']}", _holder_loads(result.before), _holder_loads(result.after), subtitle
    )

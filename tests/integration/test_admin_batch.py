"""``reassignd admin batch`` as an operator runs it: a subprocess against a real controller and
``reassignd cluster``.

Brokers replicate at 2000 B/s, so a move of a 5 MB partition stays in flight for the whole test
(it can be watched, paused and stopped), while a move of an empty partition completes at once (it
can be rolled back).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from reassignd.zk.client import ZkClient
from tests.integration.admin_cli import reassignd_cli
from tests.integration.harness import ControllerProc, Kit, eventually
from tests.integration.reassignment_helpers import SLOW, completed, make_topic, start

pytestmark = pytest.mark.timeout(180)

TP = tuple[str, int]


async def batch(*args: str) -> tuple[int, str, str]:
    """``python -m reassignd admin batch ARGS`` → (exit code, stdout, stderr)."""
    return await reassignd_cli("admin", "batch", *args)


def body(batch_id: str, moves: dict[TP, list[int]], **extra: Any) -> dict[str, Any]:
    return {
        "batch_id": batch_id,
        "partitions": [{"topic": t, "partition": p, "replicas": r} for (t, p), r in moves.items()],
        **extra,
    }


def batch_file(path: Path, *bodies: dict[str, Any]) -> str:
    path.write_text(json.dumps({"plan_id": "p", "batches": list(bodies)}))
    return str(path)


async def state_of_batch(c: ControllerProc, batch_id: str) -> dict[str, Any]:
    code, status = await c.get(f"/v1/batches/{batch_id}")
    assert code == 200, status
    return dict(status)


async def test_submit_list_describe_pause_resume_stop_and_rollback(
    kit: Kit, zk: ZkClient, tmp_path: Path
) -> None:
    c = await start(kit, zk, 6, rate=SLOW)
    await make_topic(zk, "slow", {0: (1, 2, 3), 1: (1, 2, 3)}, initial_bytes=5_000_000)
    await make_topic(zk, "quick", {0: (1, 2, 3)})
    http = ["--bootstrap-controller", c.url]
    one_at_a_time = {"moves_per_broker": 1}

    # submit: a batches.json of one batch; the same file again answers the same batch
    plan = batch_file(
        tmp_path / "batches.json",
        body("s", {("slow", 0): [4, 5, 6], ("slow", 1): [4, 5, 6]}, plan_id="p", limits=one_at_a_time),
    )
    code, out, err = await batch("submit", "--batch-file", plan, *http)
    assert (code, err) == (0, "")
    assert out.splitlines() == ["Submitted batch s: 2 partitions accepted, 0 refused. state: running."]
    code, out, _ = await batch("submit", "--batch-file", plan, *http)
    assert code == 0
    assert out.startswith("Batch s was submitted before with this body: 2 partitions accepted, 0 refused.")

    # a refused partition (a stale plan) and a reused id with another body: exit 1, the rest goes on
    stale = batch_file(
        tmp_path / "stale.json",
        body("x", {("quick", 0): [4, 5, 6]}, plan_id="other"),  # "x" is new
        {**body("s", {("slow", 0): [4, 5, 6]})},  # "s" with another body: 409
        {"partitions": [{"topic": "slow", "partition": 1, "replicas": [6], "expected_replicas": [3, 2, 1]}]},
    )
    code, out, _ = await batch("submit", "--batch-file", stale, *http)
    lines = out.splitlines()
    assert code == 1
    assert lines[0] == "Submitted batch x: 1 partition accepted, 0 refused. state: running."
    assert lines[1].startswith("Batch s not submitted: POST /v1/batches: HTTP 409 BATCH_ID_IN_USE (10004)")
    assert lines[2].endswith(": 0 partitions accepted, 1 refused. state: completed.")
    assert lines[4] == "slow-1: STALE_PLAN: slow-1 has replicas [1, 2, 3], the plan expected [3, 2, 1]"
    await eventually(lambda: completed(zk, "quick", 0, (4, 5, 6)), what="quick-0 moved by batch x")

    # list and describe: one move of s runs (one incoming move per broker), the other waits
    async def described_with_progress() -> list[str] | None:
        code, out, _ = await batch("describe", "s", *http)
        assert code == 0
        lines = out.splitlines()
        return lines if any(" progress: " in line for line in lines if line.startswith("slow-")) else None

    lines = await eventually(described_with_progress, what="s's running move with progress")
    assert lines[0] == "Batch s: running (plan p, priority 0)."
    assert lines[2] == "moves: 1 pending, 1 running, 0 completed, 0 cancelled, 0 failed."
    assert "Running moves:" in lines
    code, out, _ = await batch("list", *http)
    assert code == 0
    listed = {line.split(":")[0]: line for line in out.splitlines()}
    assert set(listed) >= {"s", "x"}
    assert listed["s"].startswith("s: running. moves: 1 pending, 1 running.")

    # pause, resume, stop: the running move goes back, the pending one is dropped
    assert await batch("pause", "s", *http) == (0, "Batch s: paused. moves: 1 pending, 1 running.\n", "")
    assert (await state_of_batch(c, "s"))["state"] == "paused"
    code, out, _ = await batch("resume", "s", *http)
    assert (code, out) == (0, "Batch s: running. moves: 1 pending, 1 running.\n")
    assert await batch("stop", "s", *http) == (0, "Batch s: stopped. moves: 2 cancelled.\n", "")
    for p in (0, 1):
        await eventually(
            functools.partial(completed, zk, "slow", p, (1, 2, 3)), what=f"slow-{p} back on 1,2,3"
        )

    # rollback of x (completed): a reverse batch moves quick-0 back
    code, out, _ = await batch("rollback", "x", *http)
    assert (code, out) == (
        0,
        "Batch x: rolled back. moves: 1 completed. Batch x.rollback moves its completed partitions back.\n",
    )
    await eventually(lambda: completed(zk, "quick", 0, (1, 2, 3)), what="quick-0 back on 1,2,3")
    code, out, _ = await batch("describe", "x.rollback", *http)
    assert code == 0
    assert "rolls back batch x." in out.splitlines()

    # failures of the run: one line on stderr, exit 1
    code, out, err = await batch("describe", "nope", *http)
    assert (code, out) == (1, "")
    assert err == (
        "reassignd admin batch: error: GET /v1/batches/nope: HTTP 404 INVALID_REQUEST (42): no batch 'nope'\n"
    )
    code, _, err = await batch("pause", "s", *http)
    assert code == 1
    assert err == (
        "reassignd admin batch: error: POST /v1/batches/s/pause: HTTP 409 INVALID_REQUEST (42): "
        "batch s is stopped: cannot pause it\n"
    )

"""The feeder's pure parts: back-pressure, resume, the batches file's errors, progress lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reassignd.contracts.batches import BatchLimits, BatchStatus, MoveCounts, StuckPartition, Throttles
from reassignd.feeder.progress_view import bar, batch_line, overall_line
from reassignd.feeder.run import FeedError, FeedState, load_batches


def state(*ids: str) -> FeedState:
    return FeedState(list(ids), {i: {"batch_id": i, "partitions": []} for i in ids})


def status(state: str, **fields: Any) -> BatchStatus:
    """A batch's status in ``state`` (nothing moved unless ``fields`` say)."""
    shown: dict[str, Any] = {
        "batch_id": "b",
        "plan_id": None,
        "owner": None,
        "state": state,
        "priority": 0,
        "created_at": None,
        "updated_at": None,
        "counts": MoveCounts(0, 0, 0, 0, 0),
        "bytes_total": 0,
        "bytes_done": 0,
        "bytes_per_s": 0,
        "eta_s": None,
        "limits": BatchLimits(5, 100, 100, None),
        "broker_caps": {},
        "throttle_bytes_per_s": None,
        "running": (),
        "stuck": (),
        "throttles": Throttles((), ()),
        "rollback_of": None,
        "rollback_batch_id": None,
    }
    return BatchStatus(**(shown | fields))


def test_back_pressure_submits_in_plan_order_up_to_the_limit() -> None:
    s = state("p-1", "p-2", "p-3", "p-4")
    assert s.next_to_submit(2) == ["p-1", "p-2"]
    s.statuses["p-1"] = status("running")
    s.statuses["p-2"] = status("completed")
    assert s.next_to_submit(2) == ["p-3"]  # one slot: p-1 still runs
    s.statuses["p-3"] = status("paused")  # paused counts as unfinished
    assert s.next_to_submit(2) == []
    assert not s.done()
    for b in s.order:
        s.statuses[b] = status("completed")
    assert s.done() and s.next_to_submit(2) == []


def test_a_resumed_run_never_resubmits_what_the_controller_has() -> None:
    s = state("p-1", "p-2", "p-3")
    s.statuses["p-1"] = status("completed")  # found at start
    s.statuses["p-2"] = status("stopped")
    assert s.next_to_submit(5) == ["p-3"]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("not json", "not JSON"),
        ('{"batches": []}', "at least one batch"),
        ('{"batches": [{"partitions": []}]}', "no batch_id"),
        ('{"batches": [{"batch_id": "a"}, {"batch_id": "a"}]}', "appears twice"),
    ],
)
def test_a_bad_batches_file_is_refused_with_the_reason(tmp_path: Path, content: str, reason: str) -> None:
    (tmp_path / "batches.json").write_text(content)
    with pytest.raises(FeedError, match=reason):
        load_batches(str(tmp_path))


def test_the_file_or_its_directory(tmp_path: Path) -> None:
    (tmp_path / "batches.json").write_text(json.dumps({"batches": [{"batch_id": "x-0001"}]}))
    assert (
        load_batches(str(tmp_path)).order == load_batches(str(tmp_path / "batches.json")).order == ["x-0001"]
    )
    with pytest.raises(FeedError, match="cannot read"):
        load_batches(str(tmp_path / "missing.json"))


def test_progress_lines() -> None:
    assert bar(0, 0) == "[" + "." * 20 + "]" and bar(5, 10) == "[" + "#" * 10 + "." * 10 + "]"
    running = status(
        "running",
        counts=MoveCounts(pending=1, running=1, completed=2, cancelled=0, failed=0),
        bytes_done=3 * 2**20,
        bytes_total=6 * 2**20,
        bytes_per_s=2**20,
        eta_s=3,
        stuck=(StuckPartition("t", 1),),
    )
    line = batch_line("p-1", running)
    assert (
        "running" in line
        and " 50%" in line
        and "2/4 moves" in line
        and "ETA 3 s" in line
        and "1 stuck" in line
    )
    assert batch_line("p-2", None).endswith("waiting")
    overall = overall_line(["p-1", "p-2"], {"p-1": running})
    assert "0/2 batches ended" in overall and "3.0 MiB / 6.0 MiB" in overall and "ETA 3 s" in overall

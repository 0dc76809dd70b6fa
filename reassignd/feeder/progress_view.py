"""What ``reassignd feed run`` prints: one line per batch and an overall line. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

FINAL = frozenset({"completed", "stopped", "rolled_back", "failed"})
BAR = 20


def bar(done: int, total: int) -> str:
    filled = 0 if total <= 0 else min(BAR, BAR * done // total)
    return "[" + "#" * filled + "." * (BAR - filled) + "]"


def size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError


def batch_line(batch_id: str, status: Mapping[str, Any] | None) -> str:
    if status is None:
        return f"  {batch_id:<28} waiting"
    counts = status.get("counts", {})
    moves = sum(counts.values())
    done, total = int(status.get("bytes_done", 0)), int(status.get("bytes_total", 0))
    pct = 100 * done // total if total > 0 else (100 if status.get("state") == "completed" else 0)
    line = (
        f"  {batch_id:<28} {status.get('state', '?'):<11} {bar(done, total)} {pct:>3}%  "
        f"{counts.get('completed', 0)}/{moves} moves  {size(done)} / {size(total)}"
    )
    rate = status.get("bytes_per_s") or 0
    if rate and status.get("state") not in FINAL:
        line += f"  {size(rate)}/s"
        if status.get("eta_s") is not None:
            line += f"  ETA {status['eta_s']} s"
    if status.get("stuck"):
        line += f"  {len(status['stuck'])} stuck"
    return line


def overall_line(batch_ids: Sequence[str], statuses: Mapping[str, Mapping[str, Any]]) -> str:
    known = [statuses[b] for b in batch_ids if b in statuses]
    done = sum(int(s.get("bytes_done", 0)) for s in known)
    total = sum(int(s.get("bytes_total", 0)) for s in known)
    finished = sum(1 for s in known if s.get("state") in FINAL)
    rate = sum(int(s.get("bytes_per_s") or 0) for s in known if s.get("state") not in FINAL)
    line = (
        f"overall {bar(done, total)} {finished}/{len(batch_ids)} batches ended  {size(done)} / {size(total)}"
    )
    if rate:
        line += f"  {size(rate)}/s  ETA {max(0, total - done) // rate} s"
    return line

"""What ``reassignd feed run`` prints from the batches' statuses (the contract's structs): one
line per batch and an overall line. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from reassignd.contracts.batches import BatchStatus

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


def batch_line(batch_id: str, status: BatchStatus | None) -> str:
    if status is None:
        return f"  {batch_id:<28} waiting"
    counts = status.counts
    moves = sum(msgspec.structs.astuple(counts))
    done, total = status.bytes_done, status.bytes_total
    pct = 100 * done // total if total > 0 else (100 if status.state == "completed" else 0)
    line = (
        f"  {batch_id:<28} {status.state:<11} {bar(done, total)} {pct:>3}%  "
        f"{counts.completed}/{moves} moves  {size(done)} / {size(total)}"
    )
    rate = status.bytes_per_s
    if rate and status.state not in FINAL:
        line += f"  {size(rate)}/s"
        if status.eta_s is not None:
            line += f"  ETA {status.eta_s} s"
    if status.stuck:
        line += f"  {len(status.stuck)} stuck"
    return line


def overall_line(batch_ids: Sequence[str], statuses: Mapping[str, BatchStatus]) -> str:
    known = [statuses[b] for b in batch_ids if b in statuses]
    done = sum(s.bytes_done for s in known)
    total = sum(s.bytes_total for s in known)
    finished = sum(1 for s in known if s.state in FINAL)
    rate = sum(s.bytes_per_s for s in known if s.state not in FINAL)
    line = (
        f"overall {bar(done, total)} {finished}/{len(batch_ids)} batches ended  {size(done)} / {size(total)}"
    )
    if rate:
        line += f"  {size(rate)}/s  ETA {max(0, total - done) // rate} s"
    return line

"""What the demo prints: the cluster state, reassignment progress and sizes, from the HTTP API's
JSON documents. Pure.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from reassignd.contracts.cluster import Status, Topic
from reassignd.contracts.reassignments import Reassignment
from reassignd.demo.plan import fraction_done, ids, replica_load
from reassignd.topic_partition import TopicPartition

BAR_WIDTH = 20


def table(rows: Sequence[Sequence[str]], right: Collection[int] = (), indent: str = "  ") -> list[str]:
    """Rows of cells as aligned text lines; columns in ``right`` are right-aligned."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))] if rows else []
    return [
        indent
        + "  ".join(
            cell.rjust(w) if i in right else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]


def size(n: float) -> str:
    """Bytes for people: ``0 B``, ``512 B``, ``1.5 KiB``, ``200.0 MiB``, ``3.0 GiB``."""
    if n < 1024:
        return f"{n:.0f} B"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        n /= 1024
        if n < 1024 or unit == "TiB":
            break
    return f"{n:.1f} {unit}"


def seconds(s: float | None) -> str:
    """``None`` -> ``?``; ``42`` -> ``42 s``; ``125`` -> ``2 min 5 s``."""
    if s is None:
        return "?"
    whole = round(s)
    return f"{whole} s" if whole < 60 else f"{whole // 60} min {whole % 60} s"


def bar(fraction: float, width: int = BAR_WIDTH) -> str:
    filled = round(max(0.0, min(1.0, fraction)) * width)
    return "[" + "#" * filled + "." * (width - filled) + "]"


# --- the cluster state ----------------------------------------------------------------------------


def render_status(status: Status) -> list[str]:
    active = status.active_controller
    who = f"controller {active.id} at {active.http}" if active else "no active controller"
    zk = status.zookeeper
    queue = status.event_queue
    p99 = queue.queue_time_ms.get("p99")
    lines = [
        f"{who}, epoch {status.controller_epoch}; ZooKeeper {'connected' if zk.connected else 'DISCONNECTED'}"
        f" (session {zk.session_id}); up {status.uptime_s} s",
        f"live brokers [{ids(status.brokers.live)}]; {status.topics} topics, {status.partitions} partitions,"
        f" {status.reassigning_partitions} reassigning; event queue {queue.size}"
        + (f" (p99 {p99:.1f} ms)" if p99 is not None else ""),
    ]
    lines += [f"problem: {p.path}: {p.reason}" for p in status.problems[:3]]
    return lines


def render_topic(topic: Topic) -> list[str]:
    header = ("partition", "leader", "epoch", "replicas", "isr", "adding", "removing")
    rows = [
        (
            str(p.partition),
            str(p.leader) if p.leader >= 0 else "none",
            str(p.leader_epoch),
            ids(p.replicas),
            ids(p.isr),
            ids(p.adding_replicas),
            ids(p.removing_replicas),
        )
        for p in topic.partitions
    ]
    return [f"topic {topic.name} (id {topic.topic_id})", *table([header, *rows])]


def render(now: str, status: Status, topics: Sequence[Topic]) -> str:
    lines = [f"--- {now} " + "-" * 60, *render_status(status)]
    for topic in topics:
        lines += render_topic(topic)
    return "\n".join(lines)


def render_load(topic: Topic, brokers: Sequence[int]) -> str:
    """``replicas per broker: 1:0 2:3 ...`` for the live brokers (and any other that holds one)."""
    load = replica_load({p.partition: p.replicas for p in topic.partitions})
    return "replicas per broker: " + " ".join(f"{b}:{load.get(b, 0)}" for b in sorted({*brokers, *load}))


# --- reassignments ----------------------------------------------------------------------------------


def move(original: Sequence[int], target: Sequence[int]) -> str:
    return f"{ids(original)} -> {ids(target)}"


def replica_moves(removing: Sequence[int], adding: Sequence[int]) -> str:
    """Which replicas go where: ``1 -> 4``, ``+4`` (only added), ``-3`` (only removed)."""
    if removing and adding:
        return f"{ids(removing)} -> {ids(adding)}"
    if adding:
        return "+" + ids(adding)
    return "-" + ids(removing) if removing else "reorder"


def progress_cells(tp: TopicPartition, entry: Reassignment) -> tuple[str, ...]:
    """One partition being reassigned: name, replicas moving, bar, percent, bytes, rate, ETA."""
    name = f"{tp[0]}-{tp[1]}"
    moving = replica_moves(entry.removing_replicas, entry.adding_replicas)
    progress = entry.progress
    done = fraction_done(progress)
    if progress is None or done is None:
        return (name, moving, bar(0), "", "", "", "waiting for the first report")
    return (
        name,
        moving,
        bar(done),
        f"{done:.0%}".rjust(4),  # fixed widths: successive prints line up too
        f"{size(progress.bytes_done):>9} / {size(progress.bytes_total):>9}",
        f"{size(progress.bytes_per_s or 0) + '/s':>11}",
        f"ETA {seconds(progress.eta_s)}",
    )


def render_progress(now: str, entries: Sequence[tuple[TopicPartition, Reassignment]]) -> list[str]:
    """One line per partition being moved; the time only on the first."""
    if not entries:
        return [f"{now}  nothing moving"]
    rows = [(now if i == 0 else "", *progress_cells(*e)) for i, e in enumerate(entries)]
    return table(rows, right={4, 5, 6}, indent="")

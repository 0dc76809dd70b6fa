"""A plan's ``log_dirs`` in ``reassignd admin reassign``: which replica goes to which dir, and the
lines Kafka's ``kafka-reassign-partitions`` prints for them. Pure.

A replica is named as Kafka's TopicPartitionReplica prints itself, ``topic-partition-broker``,
and sorted as the tool sorts them (broker, then topic, then partition). ``--execute`` asks each
broker to move its replicas (``POST /v1/log-dirs/moves``) after the inter-broker reassignment
started, and asks again every 100 ms those that answered REPLICA_NOT_AVAILABLE (the replica has
not reached its new broker yet), until ``--timeout``. ``--verify`` reads ``GET /v1/log-dirs`` of
those brokers and tells each replica's state in Kafka's words; a move still copying also gets a
line of progress (Kafka has no word for it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from reassignd.admin.report import bytes_text
from reassignd.contracts.cluster import LogDirMoveResult, LogDirs
from reassignd.contracts.requests import LogDirMoveSpec, MoveLogDirsRequest
from reassignd.plan_format import ANY_LOG_DIR, Plan

REPLICA_NOT_AVAILABLE = 9
RETRY_INTERVAL_S = 0.1  # Kafka's tool sleeps 100 ms between its attempts

Replica = tuple[str, int, int]  # topic, partition, broker: Kafka's TopicPartitionReplica


def replica_text(replica: Replica) -> str:
    topic, partition, broker = replica
    return f"{topic}-{partition}-{broker}"


def _order(replica: Replica) -> tuple[int, str, int]:
    topic, partition, broker = replica
    return broker, topic, partition


def _sorted(replicas: Iterable[Replica]) -> list[Replica]:
    return sorted(replicas, key=_order)


def dir_moves(plan: Plan) -> dict[Replica, str]:
    """Each replica the plan names a dir for (not "any"), and that dir."""
    return {
        (e.topic, e.partition, broker): log_dir
        for e in plan.entries
        for broker, log_dir in zip(e.replicas, e.log_dirs, strict=True)
        if log_dir != ANY_LOG_DIR
    }


def move_requests(moves: Mapping[Replica, str]) -> list[MoveLogDirsRequest]:
    """One request per broker, brokers in order."""
    by_broker: dict[int, list[LogDirMoveSpec]] = {}
    for replica in _sorted(moves):
        topic, partition, broker = replica
        by_broker.setdefault(broker, []).append(LogDirMoveSpec(topic, partition, moves[replica]))
    return [MoveLogDirsRequest(b, tuple(specs)) for b, specs in sorted(by_broker.items())]


# --- --execute -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MoveRound:
    """One round of asks: started (0), to ask again (REPLICA_NOT_AVAILABLE), refused (any other)."""

    started: tuple[Replica, ...]
    pending: tuple[Replica, ...]
    refused: tuple[tuple[Replica, LogDirMoveResult], ...]


def move_round(broker_answers: Mapping[int, Sequence[LogDirMoveResult]]) -> MoveRound:
    started, pending, refused = [], [], []
    for broker, results in broker_answers.items():
        for r in results:
            replica = (r.topic, r.partition, broker)
            if r.error_code == 0:
                started.append(replica)
            elif r.error_code == REPLICA_NOT_AVAILABLE:
                pending.append(replica)
            else:
                refused.append((replica, r))
    return MoveRound(
        tuple(_sorted(started)),
        tuple(_sorted(pending)),
        tuple(sorted(refused, key=lambda item: _order(item[0]))),
    )


def started_lines(started: Sequence[Replica], moves: Mapping[Replica, str]) -> list[str]:
    """Kafka's line for each replica whose move started (or that is already in its dir)."""
    return [
        f"Successfully started moving log directory to {moves[r]} for replica {r[0]}-{r[1]} "
        f"with broker {r[2]}"
        for r in _sorted(started)
    ]


def refused_lines(refused: Sequence[tuple[Replica, LogDirMoveResult]]) -> list[str]:
    """Kafka: ``Failed to alter dir for t-0-1`` (it stops there); the reason follows here."""
    return [
        f"Failed to alter dir for {replica_text(replica)}: {r.error_name}"
        + (f": {r.error_message}" if r.error_message else "")
        for replica, r in refused
    ]


def timed_out_line(pending: Sequence[Replica]) -> str:
    names = ",".join(replica_text(r) for r in _sorted(pending))
    return (
        f"Timed out before log directory move{'' if len(pending) == 1 else 's'} could be started for: {names}"
    )


# --- --verify --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReplicaDirs:
    """Where a broker has a replica: its current dir and the future replica being copied, if any."""

    current: str | None
    future: str | None = None
    future_bytes: int = 0
    future_lag_bytes: int = 0


def replica_dirs(doc: LogDirs, replica: Replica) -> ReplicaDirs | None:
    """The replica's dirs on its broker; None when the broker has it in no live dir."""
    topic, partition, broker = replica
    name = f"{topic}-{partition}"
    found: ReplicaDirs | None = None
    for b in doc.brokers:
        if b.broker != broker:
            continue
        for d in b.log_dirs:
            if d.error is not None:
                continue
            for p in d.partitions:
                if p.partition != name:
                    continue
                found = found or ReplicaDirs(None)
                if p.is_future:
                    found = ReplicaDirs(found.current, d.log_dir, p.size, p.offset_lag)
                else:
                    found = ReplicaDirs(d.log_dir, found.future, found.future_bytes, found.future_lag_bytes)
    return found


def move_done(dirs: ReplicaDirs | None, target: str) -> bool:
    return dirs is not None and dirs.future is None and dirs.current == target


def move_state_lines(replica: Replica, target: str, dirs: ReplicaDirs | None) -> list[str]:
    """Kafka's line for the replica's move (replicaMoveStatesToString), and while it copies, one
    of progress."""
    topic, partition, broker = replica
    tp = f"{topic}-{partition}"
    if dirs is None:
        return [f"Partition {tp} cannot be found in any live log directory on broker {broker}."]
    if dirs.current is None:
        return [
            f"Partition {tp} is not found in any live log dir on broker {broker}. There is likely an "
            "offline log directory on the broker."
        ]
    if dirs.future is None:
        if dirs.current == target:
            return [f"Reassignment of replica {replica_text(replica)} completed successfully."]
        return [
            f"Partition {tp} on broker {broker} is not being moved from log dir {dirs.current} to {target}."
        ]
    progress = progress_line(replica, dirs)
    if dirs.future == target:
        return [f"Reassignment of replica {replica_text(replica)} is still in progress.", progress]
    return [
        f"Partition {tp} on broker {broker} is being moved to log dir {dirs.future} instead of {target}.",
        progress,
    ]


def progress_line(replica: Replica, dirs: ReplicaDirs) -> str:
    """``  t-0-1: copying from /d1 to /d2: 1.2 MiB of 2.9 MiB (41%), lag 1782579 bytes.``"""
    total = dirs.future_bytes + dirs.future_lag_bytes
    percent = 100 * dirs.future_bytes // total if total > 0 else 0
    return (
        f"  {replica_text(replica)}: copying from {dirs.current} to {dirs.future}: "
        f"{bytes_text(dirs.future_bytes)} of {bytes_text(total)} ({percent}%), "
        f"lag {dirs.future_lag_bytes} bytes."
    )


def verify_dir_lines(moves: Mapping[Replica, str], doc: LogDirs) -> list[str]:
    return [
        line
        for replica in _sorted(moves)
        for line in move_state_lines(replica, moves[replica], replica_dirs(doc, replica))
    ]

"""A batch's moves between the log dirs of a broker (JBOD, KIP-113): what to journal, what to ask
the agents, what ended. Pure: batches and the agents' reports in, decisions out.

A move whose spec pins log dirs (``log_dirs``, ``"any"`` where not pinned) has a **dir phase**: it
starts once its partition sits at its target replicas (at once when the replicas stay: a move
between the dirs of a broker only), and the move completes when every pinned replica is in its
dir with no future replica left. Kafka moves a replica between dirs inside the broker, with no
znode; so do the agents (``POST /log-dirs/alter``), and their reports (``GET /replicas``) say
where each replica is and how far its future replica got. The executor:

1. **journals** that it is about to ask (``dirs_asked_ms``) and where the replicas are
   (``original_log_dirs``: what a stop or a rollback restores) — before any agent is asked, so a
   controller that fails over knows the dir phase may have begun;
2. then, every round, **checks the reports first**: a replica in its dir with no future is done,
   one with a future replica headed for its dir is on its way (its bytes copied are the move's
   progress); only a replica that is neither is **asked** (again, after a failover or an agent
   restart: never blindly twice while a copy runs);
3. an agent's refusal (LOG_DIR_NOT_FOUND, REPLICA_NOT_AVAILABLE) fails the move.

A stop cancels a move in its dir phase: a replica whose future replica still heads for the
pinned dir is asked back to its previous dir (the agent abandons the copy); one that arrived
stays, as a completed inter-broker move does (a rollback moves it back).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from reassignd.control.log_dir_moves import LogDirMove
from reassignd.control.replicas_report import ReplicasReport
from reassignd.executor.model import ANY_LOG_DIR, Batch, BatchMove, BatchMoveState, BatchState, LogDirs
from reassignd.topic_partition import TopicPartition

# Whether the partition sits at the move's target replicas now (no reassignment in flight).
AtTarget = Callable[[TopicPartition, BatchMove], bool]


@dataclass(frozen=True, slots=True)
class Place:
    """Where one broker keeps a replica: its dir (None: the agent has no dirs to report), and
    the dir and bytes copied of its future replica, if one is being made."""

    log_dir: str | None
    future_dir: str | None = None
    future_bytes: int = 0


# (broker, topic, partition) -> place, for every replica the asked agents host
Places = Mapping[tuple[int, str, int], Place]


def places_of(reports: Mapping[int, ReplicasReport]) -> dict[tuple[int, str, int], Place]:
    out: dict[tuple[int, str, int], Place] = {}
    for b, report in reports.items():
        futures = {
            (f.topic, f.partition): (d.path, f.size_bytes) for d in report.log_dirs or () for f in d.futures
        }
        for r in report.replicas:
            fd, copied = futures.get((r.topic, r.partition), (None, 0))
            out[(b, r.topic, r.partition)] = Place(r.log_dir, fd, copied)
    return out


@dataclass(frozen=True, slots=True)
class DirProgress:
    bytes_done: int
    bytes_total: int
    arrived: bool = False  # every pinned replica is in its dir, with no future replica left


def _arrived(place: Place, log_dir: str) -> bool:
    return place.log_dir == log_dir and place.future_dir is None


def dir_progress(tp: TopicPartition, move: BatchMove, places: Places, size_bytes: int) -> DirProgress:
    """How far a move's pinned replicas got: a replica in its dir counts its partition's size, one
    on its way the bytes its future replica copied, one not hosted or not asked yet nothing."""
    pinned = move.pinned
    done = arrived = 0
    for b, d in pinned.items():
        place = places.get((b, *tp))
        if place is None:
            continue  # not hosted (yet): the move waits
        if _arrived(place, d):
            arrived += 1
            done += size_bytes
        elif place.future_dir == d:
            done += min(size_bytes, place.future_bytes)
    return DirProgress(done, size_bytes * len(pinned), bool(pinned) and arrived == len(pinned))


@dataclass(frozen=True, slots=True)
class DirRound:
    """One round's decisions. ``asking``: moves to journal as asked, with the dirs their
    replicas are in (batch id -> partition -> previous dirs); ``ask``: per broker, the replicas
    to ask it to move; ``done``: moves whose every pinned replica arrived; ``progress``: bytes
    copied of the moves on their way (partition -> progress, ``sizes`` per replica)."""

    asking: Mapping[str, Mapping[TopicPartition, LogDirs]] = field(default_factory=dict)
    ask: Mapping[int, tuple[LogDirMove, ...]] = field(default_factory=dict)
    done: Mapping[str, frozenset[TopicPartition]] = field(default_factory=dict)
    progress: Mapping[TopicPartition, DirProgress] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.asking or self.ask or self.done)


def in_dir_phase(move: BatchMove, tp: TopicPartition, at_target: AtTarget) -> bool:
    return move.state is BatchMoveState.RUNNING and bool(move.pinned) and at_target(tp, move)


def brokers_to_ask(batches: Iterable[Batch], at_target: AtTarget) -> set[int]:
    """The agents whose reports a round needs: those of the pinned replicas of moves in their
    dir phase, and of moves a stop cancelled there."""
    brokers: set[int] = set()
    for _batch, _tp, move in _dir_moves(batches, at_target):
        brokers.update(move.pinned)
    return brokers


def _dir_moves(
    batches: Iterable[Batch], at_target: AtTarget
) -> Iterable[tuple[Batch, TopicPartition, BatchMove]]:
    for batch in batches:
        live = batch.state.unfinished
        stopped = batch.state in (BatchState.STOPPED, BatchState.ROLLED_BACK)
        for tp, move in batch.moves.items():
            if not move.pinned:
                continue
            reverting = stopped and move.state is BatchMoveState.CANCELLED and move.dirs_asked_ms is not None
            if reverting or (live and in_dir_phase(move, tp, at_target)):
                yield batch, tp, move


def decide(
    batches: Iterable[Batch],
    at_target: AtTarget,
    places: Places,
    reported: frozenset[int],
    sizes: Mapping[TopicPartition, int],
) -> DirRound:
    """The round's decisions; ``reported`` is the brokers whose agents answered (a broker that
    did not is left for a later round), ``sizes`` each partition's size in bytes."""
    asking: dict[str, dict[TopicPartition, LogDirs]] = {}
    ask: dict[int, list[LogDirMove]] = {}
    done: dict[str, set[TopicPartition]] = {}
    progress: dict[TopicPartition, DirProgress] = {}
    for batch, tp, move in _dir_moves(batches, at_target):
        pinned = move.pinned
        if not set(pinned) <= reported:
            continue
        if move.state is BatchMoveState.CANCELLED:  # stopped: abandon the copies still running
            back = dict(zip(move.target, move.original_log_dirs or (), strict=False))
            for b, d in pinned.items():
                place = places.get((b, *tp))
                home = back.get(b, ANY_LOG_DIR)
                if place is not None and place.future_dir == d and home != ANY_LOG_DIR:
                    ask.setdefault(b, []).append(LogDirMove(tp[0], tp[1], home))
            continue
        if move.dirs_asked_ms is None:
            asking.setdefault(batch.batch_id, {})[tp] = tuple(
                _where(places.get((b, *tp))) if b in pinned else ANY_LOG_DIR for b in move.target
            )
            continue
        for b, d in pinned.items():
            place = places.get((b, *tp))
            if place is not None and not _arrived(place, d) and place.future_dir != d:
                ask.setdefault(b, []).append(LogDirMove(tp[0], tp[1], d))
        p = dir_progress(tp, move, places, sizes.get(tp, 0))
        if p.arrived:
            done.setdefault(batch.batch_id, set()).add(tp)
        else:
            progress[tp] = p
    return DirRound(
        {k: dict(v) for k, v in asking.items()},
        {b: tuple(v) for b, v in ask.items()},
        {k: frozenset(v) for k, v in done.items()},
        progress,
    )


def _where(place: Place | None) -> str:
    return ANY_LOG_DIR if place is None or place.log_dir is None else place.log_dir


def reverse_dirs(move: BatchMove) -> LogDirs | None:
    """The ``log_dirs`` that move a completed move's replicas back (its origins,
    each pinned replica to the dir it was in), or None when no dir was recorded."""
    if move.original_log_dirs is None:
        return None
    back = {b: d for b, d in zip(move.target, move.original_log_dirs, strict=True) if d != ANY_LOG_DIR}
    dirs = tuple(back.get(b, ANY_LOG_DIR) for b in move.origins)
    return dirs if any(d != ANY_LOG_DIR for d in dirs) else None

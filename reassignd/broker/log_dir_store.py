"""Which log dir each hosted replica is in, and the moves between dirs in progress (log_dirs.py's
rules). No I/O and no clock: the replica manager (state.py) tells it what it places and removes,
the agent's mover (mover.py) advances the copies with a ``now`` it passes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from reassignd.broker.log_dirs import (
    DEFAULT_LOG_DIR,
    FutureReplica,
    LogDirSpec,
    caught_up,
    copied,
    copy_budget_bytes,
    next_log_dir,
    no_room,
)
from reassignd.control.log_dir_moves import (
    KAFKA_STORAGE_ERROR,
    LOG_DIR_NOT_FOUND,
    REPLICA_NOT_AVAILABLE,
    single_log_dir,
)
from reassignd.control.replicas_report import FutureInfo, LogDirInfo
from reassignd.control.wire import NONE
from reassignd.topic_partition import TopicPartition


class LogDirStore:
    def __init__(self, specs: tuple[LogDirSpec, ...] | None, broker_id: int = 0) -> None:
        self.configured = specs is not None  # --log-dirs given: the report says dirs
        self.specs = specs if specs is not None else (LogDirSpec(DEFAULT_LOG_DIR),)
        self._paths = {d.path: d.path for d in self.specs}
        if specs is None:  # the one dir, also by the name the Kafka listener gives it
            self._paths[single_log_dir(broker_id)] = DEFAULT_LOG_DIR
        self.dir_of: dict[TopicPartition, str] = {}
        self.futures: dict[TopicPartition, FutureReplica] = {}
        self.preferred: dict[TopicPartition, str] = {}  # asked for before the replica came
        self._logs: dict[str, int] = {d.path: 0 for d in self.specs}  # current and future logs
        self._moved_at_s: float | None = None
        self._carry = 0.0

    def placed(self, tp: TopicPartition) -> str:
        """A new replica: the dir it was asked for before it came, else Kafka's choice."""
        path = self.preferred.pop(tp, None)
        if path is None:
            path = next_log_dir(self.specs, self._logs)
        self.dir_of[tp] = path
        self._logs[path] += 1
        return path

    def forget(self, tp: TopicPartition) -> None:
        """A replica deleted: its log and any future log go."""
        path = self.dir_of.pop(tp, None)
        if path is not None:
            self._logs[path] -= 1
        self._drop_future(tp)

    def _drop_future(self, tp: TopicPartition) -> None:
        future = self.futures.pop(tp, None)
        if future is not None:
            self._logs[future.log_dir] -= 1

    def alter(
        self, tp: TopicPartition, path: str, sizes: Callable[[TopicPartition], int] = lambda _: 0
    ) -> tuple[int, str | None]:
        """AlterReplicaLogDirs for one replica (Kafka's ReplicaManager.alterReplicaLogDirs): the
        error code and, for a refusal of ours, why. A replica not hosted yet has the dir
        remembered for when it comes; one that does not fit in the dir's free capacity (``sizes``:
        each hosted replica's bytes) is refused KAFKA_STORAGE_ERROR, any move in progress kept."""
        if path not in self._paths:
            return LOG_DIR_NOT_FOUND, None
        path = self._paths[path]
        current = self.dir_of.get(tp)
        if current is None:
            self.preferred[tp] = path
            return REPLICA_NOT_AVAILABLE, None
        future = self.futures.get(tp)
        if path == current:
            self._drop_future(tp)  # back where it is: a move in progress is abandoned
            return NONE, None
        if future is not None and future.log_dir == path:
            return NONE, None  # already on its way there
        problem = no_room(self._spec(path), self.committed_bytes(path, sizes), sizes(tp))
        if problem is not None:
            return KAFKA_STORAGE_ERROR, f"{tp[0]}-{tp[1]}: {problem}"
        self._drop_future(tp)
        self.futures[tp] = FutureReplica(path)
        self._logs[path] += 1
        return NONE, None

    def _spec(self, path: str) -> LogDirSpec:
        return next(d for d in self.specs if d.path == path)

    def committed_bytes(self, path: str, sizes: Callable[[TopicPartition], int]) -> int:
        """What ``path`` holds or has promised: its replicas, and the future replicas being copied
        into it at their full size (they will have it all)."""
        held = sum(sizes(tp) for tp, d in self.dir_of.items() if d == path)
        return held + sum(sizes(tp) for tp, f in self.futures.items() if f.log_dir == path)

    def advance(
        self, sizes: Callable[[TopicPartition], int], rate_bytes_per_s: float, now: float
    ) -> list[TopicPartition]:
        """Copy for the time since the last step at ``rate_bytes_per_s`` (shared max-min fairly
        among the moves); ``sizes`` gives each current replica's size. Returns the replicas whose
        future replica caught up and replaced the current one."""
        last, self._moved_at_s = self._moved_at_s, now
        if not self.futures:
            self._carry = 0.0
            return []
        tps = sorted(self.futures)
        current = [sizes(tp) for tp in tps]
        budget = 0
        if last is not None:
            budget, self._carry = copy_budget_bytes(rate_bytes_per_s, now - last, self._carry)
        shares = copied(
            [c - self.futures[tp].copied_bytes for tp, c in zip(tps, current, strict=True)], budget
        )
        done = []
        for tp, size, share in zip(tps, current, shares, strict=True):
            f = self.futures[tp]
            f = FutureReplica(f.log_dir, min(size, f.copied_bytes + share))
            if caught_up(f, size):
                self._logs[self.dir_of[tp]] -= 1
                self.dir_of[tp] = f.log_dir  # the future log renamed to the current one
                del self.futures[tp]
                done.append(tp)
            else:
                self.futures[tp] = f
        if not self.futures:
            self._carry = 0.0
        return done

    def report(self, sizes: Mapping[TopicPartition, int]) -> tuple[LogDirInfo, ...]:
        """Each dir: its bytes (current and future replicas), capacity and usable bytes (-1: no
        capacity given), and its future replicas."""
        used = {d.path: 0 for d in self.specs}
        for tp, path in self.dir_of.items():
            used[path] += sizes.get(tp, 0)
        futures: dict[str, list[FutureInfo]] = {d.path: [] for d in self.specs}
        for tp in sorted(self.futures):
            f = self.futures[tp]
            used[f.log_dir] += f.copied_bytes
            futures[f.log_dir].append(FutureInfo(tp[0], tp[1], f.copied_bytes, f.lag_bytes(sizes.get(tp, 0))))
        return tuple(
            LogDirInfo(
                d.path,
                used[d.path],
                -1 if d.capacity_bytes is None else d.capacity_bytes,
                -1 if d.capacity_bytes is None else max(0, d.capacity_bytes - used[d.path]),
                tuple(futures[d.path]),
            )
            for d in self.specs
        )

"""An agent's log directories (JBOD, KIP-113), the pure part: the ``--log-dirs`` value, where a
new replica goes, and how a replica moved between two directories of the broker is copied.

Kafka's rules: a new replica goes to the directory with the fewest logs (LogManager.nextLogDirs;
a future replica counts where it is being written; ties go to the first configured). A move
(AlterReplicaLogDirs) creates a *future* replica in the destination directory that copies the
current one (ReplicaAlterLogDirsThread) under the broker's intra-broker throttle
``replica.alter.log.dirs.io.max.bytes.per.second``; once it has everything the current replica
has, it replaces it (the future log is renamed to the current one). A move to the directory the
replica is in cancels a future replica, if any, and is otherwise a no-op.

Capacity is enforced where Kafka would find out the hard way: a move whose replica does not fit
in what is left of the destination's capacity (its replicas and the full size of the future
replicas already on their way there counted) is refused up front with KAFKA_STORAGE_ERROR, the
code Kafka answers for a dir it cannot write to, rather than filling the dir mid-copy (Kafka
checks no free space: a full disk fails the copy and takes the dir offline).

Nothing here does I/O or reads a clock.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from reassignd.broker.throttle import allocate, grant

DEFAULT_LOG_DIR = "/sim"  # the one directory of an agent without ``--log-dirs``


@dataclass(frozen=True, slots=True)
class LogDirSpec:
    """One directory: its path and simulated capacity (None: unbounded, reported as unknown)."""

    path: str
    capacity_bytes: int | None = None


def parse_log_dirs(value: object) -> tuple[LogDirSpec, ...]:
    """``DIR[:CAPACITY_BYTES],...`` (a string, or a TOML list of such items); raises ValueError."""
    items: list[str]
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        items = [str(v) for v in value]
    else:
        raise ValueError(f"expected DIR[:CAPACITY_BYTES],..., got {value!r}")
    dirs: list[LogDirSpec] = []
    for raw in items:
        item = raw.strip()
        path, sep, capacity = item.rpartition(":")
        if not sep or not capacity.strip().isdigit():
            path, capacity = item, ""
        path = path.strip()
        if not path:
            raise ValueError(f"a log dir needs a path, got {raw.strip()!r}")
        if any(d.path == path for d in dirs):
            raise ValueError(f"log dir {path!r} given twice")
        dirs.append(LogDirSpec(path, int(capacity) if capacity else None))
    if not dirs:
        raise ValueError("at least one log dir is needed")
    return tuple(dirs)


def next_log_dir(dirs: Sequence[LogDirSpec], logs_per_dir: Mapping[str, int]) -> str:
    """Kafka's LogManager.nextLogDirs: the directory with the fewest logs (the first configured
    among equals)."""
    if not dirs:
        raise ValueError("no log dir")
    return min(dirs, key=lambda d: logs_per_dir.get(d.path, 0)).path


def no_room(spec: LogDirSpec, committed_bytes: int, size_bytes: int) -> str | None:
    """Why ``size_bytes`` more do not fit in ``spec``'s dir where ``committed_bytes`` are already
    taken or promised, or None (always None without a capacity)."""
    if spec.capacity_bytes is None:
        return None
    free = max(0, spec.capacity_bytes - committed_bytes)
    if size_bytes <= free:
        return None
    return (
        f"{size_bytes} bytes do not fit in log dir {spec.path}: {free} of its "
        f"{spec.capacity_bytes} bytes are free"
    )


@dataclass(frozen=True, slots=True)
class FutureReplica:
    """A replica being copied to ``log_dir`` on the same broker: ``copied_bytes`` so far."""

    log_dir: str
    copied_bytes: int = 0

    def lag_bytes(self, current_bytes: int) -> int:
        """What it still misses of the current replica (Kafka's offset lag of a future replica)."""
        return max(0, current_bytes - self.copied_bytes)


def copy_budget_bytes(rate_bytes_per_s: float, elapsed_s: float, carry: float = 0.0) -> tuple[int, float]:
    """Whole bytes the copies may write in ``elapsed_s`` at ``rate_bytes_per_s`` (plus what the
    previous step could not use of a fraction), and the fraction carried to the next step."""
    if elapsed_s <= 0:
        return 0, carry
    budget = rate_bytes_per_s * elapsed_s + carry
    whole = grant(budget)
    return whole, budget - whole if math.isfinite(budget) and whole < budget else 0.0


def copied(needs: Sequence[int], budget_bytes: int) -> list[int]:
    """Bytes each copy writes in one step: the budget split max-min fairly over what each still
    needs (a copy never writes past the current replica's end)."""
    return allocate(budget_bytes, [max(0, n) for n in needs])


def caught_up(future: FutureReplica, current_bytes: int) -> bool:
    """The future replica has everything the current one has: it replaces it."""
    return future.copied_bytes >= current_bytes

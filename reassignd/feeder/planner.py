"""The plan's driver: loads, then one step per goal, each applied by every group. Pure.

The groups are behind :class:`Groups`, so the same driver runs over plain lists
(:class:`LocalGroups`, for tests and small clusters) and over a Spark RDD
(:mod:`reassignd.feeder.spark_job`). Groups are contiguous slices of the partitions sorted by topic
and partition, so the plan depends on the input, the goals, the seed and the number of groups
(a function of the input's size unless ``--tasks`` says otherwise), never on the Spark master.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from reassignd.feeder.budget import Step, TaskBudget, make_step
from reassignd.feeder.disks import (
    ANY_DIR,
    DirLoad,
    DirMove,
    DirReplica,
    apply_dir_moves,
    dir_loads,
    placed_replicas,
    plan_brokers,
    staying_replicas,
)
from reassignd.feeder.goals import DiskBalance, Goal, GoalError, PlanOptions
from reassignd.feeder.loads import REPLICAS, Load, group_loads, total_loads
from reassignd.feeder.model import CURRENT, ORIGINAL, PARTITION, TOPIC, Cluster, Row, split_groups
from reassignd.feeder.moves import plan_group

ROWS_PER_GROUP = 50_000


class Groups(Protocol):
    def loads(self, topics: str | None) -> tuple[list[dict[int, Load]], int]:
        """Each group's load per broker, and the bytes every move so far copies."""
        ...

    def apply(
        self,
        step: Step,
        budgets: Sequence[TaskBudget],
        racks: Mapping[int, str | None],
        rank: Mapping[int, int],
        topics: str | None,
    ) -> Groups:
        """Every group planned by :func:`plan_group` with its budget."""
        ...

    def changed(self) -> list[Row]:
        """The rows whose replicas changed, sorted by topic then partition."""
        ...

    def dir_moves(
        self,
        log_dirs: Mapping[tuple[str, int, int], str],
        capacity: Mapping[int, Mapping[str, int]],
        budget_bytes: int | None,
        options: PlanOptions,
    ) -> list[DirMove]:
        """The ``disk`` goal's moves, each broker planned on its own (:mod:`.disks`)."""
        ...


def selector(topics: str | None) -> re.Pattern[str] | None:
    return re.compile(topics) if topics is not None else None


class LocalGroups:
    def __init__(self, groups: list[list[Row]]) -> None:
        self.groups = groups

    def loads(self, topics: str | None) -> tuple[list[dict[int, Load]], int]:
        pattern = selector(topics)
        results = [
            group_loads(
                g, (lambda t: True) if pattern is None else (lambda t: pattern.fullmatch(t) is not None)
            )
            for g in self.groups
        ]
        return [r[0] for r in results], sum(r[1] for r in results)

    def apply(
        self,
        step: Step,
        budgets: Sequence[TaskBudget],
        racks: Mapping[int, str | None],
        rank: Mapping[int, int],
        topics: str | None,
    ) -> LocalGroups:
        return LocalGroups(
            [plan_group(g, step, b, racks, rank, topics) for g, b in zip(self.groups, budgets, strict=True)]
        )

    def changed(self) -> list[Row]:
        return [r for g in self.groups for r in g if r[CURRENT] != r[ORIGINAL]]

    def dir_moves(
        self,
        log_dirs: Mapping[tuple[str, int, int], str],
        capacity: Mapping[int, Mapping[str, int]],
        budget_bytes: int | None,
        options: PlanOptions,
    ) -> list[DirMove]:
        per_broker: dict[int, list[DirReplica]] = {}
        for g in self.groups:
            for b, r in staying_replicas(g, log_dirs):
                per_broker.setdefault(b, []).append(r)
        return plan_brokers(per_broker, capacity, budget_bytes, options.tolerance, options.topics)


@dataclass(frozen=True, slots=True)
class PlanResult:
    goals: tuple[Goal, ...]
    steps: tuple[Step, ...]
    before: Mapping[int, Load]  # per broker
    after: Mapping[int, Load]
    moves: tuple[Row, ...]  # changed rows, sorted by topic then partition
    copied_bytes: int  # inter-broker copies and directory moves
    groups: int
    dir_moves: tuple[DirMove, ...] = ()  # the disk goal's, sorted
    # (broker, directory) -> its load, for brokers the input gives directories (empty otherwise)
    dirs_before: Mapping[tuple[int, str], DirLoad] = field(default_factory=dict)
    dirs_after: Mapping[tuple[int, str], DirLoad] = field(default_factory=dict)
    dir_only: tuple[Row, ...] = ()  # partitions whose replicas only change directory, sorted

    def entries(self) -> list[tuple[Row, tuple[str, ...] | None]]:
        """Every partition the plan changes, sorted, with its ``log_dirs`` (one per replica of
        its new list, ``"any"`` where not pinned; None when no replica changes directory)."""
        to: dict[tuple[str, int], dict[int, str]] = {}
        for m in self.dir_moves:
            to.setdefault((m.topic, m.partition), {})[m.broker] = m.to_dir
        out: list[tuple[Row, tuple[str, ...] | None]] = []
        for row in sorted((*self.moves, *self.dir_only), key=lambda r: (r[TOPIC], r[PARTITION])):
            dirs = to.get((row[TOPIC], row[PARTITION]))
            out.append((row, None if dirs is None else tuple(dirs.get(b, ANY_DIR) for b in row[CURRENT])))
        return out

    def rollback_dirs(self) -> dict[tuple[str, int], tuple[str, ...]]:
        """For partitions with directory moves: the directories their replicas come back to."""
        back: dict[tuple[str, int], dict[int, str]] = {}
        for m in self.dir_moves:
            back.setdefault((m.topic, m.partition), {})[m.broker] = m.from_dir
        originals = {(r[TOPIC], r[PARTITION]): r[ORIGINAL] for r in (*self.moves, *self.dir_only)}
        return {
            tp: tuple(dirs.get(b, ANY_DIR) for b in originals[tp])
            for tp, dirs in back.items()
            if tp in originals
        }

    @property
    def left_behind(self) -> dict[int, int]:
        """Replicas still on a decommissioned broker (the byte cap or no broker could take them)."""
        leaving = {b for s in self.steps for b in s.leaving}
        return {b: self.after[b][REPLICAS] for b in sorted(leaving) if self.after[b][REPLICAS]}


def group_count(partitions: int, tasks: int | None = None) -> int:
    if tasks is not None:
        return max(1, tasks)
    return max(1, math.ceil(partitions / ROWS_PER_GROUP))


def broker_rank(brokers: Sequence[int], seed: int) -> dict[int, int]:
    """A seeded order of the brokers: ties between equally good brokers follow it."""
    order = sorted(brokers)
    random.Random(seed).shuffle(order)
    return {b: i for i, b in enumerate(order)}


def run_plan(
    cluster: Cluster,
    goals: Sequence[Goal],
    options: PlanOptions,
    groups: Groups,
    n_groups: int,
) -> PlanResult:
    racks = cluster.racks
    rank = broker_rank(cluster.broker_ids, options.seed)
    first, _ = groups.loads(options.topics)
    before = total_loads(first, racks)
    loads, copied = first, 0
    steps: list[Step] = []
    for goal in goals:
        if isinstance(goal, DiskBalance):
            continue  # after the goals that move replicas between brokers
        totals = total_loads(loads, racks)
        left = None if options.max_move_bytes is None else max(0, options.max_move_bytes - copied)
        # brokers an earlier goal decommissioned receive nothing from the later ones
        gone = frozenset(b for s in steps for b in s.leaving)
        step_options = replace(options, exclude_brokers=options.exclude_brokers | gone | cluster.offline)
        step, budgets = make_step(goal, loads, totals, racks, step_options, left)
        groups = groups.apply(step, budgets, racks, rank, options.topics)
        steps.append(step)
        loads, copied = groups.loads(options.topics)
    after = total_loads(loads, racks)
    moves = sorted(groups.changed(), key=lambda r: (r[TOPIC], r[PARTITION]))
    dir_moves: list[DirMove] = []
    if any(isinstance(g, DiskBalance) for g in goals):
        if not cluster.log_dirs:
            raise GoalError("goal disk: the input gives no replica's log directory (see docs/feeder.md)")
        left = None if options.max_move_bytes is None else max(0, options.max_move_bytes - copied)
        dir_moves = groups.dir_moves(cluster.log_dirs, cluster.dir_capacity, left, options)
        copied += sum(m.size_bytes for m in dir_moves)
    changed = {(r[TOPIC], r[PARTITION]) for r in moves}
    wanted = {(m.topic, m.partition) for m in dir_moves} - changed
    dir_only = tuple(r for r in cluster.rows if (r[TOPIC], r[PARTITION]) in wanted)
    dirs_before: dict[tuple[int, str], DirLoad] = {}
    dirs_after: dict[tuple[int, str], DirLoad] = {}
    if cluster.log_dirs:
        moved = {(r[TOPIC], r[PARTITION]): r for r in moves}
        final = (moved.get((r[TOPIC], r[PARTITION]), r) for r in cluster.rows)
        dirs_before = dir_loads(
            placed_replicas(cluster.rows, cluster.log_dirs, after=False), cluster.dir_capacity
        )
        dirs_after = dir_loads(
            apply_dir_moves(placed_replicas(final, cluster.log_dirs, after=True), dir_moves),
            cluster.dir_capacity,
        )
    return PlanResult(
        tuple(goals),
        tuple(steps),
        before,
        after,
        tuple(moves),
        copied,
        n_groups,
        tuple(dir_moves),
        dirs_before,
        dirs_after,
        dir_only,
    )


def plan_locally(
    cluster: Cluster, goals: Sequence[Goal], options: PlanOptions, tasks: int | None = None
) -> PlanResult:
    """The whole plan in this process, the groups one after the other."""
    n = group_count(len(cluster.rows), tasks)
    return run_plan(cluster, goals, options, LocalGroups(split_groups(cluster.rows, n)), n)

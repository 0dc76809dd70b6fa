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
from dataclasses import dataclass, replace
from typing import Protocol

from reassignd.feeder.budget import Step, TaskBudget, make_step
from reassignd.feeder.goals import Goal, PlanOptions
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


@dataclass(frozen=True, slots=True)
class PlanResult:
    goals: tuple[Goal, ...]
    steps: tuple[Step, ...]
    before: Mapping[int, Load]  # per broker
    after: Mapping[int, Load]
    moves: tuple[Row, ...]  # changed rows, sorted by topic then partition
    copied_bytes: int
    groups: int

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
    return PlanResult(tuple(goals), tuple(steps), before, after, tuple(moves), copied, n_groups)


def plan_locally(
    cluster: Cluster, goals: Sequence[Goal], options: PlanOptions, tasks: int | None = None
) -> PlanResult:
    """The whole plan in this process, the groups one after the other."""
    n = group_count(len(cluster.rows), tasks)
    return run_plan(cluster, goals, options, LocalGroups(split_groups(cluster.rows, n)), n)

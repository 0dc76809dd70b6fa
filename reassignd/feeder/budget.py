"""From goal and loads to a step: what may leave and enter each broker, cut per task. Pure.

The driver knows every broker's load; a task knows only its own partitions. So before the tasks
run, each broker's allowance is cut into one slice per task (weighted by what that task can
actually move), and a task never gives a broker more than its slice: the tasks cannot over-fill a
broker together. Moves that a goal requires (replicas leaving a decommissioned broker, replicas
a replication factor adds) are always placed; their slices only rank the destinations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from reassignd.feeder.goals import (
    AddBrokers,
    Decommission,
    Goal,
    GoalError,
    Metric,
    PlanOptions,
    Rebalance,
    ReplicationFactor,
)
from reassignd.feeder.loads import BYTES, LEADERS, REPLICAS, SEL_BYTES, Load

StepKind = Literal["move", "leaders", "rf"]


@dataclass(frozen=True, slots=True)
class Step:
    """One goal, as every task applies it to its partitions."""

    goal: Goal
    kind: StepKind
    metric: Metric  # "bytes" or "replicas" measures a move; "leaders" for the leaders goal
    dests: frozenset[int]  # brokers that may receive (or, for leaders, lead)
    leaving: frozenset[int] = frozenset()  # decommission: every replica here moves
    rf_topic: str | None = None
    rf_replicas: int = 0
    lower_bound: int = 0  # the metric amount the goal cannot do without moving


@dataclass(frozen=True, slots=True)
class TaskBudget:
    """One task's slice: how much each broker should shed and may still receive."""

    shed: Mapping[int, int]
    room: Mapping[int, int]
    move_bytes: int | None  # None: no cap


def apportion(total: int, weights: Sequence[int]) -> list[int]:
    """``total`` split in proportion to ``weights`` (largest remainder; ties to the lower index)."""
    wsum = sum(weights)
    if wsum <= 0 or total == 0:
        return [0] * len(weights) if wsum > 0 or not weights else [total] + [0] * (len(weights) - 1)
    parts = [total * w // wsum for w in weights]
    rest = total - sum(parts)
    order = sorted(range(len(weights)), key=lambda i: (-(total * weights[i] % wsum), i))
    for i in order[:rest]:
        parts[i] += 1
    return parts


def water_level(loads: Sequence[int], amount: int) -> int:
    """The level X with sum(max(0, X - load)) >= amount: filling the emptiest first."""
    xs = sorted(loads)
    filled = 0
    for i, x in enumerate(xs):
        nxt = xs[i + 1] if i + 1 < len(xs) else None
        width = i + 1
        if nxt is None or filled + width * (nxt - x) >= amount:
            return x + math.ceil((amount - filled) / width)
        filled += width * (nxt - x)
    return 0


def band_budget(
    loads: Mapping[int, int], movable: Mapping[int, int], metric: Metric, tolerance: float
) -> tuple[dict[int, int], dict[int, int]]:
    """What each broker sheds and may receive to bring every broker into the band around the
    mean (mean × (1 ± tolerance) for bytes; floor..ceil of the mean for counts), moving no more
    than the band needs: the excess above the band, or, when larger, the shortfall below it (then
    taken from the brokers above the mean, in proportion to what they hold beyond it)."""
    mean = sum(loads.values()) / max(1, len(loads))
    if metric == "bytes":
        upper, lower = int(mean * (1 + tolerance)), math.ceil(mean * (1 - tolerance))
    else:
        upper, lower = math.ceil(mean), math.floor(mean)
    shed = {b: min(movable[b], max(0, load - upper)) for b, load in loads.items()}
    shortfall = sum(max(0, lower - load) for load in loads.values())
    extra = shortfall - sum(shed.values())
    if extra > 0:
        order = sorted(loads)
        spare = [max(0, min(movable[b] - shed[b], loads[b] - shed[b] - math.ceil(mean))) for b in order]
        for b, part in zip(order, apportion(min(extra, sum(spare)), spare), strict=True):
            shed[b] += part
    room = {d: 0 if shed[d] else max(0, upper - load) for d, load in loads.items()}
    return shed, room


def _index(metric: Metric, selected: bool) -> int:
    base = {"bytes": BYTES, "replicas": REPLICAS, "leaders": LEADERS}[metric]
    return base + (SEL_BYTES - BYTES if selected else 0)


def _check_known(brokers: frozenset[int], racks: Mapping[int, object], goal: Goal) -> None:
    unknown = sorted(brokers - set(racks))
    if unknown:
        raise GoalError(f"goal {goal}: unknown brokers {unknown}")


def _cap_slices(cap: int | None, weights: Sequence[int]) -> list[int | None]:
    if cap is None:
        return [None] * len(weights)
    return list(apportion(cap, weights if sum(weights) > 0 else [1] * len(weights)))


def _shed_slices(
    shed: Mapping[int, int], groups: Sequence[Mapping[int, Load]], idx: int
) -> list[dict[int, int]]:
    out: list[dict[int, int]] = [{} for _ in groups]
    for b, amount in shed.items():
        if amount <= 0:
            continue
        parts = apportion(amount, [g.get(b, (0,) * 6)[idx] for g in groups])
        for g, part in enumerate(parts):
            if part:
                out[g][b] = part
    return out


def _room_slices(room: Mapping[int, int], weights: Sequence[int]) -> list[dict[int, int]]:
    out: list[dict[int, int]] = [{} for _ in weights]
    ws = list(weights) if sum(weights) > 0 else [1] * len(weights)
    for d, amount in room.items():
        # a priority below zero: every task sees it scaled alike
        parts = apportion(amount, ws) if amount >= 0 else [-p for p in apportion(-amount, ws)]
        for g, part in enumerate(parts):
            out[g][d] = part
    return out


def make_step(
    goal: Goal,
    groups: Sequence[Mapping[int, Load]],
    totals: Mapping[int, Load],
    racks: Mapping[int, str | None],
    options: PlanOptions,
    move_bytes_left: int | None,
) -> tuple[Step, list[TaskBudget]]:
    """The step for ``goal`` over the current loads, and one budget per group."""
    pool = frozenset(racks) - options.exclude_brokers
    sized = any(v[BYTES] for v in totals.values())
    metric: Metric = "bytes" if sized else "replicas"
    match goal:
        case Decommission(brokers=leaving):
            _check_known(leaving, racks, goal)
            dests = pool - leaving
            if not dests:
                raise GoalError(f"goal {goal}: no broker is left to receive the replicas")
            sel = _index(metric, True)
            per_group = [sum(g.get(b, (0,) * 6)[sel] for b in leaving) for g in groups]
            level = water_level([totals[d][_index(metric, False)] for d in sorted(dests)], sum(per_group))
            room = {d: level - totals[d][_index(metric, False)] for d in dests}
            step = Step(goal, "move", metric, dests, leaving=leaving, lower_bound=sum(per_group))
            budgets = [
                TaskBudget({}, r, c)
                for r, c in zip(
                    _room_slices(room, per_group), _cap_slices(move_bytes_left, per_group), strict=True
                )
            ]
            return step, budgets
        case AddBrokers(brokers=new):
            _check_known(new, racks, goal)
            dests = new - options.exclude_brokers
            full, sel = _index(metric, False), _index(metric, True)
            mean = sum(totals[b][full] for b in pool) / max(1, len(pool))
            room = {d: max(0, int(mean) - totals[d][full]) for d in dests}
            olds = sorted(pool - new)
            excess = [min(totals[b][sel], max(0, totals[b][full] - int(mean))) for b in olds]
            need = min(sum(room.values()), sum(excess))
            shed = dict(zip(olds, apportion(need, excess), strict=True))
            return _optional(goal, metric, dests, shed, room, groups, sel, move_bytes_left, need)
        case Rebalance(metric=m):  # rebalance:bytes with every size 0 finds nothing to move
            full, sel = _index(m, False), _index(m, True)
            loads = {b: totals[b][full] for b in pool}
            shed, room = band_budget(loads, {b: totals[b][sel] for b in pool}, m, options.tolerance)
            kind: StepKind = "leaders" if m == "leaders" else "move"
            step, budgets = _optional(
                goal, m, pool, shed, room, groups, sel, move_bytes_left, sum(shed.values())
            )
            return Step(goal, kind, m, pool, lower_bound=step.lower_bound), budgets
        case ReplicationFactor(topic=topic, replicas=n):
            if n > len(pool):
                raise GoalError(f"goal {goal}: {n} replicas need {n} brokers, only {len(pool)} can take one")
            full = _index(metric, False)
            top = max((totals[d][full] for d in pool), default=0)
            room = {d: top - totals[d][full] for d in pool}
            weights = [1] * len(groups)
            step = Step(goal, "rf", metric, pool, rf_topic=topic, rf_replicas=n)
            budgets = [
                TaskBudget({}, r, c)
                for r, c in zip(
                    _room_slices(room, weights), _cap_slices(move_bytes_left, weights), strict=True
                )
            ]
            return step, budgets
    raise AssertionError(goal)


def _optional(  # noqa: PLR0913, PLR0917 (the planner's whole state for one step, as values)
    goal: Goal,
    metric: Metric,
    dests: frozenset[int],
    shed: Mapping[int, int],
    room: Mapping[int, int],
    groups: Sequence[Mapping[int, Load]],
    sel: int,
    move_bytes_left: int | None,
    lower_bound: int,
) -> tuple[Step, list[TaskBudget]]:
    sheds = _shed_slices(shed, groups, sel)
    weights = [sum(s.values()) for s in sheds]
    rooms = _room_slices(room, weights)
    caps = _cap_slices(move_bytes_left, weights)
    step = Step(goal, "move", metric, dests, lower_bound=lower_bound)
    return step, [TaskBudget(s, r, c) for s, r, c in zip(sheds, rooms, caps, strict=True)]

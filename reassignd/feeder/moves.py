"""One task's share of a step: new replica lists for its partitions, within its budget. Pure.

* ``move`` with ``leaving``: every replica on a leaving broker goes, largest first, to the broker
  with the most room on a rack the partition does not use; nothing else moves.
* ``move`` with ``shed``: brokers over their share give up replicas, largest first among those that
  fit what they should shed, to brokers with room for them; never a move that leaves the partition
  on fewer racks. Only what the budget asks for moves.
* ``leaders``: a follower with room becomes the preferred leader (the lists are reordered; no data
  moves).
* ``rf``: replicas added where there is most room (distinct racks first), or removed from the end,
  those sharing a rack first, then the fullest brokers; the preferred leader stays.

A new replica takes the position of the one it replaces, so the preferred leader stays where it
is unless it is the one moving.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from reassignd.feeder.budget import Step, TaskBudget
from reassignd.feeder.destinations import Destinations
from reassignd.feeder.model import CURRENT, PARTITION, SIZE, TOPIC, Row
from reassignd.topic_partition import Replicas


def plan_group(
    rows: Sequence[Row],
    step: Step,
    budget: TaskBudget,
    racks: Mapping[int, str | None],
    rank: Mapping[int, int],
    topics: str | None,
) -> list[Row]:
    """``rows`` with their ``current`` replicas changed as ``step`` asks, within ``budget``."""
    pattern = re.compile(topics) if topics is not None else None
    out = list(rows)
    chosen = [i for i, r in enumerate(out) if pattern is None or pattern.fullmatch(r[TOPIC])]
    planner = _GroupPlanner(out, step, budget, racks, rank)
    match step.kind:
        case "move" if step.leaving:
            planner.evacuate(chosen)
        case "move":
            planner.shed(chosen)
        case "leaders":
            planner.lead(chosen)
        case "rf":
            planner.resize(chosen)
    return out


class _GroupPlanner:
    def __init__(
        self,
        rows: list[Row],
        step: Step,
        budget: TaskBudget,
        racks: Mapping[int, str | None],
        rank: Mapping[int, int],
    ) -> None:
        self.rows = rows
        self.step = step
        self.racks = racks
        self.rank = rank
        self.shed_left = dict(budget.shed)
        self.dests = Destinations(step.dests, racks, rank, dict(budget.room))
        self.bytes_left = budget.move_bytes

    def amount(self, row: Row) -> int:
        return row[SIZE] if self.step.metric == "bytes" else 1

    def affordable(self, row: Row, new_replicas: int = 1) -> bool:
        return self.bytes_left is None or row[SIZE] * new_replicas <= self.bytes_left

    def replace(self, i: int, old: int, new: int) -> None:
        row = self.rows[i]
        replicas = tuple(new if b == old else b for b in row[CURRENT])
        self.set(i, replicas)
        self.dests.take(new, self.amount(row))

    def set(self, i: int, replicas: Replicas) -> None:
        t, p, size, original, current = self.rows[i]
        gained = len(set(replicas) - set(current) - set(original))
        if self.bytes_left is not None:
            self.bytes_left -= size * gained
        self.rows[i] = (t, p, size, original, replicas)

    def evacuate(self, chosen: Sequence[int]) -> None:
        leaving = self.step.leaving
        work = [(i, b) for i in chosen for b in self.rows[i][CURRENT] if b in leaving]
        work.sort(
            key=lambda w: (-self.rows[w[0]][SIZE], self.rows[w[0]][TOPIC], self.rows[w[0]][PARTITION], w[1])
        )
        for i, b in work:
            row = self.rows[i]
            if not self.affordable(row):
                continue
            current = row[CURRENT]
            others = [o for o in current if o != b]
            d = self.dests.best(others, current, self.amount(row), must_fit=False, from_rack_shared=False)
            if d is not None:
                self.replace(i, b, d)

    def shed(self, chosen: Sequence[int]) -> None:
        on: dict[int, list[int]] = {}
        for i in chosen:
            for b in self.rows[i][CURRENT]:
                if self.shed_left.get(b, 0) > 0:
                    on.setdefault(b, []).append(i)
        # largest first over every source, as longest-processing-time scheduling: the big
        # replicas land while the emptiest brokers still have room, the small ones fill the rest
        work = sorted(
            ((i, s) for s, rows in on.items() for i in rows),
            key=lambda w: (-self.amount(self.rows[w[0]]), w[0], self.rank[w[1]]),
        )
        for i, s in work:
            row = self.rows[i]
            need = self.amount(row)
            if need > self.shed_left[s] or need == 0 or s not in row[CURRENT] or not self.affordable(row):
                continue
            current = row[CURRENT]
            others = [o for o in current if o != s]
            shared = self.racks.get(s) is None or self.racks.get(s) in {self.racks.get(o) for o in others}
            d = self.dests.best(others, current, need, must_fit=True, from_rack_shared=shared)
            if d is not None:
                self.replace(i, s, d)
                self.shed_left[s] -= need

    def lead(self, chosen: Sequence[int]) -> None:
        room = self.dests.room
        for i in chosen:
            current = self.rows[i][CURRENT]
            leader = current[0]
            if self.shed_left.get(leader, 0) <= 0:
                continue
            followers = [f for f in current[1:] if f in self.dests.members and room.get(f, 0) > 0]
            if not followers:
                continue
            f = min(followers, key=lambda b: (-room[b], self.rank[b]))
            pos = current.index(f)
            reordered = list(current)
            reordered[0], reordered[pos] = f, leader
            self.set(i, tuple(reordered))
            self.dests.take(f, 1)
            self.shed_left[leader] -= 1

    def resize(self, chosen: Sequence[int]) -> None:
        n = self.step.rf_replicas
        for i in chosen:
            row = self.rows[i]
            if row[TOPIC] != self.step.rf_topic:
                continue
            current = list(row[CURRENT])
            while len(current) < n and self.affordable(row):
                d = self.dests.best(
                    current, current, self.amount(row), must_fit=False, from_rack_shared=False
                )
                if d is None:
                    break
                current.append(d)
                self.set(i, tuple(current))
                self.dests.take(d, self.amount(row))
            while len(current) > n:
                current.remove(self._to_drop(current))
                self.set(i, tuple(current))

    def _to_drop(self, current: Sequence[int]) -> int:
        """A follower to remove: one sharing its rack first, then the fullest (least room)."""
        racks = [self.racks.get(b) for b in current]

        def key(b: int) -> tuple[int, int, int]:
            rack = self.racks.get(b)
            shared = rack is not None and racks.count(rack) > 1
            return (0 if shared else 1, self.dests.room.get(b, 0), self.rank.get(b, 0))

        return min(current[1:], key=key)

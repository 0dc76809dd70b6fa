"""Choosing the broker a replica goes to: the one with the most room, on a rack the partition
does not use yet. Pure.

One heap per rack, keyed by room (largest first) then by a seeded rank that breaks ties the same
way on every run. Entries go stale when a broker's room changes; they are dropped when met.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Mapping


class Destinations:
    def __init__(
        self,
        dests: Collection[int],
        racks: Mapping[int, str | None],
        rank: Mapping[int, int],
        room: dict[int, int],
    ) -> None:
        self.racks = racks
        self.rank = rank
        self.room = room
        self.members = frozenset(dests)
        self.heaps: dict[str | None, list[tuple[int, int, int]]] = {}
        for d in dests:
            room.setdefault(d, 0)
            self.heaps.setdefault(racks.get(d), []).append((-room[d], rank[d], d))
        for heap in self.heaps.values():
            heapq.heapify(heap)

    def _top(self, rack: str | None, exclude: Collection[int]) -> tuple[int, int, int] | None:
        """The rack's broker with the most room that is not in ``exclude``, left in the heap."""
        heap = self.heaps[rack]
        aside: list[tuple[int, int, int]] = []
        found = None
        while heap:
            entry = heap[0]
            if -entry[0] != self.room[entry[2]]:
                heapq.heappop(heap)  # stale
                continue
            if entry[2] in exclude:
                aside.append(heapq.heappop(heap))
                continue
            found = entry
            break
        for entry in aside:
            heapq.heappush(heap, entry)
        return found

    def best(
        self,
        others: Collection[int],
        exclude: Collection[int],
        need: int,
        *,
        must_fit: bool,
        from_rack_shared: bool,
    ) -> int | None:
        """The broker for a replica of a partition whose other replicas are ``others``.

        First choice: a rack none of ``others`` uses (brokers without a rack never clash). Then,
        when the move cannot make the partition's racks less distinct (``from_rack_shared``: the
        replica leaving shared its rack anyway) or the move is required (``must_fit`` false), any
        rack. With ``must_fit`` the broker must have ``need`` room left; otherwise the one with the
        most room is taken, full or not.
        """
        used = {self.racks.get(o) for o in others} - {None}
        choice = self._pick(used, exclude, need, must_fit)
        if choice is None and (from_rack_shared or not must_fit):
            choice = self._pick(set(), exclude, need, must_fit)
        return choice

    def _pick(self, used: set[str | None], exclude: Collection[int], need: int, must_fit: bool) -> int | None:
        best: tuple[int, int, int] | None = None
        for rack in self.heaps:
            if rack in used:
                continue
            top = self._top(rack, exclude)
            if top is not None and (best is None or top < best):
                best = top
        if best is None or (must_fit and -best[0] < need):
            return None
        return best[2]

    def take(self, broker: int, amount: int) -> None:
        """``broker`` received ``amount`` (or, negative, gave it up)."""
        self.room[broker] = self.room.get(broker, 0) - amount
        if broker in self.members:
            rack = self.racks.get(broker)
            heapq.heappush(self.heaps[rack], (-self.room[broker], self.rank[broker], broker))

"""Demotion and promotion of a broker, decided: which partitions get which replica order, which
need a preferred-replica election, which are refused and why. Pure.

**Demote** (Cruise Control's demote_broker): every partition hosting the broker gets it moved to
the end of its replica list, the other replicas keeping their order — except that a live in-sync
replica is put first when the first one is not, since the preferred-replica election that follows
can only elect a first replica that is live and in sync. The replica set, and so the racks, never
change; the broker stays in the ISR. Where it leads, the election moves the leadership to the new
first replica. DemotionRefusal, per partition: a partition it leads with no other live in-sync replica
(83 ELIGIBLE_LEADERS_NOT_AVAILABLE: its leadership has nowhere to go), a partition being
reassigned (60 REASSIGNMENT_IN_PROGRESS: its replica list is the reassignment's). A topic being
deleted is left alone. A partition whose order changes is recorded with its order before (the
first demotion's order is kept when the broker is demoted again).

**Promote** restores the recorded orders: a partition whose replica set is still the recorded one
gets the recorded order back, and an election hands the leadership back to its first replica when
that replica is live and in sync. DemotionRefusal: a partition being reassigned (60, the record kept for a
later promote), one whose replicas changed since (10002 STALE_PLAN, the record dropped). A
partition that no longer exists is forgotten.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from reassignd.topic_partition import Replicas, TopicPartition

REASSIGNMENT_IN_PROGRESS = 60
ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
STALE_PLAN = 10002


@dataclass(frozen=True, slots=True)
class PartitionNow:
    """A partition as the controller knows it."""

    replicas: Replicas
    leader: int
    isr: tuple[int, ...]
    moving: bool = False
    deleting: bool = False


@dataclass(frozen=True, slots=True)
class DemotionRefusal:
    error_code: int
    message: str


@dataclass(frozen=True, slots=True)
class OrderPlan:
    """What a demotion or a promotion does."""

    reorders: Mapping[TopicPartition, Replicas] = field(default_factory=dict)  # new orders
    elections: tuple[TopicPartition, ...] = ()  # preferred-replica elections after the reorders
    refused: Mapping[TopicPartition, DemotionRefusal] = field(default_factory=dict)
    record: Mapping[TopicPartition, Replicas] = field(default_factory=dict)  # orders to keep (demote)
    forget: frozenset[TopicPartition] = frozenset()  # records to drop (promote)

    @property
    def done(self) -> tuple[TopicPartition, ...]:
        """The partitions the plan acts on (reordered or elected), in order."""
        return tuple(sorted(set(self.reorders) | set(self.elections)))


def _name(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


def demoted_order(replicas: Replicas, broker: int, in_sync: Collection[int]) -> Replicas:
    """``replicas`` with ``broker`` last; the others keep their order, but a replica in
    ``in_sync`` (live and in the ISR) comes first when the first is not."""
    others = [r for r in replicas if r != broker]
    if others and others[0] not in in_sync:
        first = next((r for r in others if r in in_sync), None)
        if first is not None:
            others.remove(first)
            others.insert(0, first)
    return (*others, broker) if broker in replicas else tuple(others)


def plan_demotion(
    broker: int,
    partitions: Mapping[TopicPartition, PartitionNow],
    live: Collection[int],
    recorded: Mapping[TopicPartition, Replicas],
) -> OrderPlan:
    """``partitions``: every partition (those not hosting ``broker`` are ignored); ``recorded``:
    the orders a previous demotion of it recorded (kept as they are)."""
    reorders: dict[TopicPartition, Replicas] = {}
    elections: list[TopicPartition] = []
    refused: dict[TopicPartition, DemotionRefusal] = {}
    record: dict[TopicPartition, Replicas] = {}
    for tp in sorted(partitions):
        p = partitions[tp]
        if broker not in p.replicas or p.deleting:
            continue
        leads = p.leader == broker
        in_sync = {r for r in p.isr if r in live and r != broker}
        if p.moving:
            if leads or p.replicas[0] == broker:
                refused[tp] = DemotionRefusal(
                    REASSIGNMENT_IN_PROGRESS,
                    f"{_name(tp)} is being reassigned; demote broker {broker} again once the move ends",
                )
            continue
        if leads and not in_sync:
            refused[tp] = DemotionRefusal(
                ELIGIBLE_LEADERS_NOT_AVAILABLE,
                f"broker {broker} is the only live in-sync replica of {_name(tp)}: its leadership "
                "has nowhere to go",
            )
            continue
        order = demoted_order(p.replicas, broker, in_sync)
        if order != p.replicas:
            reorders[tp] = order
            record[tp] = recorded.get(tp, p.replicas)
        if leads:
            elections.append(tp)
    return OrderPlan(reorders, tuple(elections), refused, record)


def plan_promotion(
    broker: int,
    recorded: Mapping[TopicPartition, Replicas],
    partitions: Mapping[TopicPartition, PartitionNow],
    live: Collection[int],
) -> OrderPlan:
    """The recorded orders of ``broker``'s demotion back, where the replicas allow it."""
    reorders: dict[TopicPartition, Replicas] = {}
    elections: list[TopicPartition] = []
    refused: dict[TopicPartition, DemotionRefusal] = {}
    forget: set[TopicPartition] = set()
    for tp in sorted(recorded):
        order = recorded[tp]
        p = partitions.get(tp)
        if p is None or p.deleting:
            forget.add(tp)
            continue
        if p.moving:
            refused[tp] = DemotionRefusal(
                REASSIGNMENT_IN_PROGRESS,
                f"{_name(tp)} is being reassigned; promote broker {broker} again once the move ends",
            )
            continue
        forget.add(tp)
        if set(p.replicas) != set(order) or len(p.replicas) != len(order):
            refused[tp] = DemotionRefusal(
                STALE_PLAN,
                f"{_name(tp)} has replicas {list(p.replicas)} since the demotion, not {list(order)}: "
                "its order is not restored",
            )
            continue
        if order != p.replicas:
            reorders[tp] = order
        first = order[0]
        if p.leader != first and first in live and first in p.isr:
            elections.append(tp)
    return OrderPlan(reorders, tuple(elections), refused, forget=frozenset(forget))

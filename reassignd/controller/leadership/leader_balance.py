"""Auto leader rebalance, the decision (Kafka's ``checkAndTriggerAutoLeaderRebalance``). Pure: no
I/O, no clock.

Each partition prefers the first replica of its assignment. Per broker, the **leader imbalance
ratio** is the share of the partitions preferring it that another broker leads. For every broker
whose ratio is above ``leader.imbalance.per.broker.percentage``, its partitions that another
broker leads get a preferred-replica election, when one can succeed: the preferred replica is live
and in the ISR. Partitions of topics queued for deletion count for nothing; partitions being
reassigned count in the ratio but are left alone (their replicas are changing; the rebalance
after the move completes elects the first target replica).

Kafka skips the whole round while *any* partition is being reassigned; reassignd skips only the
moving partitions, so a long-running batch does not hold every other broker's leadership off its
preferred replicas for hours.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from reassignd.topic_partition import TopicPartition

NOT_LIVE = "preferred replica not live"
NOT_IN_ISR = "preferred replica not in the ISR"
REASSIGNING = "being reassigned"


@dataclass(frozen=True, slots=True)
class Leadership:
    """What the decision needs of one partition: its replicas (the first is the preferred one),
    its leader (None when its state is unknown: not created yet, or undecodable) and its ISR."""

    replicas: tuple[int, ...]
    leader: int | None
    isr: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class BrokerImbalance:
    broker_id: int
    preferred: int  # partitions whose preferred replica is this broker
    led_elsewhere: int  # of those, the ones another broker leads (or nobody)

    @property
    def ratio(self) -> float:
        return self.led_elsewhere / self.preferred if self.preferred else 0.0

    def above(self, percentage: float) -> bool:
        """Kafka's ``imbalanceRatio > percentage / 100``."""
        return self.led_elsewhere * 100 > percentage * self.preferred


@dataclass(frozen=True, slots=True)
class RebalancePlan:
    imbalances: tuple[BrokerImbalance, ...]  # every broker some partition prefers, by id
    over_threshold: tuple[int, ...]  # the brokers above the threshold, by id
    elections: tuple[TopicPartition, ...]  # preferred-replica elections to run, sorted
    skipped: Mapping[TopicPartition, str]  # not led by its preferred replica, and why it is left so

    def imbalance(self, broker_id: int) -> BrokerImbalance | None:
        return next((b for b in self.imbalances if b.broker_id == broker_id), None)


def _counted(
    partitions: Mapping[TopicPartition, Leadership], deleting: Collection[str]
) -> Iterable[tuple[TopicPartition, Leadership]]:
    return ((tp, p) for tp, p in partitions.items() if p.replicas and tp[0] not in deleting)


def imbalances(
    partitions: Mapping[TopicPartition, Leadership], deleting: Collection[str] = ()
) -> dict[int, BrokerImbalance]:
    """The leader imbalance of every broker some partition prefers."""
    preferred: dict[int, int] = {}
    elsewhere: dict[int, int] = {}
    for _, p in _counted(partitions, deleting):
        broker = p.replicas[0]
        preferred[broker] = preferred.get(broker, 0) + 1
        if p.leader is not None and p.leader != broker:
            elsewhere[broker] = elsewhere.get(broker, 0) + 1
    return {b: BrokerImbalance(b, n, elsewhere.get(b, 0)) for b, n in preferred.items()}


def plan_rebalance(
    partitions: Mapping[TopicPartition, Leadership],
    live: Collection[int],
    percentage: float,
    *,
    reassigning: Collection[TopicPartition] = (),
    deleting: Collection[str] = (),
) -> RebalancePlan:
    """The preferred-replica elections one rebalance check runs: for each broker above
    ``percentage``, its preferred partitions another broker leads whose preferred replica is live
    and in the ISR and that are not being reassigned."""
    by_broker = imbalances(partitions, deleting)
    over = sorted(b for b, imbalance in by_broker.items() if imbalance.above(percentage))
    over_set = set(over)
    elections: list[TopicPartition] = []
    skipped: dict[TopicPartition, str] = {}
    for tp, p in _counted(partitions, deleting):
        preferred = p.replicas[0]
        if preferred not in over_set or p.leader is None or p.leader == preferred:
            continue
        if tp in reassigning:
            skipped[tp] = REASSIGNING
        elif preferred not in live:
            skipped[tp] = NOT_LIVE
        elif preferred not in p.isr:
            skipped[tp] = NOT_IN_ISR
        else:
            elections.append(tp)
    return RebalancePlan(
        imbalances=tuple(by_broker[b] for b in sorted(by_broker)),
        over_threshold=tuple(over),
        elections=tuple(sorted(elections)),
        skipped=skipped,
    )

"""The read-only view of the controller that HTTP handlers serve.

The event loop's single consumer publishes a new immutable :class:`ClusterSnapshot` after each
event that changed state; HTTP handlers read the latest one and never touch controller state.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

import msgspec

from reassignd.contracts.cluster import Partition
from reassignd.executor.model import Batch


@dataclass(frozen=True, slots=True)
class ActiveControllerAddress:
    controller_id: int
    http: str | None
    kafka: str | None = None  # its Kafka listener's advertised "host:port", when it has one


@dataclass(frozen=True, slots=True)
class BrokerView:
    broker_id: int
    rack: str | None
    endpoints: tuple[str, ...]  # "LISTENER://host:port"
    broker_epoch: int


# One partition of a topic's view: the HTTP contract's struct itself (``GET /v1/topics/{topic}``
# encodes the published views as they are).
PartitionView = Partition


@dataclass(frozen=True, slots=True)
class TopicView:
    name: str
    topic_id: str | None
    partitions: tuple[PartitionView, ...]  # sorted by partition id

    @property
    def replication_factor(self) -> int:
        """Of partition 0's target (RS − RR), as kafka-topics reports it."""
        if not self.partitions:
            return 0
        p = self.partitions[0]
        return len([r for r in p.replicas if r not in p.removing_replicas])

    # counted once, when the view is built (only a changed topic's view is built again):
    # GET /v1/status sums it over every topic, and at 100,000 partitions counting each time took
    # half the controller's CPU under a steady load (bench/event_load.py)
    _reassigning: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        count = sum(1 for p in self.partitions if p.adding_replicas or p.removing_replicas)
        object.__setattr__(self, "_reassigning", count)

    @property
    def reassigning_partitions(self) -> int:
        return self._reassigning


class ReassignmentView(msgspec.Struct, frozen=True, gc=False):
    """A partition being reassigned, as ListPartitionReassignments shows it (a msgspec struct, as
    ``PartitionView``: rebuilt for every moving partition of a topic an event touched)."""

    topic: str
    partition: int
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]
    target_replicas: tuple[int, ...]
    original_replicas: tuple[int, ...]  # the contract's name (contracts/reassignments.py): a Move's origins
    source: str  # api | zk | request | batch
    started_at_ms: int | None  # None when unknown (e.g. found in ZooKeeper at failover)
    leader: int


@dataclass(frozen=True, slots=True)
class Problem:
    """A znode the controller could not decode (most recent first in the snapshot)."""

    path: str
    reason: str
    at_ms: int


@dataclass(frozen=True, slots=True)
class LostBroker:
    """A broker self-healing follows: gone, hosting replicas (docs/design.md, "Self-healing")."""

    broker_id: int
    lost_at_ms: int  # as recorded in ZooKeeper when the controller saw it go
    heal_at_ms: int  # lost_at_ms + the grace
    state: str  # waiting (the grace runs), healing (a batch moves its replicas), incomplete
    batch_ids: tuple[str, ...]  # its self-healing batches, oldest first
    replicas: int  # replicas it still hosts
    partitions: tuple[tuple[str, int], ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class HealingOutcome:
    """How the healing of a lost broker ended (the last few are kept)."""

    broker_id: int
    batch_id: str | None
    outcome: str  # completed | returned | incomplete | failed
    reason: str
    at_ms: int


@dataclass(frozen=True, slots=True)
class SelfHealingView:
    enabled: bool
    broker_grace_s: float
    brokers: tuple[LostBroker, ...] = ()
    recent: tuple[HealingOutcome, ...] = ()


@dataclass(frozen=True, slots=True)
class ClusterSnapshot:
    controller_id: int
    active: bool
    controller_epoch: int  # the epoch this instance won with, or the last one seen when standby
    active_controller: ActiveControllerAddress | None
    brokers: Mapping[int, BrokerView] = field(default_factory=dict)
    topics: Mapping[str, TopicView] = field(default_factory=dict)  # empty on a standby
    problems: tuple[Problem, ...] = ()
    reassignments: Mapping[tuple[str, int], ReassignmentView] = field(default_factory=dict)
    batches: Mapping[str, Batch] = field(default_factory=dict)  # the executor's, by id
    self_healing: SelfHealingView | None = None  # None on a standby
    demoted: Mapping[int, int] = field(default_factory=dict)  # broker -> partitions whose order is recorded
    # (partitions, reassigning partitions) over ``topics``: the publisher keeps the totals as
    # topics change, so GET /v1/status does not sum 1,000 topics on every call (None: count)
    counts: tuple[int, int] | None = field(default=None, compare=False, repr=False)

    @property
    def partition_count(self) -> int:
        return self._counts()[0]

    @property
    def reassigning_count(self) -> int:
        return self._counts()[1]

    def _counts(self) -> tuple[int, int]:
        counts = self.counts
        if counts is None:
            counts = (
                sum(len(t.partitions) for t in self.topics.values()),
                sum(t.reassigning_partitions for t in self.topics.values()),
            )
            object.__setattr__(self, "counts", counts)
        return counts


class BatchAction(enum.StrEnum):
    PAUSE = "pause"
    RESUME = "resume"
    STOP = "stop"
    ROLLBACK = "rollback"


@dataclass(frozen=True, slots=True)
class BatchControlResult:
    batch: Batch  # the batch after the action
    rollback_batch_id: str | None = None  # rollback: the reverse batch it created

"""The active controller's in-memory view of the cluster (Kafka's ControllerContext).

Mutated only by the event loop's single consumer, always after ZooKeeper was written.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import msgspec

from reassignd.controller.model.snapshot import BrokerView, PartitionView, TopicView
from reassignd.controller.replication.assignment import ReplicaAssignment
from reassignd.topic_partition import TopicPartition
from reassignd.zk.codec import BrokerRegistration, PartitionState


class LeaderIsr(msgspec.Struct, frozen=True, gc=False):
    """A partition state znode as last read or written: its content and its version (the
    partition epoch). A msgspec struct, as its state is: a failover builds one per partition."""

    state: PartitionState
    version: int


@dataclass(slots=True)
class ControllerContext:
    epoch: int
    epoch_zk_version: int
    brokers: dict[int, BrokerRegistration] = field(default_factory=dict)
    broker_epochs: dict[int, int] = field(default_factory=dict)
    topic_ids: dict[str, str | None] = field(default_factory=dict)
    assignments: dict[str, dict[int, ReplicaAssignment]] = field(default_factory=dict)
    # the zxid of the topic znode's last change that this controller wrote or that a change
    # event read (its mzxid, unique to that content): a change event finding the znode still at
    # it has nothing to decode (mostly it reads back this controller's own writes)
    topic_mzxids: dict[str, int] = field(default_factory=dict)
    states: dict[TopicPartition, LeaderIsr] = field(default_factory=dict)
    reassigning: set[TopicPartition] = field(default_factory=set)
    # partitions whose state znode exists but cannot be decoded: reported, never overwritten
    malformed_states: set[TopicPartition] = field(default_factory=set)
    malformed_topics: set[str] = field(default_factory=set)
    topics_to_delete: set[str] = field(default_factory=set)
    dirty_topics: set[str] = field(default_factory=set)
    # each moving partition's replicas before its move, in their order (/reassignd/origins/<t>),
    # and the topics whose origins znode exists (or may: a stale one is overwritten)
    origins: dict[str, dict[int, tuple[int, ...]]] = field(default_factory=dict)
    origin_znodes: set[str] = field(default_factory=set)

    def origin(self, tp: TopicPartition) -> tuple[int, ...] | None:
        return self.origins.get(tp[0], {}).get(tp[1])

    # --- brokers ---
    @property
    def live_broker_ids(self) -> set[int]:
        return set(self.brokers)

    def add_broker(self, reg: BrokerRegistration, epoch: int) -> None:
        self.brokers[reg.broker_id] = reg
        self.broker_epochs[reg.broker_id] = epoch

    def remove_broker(self, broker_id: int) -> None:
        self.brokers.pop(broker_id, None)
        self.broker_epochs.pop(broker_id, None)

    # --- topics and partitions ---
    def put_topic(self, topic: str, topic_id: str | None, partitions: dict[int, ReplicaAssignment]) -> None:
        self.topic_ids[topic] = topic_id
        self.assignments[topic] = partitions
        self.topic_mzxids.pop(topic, None)
        for p, a in partitions.items():
            self._track_reassigning((topic, p), a)
        self.dirty_topics.add(topic)

    def remove_topic(self, topic: str) -> None:
        for p in self.assignments.pop(topic, {}):
            self.states.pop((topic, p), None)
            self.malformed_states.discard((topic, p))
            self.reassigning.discard((topic, p))
        self.topic_ids.pop(topic, None)
        self.topic_mzxids.pop(topic, None)
        self.origins.pop(topic, None)
        self.dirty_topics.add(topic)

    def assignment(self, tp: TopicPartition) -> ReplicaAssignment | None:
        return self.assignments.get(tp[0], {}).get(tp[1])

    def set_assignment(self, tp: TopicPartition, assignment: ReplicaAssignment) -> None:
        self.assignments.setdefault(tp[0], {})[tp[1]] = assignment
        self._track_reassigning(tp, assignment)
        self.dirty_topics.add(tp[0])

    def set_state(self, tp: TopicPartition, leader_isr: LeaderIsr) -> None:
        self.states[tp] = leader_isr
        self.malformed_states.discard(tp)
        self.dirty_topics.add(tp[0])

    def all_partitions(self) -> Iterator[TopicPartition]:
        for topic, parts in self.assignments.items():
            for p in parts:
                yield (topic, p)

    def partitions_on_broker(self, broker_id: int) -> list[TopicPartition]:
        return [
            (t, p)
            for t, parts in self.assignments.items()
            for p, a in parts.items()
            if broker_id in a.replicas
        ]

    def _track_reassigning(self, tp: TopicPartition, a: ReplicaAssignment) -> None:
        if a.is_being_reassigned:
            self.reassigning.add(tp)
        else:
            self.reassigning.discard(tp)

    # --- views for the HTTP layer ---
    def broker_view(self, broker_id: int) -> BrokerView:
        reg = self.brokers[broker_id]
        return BrokerView(
            broker_id, reg.rack, tuple(str(e) for e in reg.endpoints), self.broker_epochs[broker_id]
        )

    def topic_view(self, topic: str) -> TopicView | None:
        parts = self.assignments.get(topic)
        if parts is None:
            return None
        views = []
        for p in sorted(parts):
            a = parts[p]
            li = self.states.get((topic, p))
            views.append(
                PartitionView(
                    partition=p,
                    replicas=a.replicas,
                    leader=li.state.leader if li else -1,
                    leader_epoch=li.state.leader_epoch if li else -1,
                    isr=li.state.isr if li else (),
                    adding_replicas=a.adding,
                    removing_replicas=a.removing,
                )
            )
        return TopicView(topic, self.topic_ids.get(topic), tuple(views))

"""Per-event batching of control requests (Kafka's ControllerBrokerRequestBatch). Pure.

An event adds what it wants each broker to hear; :meth:`ControlBatch.build` turns that into
ordered requests per broker: LeaderAndIsr first, then UpdateMetadata, then StopReplica, each
split into chunks of bounded size.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import TypeVar

from reassignd.broker.protocol import (
    ControlRequest,
    Header,
    LeaderAndIsrRequest,
    LiveBroker,
    StopReplicaPartition,
    StopReplicaRequest,
    UpdateMetadataRequest,
    WirePartitionState,
)
from reassignd.controller.context import ControllerContext
from reassignd.zk.codec import TopicPartition

MAX_PARTITIONS_PER_REQUEST = 2000


T = TypeVar("T")


def _chunks(items: list[T], size: int) -> Iterable[list[T]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


class ControlBatch:
    def __init__(self, ctx: ControllerContext, controller_id: int) -> None:
        self._ctx = ctx
        self._controller_id = controller_id
        self._leader_and_isr: dict[int, dict[TopicPartition, bool]] = defaultdict(dict)
        # groups of (partitions, brokers): each group's states are built and chunked once and the
        # chunks shared by its brokers (a failover sends every partition to every broker)
        self._update_metadata: list[tuple[list[TopicPartition], frozenset[int]]] = []
        self._stop_replica: dict[int, dict[TopicPartition, bool]] = defaultdict(dict)
        self._wire_cache: dict[tuple[TopicPartition, bool], WirePartitionState | None] = {}

    def add_leader_and_isr(self, brokers: Iterable[int], tp: TopicPartition, *, is_new: bool = False) -> None:
        """Tell ``brokers`` the partition's current state (only live ones get it)."""
        for b in brokers:
            if b in self._ctx.brokers:
                previous = self._leader_and_isr[b].get(tp, False)
                self._leader_and_isr[b][tp] = previous or is_new

    def add_update_metadata(
        self, partitions: Iterable[TopicPartition], brokers: Iterable[int] | None = None
    ) -> None:
        """UpdateMetadata for ``partitions`` to ``brokers`` (default: every live broker)."""
        targets = frozenset(self._ctx.brokers if brokers is None else brokers)
        if targets:
            self._update_metadata.append((list(partitions), targets))

    def add_stop_replica(self, broker: int, tp: TopicPartition, *, delete: bool) -> None:
        if broker in self._ctx.brokers:
            previous = self._stop_replica[broker].get(tp, False)
            self._stop_replica[broker][tp] = previous or delete

    def _wire_state(self, tp: TopicPartition, is_new: bool) -> WirePartitionState | None:
        key = (tp, is_new)
        if key in self._wire_cache:
            return self._wire_cache[key]
        ws = self._make_wire_state(tp, is_new)
        self._wire_cache[key] = ws
        return ws

    def _make_wire_state(self, tp: TopicPartition, is_new: bool) -> WirePartitionState | None:
        a = self._ctx.assignment(tp)
        li = self._ctx.states.get(tp)
        if a is None or li is None:
            return None
        s = li.state
        return WirePartitionState(
            topic=tp[0],
            partition=tp[1],
            controller_epoch=s.controller_epoch,
            leader=s.leader,
            leader_epoch=s.leader_epoch,
            isr=s.isr,
            partition_epoch=li.version,
            replicas=a.replicas,
            adding_replicas=a.adding,
            removing_replicas=a.removing,
            is_new=is_new,
        )

    def _live_brokers(self, ids: Iterable[int]) -> tuple[LiveBroker, ...]:
        out = []
        for b in sorted(set(ids)):
            reg = self._ctx.brokers.get(b)
            if reg is not None:
                out.append(LiveBroker(b, reg.rack, tuple(str(e) for e in reg.endpoints)))
        return tuple(out)

    def build(self) -> dict[int, list[ControlRequest]]:
        out: dict[int, list[ControlRequest]] = defaultdict(list)
        ctx = self._ctx

        def header(b: int) -> Header:
            return Header(self._controller_id, ctx.epoch, ctx.broker_epochs[b])

        for b, parts in self._leader_and_isr.items():
            if b not in ctx.brokers:
                continue
            states = [ws for tp, new in parts.items() if (ws := self._wire_state(tp, new)) is not None]
            leaders = {ws.leader for ws in states}
            for chunk in _chunks(states, MAX_PARTITIONS_PER_REQUEST):
                out[b].append(LeaderAndIsrRequest(header(b), tuple(chunk), self._live_brokers(leaders)))
        live = self._live_brokers(ctx.brokers)
        merged: dict[frozenset[int], dict[TopicPartition, None]] = {}
        for tps, brokers in self._update_metadata:
            merged.setdefault(brokers, {}).update(dict.fromkeys(tps))
        for brokers, members in merged.items():
            states = [ws for tp in members if (ws := self._wire_state(tp, False)) is not None]
            chunks = [tuple(c) for c in _chunks(states, MAX_PARTITIONS_PER_REQUEST)] or [()]
            for b in sorted(brokers):
                if b in ctx.brokers:
                    out[b].extend(UpdateMetadataRequest(header(b), chunk, live) for chunk in chunks)
        for b, stops in self._stop_replica.items():
            if b not in ctx.brokers:
                continue
            items = [
                StopReplicaPartition(
                    tp[0], tp[1], li.state.leader_epoch if (li := ctx.states.get(tp)) else -1, delete
                )
                for tp, delete in sorted(stops.items())
            ]
            for stop_chunk in _chunks(items, MAX_PARTITIONS_PER_REQUEST):
                out[b].append(StopReplicaRequest(header(b), tuple(stop_chunk)))
        return dict(out)

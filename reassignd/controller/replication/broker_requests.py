"""Per-event batching of control requests (Kafka's ControllerBrokerRequestBatch). Pure.

An event adds what it wants each broker to hear; :meth:`BrokerRequestBatch.build` turns that into
ordered requests per broker: LeaderAndIsr first, then UpdateMetadata, then StopReplica, each
split into chunks of at most :data:`MAX_PARTITIONS_PER_REQUEST` partitions and
:data:`MAX_REQUEST_BYTES` encoded bytes (the agent refuses bodies over ``MAX_CONTROL_BODY_BYTES``
with 413; sizes are computed from the partitions, not by encoding, see protocol.py).

A broker given :meth:`BrokerRequestBatch.add_full_leader_and_isr` gets a *full* LeaderAndIsr (KIP-516)
instead of an incremental one: every partition whose replica set (adding and removing replicas
included) contains it, with its state when the controller has one, plus whatever partitions the
event added for it; the agent deletes every replica it hosts that the set does not name. Every
chunk of the set carries the same ``full`` object (set id, number of partitions named).
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence

from reassignd.control.protocol import (
    ControlRequest,
    FullSet,
    Header,
    LeaderAndIsrRequest,
    LiveBroker,
    StopReplicaPartition,
    StopReplicaRequest,
    UpdateMetadataRequest,
    WirePartitionState,
)
from reassignd.control.request_sizes import encode_request, state_size, stop_partition_size, tp_size
from reassignd.control.wire import MAX_REQUEST_BYTES
from reassignd.controller.replication.assignment import ReplicaAssignment
from reassignd.controller.replication.context import ControllerContext, LeaderIsr
from reassignd.topic_partition import TopicPartition

MAX_PARTITIONS_PER_REQUEST = 2000

# set ids of full LeaderAndIsr requests: increasing within the process, so within one controller
# epoch (the agent keys a set by controller epoch, broker epoch and id)
_FULL_IDS = itertools.count(1)

# the header's longest encoding: sizes are computed once for chunks shared by several brokers
_WIDEST_EPOCH = -(2**63)


def chunk_ranges(
    sizes: Sequence[int],
    overhead: int,
    *,
    max_bytes: int = MAX_REQUEST_BYTES,
    max_count: int = MAX_PARTITIONS_PER_REQUEST,
) -> list[tuple[int, int]]:
    """Consecutive ``[start, end)`` ranges of items, greedily as long as possible, such that
    ``overhead`` (the request with an empty list) plus the items and the commas between them stays
    within ``max_bytes``, and a range holds at most ``max_count`` items. A range always holds at
    least one item, even one too big on its own (the channel drops what the agent then refuses)."""
    # ends[i]: the bytes of items [0, i) with a comma after each, so a range [start, end) takes
    # overhead + ends[end] - ends[start] - 1 bytes; ends increase, so each range's end is found by
    # bisection (a failover chunks 100,000 states several times: no Python loop per item)
    ends = list(map(operator.add, itertools.accumulate(sizes, initial=0), itertools.count()))
    room = max_bytes - overhead + 1
    n = len(sizes)
    ranges = []
    start = 0
    while start < n:
        end = bisect.bisect_right(ends, ends[start] + room, start + 1, min(n, start + max_count) + 1) - 1
        end = max(end, start + 1)
        ranges.append((start, end))
        start = end
    return ranges


class _Layout:
    """One LeaderAndIsr set's states (in order), their encoded sizes, the partitions it names
    without a state, the live leaders among its states, and its chunks by request overhead (the
    same for brokers whose headers encode to the same length)."""

    __slots__ = ("_chunks", "leaders", "sizes", "states", "without")

    def __init__(
        self,
        states: list[WirePartitionState],
        sizes: list[int],
        without: list[TopicPartition],
        leaders: tuple[LiveBroker, ...],
    ) -> None:
        self.states = states
        self.sizes = sizes
        self.without = without
        self.leaders = leaders
        self._chunks: dict[int, list[tuple[tuple[WirePartitionState, ...], tuple[LiveBroker, ...]]]] = {}

    def chunks(self, overhead: int) -> list[tuple[tuple[WirePartitionState, ...], tuple[LiveBroker, ...]]]:
        """The states in chunks for requests of ``overhead`` bytes without them, each with the
        live leaders of its own states."""
        chunks = self._chunks.get(overhead)
        if chunks is None:
            chunks = []
            for i, j in chunk_ranges(self.sizes, overhead):
                chunk = tuple(self.states[i:j])
                chunk_leaders = {ws.leader for ws in chunk}
                chunks.append((chunk, tuple(b for b in self.leaders if b.broker_id in chunk_leaders)))
            self._chunks[overhead] = chunks
        return chunks


class WireStates:
    """Each partition's state as the control channel carries it, with its encoded size, kept
    across the batches of one active term. An entry stands while the partition's state and
    assignment are the very objects it was built from (both immutable, replaced on every change):
    a broker that registers gets every partition's state, built once and not on each broker
    change (100,000 partitions: about 0.3 s, then 0.05 s)."""

    __slots__ = ("_cache", "_ctx")

    def __init__(self, ctx: ControllerContext) -> None:
        self._ctx = ctx
        self._cache: dict[
            TopicPartition, tuple[LeaderIsr, ReplicaAssignment, tuple[WirePartitionState, int]]
        ] = {}

    def get(self, tp: TopicPartition) -> tuple[WirePartitionState, int] | None:
        """The partition's state (not new) and its size; None without an assignment or a state."""
        ctx = self._ctx
        a = ctx.assignments.get(tp[0], _NO_PARTITIONS).get(tp[1])
        li = ctx.states.get(tp)
        if a is None or li is None:
            return None
        hit = self._cache.get(tp)
        if hit is not None and hit[0] is li and hit[1] is a:
            return hit[2]
        sized = _sized(tp, li, a, is_new=False)
        cache = self._cache
        if len(cache) > 2 * len(ctx.states) + 1024:  # partitions gone since: drop their entries
            self._cache = cache = {k: v for k, v in cache.items() if k in ctx.states}
        cache[tp] = (li, a, sized)
        return sized

    def build(self, tp: TopicPartition, *, is_new: bool) -> tuple[WirePartitionState, int] | None:
        """The partition's state and its size, built now (not kept)."""
        a = self._ctx.assignment(tp)
        li = self._ctx.states.get(tp)
        return None if a is None or li is None else _sized(tp, li, a, is_new=is_new)


_NO_PARTITIONS: dict[int, ReplicaAssignment] = {}


def _sized(
    tp: TopicPartition, li: LeaderIsr, a: ReplicaAssignment, *, is_new: bool
) -> tuple[WirePartitionState, int]:
    s = li.state
    ws = WirePartitionState(
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
    return ws, state_size(ws)


class BrokerRequestBatch:
    def __init__(
        self,
        ctx: ControllerContext,
        controller_id: int,
        *,
        full_ids: Iterator[int] = _FULL_IDS,
        wire: WireStates | None = None,
    ) -> None:
        self._ctx = ctx
        self._controller_id = controller_id
        self._full_ids = full_ids
        self._leader_and_isr: dict[int, dict[TopicPartition, bool]] = defaultdict(dict)
        self._full: set[int] = set()  # brokers to send a full LeaderAndIsr
        # groups of (partitions, brokers): each group's states are built and chunked once and the
        # chunks shared by its brokers (a failover sends every partition to every broker)
        self._update_metadata: list[tuple[list[TopicPartition], frozenset[int]]] = []
        self._stop_replica: dict[int, dict[TopicPartition, bool]] = defaultdict(dict)
        self._wire = WireStates(ctx) if wire is None else wire
        self._wire_cache: dict[tuple[TopicPartition, bool], tuple[WirePartitionState, int] | None] = {}
        self._last_layout: tuple[dict[TopicPartition, bool], bool, _Layout] | None = None
        self.sent = False  # Shared.send sent it (a batch goes out once)

    def add_leader_and_isr(self, brokers: Iterable[int], tp: TopicPartition, *, is_new: bool = False) -> None:
        """Tell ``brokers`` the partition's current state (only live ones get it)."""
        for b in brokers:
            if b in self._ctx.brokers:
                previous = self._leader_and_isr[b].get(tp, False)
                self._leader_and_isr[b][tp] = previous or is_new

    def add_full_leader_and_isr(self, broker_id: int) -> None:
        """Send ``broker_id`` (if live) a full LeaderAndIsr: every partition whose replica set
        contains it, as the context has it when the batch is built, merged with the partitions
        :meth:`add_leader_and_isr` added for it (their ``is_new`` kept)."""
        if broker_id in self._ctx.brokers:
            self._full.add(broker_id)

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

    def _wire_state(self, tp: TopicPartition, is_new: bool) -> tuple[WirePartitionState, int] | None:
        """The partition's state on the wire and its encoded size in a LeaderAndIsr."""
        if not is_new:
            return self._wire.get(tp)
        key = (tp, is_new)
        if key in self._wire_cache:
            return self._wire_cache[key]
        sized = self._wire.build(tp, is_new=True)
        self._wire_cache[key] = sized
        return sized

    def _live_brokers(self, ids: Iterable[int]) -> tuple[LiveBroker, ...]:
        out = []
        for b in sorted(set(ids)):
            reg = self._ctx.brokers.get(b)
            if reg is not None:
                out.append(LiveBroker(b, reg.rack, tuple(str(e) for e in reg.endpoints)))
        return tuple(out)

    def _hosted_by(self, brokers: set[int]) -> dict[int, list[TopicPartition]]:
        """For each of ``brokers``, every partition whose replica set contains it (one pass)."""
        out: dict[int, list[TopicPartition]] = {b: [] for b in brokers}
        for topic, parts in self._ctx.assignments.items():
            for p, a in parts.items():
                for r in a.replicas:
                    hosted = out.get(r)
                    if hosted is not None:
                        hosted.append((topic, p))
        return out

    def _layout(self, parts: dict[TopicPartition, bool], full: bool) -> _Layout:
        """The states of ``parts`` as a LeaderAndIsr carries them, built once per batch for equal
        sets: a failover sends the same full set to every broker hosting every partition."""
        last = self._last_layout
        if last is not None and last[1] == full and last[0] == parts:
            return last[2]
        states: list[WirePartitionState] = []
        sizes: list[int] = []
        without: list[TopicPartition] = []
        for tp, new in parts.items():
            sized = self._wire_state(tp, new)
            if sized is not None:
                states.append(sized[0])
                sizes.append(sized[1])
            elif full:
                without.append(tp)
        layout = _Layout(states, sizes, without, self._live_brokers({ws.leader for ws in states}))
        self._last_layout = (parts, full, layout)
        return layout

    def _leader_and_isr_chunks(
        self,
        header: Header,
        parts: dict[TopicPartition, bool],
        full: FullSet | None,
    ) -> list[LeaderAndIsrRequest]:
        layout = self._layout(parts, full is not None)
        overhead = len(encode_request(LeaderAndIsrRequest(header, (), layout.leaders, full)))
        out = [
            LeaderAndIsrRequest(header, chunk, leaders, full) for chunk, leaders in layout.chunks(overhead)
        ]
        if full is not None:
            overhead = len(encode_request(LeaderAndIsrRequest(header, (), (), full)))
            for i, j in chunk_ranges([tp_size(tp) for tp in layout.without], overhead):
                out.append(LeaderAndIsrRequest(header, (), (), full, tuple(layout.without[i:j])))
            if not out:  # the broker should host nothing: one empty set, so it deletes everything
                out.append(LeaderAndIsrRequest(header, (), (), full))
        return out

    def build(self) -> dict[int, list[ControlRequest]]:
        out: dict[int, list[ControlRequest]] = defaultdict(list)
        ctx = self._ctx

        def header(b: int) -> Header:
            return Header(self._controller_id, ctx.epoch, ctx.broker_epochs[b])

        full_brokers = {b for b in self._full if b in ctx.brokers}
        hosted = self._hosted_by(full_brokers) if full_brokers else {}
        kept_topics = tuple(sorted(ctx.malformed_topics))
        for b in sorted(set(self._leader_and_isr) | full_brokers):
            if b not in ctx.brokers:
                continue
            parts = self._leader_and_isr.get(b, {})
            full = None
            if b in full_brokers:
                named = dict.fromkeys(hosted[b], False)
                for tp, new in parts.items():
                    if ctx.assignment(tp) is not None:
                        named[tp] = named.get(tp, False) or new
                parts = named
                full = FullSet(next(self._full_ids), len(named), kept_topics)
            out[b].extend(self._leader_and_isr_chunks(header(b), parts, full))
        live = self._live_brokers(ctx.brokers)
        widest = Header(self._controller_id, ctx.epoch, _WIDEST_EPOCH)
        merged: dict[frozenset[int], dict[TopicPartition, None]] = {}
        for tps, brokers in self._update_metadata:
            merged.setdefault(brokers, {}).update(dict.fromkeys(tps))
        for brokers, members in merged.items():
            get = self._wire.get
            sized = [ws for tp in members if (ws := get(tp)) is not None]
            states = [ws for ws, _ in sized]
            overhead = len(encode_request(UpdateMetadataRequest(widest, (), live)))
            ranges = chunk_ranges([size for _, size in sized], overhead)
            chunks = [tuple(states[i:j]) for i, j in ranges] or [()]
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
            overhead = len(encode_request(StopReplicaRequest(header(b), ())))
            for i, j in chunk_ranges([stop_partition_size(p) for p in items], overhead):
                out[b].append(StopReplicaRequest(header(b), tuple(items[i:j])))
        return dict(out)

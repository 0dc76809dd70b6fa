"""Per-event batching of control requests (Kafka's ControllerBrokerRequestBatch). Pure.

An event adds what it wants each broker to hear; :meth:`BrokerRequestBatch.build` turns that into
ordered requests per broker: LeaderAndIsr first, then UpdateMetadata, then StopReplica, each
split into chunks of at most :data:`MAX_PARTITIONS_PER_REQUEST` partitions and
:data:`MAX_REQUEST_BYTES` encoded bytes (the agent refuses bodies over ``MAX_CONTROL_BODY_BYTES``
with 413). The states come encoded from :class:`~.wire_states.WireStates`, so a chunk's size is
the sum of its states' lengths and its body their bytes joined (``EncodedStates``).

A broker given :meth:`BrokerRequestBatch.add_full_leader_and_isr` gets a *full* LeaderAndIsr (KIP-516)
instead of an incremental one: every partition whose replica set (adding and removing replicas
included) contains it, with its state when the controller has one, plus whatever partitions the
event added for it; the agent deletes every replica it hosts that the set does not name. Every
chunk of the set carries the same ``full`` object (set id, number of partitions named). The
partitions come from the context's per-broker index, so the set costs what the broker hosts.

A broker given :meth:`BrokerRequestBatch.add_full_update_metadata` gets every partition's state
(a broker that registers): the kept bytes of them all, chunked once for every such broker.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Sequence

from reassignd.control.protocol import (
    ControlRequest,
    EncodedStates,
    FullSet,
    Header,
    LeaderAndIsrRequest,
    LiveBroker,
    StopReplicaPartition,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from reassignd.control.request_sizes import encode_request, stop_partition_size, tp_size
from reassignd.control.wire import MAX_REQUEST_BYTES
from reassignd.controller.state.context import ControllerContext
from reassignd.controller.state.wire_states import WireStates
from reassignd.int_limits import INT64_MIN
from reassignd.topic_partition import TopicPartition

MAX_PARTITIONS_PER_REQUEST = 2000

# set ids of full LeaderAndIsr requests: increasing within the process, so within one controller
# epoch (the agent keys a set by controller epoch, broker epoch and id)
_FULL_IDS = itertools.count(1)

# the header's longest encoding: sizes are computed once for chunks shared by several brokers
_WIDEST_EPOCH = INT64_MIN


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
    """One LeaderAndIsr set: its partitions with a state (in order), their bytes and leaders,
    the partitions it names without a state, and its chunks by request overhead (the same for
    brokers whose headers encode to the same length), each with the leaders of its states. All
    of it is computed once per batch and shared by the brokers sent the same set."""

    __slots__ = ("_chunks", "items", "leader_ids", "leaders", "tps", "without")

    def __init__(
        self, tps: list[TopicPartition], items: list[bytes], leaders: list[int], without: list[TopicPartition]
    ) -> None:
        self.tps = tps
        self.items = items
        self.leaders = leaders
        self.leader_ids = frozenset(leaders)
        self.without = without
        self._chunks: dict[int, list[tuple[EncodedStates, frozenset[int]]]] = {}

    def chunks(self, overhead: int) -> list[tuple[EncodedStates, frozenset[int]]]:
        chunks = self._chunks.get(overhead)
        if chunks is None:
            chunks = [
                (EncodedStates(self.items[i:j]), frozenset(self.leaders[i:j]))
                for i, j in chunk_ranges(list(map(len, self.items)), overhead)
            ]
            self._chunks[overhead] = chunks
        return chunks


class BrokerRequestBatch:
    def __init__(
        self,
        ctx: ControllerContext,
        controller_id: int,
        *,
        wire: WireStates,
        full_ids: Iterator[int] = _FULL_IDS,
    ) -> None:
        self._ctx = ctx
        self._controller_id = controller_id
        self._full_ids = full_ids
        self._leader_and_isr: dict[int, dict[TopicPartition, bool]] = defaultdict(dict)
        self._full: set[int] = set()  # brokers to send a full LeaderAndIsr
        # groups of (partitions, brokers): each group's states are chunked once and the chunks
        # shared by its brokers; None for every partition (a broker that registers)
        self._update_metadata: list[tuple[list[TopicPartition] | None, frozenset[int]]] = []
        self._stop_replica: dict[int, dict[TopicPartition, bool]] = defaultdict(dict)
        self._wire = wire
        self._new: dict[TopicPartition, bytes | None] = {}  # states marked new, built once per batch
        self._layouts: list[tuple[Collection[TopicPartition], frozenset[TopicPartition], _Layout]] = []
        self._live: dict[int, LiveBroker] = {}

    @property
    def empty(self) -> bool:
        """Nothing added: building it would give no request."""
        return not (self._leader_and_isr or self._full or self._update_metadata or self._stop_replica)

    def fresh(self) -> BrokerRequestBatch:
        """An empty batch over the same context and kept encodings."""
        return BrokerRequestBatch(self._ctx, self._controller_id, wire=self._wire, full_ids=self._full_ids)

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

    def add_full_update_metadata(self, brokers: Iterable[int] | None = None) -> None:
        """UpdateMetadata for every partition with a state to ``brokers`` (default: every live
        broker), as the context has them when the batch is built."""
        targets = frozenset(self._ctx.brokers if brokers is None else brokers)
        if targets:
            self._update_metadata.append((None, targets))

    async def prepare(self) -> None:
        """Encode, in slices that yield to the loop, the states this batch names (``build``
        then finds them encoded: a broker failure names tens of thousands)."""
        self._wire.refresh()
        named: set[TopicPartition] = set()
        for parts in self._leader_and_isr.values():
            named.update(parts)
        everything = bool(self._full)
        for tps, _ in self._update_metadata:
            if tps is None:
                everything = True
            else:
                named.update(tps)
        await self._wire.encode_all(named)
        if everything:
            await self._wire.encode_pending()

    def add_stop_replica(self, broker: int, tp: TopicPartition, *, delete: bool) -> None:
        if broker in self._ctx.brokers:
            previous = self._stop_replica[broker].get(tp, False)
            self._stop_replica[broker][tp] = previous or delete

    def _new_state(self, tp: TopicPartition) -> bytes | None:
        if tp not in self._new:
            self._new[tp] = self._wire.new(tp)
        return self._new[tp]

    def _live_brokers(self, ids: Iterable[int]) -> tuple[LiveBroker, ...]:
        out = []
        for b in sorted(set(ids)):
            live = self._live.get(b)
            if live is None:
                reg = self._ctx.brokers.get(b)
                if reg is None:
                    continue
                live = self._live[b] = LiveBroker(b, reg.rack, tuple(str(e) for e in reg.endpoints))
            out.append(live)
        return tuple(out)

    def _layout(
        self, named: Collection[TopicPartition], new: frozenset[TopicPartition], full: bool
    ) -> _Layout:
        """The states of ``named`` (those of ``new`` marked new) as a LeaderAndIsr carries them,
        built once per batch for equal sets: a failover sends the same full set to every broker
        hosting every partition. For a full set, the partitions without a state are named too."""
        for known, known_new, layout in self._layouts:
            if known_new == new and known == named:
                return layout
        if full:
            hosted = named if isinstance(named, set | frozenset) else set(named)
            stateless = self._ctx.index.stateless
            without = list(hosted & stateless) if stateless else []
            plain = list(hosted.difference(stateless, new))
            encoded = self._wire.everything()
            tps = plain
            items = list(map(encoded.__getitem__, plain))
            for tp in new:
                state = self._new_state(tp)
                if state is not None:
                    tps.append(tp)
                    items.append(state)
        else:
            without = []
            tps, items = [], []
            get = self._wire.get
            for tp in named:
                state = self._new_state(tp) if tp in new else get(tp)
                if state is not None:
                    tps.append(tp)
                    items.append(state)
        states = self._ctx.states
        layout = _Layout(tps, items, [states[tp].state.leader for tp in tps], without)
        self._layouts.append((named, new, layout))
        return layout

    def _leader_and_isr_chunks(
        self,
        header: Header,
        named: Collection[TopicPartition],
        new: frozenset[TopicPartition],
        full: FullSet | None,
    ) -> list[LeaderAndIsrRequest]:
        layout = self._layout(named, new, full is not None)
        all_leaders = self._live_brokers(layout.leader_ids)
        overhead = len(encode_request(LeaderAndIsrRequest(header, (), all_leaders, full)))
        out = []
        for chunk, leaders in layout.chunks(overhead):
            out.append(
                LeaderAndIsrRequest(
                    header, chunk, tuple(b for b in all_leaders if b.broker_id in leaders), full
                )
            )
        if full is not None:
            overhead = len(encode_request(LeaderAndIsrRequest(header, (), (), full)))
            for i, j in chunk_ranges([tp_size(tp) for tp in layout.without], overhead):
                out.append(LeaderAndIsrRequest(header, (), (), full, tuple(layout.without[i:j])))
            if not out:  # the broker should host nothing: one empty set, so it deletes everything
                out.append(LeaderAndIsrRequest(header, (), (), full))
        return out

    def _update_metadata_chunks(
        self, members: Iterable[bytes], live: tuple[LiveBroker, ...]
    ) -> list[EncodedStates]:
        items = list(members)
        widest = Header(self._controller_id, self._ctx.epoch, _WIDEST_EPOCH)
        overhead = len(encode_request(UpdateMetadataRequest(widest, (), live)))
        ranges = chunk_ranges(list(map(len, items)), overhead)
        return [EncodedStates(items[i:j]) for i, j in ranges] or [EncodedStates(())]

    def build(self) -> dict[int, list[ControlRequest]]:
        out: dict[int, list[ControlRequest]] = defaultdict(list)
        ctx = self._ctx
        self._wire.refresh()

        def header(b: int) -> Header:
            return Header(self._controller_id, ctx.epoch, ctx.broker_epochs[b])

        full_brokers = {b for b in self._full if b in ctx.brokers}
        kept_topics = tuple(sorted(ctx.malformed_topics))
        for b in sorted(set(self._leader_and_isr) | full_brokers):
            if b not in ctx.brokers:
                continue
            parts = self._leader_and_isr.get(b, {})
            new = frozenset(tp for tp, is_new in parts.items() if is_new)
            full = None
            named: Collection[TopicPartition] = parts
            if b in full_brokers:
                hosted = ctx.index.hosted_by(b)
                extra = [tp for tp in parts if tp not in hosted and ctx.assignment(tp) is not None]
                named = hosted.union(extra) if extra else hosted
                new = frozenset(tp for tp in new if tp in named)
                full = FullSet(next(self._full_ids), len(named), kept_topics)
            out[b].extend(self._leader_and_isr_chunks(header(b), named, new, full))
        live = self._live_brokers(ctx.brokers)
        merged: dict[frozenset[int], dict[TopicPartition, None] | None] = {}
        for tps, brokers in self._update_metadata:
            if tps is None:
                merged[brokers] = None
            elif brokers not in merged:
                merged[brokers] = dict.fromkeys(tps)
            elif (group := merged[brokers]) is not None:
                group.update(dict.fromkeys(tps))
        for brokers, members in merged.items():
            if members is None:
                chunks = self._update_metadata_chunks(self._wire.everything().values(), live)
            else:
                get = self._wire.get
                chunks = self._update_metadata_chunks(
                    (state for tp in members if (state := get(tp)) is not None), live
                )
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

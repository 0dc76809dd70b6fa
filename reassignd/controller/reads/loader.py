"""Reading the cluster's metadata from ZooKeeper into typed values, reporting what is malformed.

Reads are pipelined (many requests in flight, multiRead for partition states). A znode that
cannot be decoded is reported through ``report(path, reason, kind)`` and skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence

from reassignd.concurrency import pace
from reassignd.controller.reads.pipeline import for_each
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.controller.state.context import LeaderIsr
from reassignd.topic_partition import TopicPartition
from reassignd.zk import codec, paths
from reassignd.zk.errors import NoNodeError
from reassignd.zk.reads import ZkReads
from reassignd.zk.values import WatchCallback

log = logging.getLogger(__name__)

Report = Callable[[str, str, str], None]  # (path, reason, kind)
WatchFor = Callable[[str], WatchCallback | None]  # path -> a callback to arm, or None if armed


def assignment_of(znode: codec.TopicZnode) -> dict[int, ReplicaAssignment]:
    """Each partition's assignment; partitions not moving with equal replica lists share one
    (immutable) value."""
    adding, removing = znode.adding, znode.removing
    still: dict[tuple[int, ...], ReplicaAssignment] = {}
    out: dict[int, ReplicaAssignment] = {}
    for p, rs in znode.partitions.items():
        if p in adding or p in removing:
            out[p] = ReplicaAssignment(rs, adding.get(p, ()), removing.get(p, ()))
        elif (a := still.get(rs)) is not None:
            out[p] = a
        else:
            out[p] = still[rs] = ReplicaAssignment(rs)
    return out


async def read_broker(
    reads: ZkReads, broker_id: int, watch: WatchCallback | None, report: Report
) -> tuple[codec.BrokerRegistration, int] | None:
    """A broker's registration and epoch (czxid); None when gone or malformed."""
    path = paths.broker(broker_id)
    try:
        znode = await reads.get(path, watch=watch)
    except NoNodeError:
        return None
    try:
        return codec.decode_broker(broker_id, znode.data), znode.stat.czxid
    except codec.CodecError as e:
        report(path, e.reason, "broker")
        return None


def parse_ids(children: Iterable[str], parent: str, report: Report) -> list[int]:
    ids = []
    for c in children:
        if c.isdigit():
            ids.append(int(c))
        else:
            report(f"{parent}/{c}", "broker id is not a non-negative integer", "broker")
    return sorted(ids)


async def read_topic(
    reads: ZkReads, topic: str, watch: WatchCallback | None, report: Report
) -> codec.TopicZnode | None:
    path = paths.topic(topic)
    try:
        znode = await reads.get(path, watch=watch)
    except NoNodeError:
        return None
    await pace()  # hundreds of replies in one read: their decodings take turns with the loop
    try:
        return codec.decode_topic(znode.data)
    except codec.CodecError as e:
        report(path, e.reason, "topic")
        return None


async def read_topics(
    reads: ZkReads, topics: Sequence[str], watch_for: WatchFor, report: Report, concurrency: int = 512
) -> dict[str, codec.TopicZnode]:
    """Topic znodes, each with a data watch (PartitionModifications), many in flight at once."""
    found: dict[str, codec.TopicZnode] = {}

    async def one(t: str) -> None:
        znode = await read_topic(reads, t, watch_for(paths.topic(t)), report)
        if znode is not None:
            found[t] = znode

    await for_each(topics, one, window=concurrency)
    return {t: found[t] for t in topics if t in found}


async def read_changed_topics(
    reads: ZkReads,
    topics: Sequence[str],
    watch_for: WatchFor,
    report: Report,
    known: Mapping[str, int],
    concurrency: int = 512,
) -> dict[str, tuple[codec.TopicZnode, int]]:
    """Topic znodes, each with a data watch, many in flight at once: those whose last change is
    not the one ``known`` gives them (by mzxid), decoded, with their mzxids. Absent and malformed
    (reported) ones are left out, and so are those unchanged since: nothing to decode."""
    found: dict[str, tuple[codec.TopicZnode, int]] = {}

    async def one(t: str) -> None:
        path = paths.topic(t)
        try:
            znode = await reads.get(path, watch=watch_for(path))
        except NoNodeError:
            return
        if znode.stat.mzxid == known.get(t):
            return
        await pace()
        try:
            found[t] = codec.decode_topic(znode.data), znode.stat.mzxid
        except codec.CodecError as e:
            report(path, e.reason, "topic")

    await for_each(topics, one, window=concurrency)
    return {t: found[t] for t in topics if t in found}


def decode_state(path: str, data: bytes | None, version: int, report: Report) -> LeaderIsr | None:
    try:
        return LeaderIsr(codec.decode_partition_state(data), version)
    except codec.CodecError as e:
        report(path, e.reason, "partition_state")
        return None


# partitions per slice of a bulk state read: the slices are read two at a time, so one is
# decoded while the next one's multiReads are in flight (100,000 states: 10 slices)
STATES_PER_SLICE = 10_000


async def read_states(
    reads: ZkReads, partitions: Sequence[TopicPartition], report: Report
) -> tuple[dict[TopicPartition, LeaderIsr], set[TopicPartition]]:
    """Partition state znodes by multiRead. Returns (states, malformed); missing ones are in
    neither (new partitions). Many are read in slices, decoding overlapping the reads; the
    result is in the order of ``partitions`` all the same."""
    if len(partitions) <= STATES_PER_SLICE:
        return await _read_slice(reads, partitions, report)
    slices = [partitions[i : i + STATES_PER_SLICE] for i in range(0, len(partitions), STATES_PER_SLICE)]
    results: list[tuple[dict[TopicPartition, LeaderIsr], set[TopicPartition]]] = [({}, set())] * len(slices)

    async def one(i: int) -> None:
        results[i] = await _read_slice(reads, slices[i], report)

    await for_each(range(len(slices)), one, window=2)
    states: dict[TopicPartition, LeaderIsr] = {}
    malformed: set[TopicPartition] = set()
    for part_states, part_malformed in results:
        states.update(part_states)
        malformed |= part_malformed
    return states, malformed


async def _read_slice(
    reads: ZkReads, partitions: Sequence[TopicPartition], report: Report
) -> tuple[dict[TopicPartition, LeaderIsr], set[TopicPartition]]:
    state_paths = [paths.partition_state(t, p) for t, p in partitions]
    znodes = await reads.get_many(state_paths)
    states: dict[TopicPartition, LeaderIsr] = {}
    malformed: set[TopicPartition] = set()
    decode = codec.decode_partition_state
    for i, (tp, path, znode) in enumerate(zip(partitions, state_paths, znodes, strict=True)):
        if i % 1000 == 999:
            await pace()
        if znode is None:
            continue
        try:  # decode_state, inlined: this loop runs once per partition at failover
            states[tp] = LeaderIsr(decode(znode.data), znode.stat.version)
        except codec.CodecError as e:
            report(path, e.reason, "partition_state")
            malformed.add(tp)
    return states, malformed

"""The fenced write gateway's implementation: the one place an active controller writes
ZooKeeper, each write fenced by the controller epoch's version. Built once per active term
(``runtime.active``) and handed to each event's outputs, through which handlers reach it as the
:class:`~reassignd.controller.effects.fenced_writes.FencedWrites` port (``out.writes``).

Persist, then commit: every method writes ZooKeeper first (a multi whose first op checks the
fencing token) and only then updates the context. A failed fencing check raises
NotController, which makes the controller resign; a refusal the handler expects comes back as a
``Refused`` value.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from reassignd.concurrency import pace
from reassignd.controller.effects import failures
from reassignd.controller.effects.fenced_writes import Decide, Refused, Written
from reassignd.controller.effects.record_changes import assignment_changes, state_changes
from reassignd.controller.effects.topic_write import origins_after, topic_znode
from reassignd.controller.reads import loader
from reassignd.controller.reads.pipeline import for_each
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.controller.state.context import ControllerContext, LeaderIsr
from reassignd.stream.record_log import RecordLog
from reassignd.topic_partition import TopicPartition
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.errors import BadVersionError, MultiFailedError, NodeExistsError, NoNodeError, ZkError
from reassignd.zk.reads import ZkReads
from reassignd.zk.values import Create, Delete, Fence, Op, SetData, Stat, WatchCallback

log = logging.getLogger(__name__)


# Partition states per fenced multi in update_states: about 15 KiB of requests, far below the
# packet limit (so fenced_multi never splits one), and one transaction instead of a hundred.
_STATES_PER_MULTI = 100
_DECIDE_SLICE = 500  # decisions between two looks at the loop's pace


def _given_up(e: MultiFailedError) -> bool:
    """A partition's write that fails the same way every time, and that leaves memory true: the
    znode is there as memory says, and ZooKeeper refuses it (NOAUTH, BADARGUMENTS, ...). A
    NONODE means memory is out of date: it raises, and the controller reloads."""
    return failures.deterministic(e) and not isinstance(e.cause, NoNodeError)


class FencedMulti(Protocol):
    """What the writer sends its writes through: the session's fenced multi
    (:meth:`~reassignd.zk.client.ZkClient.fenced_multi`)."""

    async def fenced_multi(
        self, fence: Fence, ops: Sequence[Op], *, atomic: bool = False
    ) -> list[Stat | str | None]: ...


class ZkWriter:
    def __init__(
        self,
        reads: ZkReads,
        sender: FencedMulti,
        fence: Fence,
        ctx: ControllerContext,
        report: loader.Report,
        records: RecordLog | None = None,
        refuse: loader.Report | None = None,
    ) -> None:
        self.reads = reads  # what a write reads first (a parent's children, a conflict's state)
        self.sender = sender
        self.records = records if records is not None else RecordLog()  # records of what was written
        self.fence = fence
        self.ctx = ctx
        self._report = report
        self._refuse = refuse if refuse is not None else report
        self.ops_written = 0  # ZooKeeper write ops (without the fencing checks), for benchmarks

    async def fenced(self, ops: list[Op], *, atomic: bool = False) -> list[Stat | str | None]:
        """One fenced write; with ``atomic`` it is never split into several multis (too large
        for one request: ZnodeTooLargeError, nothing written)."""
        self.ops_written += len(ops)
        return await self.sender.fenced_multi(self.fence, ops, atomic=atomic)

    async def write(
        self, ops: Iterable[Op], *, atomic: bool = False, expect: tuple[type[ZkError], ...] = ()
    ) -> Written | Refused:
        """One fenced multi; a refusal of a type in ``expect`` is the answer."""
        try:
            return Written(tuple(await self.fenced(list(ops), atomic=atomic)))
        except MultiFailedError as e:
            if expect and isinstance(e.cause, expect):
                return Refused(e.index, e.cause)
            raise

    async def write_states(self, tps: Iterable[TopicPartition], decide: Decide) -> list[TopicPartition]:
        """Compute each partition's new state from its cached one with ``decide``, write it at
        the known partition epoch, then cache it. The writes go in fenced multis of up to
        ``_STATES_PER_MULTI`` partitions, pipelined: one ZooKeeper transaction for many states
        (10,000 moving partitions are 100 transactions, not 10,000). A multi fails whole when a
        state in it changed under us (an agent's ISR write); its partitions are then written one
        by one, and those that changed are re-read and decided again. Returns the partitions that
        changed."""
        ctx = self.ctx
        todo = [tp for tp in tps if tp in ctx.states]
        changed: list[TopicPartition] = []
        conflicts: list[TopicPartition] = []

        async def write(chunk: list[tuple[TopicPartition, LeaderIsr, codec.PartitionState]]) -> None:
            await pace()
            ops: list[Op] = [
                SetData(paths.partition_state(*tp), codec.encode_partition_state(new), li.version)
                for tp, li, new in chunk
            ]
            try:
                stats = await self.fenced(ops)
            except MultiFailedError as e:
                if not isinstance(e.cause, BadVersionError) and not _given_up(e):
                    raise
                # nothing of this multi was applied: write its partitions one by one, so that only
                # the ones that really changed under us are re-read and decided again, and only
                # one that fails the same way every time (NOAUTH: another principal owns its
                # state znode) is given up, reported, and left as it is in memory and ZooKeeper
                if len(chunk) > 1:
                    await for_each([[item] for item in chunk], write)
                elif isinstance(e.cause, BadVersionError):
                    conflicts.append(chunk[0][0])
                else:
                    self._give_up(chunk[0][0], e)
                return
            await pace()  # hundreds of replies come in one read: their commits take turns
            for (tp, li, new), stat in zip(chunk, stats, strict=True):
                assert isinstance(stat, Stat)
                ctx.set_state(tp, LeaderIsr(new, stat.version))
                changed.append(tp)
                for change in state_changes(tp, li.state, new):
                    self.records.emit(change)

        for _attempt in range(5):
            writes = []
            for i, tp in enumerate(todo):
                if i % _DECIDE_SLICE == _DECIDE_SLICE - 1:
                    await pace()
                li = ctx.states[tp]
                new = decide(tp, li)
                if new is not None:
                    writes.append((tp, li, new))
            conflicts.clear()
            chunks = [writes[i : i + _STATES_PER_MULTI] for i in range(0, len(writes), _STATES_PER_MULTI)]
            await for_each(chunks, write)
            if not conflicts:
                break
            states, _ = await loader.read_states(self.reads, list(conflicts), self._report)
            for tp, li in states.items():
                ctx.set_state(tp, li)
            todo = list(states)
        return changed

    def _give_up(self, tp: TopicPartition, e: MultiFailedError) -> None:
        refusal = failures.describe(e)
        log.warning("state of %s-%d not written: %s", tp[0], tp[1], refusal.reason)
        self._refuse(
            refusal.path or paths.partition_state(*tp),
            f"state of {tp[0]}-{tp[1]} not written: {refusal.reason}",
            "partition_state",
        )

    async def create_states(self, topic: str, new_states: Mapping[int, codec.PartitionState]) -> list[int]:
        """Create the state znodes of new partitions of ``topic`` (and their parents). A write
        that fails the same way every time (NOAUTH: another principal owns the topic's
        ``partitions`` znode) gives the topic up, reported: its partitions stay without a state
        (offline), as a new controller would leave them, and the other topics go on."""
        ctx = self.ctx
        parent = paths.topic_partitions(topic)
        existing = await self.reads.exists(parent)
        have = set() if existing is None else set(await self.reads.children(parent))
        ops: list[Op] = [] if existing is not None else [Create(parent)]
        for p, state in sorted(new_states.items()):
            if str(p) not in have:
                ops.append(Create(paths.partition(topic, p)))
            ops.append(Create(paths.partition_state(topic, p), codec.encode_partition_state(state)))
        try:
            await self.fenced(ops)
        except MultiFailedError as e:
            if isinstance(e.cause, NodeExistsError):
                log.warning("state znodes of %s appeared concurrently (%s); re-reading", topic, e)
                tps = [(topic, p) for p in new_states]
                states, _ = await loader.read_states(self.reads, tps, self._report)
                for tp, li in states.items():
                    ctx.set_state(tp, li)
                return []
            if not _given_up(e):
                raise
            refusal = failures.describe(e)
            log.warning("state znodes of %s not created: %s", topic, refusal.reason)
            self._refuse(
                refusal.path or parent,
                f"state znodes of topic {topic} not created: {refusal.reason}",
                "partition_state",
            )
            return []
        for p, state in new_states.items():
            ctx.set_state((topic, p), LeaderIsr(state, 0))
        return list(new_states)

    async def ensure_paths(self, znode_paths: Iterable[str]) -> list[str]:
        """Every missing persistent znode of ``znode_paths`` and above them, created by fenced
        writes (null data, as Kafka creates them); returns the paths created. Kafka's
        controller creates its persistent paths at every election; an operator or a tool may
        delete an empty one at any time."""
        wanted: dict[str, None] = {}
        for path in znode_paths:
            parts = path.strip("/").split("/")
            for depth in range(1, len(parts) + 1):
                wanted["/" + "/".join(parts[:depth])] = None
        ordered = list(wanted)
        missing = [p for p, z in zip(ordered, await self.reads.get_many(ordered), strict=True) if z is None]
        if not missing:
            return []
        try:
            await self.fenced([Create(p) for p in missing])
            return missing
        except MultiFailedError as e:
            if not isinstance(e.cause, NodeExistsError):
                raise
        created = []
        for p in missing:  # someone else created some of them meanwhile: one by one
            try:
                await self.fenced([Create(p)])
                created.append(p)
            except MultiFailedError as one:
                if not isinstance(one.cause, NodeExistsError):
                    raise
        return created

    async def children(self, path: str, watch: WatchCallback | None) -> list[str]:
        """The children of a persistent znode, with ``watch`` armed. One that someone deleted is
        re-created (fenced, reported) and read again, as Kafka's controller re-creates its paths,
        so the watch is armed on it."""
        try:
            return await self.reads.children(path, watch=watch)
        except NoNodeError:
            pass
        await self.ensure_paths([path])
        self._refuse(path, "missing (deleted outside the controller): re-created", "persistent_path")
        return await self.reads.children(path, watch=watch)

    async def delete_all(self, znode_paths: Iterable[str]) -> None:
        """Delete the znodes still there: one multi, or one by one when some are gone already."""
        znode_paths = list(znode_paths)
        if not znode_paths:
            return
        try:
            await self.fenced([Delete(p) for p in znode_paths])
        except MultiFailedError as e:
            if not isinstance(e.cause, NoNodeError):
                raise
            for p in znode_paths:
                try:
                    await self.fenced([Delete(p)])
                except MultiFailedError as one:
                    if not isinstance(one.cause, NoNodeError):
                        raise

    async def _write_with_origins(
        self, topic: str, write: Op, origins: dict[int, tuple[int, ...]]
    ) -> Stat | str | None:
        """The topic znode and its origins znode (the moves' original replicas) in one multi: the
        exact replica order a cancel restores is durable exactly when the move is. An origins
        znode of an earlier topic of that name may linger: a create that finds it overwrites it.
        Returns the topic write's result."""
        ctx, path = self.ctx, paths.topic_origins(topic)
        exists = topic in ctx.origin_znodes
        for _ in range(2):
            if origins:
                data = admin_codec.encode_origins(origins)
                op: Op = SetData(path, data, -1) if exists else Create(path, data)
            else:
                op = Delete(path)
            try:
                written = (await self.fenced([write, op], atomic=True))[0]
                break
            except MultiFailedError as e:
                if e.index != 1 or not isinstance(e.cause, NodeExistsError | NoNodeError):
                    raise
                if not origins:  # nothing to delete: write the topic alone
                    written = (await self.fenced([write]))[0]
                    break
                if isinstance(e.cause, NoNodeError) and not exists:  # no parent (someone deleted it)
                    await self.ensure_paths([paths.ORIGINS])
                exists = isinstance(e.cause, NodeExistsError)
        else:
            raise MultiFailedError(1, NodeExistsError("origins znode kept changing", path))
        if origins:
            ctx.origin_znodes.add(topic)
        else:
            ctx.origin_znodes.discard(topic)
        return written

    async def write_assignments(self, updates: Mapping[TopicPartition, ReplicaAssignment]) -> None:
        """Write the topic znodes of ``updates`` (one write per topic, pipelined on the worker pool
        of :func:`~reassignd.controller.reads.pipeline.for_each`), each then in memory.
        Topics without a topic id get one (reassignd writes version 3, as Kafka ≥ 2.8 does)."""
        if not updates:
            return
        ctx = self.ctx
        by_topic: dict[str, dict[int, ReplicaAssignment]] = {}
        for (topic, p), a in updates.items():
            by_topic.setdefault(topic, {})[p] = a

        async def one(item: tuple[str, dict[int, ReplicaAssignment]]) -> None:
            topic, parts = item
            await pace()  # hundreds of topics in flight: their encodings and commits take turns
            before = ctx.assignments.get(topic, {})
            previous = {p: before.get(p) for p in parts}  # ``before`` is memory itself: it changes below
            recorded = ctx.topic_origins(topic)  # the moves' before this write
            merged = {**before, **parts}
            topic_id = ctx.topic_ids.get(topic) or codec.new_uuid_base64()
            write = SetData(paths.topic(topic), codec.encode_topic(topic_znode(merged, topic_id)), -1)
            origins = origins_after(recorded, before, parts)
            if origins == recorded:
                stat = (await self.fenced([write]))[0]
            else:
                stat = await self._write_with_origins(topic, write, origins)
            await pace()
            ctx.topic_ids[topic] = topic_id
            assert isinstance(stat, Stat)
            ctx.topic_mzxids[topic] = stat.mzxid
            for p, a in parts.items():
                ors = origins.get(p) or recorded.get(p)
                ctx.set_assignment((topic, p), a, ors)
                for change in assignment_changes((topic, p), previous[p], a, ors):
                    self.records.emit(change)

        # Structured: the first failure cancels the writes still in flight and is raised once
        # every worker has stopped, so no write of this event outlives it (gather would leave
        # the others running). Topics written before the failure are in memory too; the event
        # fails and the controller reloads from ZooKeeper anyway.
        await for_each(by_topic.items(), one)

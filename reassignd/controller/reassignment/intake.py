"""Where reassignments come from: the HTTP API (Alter/Cancel) and the legacy znode.

Kafka's ``onApiPartitionReassignment`` / ``processZkPartitionReassignment`` /
``maybeRemoveFromZkReassignment``, handing the validated new assignments to the
:class:`~reassignd.controller.reassignment.algorithm.Reassigner`. The latest request for a partition wins:
an API request removes the partition from ``/admin/reassign_partitions``; at failover the znode
is applied first.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from reassignd.concurrency import pace
from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.model.requests import (
    AlterPartitionResult,
    AlterReassignments,
    AlterResult,
    CancelMode,
    CancelReassignments,
    Source,
)
from reassignd.controller.reads import loader
from reassignd.controller.reads.topic_configs import read_topic_configs
from reassignd.controller.reassignment.algorithm import Reassigner
from reassignd.controller.reassignment.validation import (
    cancelled_assignment,
    in_original_order,
    replica_list_error,
    revert_needs_unclean_election,
    unclean_retarget_error,
    validate_target,
)
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.controller.state.context import ControllerContext
from reassignd.errors import (
    InvalidReplicaAssignment,
    ReassigndError,
    ReassignmentCancelInPlace,
    UnknownTopicOrPartition,
)
from reassignd.topic_partition import TopicPartition
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.errors import NoNodeError
from reassignd.zk.reads import ZkReads
from reassignd.zk.values import Create, Delete, Op, SetData, WatchCallback

log = logging.getLogger(__name__)

LegacyEntries = tuple[admin_codec.LegacyReassignmentEntry, ...]
LEGACY_CHUNK_BYTES = 900 * 1024


def _result_order(request: AlterReassignments) -> list[TopicPartition]:
    """The order of a request's results: each partition once, where it was last named (the last
    one wins, in its own position)."""
    order: dict[TopicPartition, None] = {}
    for tp, _ in request.targets:
        order.pop(tp, None)
        order[tp] = None
    return list(order)


@dataclass(frozen=True)
class AlterDecision:
    """What the API requests of one event (disjoint partitions, one cancel mode) decided, before
    anything is written: each partition's new assignment or error, in the requests' order."""

    requests: tuple[AlterReassignments, ...]
    targets: Mapping[TopicPartition, tuple[int, ...] | None]
    errors: Mapping[TopicPartition, ReassigndError]
    updates: Mapping[TopicPartition, ReplicaAssignment]

    @property
    def cancelled(self) -> list[TopicPartition]:
        """The partitions whose move the requests cancel or stop (their write ends the move)."""
        return [tp for tp, target in self.targets.items() if target is None and tp in self.updates]


class Intake:
    def __init__(
        self,
        reads: ZkReads,
        ctx: ControllerContext,
        reassigner: Reassigner,
        watch_legacy: Callable[[], WatchCallback | None],
        watch_extra: Callable[[], WatchCallback | None],
        watch_cancel: Callable[[], WatchCallback | None],
        report: Callable[[str, str, str], None],
        *,
        now_ms: Callable[[], int],
    ) -> None:
        self.now_ms = now_ms  # the injected wall clock, for the moves' start times
        self.reads = reads
        self.ctx = ctx
        self.reassigner = reassigner
        self._watch_legacy = watch_legacy
        self._report = report
        self._watch_extra = watch_extra
        self._watch_cancel = watch_cancel
        self._legacy_czxid: int | None = None
        # the pending legacy set (KIP-236: with original_replicas), persisted by _persist
        self.legacy: dict[TopicPartition, admin_codec.LegacyReassignmentEntry] = {}
        self.cancel_in_place = False
        # the last legacy-format znode decoded: (path, its bytes, its entries)
        self._last_decoded: tuple[str, bytes | None, LegacyEntries] | None = None

    # --- the API ------------------------------------------------------------------------------------

    async def refused_reverts(
        self, originals: Mapping[TopicPartition, Sequence[int]], *, read: bool = True
    ) -> set[TopicPartition]:
        """The unclean-election safety rule of every cancel path (API, bulk, the cancel znode,
        sequenced requests): the partitions of ``originals`` whose revert to those replicas would
        need an unclean leader election — none of them in the ISR, read from ZooKeeper now, not
        from the cache (``read=False``: the caller just read them) — while their topic (or the
        broker default) does not allow one."""
        if not originals:
            return set()
        if read:
            states, _ = await loader.read_states(self.reads, list(originals), self._report)
            for tp, fresh in states.items():
                self.ctx.set_state(tp, fresh)
        needing = {
            tp for tp, original in originals.items() if revert_needs_unclean_election(original, self._isr(tp))
        }
        if not needing:
            return set()
        configs = await read_topic_configs(self.reads, {t for t, _ in needing}, self._report)
        return {tp for tp in needing if not configs.unclean_leader_election(tp[0])}

    def _isr(self, tp: TopicPartition) -> tuple[int, ...]:
        li = self.ctx.states.get(tp)
        return li.state.isr if li is not None else ()

    async def decide(self, requests: Sequence[AlterReassignments]) -> AlterDecision:
        """The API requests of one event (one cancel mode, disjoint partitions: each partition's
        outcome depends only on its own target and the cluster), decided as one: validated
        against the context and the ISR read now. Nothing is written until :meth:`carry_out`;
        the dispatch journals the batch moves a decision cancels in between
        (``BatchRunner.cancelled_through_api``)."""
        request = (
            requests[0]
            if len(requests) == 1
            else AlterReassignments(tuple(t for r in requests for t in r.targets), requests[0].mode)
        )
        ctx = self.ctx
        targets: dict[TopicPartition, tuple[int, ...] | None] = {}
        for tp, target in request.targets:
            targets.pop(tp, None)  # the last one wins, in its own position
            targets[tp] = target
        errors: dict[TopicPartition, ReassigndError] = {}
        updates: dict[TopicPartition, ReplicaAssignment] = {}
        live = ctx.live_broker_ids
        # A stop keeps the adding replicas in the ISR, a re-target must keep an in-sync copy: both
        # decide on the ISR read from ZooKeeper now, not on the cache (a group commit passes
        # queued ISR notifications, so the cache may be behind what the brokers wrote)
        moves = ctx.moves  # the moving partitions, and where each moves from
        await self.reassigner.refresh_states([tp for tp in targets if tp in moves])
        refused: set[TopicPartition] = set()
        if request.mode is CancelMode.CANCEL:
            refused = await self.refused_reverts(
                {
                    tp: m.origins
                    for tp, target in targets.items()
                    if target is None and (m := moves.get(tp)) is not None
                },
                read=False,
            )
        # the same rule for re-targets: a new RS keeping no replica of the ISR (the new RS is
        # computed on the assignment: Kafka's rule, relative to RS − AR)
        retargets = {
            tp: new.replicas
            for tp, target in targets.items()
            if target is not None
            and tp in moves
            and replica_list_error(target) is None
            and (a := ctx.assignment(tp)) is not None
            and revert_needs_unclean_election((new := a.reassign_to(target)).replicas, self._isr(tp))
        }
        refused_retargets = await self.refused_reverts(retargets, read=False)
        for i, (tp, target) in enumerate(targets.items()):
            if i % 500 == 499:
                await pace()  # thousands of targets: the loop is not held meanwhile
            # the assignment is what a new one is computed from (and a partition with no move has
            # nothing else); whether it moves, and from where, the Move record says
            current = ctx.assignment(tp)
            move = moves.get(tp)
            outcome: ReplicaAssignment | ReassigndError | None
            if target is None and move is not None and tp[0] in ctx.topics_to_delete:
                # Kafka's maybeTriggerPartitionReassignment: a topic queued for deletion takes no
                # reassignment, a cancel included
                outcome = UnknownTopicOrPartition("The partition does not exist.")
            elif target is None:
                li = ctx.states.get(tp)
                outcome = cancelled_assignment(
                    tp[0],
                    tp[1],
                    current,
                    li.state.isr if li else (),
                    request.mode,
                    unclean_allowed=tp not in refused,
                )
                if isinstance(outcome, ReplicaAssignment) and current is not None:
                    legacy = self.legacy.get(tp)
                    ors = (
                        move.origins
                        if move is not None
                        else (legacy.original_replicas if legacy is not None else None)
                    )
                    outcome = in_original_order(outcome, current, ors)
                if tp in refused:
                    log.warning(
                        "cancel of %s-%d refused: no original replica %s is in the ISR %s and the topic does "
                        "not allow unclean leader election",
                        tp[0],
                        tp[1],
                        list(move.origins) if move else [],
                        list(li.state.isr) if li else [],
                    )
            elif self.cancel_in_place:
                outcome = ReassignmentCancelInPlace()
            else:
                deleting = tp[0] in ctx.topics_to_delete
                moved = current.reassign_to(target) if current is not None else None
                outcome = validate_target(target, current, live, topic_deleting=deleting, moved=moved)
                if outcome is None and tp in refused_retargets:
                    outcome = unclean_retarget_error(tp[0], tp[1], target)
                if outcome is None:
                    assert moved is not None
                    outcome = moved
            if isinstance(outcome, ReassigndError):
                errors[tp] = outcome
            else:
                updates[tp] = outcome
        for tp, reason in self.reassigner.oversized(updates).items():
            errors[tp] = InvalidReplicaAssignment(reason)
            del updates[tp]
        return AlterDecision(tuple(requests), targets, errors, updates)

    async def carry_out(self, decision: AlterDecision, out: EventOutputs) -> list[AlterResult]:
        """Writes what :meth:`decide` decided (one round of ZooKeeper writes for all the
        requests) and answers each request as it would have been answered alone."""
        ctx = self.ctx
        updates = decision.updates
        errors = dict(decision.errors)
        await self.remove_from_legacy(lambda tp, _replicas: tp in updates, out)
        for tp in decision.cancelled:  # a cancel or stop: its write ends the move
            ctx.move_reverting(tp)
        # decide sized these updates against the same context (nothing between writes a topic)
        refused = await self.reassigner.reassign(updates, Source.API, self.now_ms(), out, sized=True)
        for tp, reason in refused.items():
            errors[tp] = InvalidReplicaAssignment(reason)
        results = {
            tp: AlterPartitionResult(tp[0], tp[1], e.error_code, e.message)
            if (e := errors.get(tp)) is not None
            else AlterPartitionResult(tp[0], tp[1])
            for tp in decision.targets
        }
        return [AlterResult(tuple(results[tp] for tp in _result_order(r))) for r in decision.requests]

    def cancel_request(self, request: CancelReassignments) -> AlterReassignments:
        """DELETE as the alter request it is: one partition (its result, 85 when not moving), a
        topic's or every moving partition (one entry each)."""
        ctx = self.ctx
        if request.topic is not None and request.partition is not None:
            chosen = [(request.topic, request.partition)]
        else:
            chosen = sorted(tp for tp in ctx.reassigning if request.topic is None or tp[0] == request.topic)
        return AlterReassignments(tuple((tp, None) for tp in chosen), request.mode)

    # --- the legacy znode (and KIP-236's extra and cancel znodes) -----------------------------------

    async def _read_entries(self, path: str, watch: WatchCallback | None) -> tuple[LegacyEntries, int] | None:
        """(entries, czxid) of a legacy-format znode; None when absent or malformed (reported;
        the znode is left for its owner to fix, as Kafka does)."""
        znode = await self.reads.get_or_none(path, watch=watch)
        if znode is None:
            return None
        last = self._last_decoded
        if last is not None and last[0] == path and last[1] == znode.data:
            return last[2], znode.stat.czxid  # the same bytes as last read: a failover reads it twice
        try:
            entries = admin_codec.decode_legacy_reassignment(znode.data)
        except codec.CodecError as e:
            self._report(path, e.reason, "legacy_reassignment")
            return None
        self._last_decoded = (path, znode.data, entries)
        return entries, znode.stat.czxid

    async def _read_overflow(self) -> LegacyEntries:
        """Legacy entries that did not fit in /admin/reassign_partitions (see _persist)."""
        children = (
            await self.reads.children(paths.LEGACY_OVERFLOW)
            if await self.reads.exists(paths.LEGACY_OVERFLOW)
            else []
        )
        entries: list[admin_codec.LegacyReassignmentEntry] = []
        for name in sorted(children):
            read = await self._read_entries(f"{paths.LEGACY_OVERFLOW}/{name}", None)
            if read is not None:
                entries.extend(read[0])
        return tuple(entries)

    def _refused_while_cancelling(self, path: str) -> bool:
        if self.cancel_in_place:
            log.warning("%s left untouched: /admin/reassign_cancel is in place", path)
            self._report(
                path, "refused: a reassignment cancellation (/admin/reassign_cancel) is in place", "refused"
            )
            return True
        return False

    async def _start_entries(self, entries: LegacyEntries, out: EventOutputs, *, merge: bool) -> None:
        """Start legacy-format entries (no validation beyond the replica list, as Kafka): a
        partition already pending is re-targeted relative to its original replicas."""
        ctx = self.ctx
        latest: dict[TopicPartition, admin_codec.LegacyReassignmentEntry] = {}
        for e in entries:
            latest.pop((e.topic, e.partition), None)
            latest[(e.topic, e.partition)] = e
        updates: dict[TopicPartition, ReplicaAssignment] = {}
        for tp, e in latest.items():
            current = ctx.assignment(tp)  # what the new assignment is computed from
            move = ctx.moves.get(tp)
            if current is None or tp[0] in ctx.topics_to_delete:
                reason = "The partition does not exist."
            elif (error := replica_list_error(e.replicas)) is not None:
                reason = error.message or error.error_name
            elif move is not None and move.request_status:
                reason = "it is being reassigned through /admin/reassignment_requests (KIP-236); ignored"
            else:
                updates[tp] = current.reassign_to(e.replicas)
                # the replicas before this move, in their own order, for a KIP-236 rollback: the
                # entry's, else its move's origins, else (not moving) its replicas now
                known = self.legacy.get(tp)
                original = (
                    known.original_replicas
                    if merge and known is not None and known.original_replicas
                    else e.original_replicas or (move.origins if move is not None else current.replicas)
                )
                self.legacy[tp] = admin_codec.LegacyReassignmentEntry(tp[0], tp[1], e.replicas, original)
                continue
            log.warning("legacy reassignment of %s-%d dropped: %s", tp[0], tp[1], reason)
        refused = await self.reassigner.reassign(updates, Source.ZK, self.now_ms(), out)
        for tp, reason in refused.items():
            # dropped from the pending set, so from the znode too (reported per topic already)
            log.warning("legacy reassignment of %s-%d dropped: %s", tp[0], tp[1], reason)
            self.legacy.pop(tp, None)
        for tp in out.completed:  # completed by this event so far (at once: a reorder)
            entry = self.legacy.get(tp)
            a = ctx.assignment(tp)  # its move ended: no Move record, the assignment says where
            if entry is not None and a is not None and a.replicas == entry.replicas:
                del self.legacy[tp]
        await self._persist(out)

    async def load_pending(self) -> None:
        """Failover: know the pending legacy set (with the ``original_replicas`` an earlier
        controller recorded) before anything acts on it, so a cancel znode found at failover
        rolls these moves back instead of letting them resume forward. Starts nothing."""
        read = await self._read_entries(paths.REASSIGN_PARTITIONS, None)
        if read is None:
            return
        moves = self.ctx.moves  # their origins as the origins znodes recorded them (loaded first)
        for e in read[0] + await self._read_overflow():
            tp = (e.topic, e.partition)
            current = self.ctx.assignment(tp)
            if current is None:
                continue
            original = e.original_replicas or (
                m.origins if (m := moves.get(tp)) is not None else current.replicas
            )
            self.legacy[(e.topic, e.partition)] = admin_codec.LegacyReassignmentEntry(
                e.topic, e.partition, e.replicas, original
            )

    async def on_legacy_znode(self, out: EventOutputs) -> None:
        """ZkPartitionReassignment: a new /admin/reassign_partitions starts its entries; entries
        that cannot start are dropped from the znode with a logged reason; accepted ones get
        ``original_replicas`` recorded (KIP-236)."""
        read = await self._read_entries(paths.REASSIGN_PARTITIONS, self._watch_legacy())
        if read is None:
            self._legacy_czxid = None
            return
        entries, czxid = read
        if czxid == self._legacy_czxid:
            return  # a data change of a znode already applied (creation is what counts)
        if self._refused_while_cancelling(paths.REASSIGN_PARTITIONS):
            return
        self._legacy_czxid = czxid
        await self._start_entries(entries + await self._read_overflow(), out, merge=False)

    async def on_extra_znode(self, out: EventOutputs) -> None:
        """KIP-236 /admin/reassign_partitions_extra: merged into the pending legacy set and
        started while others are in flight; deleted once merged."""
        read = await self._read_entries(paths.REASSIGN_PARTITIONS_EXTRA, self._watch_extra())
        if read is None or self._refused_while_cancelling(paths.REASSIGN_PARTITIONS_EXTRA):
            return
        await self._start_entries(read[0], out, merge=True)
        await self._delete_quietly(paths.REASSIGN_PARTITIONS_EXTRA, out)
        await self.reads.exists(paths.REASSIGN_PARTITIONS_EXTRA, watch=self._watch_extra())

    async def on_cancel_znode(self, out: EventOutputs) -> None:
        """KIP-236 /admin/reassign_cancel: its creation rolls back every pending legacy
        reassignment to its ``original_replicas``; while it exists nothing new starts; its
        deletion (by a client, never by the controller) lets the refused submissions run."""
        exists = await self.reads.exists(paths.REASSIGN_CANCEL, watch=self._watch_cancel()) is not None
        if exists and not self.cancel_in_place:
            self.cancel_in_place = True
            await self._rollback(out)
        elif not exists and self.cancel_in_place:
            self.cancel_in_place = False
            log.info("/admin/reassign_cancel removed: reassignments may start again")
            self._legacy_czxid = None
            await self.on_legacy_znode(out)
            await self.on_extra_znode(out)

    async def _rollback(self, out: EventOutputs) -> None:
        ctx = self.ctx
        if not self.legacy:
            return  # nothing pending (a legacy znode written meanwhile stays untouched)
        originals: dict[TopicPartition, tuple[int, ...]] = {}
        for tp, entry in sorted(self.legacy.items()):
            move = ctx.moves.get(tp)
            if move is None:
                continue  # no longer moving: nothing to roll back
            originals[tp] = tuple(entry.original_replicas or move.origins)
        refused = await self.refused_reverts(originals)
        updates: dict[TopicPartition, ReplicaAssignment] = {}
        for tp, original in originals.items():
            if tp in refused:
                log.warning("%s-%d not rolled back: it would require an unclean leader election", *tp)
                self._report(
                    paths.REASSIGN_CANCEL,
                    f"{tp[0]}-{tp[1]} not rolled back: it would require an unclean leader election",
                    "rollback",
                )
                continue
            updates[tp] = ReplicaAssignment(original)
        log.warning("rolling back %d legacy reassignments (/admin/reassign_cancel)", len(updates))
        await self.reassigner.reassign(updates, Source.ZK, self.now_ms(), out)
        self.legacy = {tp: e for tp, e in self.legacy.items() if tp not in updates}
        await self._persist(out)

    async def _delete_quietly(self, path: str, out: EventOutputs) -> None:
        await out.writes.write([Delete(path)], expect=(NoNodeError,))  # one already gone is deleted

    async def _persist(self, out: EventOutputs) -> None:
        """Write the pending legacy set to /admin/reassign_partitions (deleted when empty, and
        its creation watch re-armed). What does not fit under ZooKeeper's 1 MiB goes to
        /reassignd/legacy_overflow/chunk_N (under /reassignd, reassignd's own state). Read, then
        decided (``legacy_writes``), then one fenced write (ZooKeeper takes it as several multis
        when it is larger than one request, in order)."""
        chunks = legacy_chunks(tuple(self.legacy[tp] for tp in sorted(self.legacy)))
        overflow = None
        if await self.reads.exists(paths.LEGACY_OVERFLOW) is not None:
            overflow = await self.reads.children(paths.LEGACY_OVERFLOW)
        current = await self.reads.get_or_none(paths.REASSIGN_PARTITIONS) if chunks else None
        ops = legacy_writes(chunks, overflow, None if current is None else current.data)
        if ops:
            await out.writes.write(ops)
        if not chunks:
            await self._delete_quietly(paths.REASSIGN_PARTITIONS, out)
            self._legacy_czxid = None
            await self.reads.exists(paths.REASSIGN_PARTITIONS, watch=self._watch_legacy())
        elif current is not None and not any(op.path == paths.REASSIGN_PARTITIONS for op in ops):
            # already these bytes (a failover resuming what the last controller recorded): no
            # write, so no version step and no data watch fired for nothing
            self._legacy_czxid = current.stat.czxid
        else:
            stat = await self.reads.exists(paths.REASSIGN_PARTITIONS)
            self._legacy_czxid = stat.czxid if stat is not None else None

    async def remove_from_legacy(
        self, should_remove: Callable[[TopicPartition, tuple[int, ...]], bool], out: EventOutputs
    ) -> None:
        """Kafka's maybeRemoveFromZkReassignment."""
        gone = [tp for tp, e in self.legacy.items() if should_remove(tp, e.replicas)]
        if not gone:
            return
        for tp in gone:
            del self.legacy[tp]
        await self._persist(out)

    async def after_completions(self, completed: Iterable[TopicPartition], out: EventOutputs) -> None:
        """Drop the partitions an event completed from the legacy set when its target for them
        equals the completed TRS (their moves ended: the assignment says where)."""
        done = {tp: a.replicas for tp in completed if (a := self.ctx.assignment(tp))}
        if done and self.legacy:
            await self.remove_from_legacy(lambda tp, replicas: done.get(tp) == replicas, out)

    def legacy_partitions(self) -> set[TopicPartition]:
        return set(self.legacy)


def legacy_chunks(entries: LegacyEntries) -> list[LegacyEntries]:
    """The pending legacy entries in chunks that each encode within ``LEGACY_CHUNK_BYTES``."""
    chunks: list[LegacyEntries] = []
    rest = entries
    while rest:
        n = len(rest)
        while n > 1 and (size := len(admin_codec.encode_legacy_reassignment(rest[:n]))) > LEGACY_CHUNK_BYTES:
            n = max(1, min(n - 1, n * LEGACY_CHUNK_BYTES // size))
        chunks.append(rest[:n])
        rest = rest[n:]
    return chunks


def legacy_writes(chunks: list[LegacyEntries], overflow: list[str] | None, current: bytes | None) -> list[Op]:
    """The writes that make ZooKeeper hold ``chunks`` — the first in /admin/reassign_partitions
    (whose bytes are ``current``, None when it does not exist), the rest under the overflow
    znode (whose children are ``overflow``, None when it does not exist) — in order: the old
    overflow deleted, the legacy znode written (not when it holds these bytes already), the new
    overflow created. With no chunk, only the overflow goes (the caller deletes the legacy znode)."""
    ops: list[Op] = []
    if overflow is not None:
        ops += [Delete(f"{paths.LEGACY_OVERFLOW}/{c}") for c in overflow]
        ops.append(Delete(paths.LEGACY_OVERFLOW))
    if not chunks:
        return ops
    data = admin_codec.encode_legacy_reassignment(chunks[0])
    if current is None:
        ops.append(Create(paths.REASSIGN_PARTITIONS, data))
    elif current != data:
        ops.append(SetData(paths.REASSIGN_PARTITIONS, data, -1))
    if len(chunks) > 1:
        ops.append(Create(paths.LEGACY_OVERFLOW))
        ops += [
            Create(f"{paths.LEGACY_OVERFLOW}/chunk_{i:04d}", admin_codec.encode_legacy_reassignment(c))
            for i, c in enumerate(chunks[1:])
        ]
    return ops

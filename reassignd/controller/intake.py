"""Where reassignments come from: the HTTP API (Alter/Cancel) and the legacy znode.

Kafka's ``onApiPartitionReassignment`` / ``processZkPartitionReassignment`` /
``maybeRemoveFromZkReassignment``, handing the validated new assignments to the
:class:`~reassignd.controller.reassignment.Reassigner`. The latest request for a partition wins:
an API request removes the partition from ``/admin/reassign_partitions``; at failover the znode
is applied first.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from reassignd.controller.assignment import ReplicaAssignment
from reassignd.controller.context import ControllerContext
from reassignd.controller.reassignment import Reassigner
from reassignd.controller.request_batch import ControlBatch
from reassignd.controller.requests import (
    AlterReassignments,
    AlterResult,
    CancelReassignments,
    PartitionResult,
    Source,
)
from reassignd.controller.validation import cancelled_assignment, replica_list_error, validate_target
from reassignd.controller.writer import ZkWriter
from reassignd.errors import ReassigndError, UnknownTopicOrPartition
from reassignd.zk import codec, paths
from reassignd.zk.client import Delete, MultiFailedError, NoNodeError, SetData, WatchCallback, ZkClient

log = logging.getLogger(__name__)

TopicPartition = codec.TopicPartition
LegacyEntries = tuple[codec.LegacyReassignmentEntry, ...]


def now_ms() -> int:
    return int(time.time() * 1000)


class Intake:
    def __init__(
        self,
        zk: ZkClient,
        ctx: ControllerContext,
        writer: ZkWriter,
        reassigner: Reassigner,
        watch_legacy: Callable[[], WatchCallback | None],
        report: Callable[[str, str, str], None],
    ) -> None:
        self.zk = zk
        self.ctx = ctx
        self.writer = writer
        self.reassigner = reassigner
        self._watch_legacy = watch_legacy
        self._report = report
        self._legacy_czxid: int | None = None
        self._legacy_targets: dict[TopicPartition, tuple[int, ...]] = {}

    # --- the API ------------------------------------------------------------------------------------

    async def _unclean_allowed(self, topic: str) -> bool:
        znode = await self.zk.get_or_none(paths.config_topic(topic))
        if znode is None:
            return False
        try:
            config = codec.decode_entity_config(znode.data)
        except codec.CodecError as e:
            self._report(paths.config_topic(topic), e.reason, "topic_config")
            return False
        return config.get("unclean.leader.election.enable", "false").strip().lower() == "true"

    async def alter(self, request: AlterReassignments, batch: ControlBatch) -> AlterResult:
        ctx = self.ctx
        targets: dict[TopicPartition, tuple[int, ...] | None] = {}
        for tp, target in request.targets:
            targets.pop(tp, None)  # the last one wins, in its own position
            targets[tp] = target
        errors: dict[TopicPartition, ReassigndError] = {}
        updates: dict[TopicPartition, ReplicaAssignment] = {}
        live = ctx.live_broker_ids
        for tp, target in targets.items():
            current = ctx.assignment(tp)
            outcome: ReplicaAssignment | ReassigndError | None
            if target is None:
                li = ctx.states.get(tp)
                unclean = (
                    current is not None and current.is_being_reassigned and await self._unclean_allowed(tp[0])
                )
                outcome = cancelled_assignment(
                    tp[0], tp[1], current, li.state.isr if li else (), request.mode, unclean_allowed=unclean
                )
            else:
                deleting = tp[0] in ctx.topics_to_delete
                outcome = validate_target(target, current, live, topic_deleting=deleting)
                if outcome is None:
                    assert current is not None
                    outcome = current.reassign_to(target)
            if isinstance(outcome, ReassigndError):
                errors[tp] = outcome
            else:
                updates[tp] = outcome
        await self.remove_from_legacy(lambda tp, _replicas: tp in updates)
        await self.reassigner.reassign(updates, Source.API, now_ms(), batch)
        return AlterResult(
            tuple(
                PartitionResult(tp[0], tp[1], e.error_code, e.message)
                if (e := errors.get(tp)) is not None
                else PartitionResult(tp[0], tp[1])
                for tp in targets
            )
        )

    async def cancel(self, request: CancelReassignments, batch: ControlBatch) -> AlterResult:
        """DELETE: one partition (its result, 85 when not moving), a topic's or every moving
        partition (one entry each)."""
        ctx = self.ctx
        if request.topic is not None and request.partition is not None:
            chosen = [(request.topic, request.partition)]
        else:
            chosen = sorted(tp for tp in ctx.reassigning if request.topic is None or tp[0] == request.topic)
        return await self.alter(AlterReassignments(tuple((tp, None) for tp in chosen), request.mode), batch)

    # --- the legacy znode ---------------------------------------------------------------------------

    async def _read_legacy(self, *, watch: bool) -> tuple[LegacyEntries, int, int] | None:
        """(entries, version, czxid) of /admin/reassign_partitions, None when absent or
        malformed (reported; the znode is left for its owner to fix, as Kafka does)."""
        cb = self._watch_legacy() if watch else None
        znode = await self.zk.get_or_none(paths.REASSIGN_PARTITIONS, watch=cb)
        if znode is None:
            return None
        try:
            entries = codec.decode_legacy_reassignment(znode.data)
        except codec.CodecError as e:
            self._report(paths.REASSIGN_PARTITIONS, e.reason, "legacy_reassignment")
            return None
        return entries, znode.stat.version, znode.stat.czxid

    async def on_legacy_znode(self, batch: ControlBatch) -> None:
        """ZkPartitionReassignment: a new /admin/reassign_partitions starts its entries (no
        validation, as in Kafka); entries that cannot start are dropped from the znode with a
        logged reason; accepted ones get ``original_replicas`` recorded (KIP-236)."""
        read = await self._read_legacy(watch=True)
        if read is None:
            self._legacy_czxid = None
            return
        entries, _version, czxid = read
        if czxid == self._legacy_czxid:
            return  # a data change of a znode already applied (creation is what counts)
        self._legacy_czxid = czxid
        ctx = self.ctx
        latest: dict[TopicPartition, codec.LegacyReassignmentEntry] = {}
        for e in entries:
            latest.pop((e.topic, e.partition), None)
            latest[(e.topic, e.partition)] = e
        updates: dict[TopicPartition, ReplicaAssignment] = {}
        failed: dict[TopicPartition, str] = {}
        for tp, e in latest.items():
            current = ctx.assignment(tp)
            if current is None or tp[0] in ctx.topics_to_delete:
                failed[tp] = UnknownTopicOrPartition("The partition does not exist.").message or ""
            elif (error := replica_list_error(e.replicas)) is not None:
                failed[tp] = error.message or error.error_name
            else:
                updates[tp] = current.reassign_to(e.replicas)
        for tp, reason in failed.items():
            log.warning("legacy reassignment of %s-%d dropped: %s", tp[0], tp[1], reason)
        # the replicas before this move (in their own order), for a KIP-236 rollback
        originals = {tp: current.original_replicas for tp in updates if (current := ctx.assignment(tp))}
        await self.reassigner.reassign(updates, Source.ZK, now_ms(), batch)
        self._legacy_targets = {tp: latest[tp].replicas for tp in updates}
        done = set(self.reassigner.completed)
        kept = tuple(
            codec.LegacyReassignmentEntry(tp[0], tp[1], latest[tp].replicas, originals[tp])
            for tp in updates
            if tp not in done
        )
        for tp in done:
            self._legacy_targets.pop(tp, None)
        await self._write_legacy(kept)

    async def _write_legacy(self, entries: LegacyEntries) -> None:
        try:
            if entries:
                await self.writer.fenced(
                    [SetData(paths.REASSIGN_PARTITIONS, codec.encode_legacy_reassignment(entries), -1)]
                )
            else:
                await self.writer.fenced([Delete(paths.REASSIGN_PARTITIONS)])
                self._legacy_czxid = None
                # re-arm the creation watch so the next znode runs
                await self.zk.exists(paths.REASSIGN_PARTITIONS, watch=self._watch_legacy())
        except MultiFailedError as e:
            if not isinstance(e.cause, NoNodeError):
                raise

    async def remove_from_legacy(
        self, should_remove: Callable[[TopicPartition, tuple[int, ...]], bool]
    ) -> None:
        """Kafka's maybeRemoveFromZkReassignment."""
        if not self._legacy_targets and self._legacy_czxid is None:
            return
        read = await self._read_legacy(watch=False)
        if read is None:
            return
        entries, _version, _czxid = read
        kept = tuple(e for e in entries if not should_remove((e.topic, e.partition), e.replicas))
        if len(kept) == len(entries):
            return
        for e in entries:
            if e not in kept:
                self._legacy_targets.pop((e.topic, e.partition), None)
        await self._write_legacy(kept)

    async def after_completions(self) -> None:
        """Drop completed partitions from the legacy znode when its target for them equals
        the completed TRS."""
        done = {tp: a.replicas for tp in self.reassigner.completed if (a := self.ctx.assignment(tp))}
        self.reassigner.completed.clear()
        if done and self._legacy_czxid is not None:
            await self.remove_from_legacy(lambda tp, replicas: done.get(tp) == replicas)

    def legacy_partitions(self) -> set[TopicPartition]:
        return set(self._legacy_targets)

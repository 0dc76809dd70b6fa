"""The batch executor inside the active controller: the shell around ``reassignd.executor``.

Batches live in memory and in their journal under ``/reassignd/batches/<id>`` (a head and
chunks, every write fenced). The journal is written **before** the topic znodes whenever a move
starts or a batch stops, so a controller that dies in between leaves a journal that says more
than ZooKeeper's assignments, never less: the next controller reconciles each move with what the
topic znode says (``executor.recovery.reconcile``) — a move whose partition reached its target is
completed, one that never started goes back to pending, one moved elsewhere is cancelled — and
nothing is started twice or lost.

Moves run through the reassignment machinery (phases U/A/B, ``Source.BATCH``). The scheduler
(``executor.scheduler.choose_moves``) runs at the end of every event that ran reassignments (a
completion frees its slots at once) and on a timer tick, counting every move in flight — batch,
API or legacy — against the caps.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

from reassignd.controller import loader
from reassignd.controller.assignment import ReplicaAssignment
from reassignd.controller.context import ControllerContext
from reassignd.controller.intake import Intake
from reassignd.controller.reassignment import Reassigner
from reassignd.controller.request_batch import ControlBatch
from reassignd.controller.requests import Source
from reassignd.controller.settings import ControllerSettings
from reassignd.controller.snapshot import BatchAction, BatchControlResult
from reassignd.controller.validation import validate_target
from reassignd.controller.writer import ZkWriter
from reassignd.errors import ReassigndError, ReassignmentCancelInPlace
from reassignd.executor import journal, lifecycle
from reassignd.executor import paths as batch_paths
from reassignd.executor.errors import UnknownBatch
from reassignd.executor.lifecycle import Revert
from reassignd.executor.model import Batch, BatchSpec, BatchState, Move, MoveState, PartitionSpec, Replicas
from reassignd.executor.recovery import ObservedPartition, reconcile
from reassignd.executor.scheduler import MoveShape, choose_moves, move_shape, queue_of
from reassignd.executor.submit import SubmitResult, submit
from reassignd.zk import codec
from reassignd.zk.client import Create, Op, SetData, ZkClient

log = logging.getLogger(__name__)

TopicPartition = codec.TopicPartition


class BatchRunner:
    """The active controller's batches (composed into the controller, not inherited)."""

    def __init__(
        self,
        zk: ZkClient,
        ctx: ControllerContext,
        writer: ZkWriter,
        reassigner: Reassigner,
        intake: Intake,
        settings: ControllerSettings,
        report: loader.Report,
        now_ms: Callable[[], int],
    ) -> None:
        self.zk = zk
        self.ctx = ctx
        self.writer = writer
        self.reassigner = reassigner
        self.intake = intake
        self.settings = settings
        self._report = report
        self._now_ms = now_ms
        self.batches: dict[str, Batch] = {}

    @property
    def has_work(self) -> bool:
        """Whether some batch may still start or finish a move (the tick timer runs meanwhile)."""
        return any(b.state.unfinished for b in self.batches.values())

    # --- the journal ---------------------------------------------------------------------------------

    async def load(self, batch: ControlBatch) -> None:
        """Failover: every journal, reconciled with the assignments just loaded."""
        await self.zk.ensure_path(batch_paths.BATCHES)
        for batch_id in sorted(await self.zk.children(batch_paths.BATCHES)):
            path = batch_paths.batch(batch_id)
            head = await self.zk.get_or_none(path)
            if head is None:
                continue
            names = sorted(
                (i, name)
                for name in await self.zk.children(path)
                if (i := batch_paths.chunk_index(name)) is not None
            )
            chunks = await self.zk.get_many([f"{path}/{name}" for _, name in names])
            try:
                loaded = journal.decode_batch(head.data, [c.data if c is not None else None for c in chunks])
            except codec.CodecError as e:
                self._report(path, f"batch journal skipped: {e.reason}", "batch_journal")
                continue
            # failover: a started move back at its previous replicas may never have started (the
            # journal is written first), so it goes back to pending
            reconciled, reverts = reconcile(loaded, self._observe, self._now_ms())
            self.batches[loaded.batch_id] = loaded
            await self._update(reconciled)
            await self._revert(reverts, batch)
            log.info("batch %s loaded: %s, %s", loaded.batch_id, reconciled.state, dict(reconciled.counts()))

    async def _write(self, new: Batch, old: Batch | None) -> None:
        """Fenced: the head, and the chunks whose moves changed (every chunk of a new batch)."""
        path = batch_paths.batch(new.batch_id)
        ops: list[Op]
        if old is None:
            znodes = journal.encode_batch(new)
            ops = [Create(path, znodes.head)]
            ops += [Create(batch_paths.batch_chunk(new.batch_id, i), c) for i, c in enumerate(znodes.chunks)]
        else:
            changed = {tp for tp, m in new.moves.items() if old.moves.get(tp) != m}
            ops = [SetData(path, journal.encode_head(new), -1)]
            ops += [
                SetData(batch_paths.batch_chunk(new.batch_id, i), journal.encode_chunk(new, i), -1)
                for i in sorted(journal.chunks_of(new, changed))
            ]
        await self.writer.fenced(ops)
        self.batches[new.batch_id] = new

    async def _update(self, new: Batch) -> None:
        old = self.batches.get(new.batch_id)
        if old is None or new != old:
            await self._write(new, old)

    # --- requests ------------------------------------------------------------------------------------

    def _current(self, tp: TopicPartition) -> Replicas | None:
        if tp[0] in self.ctx.topics_to_delete:
            return None
        a = self.ctx.assignment(tp)
        return None if a is None else a.replicas

    def _validate(self, p: PartitionSpec) -> ReassigndError | None:
        if self.intake.cancel_in_place:
            return ReassignmentCancelInPlace()
        deleting = p.topic in self.ctx.topics_to_delete
        return validate_target(
            p.replicas, self.ctx.assignment(p.tp), self.ctx.live_broker_ids, topic_deleting=deleting
        )

    async def submit(self, spec: BatchSpec, batch: ControlBatch) -> SubmitResult:
        result = submit(spec, self.batches, self._current, self._validate, self._now_ms())
        if result.created:
            await self._write(result.batch, None)
            log.info(
                "batch %s submitted: %d moves, %d refused",
                spec.batch_id,
                len(result.batch.moves),
                len(result.batch.refusals),
            )
            await self.tick(batch)
        return result

    async def control(self, batch_id: str, action: BatchAction, batch: ControlBatch) -> BatchControlResult:
        current = self.batches.get(batch_id)
        if current is None:
            raise UnknownBatch(f"no batch {batch_id!r}")
        now = self._now_ms()
        reverts: tuple[Revert, ...] = ()
        rollback_id: str | None = None
        match action:
            case BatchAction.PAUSE:
                new = lifecycle.pause(current, now)
            case BatchAction.RESUME:
                new = lifecycle.resume(current, now)
            case BatchAction.STOP:
                new, reverts = lifecycle.stop(current, now)
            case BatchAction.ROLLBACK:
                outcome = lifecycle.rollback(current, self.batches, self._current, self._validate, now)
                new, reverts = outcome.batch, outcome.reverts
                rollback_id = outcome.reverse.batch.batch_id
                if outcome.reverse.created:
                    await self._write(outcome.reverse.batch, None)
        await self._update(new)  # the journal first, then the topic znodes
        await self._revert(reverts, batch)
        log.info("batch %s: %s -> %s", batch_id, action, new.state)
        await self.tick(batch)
        return BatchControlResult(self.batches[batch_id], rollback_id)

    async def _revert(self, reverts: Sequence[Revert], batch: ControlBatch) -> None:
        """Moves a stop cancelled go back to exactly the replicas they had, in their order (so
        the preferred leader does not change) — unless that needs an unclean leader election the
        topic does not allow (reported; the move then runs on)."""
        wanted: dict[TopicPartition, Replicas] = {}
        for r in reverts:
            tp = (r.topic, r.partition)
            a = self.ctx.assignment(tp)
            if a is not None and a.is_being_reassigned and a.target_replicas == r.target:
                wanted[tp] = r.replicas
        refused = await self.intake.refused_reverts(wanted)
        for tp in sorted(refused):
            self._report(
                batch_paths.BATCHES,
                f"{tp[0]}-{tp[1]} not reverted: it would require an unclean leader election",
                "batch_revert",
            )
        updates = {tp: ReplicaAssignment(replicas) for tp, replicas in wanted.items() if tp not in refused}
        if updates:
            await self.reassigner.reassign(updates, Source.BATCH, self._now_ms(), batch)

    # --- running -------------------------------------------------------------------------------------

    def _observe(self, tp: TopicPartition) -> ObservedPartition | None:
        a = self.ctx.assignment(tp)
        if a is None or tp[0] in self.ctx.topics_to_delete:
            return None
        return ObservedPartition(a.replicas, a.target_replicas if a.is_being_reassigned else None)

    async def sync(self, batch: ControlBatch) -> None:
        """Moves that completed, were cancelled or re-targeted outside the batch, or whose
        partition is gone; moves a stop cancelled that still run are reverted."""
        now = self._now_ms()
        for known in list(self.batches.values()):
            b = known
            if not b.state.unfinished and b.state not in (BatchState.STOPPED, BatchState.ROLLED_BACK):
                continue
            # at run time a started move back at its previous replicas was cancelled (through the
            # API, the legacy znode...); only at failover may it not have started at all
            back = {
                tp: "cancelled outside the batch"
                for tp, m in b.in_state(MoveState.RUNNING)
                if (seen := self._observe(tp)) is not None
                and seen.target is None
                and seen.replicas == m.previous
            }
            if back:
                b = lifecycle.moves_cancelled(b, back, now)
            new, reverts = reconcile(b, self._observe, now)
            await self._update(new)
            if reverts:
                await self._revert(reverts, batch)

    def _leader(self, tp: TopicPartition) -> int | None:
        li = self.ctx.states.get(tp)
        return None if li is None else li.state.leader

    def _running(self) -> list[MoveShape]:
        shapes = []
        for tp in self.ctx.reassigning:
            a = self.ctx.assignment(tp)
            if a is not None:
                shapes.append(move_shape(tp, a.original_replicas, a.target_replicas, self._leader(tp)))
        return shapes

    def _pending_shape(self, tp: TopicPartition, move: Move) -> MoveShape | None:
        a = self.ctx.assignment(tp)
        if a is None or tp in self.ctx.reassigning or tp[0] in self.ctx.topics_to_delete:
            return None  # gone, or moving outside the batch: sync decides its fate
        return move_shape(tp, a.replicas, move.target, self._leader(tp))

    def _under_replicated(self) -> set[TopicPartition]:
        out = set()
        for topic, parts in self.ctx.assignments.items():
            for p, a in parts.items():
                li = self.ctx.states.get((topic, p))
                if li is not None and len(li.state.isr) < len(a.replicas):
                    out.add((topic, p))
        return out

    async def tick(self, batch: ControlBatch) -> None:
        """Start what the caps allow now (the journal first, then the reassignments)."""
        if self.intake.cancel_in_place or not self.has_work:
            return
        queues = [q for b in self.batches.values() if (q := queue_of(b, self._pending_shape)) is not None]
        if not any(q.pending for q in queues):
            return
        starts = choose_moves(
            self._running(), queues, self.settings.batch_moves_in_cluster, {}, self._under_replicated()
        )
        if not starts:
            return
        now = self._now_ms()
        by_batch: dict[str, dict[TopicPartition, Replicas]] = {}
        updates: dict[TopicPartition, ReplicaAssignment] = {}
        for start in starts:
            a = self.ctx.assignment(start.tp)
            move = self.batches[start.batch_id].moves[start.tp]
            assert a is not None
            by_batch.setdefault(start.batch_id, {})[start.tp] = a.replicas
            updates[start.tp] = a.reassign_to(move.target)
        for batch_id, started in by_batch.items():
            await self._update(lifecycle.moves_started(self.batches[batch_id], started, now))
        log.info("batches: starting %d moves", len(updates))
        await self.reassigner.reassign(updates, Source.BATCH, now, batch)

    def snapshot(self) -> Mapping[str, Batch]:
        return dict(self.batches)

    def moves_of(self, state: MoveState) -> int:
        return sum(1 for b in self.batches.values() for _ in b.in_state(state))

"""The batch executor inside the active controller: the shell around ``reassignd.executor``.

Batches live in memory and in their journal under ``/reassignd/batches/<id>`` (a head and
chunks, every write fenced). The journal is written **before** the topic znodes whenever a move
starts or a batch stops, so a controller that dies in between leaves a journal that says more
than ZooKeeper's assignments, never less: the next controller reconciles each move with what the
topic znode says (``executor.recovery.reconcile``) — a move whose partition reached its target is
completed, one that never started goes back to pending, one moved elsewhere is cancelled — and
nothing is started twice or lost.

The journal's head is its commit point (``journal_store.py``): a journal of any size is
changed atomically. Batches that ended are no longer reconciled at each event; their journals are
deleted ``batch_retention_s`` after they ended (once their throttles are restored). An API cancel
of a move a batch runs is journaled before the topic znode is written (``cancelled_through_api``),
so a failover in between never starts the move again.

Moves run through the reassignment machinery (phases U/A/B, ``Source.BATCH``). A move that pins
log dirs (JBOD) then has a dir phase the agents carry out (``executor/dir_moves.py``): the dir
mover (``agent_reports/dir_mover.py``) reports each round as an event, and the runner journals
the moves it is about to ask before it asks them, and ends those whose replicas arrived. The scheduler
(``executor.scheduler.choose_moves``) runs at the end of every event that ran reassignments (a
completion frees its slots at once) and on a timer tick, counting every move in flight — batch,
API or legacy — against the caps.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

from reassignd.contracts.records import BatchCapsChanged, BatchStateChanged, BatchSubmitted, CapStep
from reassignd.controller.batches.journal_store import JournalStore
from reassignd.controller.batches.throttles import BatchThrottles
from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.instance.metrics import ControllerMetrics
from reassignd.controller.model.moves import of_batch, revertible
from reassignd.controller.model.requests import Source
from reassignd.controller.model.samples import AgentSample, DirMovesSeen
from reassignd.controller.model.snapshot import BatchAction, BatchControlResult
from reassignd.controller.reads import loader
from reassignd.controller.reassignment.algorithm import Reassigner
from reassignd.controller.reassignment.intake import Intake
from reassignd.controller.reassignment.validation import validate_target
from reassignd.controller.settings import ControllerSettings
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.controller.state.context import ControllerContext
from reassignd.errors import InvalidRequest, ReassigndError, ReassignmentCancelInPlace
from reassignd.executor import adaptive, lifecycle
from reassignd.executor import paths as batch_paths
from reassignd.executor.errors import UnknownBatch
from reassignd.executor.lifecycle import Revert
from reassignd.executor.model import Batch, BatchMove, BatchMoveState, BatchSpec, BatchState, PartitionSpec
from reassignd.executor.recovery import ObservedPartition, reconcile
from reassignd.executor.scheduler import MoveShape, choose_moves, dir_shape, move_shape, queue_of
from reassignd.executor.submit import SubmitResult, submit
from reassignd.executor.znode_size import JournalTooLarge
from reassignd.stream.record_log import RecordLog
from reassignd.topic_partition import Replicas, TopicPartition
from reassignd.zk.reads import ZkReads

log = logging.getLogger(__name__)

API_CANCELLED = "cancelled through the API"


class BatchRunner:
    """The active controller's batches (composed into the controller, not inherited)."""

    def __init__(  # noqa: PLR0913 (its collaborators, composed)
        self,
        reads: ZkReads,
        ctx: ControllerContext,
        records: RecordLog,
        reassigner: Reassigner,
        intake: Intake,
        settings: ControllerSettings,
        report: loader.Report,
        now_ms: Callable[[], int],
        *,
        refuse: loader.Report | None = None,
        metrics: ControllerMetrics | None = None,
    ) -> None:
        self.reads = reads
        self.ctx = ctx
        self.records = records  # what was decided, as records
        self.reassigner = reassigner
        self.intake = intake
        self.settings = settings
        self._report = report
        self._now_ms = now_ms
        self._metrics = metrics or ControllerMetrics()
        self.batches: dict[str, Batch] = {}
        self.journals = JournalStore(reads, report, refuse if refuse is not None else report)
        self._throttles = BatchThrottles(reads, ctx, report, now_ms, lambda: self.batches, self._update)

    @property
    def has_work(self) -> bool:
        """Whether some batch may still start or finish a move (the tick timer runs meanwhile)."""
        return any(b.state.unfinished for b in self.batches.values())

    # --- the journal ---------------------------------------------------------------------------------

    async def load(self, out: EventOutputs) -> None:
        """Failover: every journal, reconciled with the assignments just loaded; journals whose
        retention is over are deleted."""
        now = self._now_ms()
        for loaded in await self.journals.load(out):
            # failover: a started move back at its origins may never have started (the
            # journal is written first), so it goes back to pending
            reconciled, reverts = reconcile(loaded, self._observe, now)
            self.batches[loaded.batch_id] = loaded
            await self._update(reconciled, out)
            self._own(
                self.batches[loaded.batch_id], (tp for tp, _ in reconciled.in_state(BatchMoveState.RUNNING))
            )
            await self._revert(reverts, out)
            log.info("batch %s loaded: %s, %s", loaded.batch_id, reconciled.state, dict(reconciled.counts()))
        await self._expire(now, out)

    async def _write(self, new: Batch, old: Batch | None, out: EventOutputs) -> bool:
        """The journal (fenced, the head last: executor/commit.py), then memory. False, with
        nothing written and the problem reported, when a znode of it would be too large."""
        if old is None:
            await self.journals.clear_for(new.batch_id, out)
        try:
            await self.journals.write(new, old, out)
        except JournalTooLarge as e:
            self._report(batch_paths.batch(new.batch_id), f"batch journal not written: {e}", "batch_journal")
            return False
        self.batches[new.batch_id] = new
        if old is not None:
            self._disown(old, new)
        events = self.records
        if old is None:
            events.emit(
                BatchSubmitted(
                    batch_id=new.batch_id,
                    plan_id=new.spec.plan_id,
                    state=str(new.state),
                    moves=len(new.moves),
                    refused=len(new.refusals),
                )
            )
        elif old.state is not new.state:
            events.emit(
                BatchStateChanged(batch_id=new.batch_id, state=str(new.state), previous_state=str(old.state))
            )
        return True

    def _own(self, batch: Batch, tps: Iterable[TopicPartition]) -> None:
        """The partitions' moves are ``batch``'s running moves (their records name it), where the
        partition moves to the batch move's target."""
        ctx, moves = self.ctx, batch.moves
        for tp in tps:
            m, running = ctx.moves.get(tp), moves.get(tp)
            if m is not None and running is not None and m.target == running.target:
                ctx.set_move_batch(tp, batch.batch_id)

    def _disown(self, old: Batch, new: Batch) -> None:
        """The moves ``old`` ran that ``new`` no longer runs (ended, cancelled, failed, or
        running on outside the batch) no longer name it."""
        ctx, batch_id = self.ctx, new.batch_id
        for tp, _m in old.in_state(BatchMoveState.RUNNING):
            after = new.moves.get(tp)
            if after is None or after.state is not BatchMoveState.RUNNING:
                m = ctx.moves.get(tp)
                if m is not None and m.batch == batch_id:
                    ctx.set_move_batch(tp, None)

    async def _update(self, new: Batch, out: EventOutputs) -> bool:
        """``new`` journaled, then in memory (True), or neither (False, reported)."""
        old = self.batches.get(new.batch_id)
        if old is None or new != old:
            return await self._write(new, old, out)
        return True

    # --- requests ------------------------------------------------------------------------------------

    def _current(self, tp: TopicPartition) -> Replicas | None:
        # the partition's replicas as a submission or rollback records them (its RS): the
        # assignment, since a partition the batch is yet to start may have no move
        if tp[0] in self.ctx.topics_to_delete:
            return None
        a = self.ctx.assignment(tp)
        return None if a is None else a.replicas

    def _validate(self, p: PartitionSpec) -> ReassigndError | None:
        if self.intake.cancel_in_place:
            return ReassignmentCancelInPlace()
        deleting = p.topic in self.ctx.topics_to_delete
        # the same rule as an API request's target, on the partition's assignment (moving or not)
        return validate_target(
            p.replicas, self.ctx.assignment(p.tp), self.ctx.live_broker_ids, topic_deleting=deleting
        )

    async def submit(
        self, spec: BatchSpec, out: EventOutputs, sizes: Mapping[TopicPartition, int]
    ) -> SubmitResult:
        result = submit(spec, self.batches, self._current, self._validate, self._now_ms(), sizes)
        if result.created:
            if not await self._write(result.batch, None, out):
                raise InvalidRequest(f"batch {spec.batch_id}: its journal cannot be written (see /v1/status)")
            log.info(
                "batch %s submitted: %d moves, %d refused",
                spec.batch_id,
                len(result.batch.moves),
                len(result.batch.refusals),
            )
            await self.tick(out)
            return SubmitResult(self.batches[spec.batch_id], created=True)  # as the tick left it
        return result

    async def control(self, batch_id: str, action: BatchAction, out: EventOutputs) -> BatchControlResult:
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
                if outcome.reverse.created and not await self._write(outcome.reverse.batch, None, out):
                    raise InvalidRequest(
                        f"batch {rollback_id}: its journal cannot be written (see /v1/status)"
                    )
        if not await self._update(new, out):  # the journal first, then the topic znodes
            raise InvalidRequest(f"batch {batch_id}: its journal cannot be written (see /v1/status)")
        await self._revert(reverts, out)
        log.info("batch %s: %s -> %s", batch_id, action, new.state)
        await self.tick(out)
        return BatchControlResult(self.batches[batch_id], rollback_id)

    async def _revert(self, reverts: Sequence[Revert], out: EventOutputs) -> None:
        """Moves a stop cancelled go back to exactly the replicas they had, in their order (so
        the preferred leader does not change) — unless that needs an unclean leader election the
        topic does not allow (reported; the move then runs on)."""
        known = self.ctx.moves
        wanted: dict[TopicPartition, Replicas] = {
            (r.topic, r.partition): r.replicas
            for r in reverts
            if revertible(known.get((r.topic, r.partition)), r.target)
        }
        refused = await self.intake.refused_reverts(wanted)
        for tp in sorted(refused):
            self._report(
                batch_paths.BATCHES,
                f"{tp[0]}-{tp[1]} not reverted: it would require an unclean leader election",
                "batch_revert",
            )
        updates = {tp: ReplicaAssignment(replicas) for tp, replicas in wanted.items() if tp not in refused}
        for tp in updates:  # its write ends the move
            self.ctx.move_reverting(tp)
        if updates:
            await self.reassigner.reassign(updates, Source.BATCH, self._now_ms(), out)

    # --- running -------------------------------------------------------------------------------------

    def _observe(self, tp: TopicPartition) -> ObservedPartition | None:
        """The partition as reconciliation sees it: the target of its move, from the Move
        record; its replicas from the assignment (what reconciliation compares when the
        partition has no move: at its target, back at its origins, or elsewhere)."""
        a = self.ctx.assignment(tp)
        if a is None or tp[0] in self.ctx.topics_to_delete:
            return None
        return ObservedPartition(a.replicas, None if (m := self.ctx.moves.get(tp)) is None else m.target)

    async def sync(self, out: EventOutputs) -> None:
        """Moves of live batches that completed, were cancelled or re-targeted outside the
        batch, or whose partition is gone; then the retention of ended ones. A batch that ended
        is not reconciled any more: its stop reverted its moves in the event that stopped it
        (or, after a failover, the load did)."""
        now = self._now_ms()
        for known in list(self.batches.values()):
            b = known
            if not b.state.unfinished:
                continue
            # at run time a started move back at its origins was cancelled (through the legacy
            # znode...); only at failover may it not have started at all. A partition with a
            # Move record still moves (reconcile follows its target); one without has only its
            # assignment to say where it ended
            moves = self.ctx.moves
            back = {
                tp: "cancelled outside the batch"
                for tp, m in b.in_state(BatchMoveState.RUNNING)
                if tp not in moves
                and (seen := self._observe(tp)) is not None
                and seen.replicas == m.origins
                and not (m.pinned and seen.replicas == m.target)  # a move between dirs only
            }
            if back:
                b = lifecycle.moves_cancelled(b, back, now)
            new, reverts = reconcile(b, self._observe, now)
            await self._update(new, out)
            if reverts:
                await self._revert(reverts, out)
        await self._expire(now, out)

    async def _expire(self, now_ms: int, out: EventOutputs) -> None:
        """Journals of batches that ended ``batch_retention_s`` ago (and hold no throttle to
        restore) are deleted, with the batch."""
        horizon = now_ms - round(self.settings.batch_retention_s * 1000)
        for batch_id, b in sorted(self.batches.items()):
            if b.state.unfinished or b.updated_ms > horizon or b.broker_throttles or b.topic_throttles:
                continue
            await self.journals.delete(batch_id, out)
            del self.batches[batch_id]
            log.info(
                "batch %s deleted: it ended (%s) more than %.0f s ago",
                batch_id,
                b.state,
                self.settings.batch_retention_s,
            )

    async def cancelled_through_api(self, tps: Collection[TopicPartition], out: EventOutputs) -> None:
        """An API cancel of partitions, before their topic znodes are written: the moves live
        batches run there are journaled cancelled first, so a failover in between leaves them
        cancelled (their partition moving outside any batch until the client's retry cancels it)
        instead of starting them again."""
        wanted = set(tps)
        if not wanted:
            return
        now = self._now_ms()
        running = of_batch(self.ctx.moves)  # the moves say which batch runs them
        for b in list(self.batches.values()):
            if not b.state.unfinished:
                continue
            hit = {tp: API_CANCELLED for tp in running.get(b.batch_id, {}) if tp in wanted}
            if hit:
                await self._update(lifecycle.moves_cancelled(b, hit, now), out)

    def _leader(self, tp: TopicPartition) -> int | None:
        li = self.ctx.states.get(tp)
        return None if li is None else li.state.leader

    def _running(self) -> list[MoveShape]:
        live = self.ctx.live_broker_ids
        shapes = [
            move_shape(tp, m.origins, m.target, self._leader(tp), live) for tp, m in self.ctx.moves.items()
        ]
        # moves between log dirs in flight: their brokers' disks copy (in and out, as a move)
        for b in self.batches.values():
            if b.state.unfinished:
                shapes.extend(
                    dir_shape(tp, m) for tp, m in b.in_state(BatchMoveState.RUNNING) if self._at_target(tp, m)
                )
        return shapes

    def _at_target(self, tp: TopicPartition, move: BatchMove) -> bool:
        """Whether a move that pins log dirs is in its dir phase: its partition's move ended (no
        Move record) at its target (the assignment: a partition with no move has nothing else)."""
        if not move.pinned or tp in self.ctx.moves:
            return False
        seen = self._observe(tp)
        return seen is not None and seen.replicas == move.target

    def _pending_shape(self, tp: TopicPartition, move: BatchMove) -> MoveShape | None:
        """A pending move's shape from its partition's replicas now: the assignment, since a
        partition the batch may start has no move (one with a Move record moves outside the
        batch: sync decides its fate)."""
        if tp in self.ctx.moves:
            return None
        a = self.ctx.assignment(tp)
        if a is None or tp[0] in self.ctx.topics_to_delete:
            return None  # gone
        if a.replicas == move.target and move.pinned:
            return dir_shape(tp, move)
        return move_shape(tp, a.replicas, move.target, self._leader(tp), self.ctx.live_broker_ids)

    def _sizes(self) -> dict[TopicPartition, int]:
        """The pending moves' sizes as recorded at submission (the size strategies' keys)."""
        return {
            tp: move.size_bytes
            for b in self.batches.values()
            if b.state.unfinished
            for tp, move in b.moves.items()
            if move.state is BatchMoveState.PENDING and move.size_bytes is not None
        }

    def _under_replicated(self) -> Collection[TopicPartition]:
        """Partitions whose ISR is smaller than their replica set (the context's index keeps
        them: read, not copied)."""
        return self.ctx.index.under_replicated

    async def tick(self, out: EventOutputs) -> None:
        """Start what the caps allow now (the journal first, then the reassignments)."""
        if self.intake.cancel_in_place or not self.has_work:
            return
        queues = [q for b in self.batches.values() if (q := queue_of(b, self._pending_shape)) is not None]
        if not any(q.pending for q in queues):
            return
        starts = choose_moves(
            self._running(),
            queues,
            self.settings.batch_moves_in_cluster,
            self._sizes(),
            self._under_replicated(),
        )
        if not starts:
            return
        now = self._now_ms()
        by_batch: dict[str, dict[TopicPartition, Replicas]] = {}
        updates: dict[TopicPartition, ReplicaAssignment] = {}
        for start in starts:
            # a started move's partition has no move yet (_pending_shape): its assignment is
            # where it starts from
            a = self.ctx.assignment(start.tp)
            move = self.batches[start.batch_id].moves[start.tp]
            assert a is not None
            by_batch.setdefault(start.batch_id, {})[start.tp] = a.replicas
            if a.replicas != move.target:  # else a move between dirs only: the agents do it
                updates[start.tp] = a.reassign_to(move.target)
        for batch_id, started in by_batch.items():
            if not await self._update(lifecycle.moves_started(self.batches[batch_id], started, now), out):
                for tp in started:  # not journaled: not started
                    updates.pop(tp, None)
        if not updates:
            return
        log.info("batches: starting %d moves", len(updates))
        refused = await self.reassigner.reassign(updates, Source.BATCH, now, out)
        for batch_id, started in by_batch.items():  # their topic's write would be too large
            self._own(self.batches[batch_id], (tp for tp in started if tp not in refused))
            failed = {tp: refused[tp] for tp in started if tp in refused}
            if failed:
                await self._update(lifecycle.moves_failed(self.batches[batch_id], failed, now), out)

    # --- moves between log dirs (executor/dir_moves.py; the agents are asked by agent_reports/dir_mover.py)

    async def dirs_seen(self, seen: DirMovesSeen, out: EventOutputs) -> None:
        """A round of the dir mover: the moves it is about to ask journaled as asked (with the
        dirs their replicas are in: what a stop or rollback restores), the arrived ones
        completed, the refused ones failed — each only while still in its dir phase."""
        now = self._now_ms()
        for batch_id in sorted(seen.asking.keys() | seen.done.keys() | seen.failed.keys()):
            b = self.batches.get(batch_id)
            if b is None or not b.state.unfinished:
                continue
            asking = {tp: d for tp, d in seen.asking.get(batch_id, {}).items() if self._in_dir_phase(b, tp)}
            new = lifecycle.dirs_asked(b, asking, now)
            done = [tp for tp in seen.done.get(batch_id, ()) if self._in_dir_phase(b, tp)]
            new = lifecycle.moves_completed(new, done, now)
            failed = {
                tp: why for tp, why in seen.failed.get(batch_id, {}).items() if self._in_dir_phase(b, tp)
            }
            new = lifecycle.moves_failed(new, failed, now)
            if new != b:
                await self._update(new, out)
                if done or failed:
                    log.info(
                        "batch %s: %d moves between log dirs done, %d failed",
                        batch_id,
                        len(done),
                        len(failed),
                    )

    def _in_dir_phase(self, batch: Batch, tp: TopicPartition) -> bool:
        move = batch.moves.get(tp)
        return move is not None and move.state is BatchMoveState.RUNNING and self._at_target(tp, move)

    # --- adaptive concurrency -------------------------------------------------------------------------

    def _under_replicated_outside_moves(self) -> int:
        """Partitions no move touches with a live replica out of their ISR: the moves may be
        starving the brokers' ordinary replication."""
        ctx = self.ctx
        reassigning = ctx.reassigning

        def partitions() -> Iterable[tuple[tuple[int, ...], tuple[int, ...]]]:
            for topic, parts in ctx.assignments.items():
                for p, a in parts.items():
                    li = ctx.states.get((topic, p))
                    if li is not None and (topic, p) not in reassigning:
                        yield a.replicas, li.state.isr

        return adaptive.under_replicated_outside(partitions(), ctx.live_broker_ids)

    async def adapt(self, sample: AgentSample, out: EventOutputs) -> None:
        """Adaptive concurrency after a sample of the agents' reports: each running batch with
        ``limits.adaptive`` gets its brokers' caps adjusted (``executor/adaptive.py``), journaled
        before the ``batch_caps_changed`` record; the caller then starts what the new caps allow."""
        batches = [
            b
            for b in self.batches.values()
            if b.spec.limits.adaptive is not None and b.state in (BatchState.PENDING, BatchState.RUNNING)
        ]
        if not batches:
            return
        in_flight = self._running()
        running = of_batch(self.ctx.moves)  # the moves say which batch runs them
        under_replicated = self._under_replicated_outside_moves()
        live = self.ctx.live_broker_ids
        now = self._now_ms()
        for batch in batches:
            bounds = batch.spec.limits.adaptive
            assert bounds is not None
            # the batch's moves in flight, as _running counts them: its partitions' moves (their
            # Move records name the batch) and its moves between log dirs
            mine_running = [
                move_shape(tp, m.origins, m.target, self._leader(tp), live)
                for tp, m in running.get(batch.batch_id, {}).items()
            ]
            mine_running.extend(
                dir_shape(tp, m) for tp, m in batch.in_state(BatchMoveState.RUNNING) if self._at_target(tp, m)
            )
            mine_pending = [
                shape
                for tp, m in batch.in_state(BatchMoveState.PENDING)
                if (shape := self._pending_shape(tp, m)) is not None
            ]
            initial = batch.spec.limits.initial_cap
            where = adaptive.pressure(in_flight, mine_running, mine_pending, batch.broker_caps, initial)
            health = adaptive.SampleHealth(under_replicated, sample.stuck.get(batch.batch_id, 0))
            change = adaptive.adjust(batch.broker_caps, initial, bounds, health, where, sample.rates)
            if change is None:
                continue
            if not await self._update(lifecycle.caps_changed(batch, change.caps, now), out):
                continue
            steps = tuple(CapStep(b, c, change.previous[b]) for b, c in sorted(change.caps.items()))
            self.records.emit(BatchCapsChanged(batch_id=batch.batch_id, reason=change.reason, caps=steps))
            self._metrics.batch_cap_changes.labels("up" if change.raised else "down").inc(len(steps))
            log.info(
                "batch %s: caps %s (%s): %s",
                batch.batch_id,
                "raised" if change.raised else "halved",
                change.reason,
                ", ".join(f"broker {s.broker_id} {s.previous}->{s.cap}" for s in steps),
            )

    # --- owned throttles (batch_throttles.py) ---------------------------------------------------

    async def throttles(self, out: EventOutputs) -> None:
        """Every batch's throttles as its running moves need them: set (the previous values
        journaled first), or restored (the config first, then the journal forgets them)."""
        await self._throttles.run(out)

    def snapshot(self) -> Mapping[str, Batch]:
        return dict(self.batches)

    def moves_of(self, state: BatchMoveState) -> int:
        return sum(1 for b in self.batches.values() for _ in b.in_state(state))

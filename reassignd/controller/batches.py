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
from reassignd.executor.throttles import (
    BROKER_KEYS,
    FOLLOWER_REPLICAS,
    LEADER_REPLICAS,
    TOPIC_KEYS,
    RunningCopy,
    merged_replicas,
    owned_elsewhere,
    rate_value,
    wanted,
)
from reassignd.topic_partition import TopicPartition
from reassignd.zk import codec, paths
from reassignd.zk.client import (
    BadVersionError,
    Create,
    MultiFailedError,
    NodeExistsError,
    Op,
    SetData,
    ZkClient,
)

log = logging.getLogger(__name__)


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
        events = self.writer.events
        if old is None:
            events.emit(
                "batch_submitted",
                batch_id=new.batch_id,
                plan_id=new.spec.plan_id,
                state=str(new.state),
                moves=len(new.moves),
                refused=len(new.refusals),
            )
        elif old.state is not new.state:
            events.emit(
                "batch_state_changed",
                batch_id=new.batch_id,
                state=str(new.state),
                previous_state=str(old.state),
            )

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

    async def submit(
        self, spec: BatchSpec, batch: ControlBatch, sizes: Mapping[TopicPartition, int]
    ) -> SubmitResult:
        result = submit(spec, self.batches, self._current, self._validate, self._now_ms(), sizes)
        if result.created:
            await self._write(result.batch, None)
            log.info(
                "batch %s submitted: %d moves, %d refused",
                spec.batch_id,
                len(result.batch.moves),
                len(result.batch.refusals),
            )
            await self.tick(batch)
            return SubmitResult(self.batches[spec.batch_id], created=True)  # as the tick left it
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

    def _sizes(self) -> dict[TopicPartition, int]:
        """The pending moves' sizes as recorded at submission (the size strategies' keys)."""
        return {
            tp: move.size_bytes
            for b in self.batches.values()
            for tp, move in b.moves.items()
            if move.state is MoveState.PENDING and move.size_bytes is not None
        }

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
            a = self.ctx.assignment(start.tp)
            move = self.batches[start.batch_id].moves[start.tp]
            assert a is not None
            by_batch.setdefault(start.batch_id, {})[start.tp] = a.replicas
            updates[start.tp] = a.reassign_to(move.target)
        for batch_id, started in by_batch.items():
            await self._update(lifecycle.moves_started(self.batches[batch_id], started, now))
        log.info("batches: starting %d moves", len(updates))
        refused = await self.reassigner.reassign(updates, Source.BATCH, now, batch)
        for batch_id, started in by_batch.items():  # their topic's write would be too large
            failed = {tp: refused[tp] for tp in started if tp in refused}
            if failed:
                await self._update(lifecycle.moves_failed(self.batches[batch_id], failed, now))

    # --- owned throttles (executor/throttles.py says what and why) -------------------------------

    async def throttles(self) -> None:
        """Every batch's throttles as its running moves need them: set (the previous values
        journaled first), or restored (the config first, then the journal forgets them)."""
        for batch_id in sorted(self.batches):
            await self._throttles(self.batches[batch_id])

    async def _throttles(self, b: Batch) -> None:
        rate = b.spec.throttle_bytes_per_s
        if rate is None and not b.broker_throttles and not b.topic_throttles:
            return
        running: list[RunningCopy] = []
        if rate is not None and b.state.unfinished:
            for tp, _m in b.in_state(MoveState.RUNNING):
                a = self.ctx.assignment(tp)
                if a is not None and a.is_being_reassigned:
                    running.append(RunningCopy(tp, a.original_replicas, a.adding))
        w = wanted(running)
        other_brokers, other_topics = owned_elsewhere(
            (o.broker_throttles, o.topic_throttles) for o in self.batches.values() if o.batch_id != b.batch_id
        )
        now = self._now_ms()
        # set: record what is there before changing it
        brokers = sorted(w.brokers - other_brokers)
        topics = sorted(set(w.leader_entries) | set(w.follower_entries))
        configs: dict[str, dict[str, str] | None] = {}
        for broker in brokers:
            configs[paths.config_broker(broker)] = await self._read_config(paths.config_broker(broker))
        for topic in topics:
            configs[paths.config_topic(topic)] = await self._read_config(paths.config_topic(topic))
        record_brokers = {
            broker: {k: c.get(k) for k in BROKER_KEYS}
            for broker in brokers
            if broker not in b.broker_throttles and (c := configs[paths.config_broker(broker)]) is not None
        }
        record_topics = {
            topic: {k: c.get(k) for k in TOPIC_KEYS}
            for topic in topics
            if topic not in b.topic_throttles
            and topic not in other_topics
            and (c := configs[paths.config_topic(topic)]) is not None
        }
        if record_brokers or record_topics:
            await self._update(lifecycle.throttles_recorded(b, record_brokers, record_topics, now))
        assert rate is not None or not brokers
        for broker in brokers:
            config = configs[paths.config_broker(broker)]
            if config is not None and rate is not None:
                value = rate_value(rate)
                await self._write_config(paths.config_broker(broker), dict.fromkeys(BROKER_KEYS, value))
        for topic in topics:
            config = configs[paths.config_topic(topic)]
            if config is None:
                continue
            changes: dict[str, str | None] = {}
            for key, entries in (
                (LEADER_REPLICAS, w.leader_entries),
                (FOLLOWER_REPLICAS, w.follower_entries),
            ):
                listed = merged_replicas(config.get(key), entries.get(topic, frozenset()))
                if listed is not None:
                    changes[key] = listed
            if changes:
                await self._write_config(paths.config_topic(topic), changes)
        # restore what no running move needs any more
        b = self.batches[b.batch_id]
        done_brokers = sorted(set(b.broker_throttles) - w.brokers)
        done_topics = sorted(set(b.topic_throttles) - set(topics))
        for broker in done_brokers:
            path = paths.config_broker(broker)
            config = await self._read_config(path)
            ours = rate_value(rate) if rate is not None else None
            if config is not None:
                previous = b.broker_throttles[broker]
                await self._write_config(
                    path,
                    {k: previous.get(k) for k in BROKER_KEYS if ours is not None and config.get(k) == ours},
                )
        for topic in done_topics:
            await self._write_config(paths.config_topic(topic), dict(b.topic_throttles[topic]))
        if done_brokers or done_topics:
            await self._update(lifecycle.throttles_restored(b, done_brokers, done_topics, now))
            log.info(
                "batch %s restored the throttles of brokers %s, topics %s",
                b.batch_id,
                done_brokers,
                done_topics,
            )

    async def _read_config(self, path: str) -> dict[str, str] | None:
        """An entity config (empty when absent); None when it cannot be decoded (reported, left
        alone: the batch then neither throttles nor restores it)."""
        znode = await self.zk.get_or_none(path)
        if znode is None or not znode.data:
            return {}
        try:
            return dict(codec.decode_entity_config(znode.data))
        except codec.CodecError as e:
            self._report(path, f"{e.reason}; the batch does not throttle it", "entity_config")
            return None

    async def _write_config(self, path: str, changes: Mapping[str, str | None]) -> None:
        """Merge ``changes`` (None: remove the key) into an entity config, with a config change
        notification (Kafka's tools and brokers follow it), fenced; re-read on a race."""
        if not changes:
            return
        notification = codec.encode_config_change(paths.entity_path(path))
        for _ in range(5):
            znode = await self.zk.get_or_none(path)
            config = dict(codec.decode_entity_config(znode.data)) if znode is not None and znode.data else {}
            new = dict(config)
            for key, value in changes.items():
                if value is None:
                    new.pop(key, None)
                else:
                    new[key] = value
            if new == config:
                return
            data = codec.encode_entity_config(new)
            write: Op = Create(path, data) if znode is None else SetData(path, data, znode.stat.version)
            try:
                await self.writer.fenced(
                    [write, Create(paths.CONFIG_CHANGE_PREFIX, notification, sequential=True)]
                )
                return
            except MultiFailedError as e:
                if not isinstance(e.cause, BadVersionError | NodeExistsError):
                    raise
        raise codec.CodecError(f"{path} kept changing while the batch set its throttles")

    def snapshot(self) -> Mapping[str, Batch]:
        return dict(self.batches)

    def moves_of(self, state: MoveState) -> int:
        return sum(1 for b in self.batches.values() for _ in b.in_state(state))

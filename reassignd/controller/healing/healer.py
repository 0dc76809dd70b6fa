"""Self-healing inside the active controller: the shell around ``decisions.py``.

Evaluated after every broker change, on its own timer (``SelfHealingTick``) while it follows a
lost broker, and at the end of the failover load. Each evaluation records the new losses in
ZooKeeper (fenced, then memory), stops the batch of a broker that came back (its running moves
reverted, the completed ones kept) and forgets it, forgets a broker that hosts nothing any more,
and submits a batch for each broker whose grace is over (``PlaceLostReplicas``: the planner's
decommission placement, handed in by the composition root). Every decision is logged, emitted
as a record, counted in ``/metrics`` and published in ``GET /v1/status``'s ``self_healing``.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Mapping

from reassignd.contracts.records import SelfHealingBrokerLost, SelfHealingEnded, SelfHealingPlanned
from reassignd.controller.batches.runner import BatchRunner
from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.healing import decisions
from reassignd.controller.instance.shared import Shared
from reassignd.controller.model.placement import HostedPartition, PlaceLostReplicas
from reassignd.controller.model.snapshot import BatchAction, HealingOutcome, LostBroker, SelfHealingView
from reassignd.controller.state.context import ControllerContext
from reassignd.errors import NotController, ReassigndError
from reassignd.executor.model import BatchSpec, Limits, PartitionSpec
from reassignd.topic_partition import TopicPartition
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.values import Create, Delete, Op

log = logging.getLogger(__name__)

KIND = "self_healing"
RECENT = 10  # outcomes kept for GET /v1/status
TICK_S = 1.0  # the timer while a broker is followed


class SelfHealer:
    def __init__(
        self,
        shared: Shared,
        ctx: ControllerContext,
        runner: BatchRunner,
        place: PlaceLostReplicas | None,
    ) -> None:
        self.shared = shared
        self.ctx = ctx
        self.runner = runner
        self.place = place
        settings = shared.settings
        self.enabled = settings.self_healing and place is not None
        self.grace_ms = round(settings.self_healing_broker_grace_s * 1000)
        self.lost: dict[int, int] = {}  # broker -> lost_at_ms, as recorded in ZooKeeper
        self.sizes: dict[TopicPartition, int] = {}  # the leaders' last reported sizes
        self.stalled: set[int] = set()  # last round moved nothing: none again until brokers change
        self._live_seen: frozenset[int] = frozenset()
        # the last evaluation's partitions of each lost broker, sorted (what the snapshot shows)
        self._hosted: dict[int, tuple[TopicPartition, ...]] = {}
        self.recent: collections.deque[HealingOutcome] = collections.deque(maxlen=RECENT)
        if settings.self_healing and place is None:
            log.warning("self-healing is on but this process has no placement code: it stays off")

    # --- the failover load -----------------------------------------------------------------------

    async def load(self, out: EventOutputs) -> None:
        """Every recorded loss (one that cannot be decoded is reported and left out; it is
        recorded again, from now, if its broker is still lost)."""
        if not self.enabled:
            return
        reads = self.shared.reads
        names = sorted(await out.writes.children(paths.SELF_HEALING, None))
        ids = [int(n) for n in names if n.isascii() and n.isdigit() and len(n) <= 10]
        for name in names:
            if not (name.isascii() and name.isdigit() and len(name) <= 10):
                self.shared.report(f"{paths.SELF_HEALING}/{name}", "not a broker id", KIND)
        for broker, znode in zip(ids, await reads.get_many([paths.lost_broker(b) for b in ids]), strict=True):
            if znode is None:
                continue
            try:
                self.lost[broker] = admin_codec.decode_lost_broker(znode.data)
            except codec.CodecError as e:
                self.shared.report(paths.lost_broker(broker), e.reason, KIND)
                await out.writes.write([Delete(paths.lost_broker(broker), -1)])
        if self.lost:
            log.info("self-healing: lost brokers recorded: %s", self._describe_lost())

    def sampled(self, sizes: Mapping[TopicPartition, int]) -> None:
        """Partition sizes from a sample of the agents' reports (what the next plan weighs)."""
        self.sizes.update(sizes)

    # --- the evaluation ----------------------------------------------------------------------------

    async def evaluate(self, out: EventOutputs) -> None:
        if not self.enabled:
            return
        ctx = self.ctx
        live = frozenset(ctx.live_broker_ids)
        if live != self._live_seen:
            self.stalled.clear()  # a broker came or went: a stalled heal may find room now
            self._live_seen = live
        hosted = decisions.hosted_by_offline(
            (((t, p), a.replicas) for t, parts in ctx.assignments.items() for p, a in parts.items()), live
        )
        self._hosted = {b: tuple(sorted(tps)) for b, tps in hosted.items()}
        now = self.shared.wall_ms()
        batches = self.runner.batches
        decision = decisions.decide(
            self.lost, hosted, live, batches.values(), self.grace_ms, now, self.stalled
        )
        if decision.record:
            await self._record(decision.record, now, out)
        for broker in decision.returned:
            await self._returned(broker, out)
        for broker in decision.emptied:
            rounds = decisions.rounds_of(batches.values(), broker, self.lost[broker])
            last = rounds.last
            await self._end(
                broker, last.batch_id if last else None, decisions.outcome_of(last), "hosts nothing", out
            )
        for broker in decision.heal:
            await self._heal(broker, hosted[broker], out)
        self.shared.metrics.self_healing_lost_brokers.set(len(self.lost))

    async def _record(self, brokers: tuple[int, ...], now_ms: int, out: EventOutputs) -> None:
        ops: list[Op] = [
            Create(paths.lost_broker(b), admin_codec.encode_lost_broker(now_ms)) for b in brokers
        ]
        await out.writes.write(ops)  # ZooKeeper first, then memory
        for b in brokers:
            self.lost[b] = now_ms
            heal_at = now_ms + self.grace_ms
            log.info(
                "self-healing: broker %d is lost and hosts replicas; they move at %d (in %.0f s) "
                "unless it returns",
                b,
                heal_at,
                self.grace_ms / 1000,
            )
            self.shared.records.emit(
                SelfHealingBrokerLost(broker_id=b, lost_at_ms=now_ms, heal_at_ms=heal_at)
            )
            self.shared.metrics.self_healing.labels("lost").inc()

    async def _returned(self, broker: int, out: EventOutputs) -> None:
        rounds = decisions.rounds_of(self.runner.batches.values(), broker, self.lost[broker])
        running = rounds.unfinished
        if running is not None:
            await self.runner.control(running.batch_id, BatchAction.STOP, out)
            reason = f"it returned: batch {running.batch_id} stopped (moves completed so far kept)"
        else:
            reason = "it returned before its replicas moved" if rounds.last is None else "it returned"
        last = rounds.last
        await self._end(broker, last.batch_id if last else None, "returned", reason, out)

    async def _end(
        self, broker: int, batch_id: str | None, outcome: str, reason: str, out: EventOutputs
    ) -> None:
        await out.writes.write([Delete(paths.lost_broker(broker), -1)])
        del self.lost[broker]
        self.stalled.discard(broker)
        log.info("self-healing of broker %d ended: %s (%s)", broker, outcome, reason)
        self.shared.records.emit(
            SelfHealingEnded(broker_id=broker, batch_id=batch_id, outcome=outcome, reason=reason)
        )
        self.recent.append(HealingOutcome(broker, batch_id, outcome, reason, self.shared.wall_ms()))
        self.shared.metrics.self_healing.labels(outcome).inc()

    async def _heal(self, broker: int, hosted: list[TopicPartition], out: EventOutputs) -> None:
        assert self.place is not None
        ctx = self.ctx
        lost_at = self.lost[broker]
        batches = self.runner.batches
        rounds = decisions.rounds_of(batches.values(), broker, lost_at)
        busy = decisions.busy_partitions(batches.values(), ctx.reassigning)
        busy.update(tp for tp in hosted if tp[0] in ctx.topics_to_delete)
        now = self.shared.wall_ms()
        due = [b for b, at in self.lost.items() if now >= at + self.grace_ms]
        heal = decisions.healable(broker, hosted, self._replicas, ctx.live_broker_ids, due, busy)
        if not heal.partitions:
            return  # what it hosts is moving already, or waits for another broker's grace
        racks = {b: reg.rack for b, reg in ctx.brokers.items()}
        partitions: list[HostedPartition] = [
            (t, p, self.sizes.get((t, p), 0), a.replicas)
            for t, parts in sorted(ctx.assignments.items())
            for p, a in sorted(parts.items())
        ]
        try:
            targets = self.place(racks, partitions, heal.leaving)
        except ValueError as e:  # the planner's refusal (ClusterError, GoalError): the same next time
            self.stalled.add(broker)
            await self._incomplete(broker, None, f"the placement refused: {e}")
            return
        # largest first (longest processing time first: no large copy starts last and runs alone)
        order = sorted(heal.partitions, key=lambda tp: (-self.sizes.get(tp, 0), tp))
        specs = tuple(
            PartitionSpec(tp[0], tp[1], targets[tp], expected_replicas=current)
            for tp in order
            if tp in targets and (current := self._replicas(tp)) is not None
        )
        if not specs:
            self.stalled.add(broker)
            await self._incomplete(
                broker, None, f"no live broker can take its {len(heal.partitions)} replicas"
            )
            return
        spec = BatchSpec(
            batch_id=decisions.batch_id(broker, lost_at, rounds.next_round),
            partitions=specs,
            limits=self._limits(),
            owner=decisions.OWNER,
        )
        sizes = {s.tp: self.sizes[s.tp] for s in specs if s.tp in self.sizes}
        try:
            result = await self.runner.submit(spec, out, sizes)
        except NotController:
            raise  # a failed fencing check: the instance resigns
        except ReassigndError as e:  # e.g. 10004: a client's batch took the id; refused, not retried
            self.stalled.add(broker)
            await self._incomplete(broker, spec.batch_id, f"batch {spec.batch_id} refused: {e}")
            return
        batch = result.batch
        moved_bytes = sum(sizes.get(s.tp, 0) for s in specs if s.tp not in batch.refusals)
        left = len(hosted) - len(batch.moves)
        log.info(
            "self-healing: broker %d gone %.0f s (grace %.0f s): batch %s moves %d partitions "
            "(%d bytes), %d refused, %d replicas left for a later round",
            broker,
            (self.shared.wall_ms() - lost_at) / 1000,
            self.grace_ms / 1000,
            batch.batch_id,
            len(batch.moves),
            moved_bytes,
            len(batch.refusals),
            left,
        )
        self.shared.records.emit(
            SelfHealingPlanned(
                broker_id=broker,
                batch_id=batch.batch_id,
                moves=len(batch.moves),
                bytes=moved_bytes,
                refused=len(batch.refusals),
                left=left,
            )
        )
        self.shared.metrics.self_healing.labels("planned").inc()
        self.shared.metrics.self_healing_moves.inc(len(batch.moves))
        if not batch.moves:
            self.stalled.add(broker)
            await self._incomplete(broker, batch.batch_id, "every partition of its plan was refused")

    async def _incomplete(self, broker: int, batch_id: str | None, reason: str) -> None:
        """No round can move what is left (the record stays: a broker change tries again)."""
        log.warning("self-healing of broker %d incomplete: %s", broker, reason)
        self.shared.records.emit(
            SelfHealingEnded(broker_id=broker, batch_id=batch_id, outcome="incomplete", reason=reason)
        )
        self.recent.append(HealingOutcome(broker, batch_id, "incomplete", reason, self.shared.wall_ms()))
        self.shared.metrics.self_healing.labels("incomplete").inc()

    def _replicas(self, tp: TopicPartition) -> tuple[int, ...] | None:
        a = self.ctx.assignment(tp)
        return None if a is None else a.replicas

    def _limits(self) -> Limits:
        s = self.shared.settings
        return decisions.heal_limits(
            s.batch_moves_per_broker,
            s.batch_moves_in_cluster,
            s.batch_leader_moves_per_broker,
            s.batch_adaptive_moves_per_broker,
        )

    # --- what is published ---------------------------------------------------------------------------

    def due_in_s(self) -> float | None:
        """When the next SelfHealingTick is wanted: every ``TICK_S`` while a heal runs (or is due
        and waits for partitions moving meanwhile), else at the first grace's end; None when no
        broker is followed or only stalled ones are (a broker change evaluates again)."""
        if not self.enabled or not self.lost:
            return None
        now = self.shared.wall_ms()
        batches = self.runner.batches.values()
        first: int | None = None
        for broker, at in self.lost.items():
            if decisions.rounds_of(batches, broker, at).unfinished is not None:
                return TICK_S
            if broker in self.stalled:
                continue
            due = at + self.grace_ms
            first = due if first is None else min(first, due)
        if first is None:
            return None
        return TICK_S if first <= now else (first - now) / 1000

    def _describe_lost(self) -> str:
        return ", ".join(f"{b} (at {at})" for b, at in sorted(self.lost.items()))

    def view(self) -> SelfHealingView:
        settings = self.shared.settings
        brokers: list[LostBroker] = []
        if self.lost:
            hosted = self._hosted
            for b, at in sorted(self.lost.items()):
                rounds = decisions.rounds_of(self.runner.batches.values(), b, at)
                if rounds.unfinished is not None:
                    state = "healing"
                elif b in self.stalled:
                    state = "incomplete"
                else:
                    state = "waiting"
                mine = hosted.get(b, ())
                brokers.append(
                    LostBroker(
                        broker_id=b,
                        lost_at_ms=at,
                        heal_at_ms=at + self.grace_ms,
                        state=state,
                        batch_ids=tuple(x.batch_id for x in rounds.batches),
                        replicas=len(mine),
                        partitions=mine,
                    )
                )
        return SelfHealingView(
            enabled=self.enabled,
            broker_grace_s=settings.self_healing_broker_grace_s,
            brokers=tuple(brokers),
            recent=tuple(self.recent),
        )

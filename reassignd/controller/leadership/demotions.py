"""Demoting a broker out of leadership, and promoting it back (``POST /v1/brokers/{id}/demote``
and ``/promote``, ``reassignd admin demote|promote``), on the active controller.

The decisions are pure (``demotion_plan.py``). A demotion runs, in this order:

1. the partitions' states read from ZooKeeper (the brokers change ISRs there first), then the plan;
2. **the record**, fenced: ``/reassignd/demotions/<broker>`` and, per topic, the orders before
   (``/reassignd/demotions/<broker>/<topic>``) — written before anything changes, so a controller
   that dies after it leaves a record that says more than the topic znodes, never less, and a
   promote restores what it can;
3. the new orders, as a reassignment of each partition to its own replica set (as Kafka allows:
   no replica added or removed, so it completes at once);
4. preferred-replica elections for the partitions the broker led (the leadership machinery of
   ``elect_leaders.py``), the new states to the replicas.

A promotion restores the recorded orders the same way (reassignment, then elections) and only then
deletes the records it used (fenced), so a controller that dies in between leaves the record for a
retried promote, which finds the orders restored already. Unknown brokers — neither registered,
nor named by a replica, nor recorded — are refused (404); nothing else raises on bad input.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from reassignd.contracts.records import BrokerDemoted, BrokerPromoted
from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.instance.shared import Shared
from reassignd.controller.leadership.demotion_plan import (
    OrderPlan,
    PartitionNow,
    plan_demotion,
    plan_promotion,
)
from reassignd.controller.leadership.elect_leaders import ELECTION_NOT_NEEDED, NONE, LeaderElections
from reassignd.controller.model.admin_requests import (
    DemotionResult,
    ElectionResult,
    ElectionType,
    ElectLeaders,
)
from reassignd.controller.model.requests import Source
from reassignd.controller.reads import loader
from reassignd.controller.reassignment.algorithm import Reassigner
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.controller.state.context import ControllerContext
from reassignd.errors import UnknownBroker
from reassignd.topic_partition import Replicas, TopicPartition
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.values import Create, Delete, Op, SetData

log = logging.getLogger(__name__)

KIND = "demotion"


class Demotions:
    def __init__(
        self,
        shared: Shared,
        ctx: ControllerContext,
        reassigner: Reassigner,
        leaders: LeaderElections,
    ) -> None:
        self.shared = shared
        self.ctx = ctx
        self.reassigner = reassigner
        self.leaders = leaders
        # per demoted broker: the orders its demotion recorded (what promote restores), and the
        # topics whose record znode exists
        self.orders: dict[int, dict[TopicPartition, Replicas]] = {}
        self._topics: dict[int, set[str]] = {}

    def counts(self) -> dict[int, int]:
        """Each demoted broker's recorded partitions (``GET /v1/brokers``' ``demoted``)."""
        return {b: len(o) for b, o in sorted(self.orders.items())}

    # --- the failover load -----------------------------------------------------------------------------

    async def load(self, out: EventOutputs) -> None:
        """Every record under ``/reassignd/demotions``; one that cannot be decoded is reported and
        left out (its broker cannot be promoted until it is fixed or deleted)."""
        reads = self.shared.reads
        for name in sorted(await out.writes.children(paths.DEMOTIONS, None)):
            if not (name.isascii() and name.isdigit()):
                self.shared.report(f"{paths.DEMOTIONS}/{name}", "not a broker id", KIND)
                continue
            broker = int(name)
            head = await reads.get_or_none(paths.demotion(broker))
            if head is None:
                continue
            try:
                admin_codec.decode_demotion(head.data)
            except codec.CodecError as e:
                self.shared.report(paths.demotion(broker), e.reason, KIND)
                continue
            topics = sorted(await reads.children(paths.demotion(broker)))
            orders: dict[TopicPartition, Replicas] = {}
            for topic, znode in zip(
                topics, await reads.get_many([paths.demotion_topic(broker, t) for t in topics]), strict=True
            ):
                if znode is None:
                    continue
                try:
                    recorded = admin_codec.decode_demoted_orders(znode.data)
                except codec.CodecError as e:
                    self.shared.report(paths.demotion_topic(broker, topic), e.reason, KIND)
                    continue
                orders.update({(topic, p): r for p, r in recorded.items()})
            self.orders[broker] = orders
            self._topics[broker] = set(topics)

    # --- requests ------------------------------------------------------------------------------------

    def _known(self, broker: int) -> bool:
        ctx = self.ctx
        if broker in ctx.brokers or broker in self.orders:
            return True
        return any(broker in a.replicas for parts in ctx.assignments.values() for a in parts.values())

    async def _partitions(self, tps: list[TopicPartition]) -> dict[TopicPartition, PartitionNow]:
        """``tps`` as ZooKeeper has them now (states read fresh: the brokers change ISRs there and
        tell the controller later)."""
        ctx = self.ctx
        states, _ = await loader.read_states(self.shared.reads, tps, self.shared.report)
        for tp, fresh in states.items():
            ctx.set_state(tp, fresh)
        out: dict[TopicPartition, PartitionNow] = {}
        for tp in tps:
            a = ctx.assignment(tp)
            li = ctx.states.get(tp)
            if a is None:
                continue
            out[tp] = PartitionNow(
                a.replicas,
                li.state.leader if li is not None else -1,
                tuple(li.state.isr) if li is not None else (),
                moving=a.is_being_reassigned,
                deleting=tp[0] in ctx.topics_to_delete,
            )
        return out

    async def demote(self, broker: int, out: EventOutputs) -> DemotionResult:
        if not self._known(broker):
            raise UnknownBroker(f"no broker {broker}: none is registered and no replica names it")
        ctx = self.ctx
        hosted = [
            (t, p) for t, parts in ctx.assignments.items() for p, a in parts.items() if broker in a.replicas
        ]
        recorded = self.orders.get(broker, {})
        plan = plan_demotion(broker, await self._partitions(hosted), ctx.live_broker_ids, recorded)
        await self._record(broker, {**recorded, **plan.record}, out)
        results, moved = await self._apply(plan, out)
        reordered = sum(
            1 for r in results if r.error_code == NONE and (r.topic, r.partition) in plan.reorders
        )
        refused = sum(1 for r in results if r.error_code != NONE)
        self.shared.records.emit(
            BrokerDemoted(broker_id=broker, reordered=reordered, leaders_moved=moved, refused=refused)
        )
        log.info(
            "broker %d demoted: %d partitions reordered, %d leaderships moved, %d refused",
            broker,
            reordered,
            moved,
            refused,
        )
        return DemotionResult(broker, tuple(results), moved)

    async def promote(self, broker: int, out: EventOutputs) -> DemotionResult:
        if not self._known(broker):
            raise UnknownBroker(f"no broker {broker}: none is registered and no replica names it")
        recorded = self.orders.get(broker, {})
        if not recorded and broker not in self.orders:
            return DemotionResult(broker, (), 0)  # not demoted (or promoted already)
        partitions = await self._partitions(sorted(recorded))
        plan = plan_promotion(broker, recorded, partitions, self.ctx.live_broker_ids)
        results, moved = await self._apply(plan, out)
        await self._forget(broker, plan.forget, out)
        restored = sum(1 for r in results if r.error_code == NONE)
        refused = sum(1 for r in results if r.error_code != NONE)
        self.shared.records.emit(
            BrokerPromoted(broker_id=broker, restored=restored, leaders_moved=moved, refused=refused)
        )
        log.info(
            "broker %d promoted: %d partitions restored, %d leaderships moved, %d refused",
            broker,
            restored,
            moved,
            refused,
        )
        return DemotionResult(broker, tuple(results), moved)

    async def _apply(self, plan: OrderPlan, out: EventOutputs) -> tuple[list[ElectionResult], int]:
        """The plan's reorders (a reassignment to the same set each), then its elections; the
        per-partition results and how many leaderships moved."""
        answers: dict[TopicPartition, ElectionResult] = {
            tp: ElectionResult(tp[0], tp[1], r.error_code, r.message) for tp, r in plan.refused.items()
        }
        updates = {tp: ReplicaAssignment(order) for tp, order in plan.reorders.items()}
        too_large = await self.reassigner.reassign(updates, Source.API, self.shared.wall_ms(), out)
        for tp, reason in too_large.items():
            answers[tp] = ElectionResult(tp[0], tp[1], 39, reason)
        elections = tuple(tp for tp in plan.elections if tp not in too_large)
        moved = 0
        if elections:
            for r in await self.leaders.handle(ElectLeaders(ElectionType.PREFERRED, elections), out):
                if r.error_code == NONE:
                    moved += 1
                elif r.error_code != ELECTION_NOT_NEEDED:
                    answers[(r.topic, r.partition)] = r
        if moved:
            self.shared.metrics.preferred_leader_elections.labels("demotion").inc(moved)
        for tp in plan.done:
            answers.setdefault(tp, ElectionResult(tp[0], tp[1]))
        return [answers[tp] for tp in sorted(answers)], moved

    # --- the records -----------------------------------------------------------------------------------

    async def _record(
        self, broker: int, orders: Mapping[TopicPartition, Replicas], out: EventOutputs
    ) -> None:
        """The demotion's record (fenced), then memory: the marker, and each topic's orders."""
        old = self.orders.get(broker, {})
        by_topic: dict[str, dict[int, Replicas]] = {}
        for (topic, p), order in orders.items():
            by_topic.setdefault(topic, {})[p] = order
        ops: list[Op] = []
        if broker not in self.orders:
            ops.append(Create(paths.demotion(broker), admin_codec.encode_demotion(self.shared.wall_ms())))
        topics = self._topics.get(broker, set())
        for topic, parts in sorted(by_topic.items()):
            if all(old.get((topic, p)) == order for p, order in parts.items()) and topic in topics:
                continue
            data = admin_codec.encode_demoted_orders(parts)
            path = paths.demotion_topic(broker, topic)
            ops.append(SetData(path, data, -1) if topic in topics else Create(path, data))
        if ops:
            await out.writes.write(ops)
        self.orders[broker] = dict(orders)
        self._topics[broker] = topics | set(by_topic)

    async def _forget(self, broker: int, done: frozenset[TopicPartition], out: EventOutputs) -> None:
        """Drop the records a promotion used (fenced); the broker's marker goes with its last one."""
        orders = {tp: o for tp, o in self.orders.get(broker, {}).items() if tp not in done}
        topics = self._topics.get(broker, set())
        keep: dict[str, dict[int, Replicas]] = {}
        for (topic, p), order in orders.items():
            keep.setdefault(topic, {})[p] = order
        ops: list[Op] = []
        for topic in sorted(topics):
            path = paths.demotion_topic(broker, topic)
            if topic not in keep:
                ops.append(Delete(path, -1))
            elif self._changed(broker, topic, keep[topic]):
                ops.append(SetData(path, admin_codec.encode_demoted_orders(keep[topic]), -1))
        if not orders:
            ops.append(Delete(paths.demotion(broker), -1))
        if ops:
            await out.writes.write(ops)
        if orders:
            self.orders[broker] = orders
            self._topics[broker] = set(keep)
        else:
            self.orders.pop(broker, None)
            self._topics.pop(broker, None)

    def _changed(self, broker: int, topic: str, keep: Mapping[int, Replicas]) -> bool:
        had = {p: o for (t, p), o in self.orders.get(broker, {}).items() if t == topic}
        return had != dict(keep)

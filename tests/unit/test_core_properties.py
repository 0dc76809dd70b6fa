"""Property tests of the controller's core (issue 8, Build 6): Hypothesis stateful testing.

The state is a simulated ZooKeeper (``SimZooKeeper``: topic znodes and partition state znodes
as the codecs encode them) plus the active controller's in-memory context. The rules interleave
what happens to a cluster — reassign, re-target, cancel, stop, a replica catching up and joining
the ISR (the agent's conditional write, the controller notified now or later), broker death,
return and bounce, unclean-election configs, topic deletion and re-creation, failover (a new
context loaded from ZooKeeper alone) and a fenced-out controller acting after it — and run the
real code for each: ``ReplicaAssignment``, ``validation``, ``partition_logic``, the ``Reassigner``
(phases U, A and B), ``ZkWriter``, ``TopicDeleter``, ``loader`` and the codecs. The machine only
sequences those calls the way the controller's event handlers do, stores znodes, and plays the
brokers (ISR expansion, StopReplica confirmations); it never decides an assignment or a state
itself.

After every step, from ZooKeeper's bytes: memory equals ZooKeeper and the codecs round-trip it;
AR ∩ RR = ∅, AR, RR, TRS ⊆ RS; a moving partition keeps its ORS (as a set) and its requested
TRS (in order); the ISR is never empty and holds the leader; a partition is offline only when no
live in-sync replica could lead; leader epochs and partition epochs only grow, and every
controller change of leader or ISR bumps the leader epoch; nothing leaves the replica set or the
ISR of a partition unless it died, or was an adding replica dropped by a re-target, cancel or
stop, or was a removing replica at completion — and completion happens only with TRS ⊆ ISR;
no replica in a partition's replica set is told to delete itself; a fenced-out controller
changes nothing in ZooKeeper.

The examples at the end of this file pin four bugs these properties found and that are fixed:
a re-target that drops the (adding) leader elects another at once; a re-target is refused when
it would drop every in-sync replica (the cancel safety rule covers re-targets); a cancel let
through by ``unclean.leader.election.enable`` elects a leader; a broker failure decides from the
states in ZooKeeper, so a dead broker an agent had just added leaves the ISR.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Coroutine, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from reassignd.control.protocol import ControlResponse, StopReplicaRequest
from reassignd.controller.instance.channel import ControlChannel
from reassignd.controller.instance.event_queue import EventQueue
from reassignd.controller.instance.metrics import ControllerMetrics
from reassignd.controller.instance.shared import Shared
from reassignd.controller.model.requests import CancelMode, Source
from reassignd.controller.reassignment.algorithm import Reassigner
from reassignd.controller.reassignment.validation import cancelled_assignment, validate_target
from reassignd.controller.replication import loader
from reassignd.controller.replication.assignment import ReplicaAssignment
from reassignd.controller.replication.broker_requests import BrokerRequestBatch, WireStates
from reassignd.controller.replication.context import ControllerContext, LeaderIsr
from reassignd.controller.replication.partition_logic import NO_LEADER, after_broker_failure
from reassignd.controller.replication.partition_state_machine import PartitionStateMachine
from reassignd.controller.replication.writer import ZkWriter
from reassignd.controller.settings import ControllerSettings
from reassignd.controller.topics.deletion import TopicDeleter
from reassignd.errors import (
    InvalidReplicaAssignment,
    NoReassignmentInProgress,
    NotController,
    ReassigndError,
    UnknownTopicOrPartition,
)
from reassignd.topic_partition import TopicPartition
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.values import Fence
from tests.unit.sim_zookeeper import SimZooKeeper

T = TypeVar("T")

pytestmark = pytest.mark.timeout(60)

BROKERS = (1, 2, 3, 4, 5)
TOPICS = ("t0", "t1")
CONTROLLER_ID = 9000
UNCLEAN = "unclean.leader.election.enable"

picks = st.integers(min_value=0, max_value=63)
targets = st.tuples(st.permutations(BROKERS), st.integers(min_value=1, max_value=4))


@dataclass
class Active:
    """One active controller's objects, as ``active.build`` composes them."""

    ctx: ControllerContext
    writer: ZkWriter
    reassigner: Reassigner
    deleter: TopicDeleter
    elections: PartitionStateMachine


@dataclass(frozen=True)
class Seen:
    """A partition as ZooKeeper holds it: assignment, state (None before it has one), version."""

    assignment: ReplicaAssignment
    state: codec.PartitionState | None
    version: int


def _registration(broker_id: int) -> codec.BrokerRegistration:
    port = 9090 + broker_id
    return codec.BrokerRegistration(
        broker_id, "127.0.0.1", port, (codec.Endpoint("PLAINTEXT", "127.0.0.1", port),)
    )


class CoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.zk = SimZooKeeper()
        for path in (
            paths.BROKERS,
            paths.BROKER_IDS,
            paths.BROKER_TOPICS,
            paths.ADMIN,
            paths.DELETE_TOPICS,
            paths.CONFIG,
            paths.CONFIG_TOPICS,
            paths.REASSIGND,
            paths.ORIGINS,
        ):
            self.zk.create(path)
        self.zk.create(paths.CONTROLLER_EPOCH, codec.encode_controller_epoch(0))
        self.reports: list[tuple[str, str, str]] = []
        # the instance's services, for the real PartitionStateMachine (its reports land in shared.problems)
        metrics = ControllerMetrics()
        self.shared = Shared(
            ControllerSettings("sim", controller_id=CONTROLLER_ID),
            self.client,
            metrics,
            time.monotonic,
            EventQueue(time.monotonic),
            ControlChannel(request_timeout_s=1.0, backoff_ms=100, backoff_max_ms=1000, metrics=metrics),
        )
        self.active: Active | None = None
        self.stale: Active | None = None
        # ISR changes an agent wrote that the controller has not been told of yet
        self.pending_isr: set[TopicPartition] = set()
        # ghosts: what each move started from (ORS, in its order then) and where it goes (TRS)
        self.ghost_ors: dict[TopicPartition, tuple[int, ...]] = {}
        self.ghost_trs: dict[TopicPartition, tuple[int, ...]] = {}
        # ZooKeeper after the previous step, and what this step did
        self.seen: dict[TopicPartition, Seen] = {}
        self.requested: dict[TopicPartition, ReplicaAssignment] = {}
        self.retargeted: set[TopicPartition] = set()  # requested by a target, not a cancel
        self.agent_wrote: dict[TopicPartition, tuple[int, ...]] = {}  # the ISR each agent wrote
        self.deleted_replicas: list[tuple[TopicPartition, int]] = []
        self.died: set[int] = set()
        self.elections_ran = False

    def teardown(self) -> None:
        self.loop.close()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coro)

    # --- helpers: the controller's event handlers, as sequences of the real calls --------------------

    @property
    def ctx(self) -> ControllerContext:
        assert self.active is not None
        return self.active.ctx

    @property
    def client(self) -> ZkClient:
        return cast(ZkClient, self.zk)

    def _report(self, path: str, reason: str, kind: str) -> None:
        self.reports.append((path, reason, kind))

    def _unclean(self, topic: str) -> bool:
        """The topic's ``unclean.leader.election.enable`` (Intake._unclean_allowed)."""
        path = paths.config_topic(topic)
        if not self.zk.has(path):
            return False
        config = admin_codec.decode_entity_config(self.zk.data(path))
        return config.get(UNCLEAN, "false").strip().lower() == "true"

    def _replicas(self, tp: TopicPartition) -> tuple[int, ...]:
        a = self.ctx.assignment(tp)
        return () if a is None else a.replicas

    def _register(self, broker_id: int) -> None:
        self.zk.create(paths.broker(broker_id), codec.encode_broker(_registration(broker_id)))

    def _broker_requests(self) -> BrokerRequestBatch:
        """A batch of the active term: its partition states on the wire kept across batches."""
        assert self.active is not None
        return BrokerRequestBatch(self.ctx, CONTROLLER_ID, wire=self.active.elections.wire)

    async def _become_active(self) -> None:
        """Election (the epoch bumped, its version the fence) and controller failover: every
        value of the new context comes from ZooKeeper's bytes."""
        zk, report = self.client, self._report
        znode = await zk.get(paths.CONTROLLER_EPOCH)
        epoch = codec.decode_controller_epoch(znode.data) + 1
        stat = self.zk.set(paths.CONTROLLER_EPOCH, codec.encode_controller_epoch(epoch), znode.stat.version)
        ctx = ControllerContext(epoch, stat.version)
        writer = ZkWriter(zk, Fence(paths.CONTROLLER_EPOCH, stat.version), ctx, report)
        reassigner = Reassigner(zk, ctx, writer, lambda _tp: None, report)
        elections = PartitionStateMachine(self.shared, ctx, writer, WireStates(ctx))
        self.stale, self.active = (
            self.active,
            Active(ctx, writer, reassigner, TopicDeleter(zk, ctx, writer), elections),
        )
        for b in loader.parse_ids(await zk.children(paths.BROKER_IDS), paths.BROKER_IDS, report):
            found = await loader.read_broker(zk, b, None, report)
            if found is not None:
                ctx.add_broker(*found)
        names = await zk.children(paths.BROKER_TOPICS)
        for topic, znode_ in (await loader.read_topics(zk, names, lambda _p: None, report)).items():
            ctx.put_topic(topic, znode_.topic_id, loader.assignment_of(znode_))
        all_tps = list(ctx.all_partitions())
        states, malformed = await loader.read_states(zk, all_tps, report)
        ctx.states.update(states)
        ctx.malformed_states.update(malformed)
        broker_requests = BrokerRequestBatch(ctx, CONTROLLER_ID, wire=elections.wire)
        await self._online(all_tps, broker_requests)
        ctx.topics_to_delete = set(await zk.children(paths.DELETE_TOPICS))
        await reassigner.resume(sorted(ctx.reassigning), broker_requests)
        await self._after(broker_requests)
        self.pending_isr.clear()
        self.elections_ran = True

    async def _online(self, tps: Iterable[TopicPartition], broker_requests: BrokerRequestBatch) -> None:
        """The real ``PartitionStateMachine.online_partitions`` (unclean where the topic's config allows)."""
        assert self.active is not None
        await self.active.elections.online_partitions(tps, broker_requests)

    async def _after(self, broker_requests: BrokerRequestBatch) -> None:
        """End of an event: deletions that can go, then the control requests go out; the brokers
        confirm every StopReplica(delete), which may finish a topic deletion."""
        assert self.active is not None
        deleter = self.active.deleter
        if self.ctx.topics_to_delete:
            await deleter.resume(broker_requests)
        while self._deliver(broker_requests):
            broker_requests = self._broker_requests()
            await deleter.resume(broker_requests)
        self._deliver(broker_requests)

    def _deliver(self, broker_requests: BrokerRequestBatch) -> bool:
        assert self.active is not None
        progressed = False
        for broker_id, requests in broker_requests.build().items():
            for request in requests:
                if isinstance(request, StopReplicaRequest):
                    for p in request.partitions:
                        if p.delete_partition:
                            self.deleted_replicas.append(((p.topic, p.partition), broker_id))
                    progressed |= self.active.deleter.confirmed(broker_id, request, ControlResponse(0))
        return progressed

    async def _reassign(self, updates: dict[TopicPartition, ReplicaAssignment]) -> None:
        """Hand validated assignments to the Reassigner (Intake.alter's last step)."""
        assert self.active is not None
        for tp, new in updates.items():
            current = self.ctx.assignment(tp)
            assert current is not None
            self.requested[tp] = new
            if new.is_being_reassigned:
                if not current.is_being_reassigned:
                    self.ghost_ors[tp] = current.replicas
                self.ghost_trs[tp] = new.target_replicas
            else:
                self.ghost_ors.pop(tp, None)
                self.ghost_trs.pop(tp, None)
        broker_requests = self._broker_requests()
        reassigner = self.active.reassigner
        await reassigner.reassign(updates, Source.API, 0, broker_requests)
        await self._after_reassignments(broker_requests)

    async def _after_reassignments(self, broker_requests: BrokerRequestBatch) -> None:
        """Finisher.after_reassignments: completed partitions and those a removal left
        without a leader get an election (unclean if the topic allows it)."""
        assert self.active is not None
        reassigner, live = self.active.reassigner, self.ctx.live_broker_ids
        leaderless = [
            tp
            for tp in dict.fromkeys([*reassigner.completed, *sorted(reassigner.leaderless)])
            if (li := self.ctx.states.get(tp)) and li.state.leader not in live
        ]
        reassigner.leaderless.clear()
        reassigner.completed.clear()
        if leaderless:
            await self._online(leaderless, broker_requests)
            self.elections_ran = True
        await self._after(broker_requests)

    async def _alter(self, wanted: dict[TopicPartition, tuple[int, ...]]) -> None:
        """Intake.alter for targets: validate, compute against ORS, reassign."""
        ctx = self.ctx
        live = ctx.live_broker_ids
        updates: dict[TopicPartition, ReplicaAssignment] = {}
        for tp, target in wanted.items():
            current = ctx.assignment(tp)
            assert current is not None
            deleting = tp[0] in ctx.topics_to_delete
            error = validate_target(target, current, live, topic_deleting=deleting)
            ors = current.original_replicas
            if set(target) - set(ors) - live:
                assert isinstance(error, InvalidReplicaAssignment), error
            elif deleting:
                assert isinstance(error, UnknownTopicOrPartition), error
            else:
                assert error is None, error
            if error is not None:
                continue
            new = current.reassign_to(target)
            li = ctx.states.get(tp)
            isr = li.state.isr if li else ()
            if current.is_being_reassigned and not set(new.replicas) & set(isr) and not self._unclean(tp[0]):
                continue  # Intake.alter refuses it: 39, it would need an unclean leader election
            # always relative to ORS: the same as a move of a partition sitting at ORS
            assert new == ReplicaAssignment(ors).reassign_to(target)
            assert new.target_replicas == target
            assert new.original_replicas == tuple(r for r in new.replicas if r in ors)
            assert set(new.replicas) == set(target) | set(ors)
            assert set(new.adding) == set(target) - set(ors)
            assert set(new.removing) == set(ors) - set(target)
            if current.is_being_reassigned:
                assert set(ors) == set(self.ghost_ors[tp])
            updates[tp] = new
        self.retargeted |= set(updates)
        await self._reassign(updates)

    async def _cancel(self, tps: Sequence[TopicPartition], mode: CancelMode) -> None:
        """Intake.alter for cancels (``replicas: null``), mode cancel or stop."""
        ctx = self.ctx
        updates: dict[TopicPartition, ReplicaAssignment] = {}
        for tp in tps:
            current = ctx.assignment(tp)
            li = ctx.states.get(tp)
            isr = li.state.isr if li else ()
            unclean = current is not None and current.is_being_reassigned and self._unclean(tp[0])
            outcome = cancelled_assignment(tp[0], tp[1], current, isr, mode, unclean_allowed=unclean)
            if current is None or not current.is_being_reassigned:
                assert isinstance(outcome, NoReassignmentInProgress), outcome
                continue
            ors = current.original_replicas
            assert set(ors) == set(self.ghost_ors[tp])
            # the unclean-election safety rule, and only it, refuses
            refused = mode is CancelMode.CANCEL and not unclean and not set(ors) & set(isr)
            assert isinstance(outcome, ReassigndError) == refused, (tp, current, isr, mode, outcome)
            if isinstance(outcome, ReassigndError):
                assert isinstance(outcome, InvalidReplicaAssignment), outcome
                continue
            assert not outcome.is_being_reassigned
            if mode is CancelMode.CANCEL:
                # back to ORS as a set, in RS − AR order (what revert() documents)
                assert outcome.replicas == ors
                assert set(outcome.replicas) == set(self.ghost_ors[tp])
            else:
                assert outcome.replicas[: len(ors)] == ors
                assert set(outcome.replicas) == set(ors) | (set(current.adding) & set(isr))
            updates[tp] = outcome
        await self._reassign(updates)

    async def _notify(self, *, isr_change: bool) -> None:
        """The controller hears of the agents' ISR writes: an IsrChangeNotification
        (TopicEvents.on_isr_change_notified) or the state-znode watch of reassigning
        partitions (PartitionStateChanged)."""
        assert self.active is not None
        ctx, reassigner = self.ctx, self.active.reassigner
        tps = sorted(self.pending_isr)
        broker_requests = self._broker_requests()
        if isr_change:
            known = [tp for tp in tps if ctx.assignment(tp) is not None]
            states, _ = await loader.read_states(self.client, known, self._report)
            for tp, li in states.items():
                ctx.set_state(tp, li)
            self.pending_isr.clear()
            await reassigner.check(states, broker_requests)
        else:
            watched = [tp for tp in tps if tp in ctx.reassigning]
            self.pending_isr -= set(watched)
            await reassigner.check(watched, broker_requests)
        await self._after_reassignments(broker_requests)

    async def _brokers_changed(self) -> None:
        """BrokerEvents.on_brokers_changed: failures first, then startups."""
        zk, ctx, report = self.client, self.ctx, self._report
        current = {}
        for b in loader.parse_ids(await zk.children(paths.BROKER_IDS), paths.BROKER_IDS, report):
            found = await loader.read_broker(zk, b, None, report)
            if found is not None:
                current[b] = found
        known = dict(ctx.broker_epochs)
        dead = set(known) - set(current)
        new = set(current) - set(known)
        bounced = {b for b in set(current) & set(known) if current[b][1] > known[b]}
        self.died |= dead | bounced
        for b in dead | bounced:
            ctx.remove_broker(b)
        if dead | bounced:
            await self._on_broker_failure(dead | bounced)
        for b in new | bounced:
            ctx.add_broker(*current[b])
        if new | bounced:
            await self._on_broker_startup(new | bounced)

    async def _on_broker_failure(self, dead: set[int]) -> None:
        assert self.active is not None
        ctx = self.ctx
        hosted = [tp for tp in ctx.all_partitions() if set(self._replicas(tp)) & dead]
        states, _ = await loader.read_states(self.client, hosted, self._report)
        for tp, fresh in states.items():  # from ZooKeeper, not the cache (as BrokerEvents does)
            ctx.set_state(tp, fresh)
        affected = [
            tp
            for tp in hosted
            if (li := ctx.states.get(tp)) is not None
            and (li.state.leader in dead or any(r in dead for r in li.state.isr))
        ]
        broker_requests = self._broker_requests()
        changed = await self.active.elections.elect(
            affected,
            lambda replicas, state, live, epoch, unclean: after_broker_failure(
                replicas, state, live, epoch, unclean=unclean
            ),
        )
        for tp in changed:
            broker_requests.add_leader_and_isr(self._replicas(tp), tp)
        await self._after(broker_requests)

    async def _on_broker_startup(self, started: set[int]) -> None:
        assert self.active is not None
        ctx, reassigner = self.ctx, self.active.reassigner
        live = ctx.live_broker_ids
        broker_requests = self._broker_requests()
        needs_online = [
            tp
            for tp in ctx.all_partitions()
            if (li := ctx.states.get(tp)) is None or li.state.leader not in live
        ]
        await self._online(needs_online, broker_requests)
        self.elections_ran = True
        await reassigner.resume(reassigner.partitions_targeting(started), broker_requests)
        self.active.deleter.on_broker_started(started, broker_requests)
        await self._after(broker_requests)

    async def _add_topic(self, topic: str) -> None:
        """TopicEvents.add_topics: a topic znode appeared."""
        zk, ctx = self.client, self.ctx
        for name, znode in (await loader.read_topics(zk, [topic], lambda _p: None, self._report)).items():
            ctx.put_topic(name, znode.topic_id, loader.assignment_of(znode))
        tps = [(topic, p) for p in ctx.assignments.get(topic, {})]
        states, malformed = await loader.read_states(zk, tps, self._report)
        for tp, li in states.items():
            ctx.set_state(tp, li)
        ctx.malformed_states.update(malformed)
        broker_requests = self._broker_requests()
        await self._online(tps, broker_requests)
        await self._after(broker_requests)

    def _create_topic(self, topic: str, perm: Sequence[int], partitions: int, rf: int) -> None:
        """A tool writes the topic znode (version 2, no topic id, as Kafka's did)."""
        replicas = {p: tuple(perm[(p + i) % len(perm)] for i in range(rf)) for p in range(partitions)}
        self.zk.create(paths.topic(topic), codec.encode_topic(codec.TopicZnode(replicas)))
        self.run(self._add_topic(topic))

    def _zk_partitions(self) -> dict[TopicPartition, Seen]:
        out: dict[TopicPartition, Seen] = {}
        for topic in self.zk.child_names(paths.BROKER_TOPICS):
            znode = codec.decode_topic(self.zk.data(paths.topic(topic)))
            for p, a in loader.assignment_of(znode).items():
                path = paths.partition_state(topic, p)
                if self.zk.has(path):
                    state = codec.decode_partition_state(self.zk.data(path))
                    out[(topic, p)] = Seen(a, state, self.zk.version(path))
                else:
                    out[(topic, p)] = Seen(a, None, -1)
        return out

    def _zk_live(self) -> set[int]:
        return {int(b) for b in self.zk.child_names(paths.BROKER_IDS)}

    # --- rules ----------------------------------------------------------------------------------

    @initialize(perm=st.permutations(BROKERS), partitions=st.integers(1, 3), rf=st.integers(1, 3))
    def start(self, perm: list[int], partitions: int, rf: int) -> None:
        for b in BROKERS:
            self._register(b)
        self.run(self._become_active())
        self.stale = None
        self._create_topic("t0", perm, partitions, rf)

    @precondition(lambda self: bool(self.ctx.assignments))
    @rule(moves=st.lists(st.tuples(picks, targets), min_size=1, max_size=3), only_live=st.booleans())
    def reassign(self, moves: list[tuple[int, tuple[list[int], int]]], only_live: bool) -> None:
        """One request for up to three partitions; with ``only_live`` the target's new replicas
        are live brokers (valid), else they may be dead (refused with 39)."""
        tps = sorted(self.ctx.all_partitions())
        live = self.ctx.live_broker_ids
        wanted: dict[TopicPartition, tuple[int, ...]] = {}
        for pick, (perm, size) in moves:
            tp = tps[pick % len(tps)]
            a = self.ctx.assignment(tp)
            assert a is not None
            usable = [b for b in perm if not only_live or b in live or b in a.original_replicas]
            if usable[:size]:
                wanted.pop(tp, None)  # the last one wins
                wanted[tp] = tuple(usable[:size])
        self.run(self._alter(wanted))

    @precondition(lambda self: bool(self.ctx.reassigning))
    @rule(pick=picks, move=targets)
    def retarget(self, pick: int, move: tuple[list[int], int]) -> None:
        """A new target for a moving partition (its new replicas live)."""
        tps = sorted(self.ctx.reassigning)
        tp = tps[pick % len(tps)]
        a = self.ctx.assignment(tp)
        assert a is not None
        perm, size = move
        live = self.ctx.live_broker_ids
        usable = [b for b in perm if b in live or b in a.original_replicas]
        if usable[:size]:
            self.run(self._alter({tp: tuple(usable[:size])}))

    @precondition(lambda self: bool(self.ctx.reassigning))
    @rule(pick=picks, stop=st.booleans())
    def cancel(self, pick: int, stop: bool) -> None:
        tps = sorted(self.ctx.reassigning)
        self.run(self._cancel([tps[pick % len(tps)]], CancelMode.STOP if stop else CancelMode.CANCEL))

    @precondition(lambda self: bool(self.ctx.assignments))
    @rule(pick=picks)
    def cancel_any_partition(self, pick: int) -> None:
        """DELETE of one partition, moving or not (85 when not)."""
        tps = sorted(self.ctx.all_partitions())
        self.run(self._cancel([tps[pick % len(tps)]], CancelMode.CANCEL))

    @precondition(lambda self: bool(self.ctx.reassigning))
    @rule(stop=st.booleans())
    def cancel_all(self, stop: bool) -> None:
        """DELETE /v1/reassignments: every moving partition in one request."""
        self.run(self._cancel(sorted(self.ctx.reassigning), CancelMode.STOP if stop else CancelMode.CANCEL))

    @rule(pick=picks, count=st.integers(1, 3), notify=st.booleans())
    def replicas_catch_up(self, pick: int, count: int, notify: bool) -> None:
        """Live followers of a live leader catch up: the leader's agent adds up to ``count`` of
        them to the ISR in one conditional write (same leader epoch, partition epoch + 1)."""
        live = self._zk_live()
        lagging = {
            tp: [r for r in seen.assignment.replicas if r in live and r not in s.isr]
            for tp, seen in sorted(self._zk_partitions().items())
            if (s := seen.state) is not None and s.leader in live
        }
        candidates = [tp for tp, followers in lagging.items() if followers]
        if not candidates:
            return
        tp = candidates[pick % len(candidates)]
        path = paths.partition_state(*tp)
        s = codec.decode_partition_state(self.zk.data(path))
        grown = codec.PartitionState(
            s.leader, s.leader_epoch, s.controller_epoch, (*s.isr, *lagging[tp][:count])
        )
        self.zk.set(path, codec.encode_partition_state(grown), self.zk.version(path))
        self.agent_wrote[tp] = grown.isr
        self.pending_isr.add(tp)
        if notify:
            self.run(self._notify(isr_change=True))

    @rule(pick=picks, notify=st.booleans())
    def leader_drops_dead_followers(self, pick: int, notify: bool) -> None:
        """replica.lag.time.max.ms passed: a live leader's agent takes the followers that stopped
        fetching (dead brokers) out of the ISR."""
        live = self._zk_live()
        candidates = [
            tp
            for tp, seen in sorted(self._zk_partitions().items())
            if (s := seen.state) is not None and s.leader in live and set(s.isr) - live
        ]
        if not candidates:
            return
        tp = candidates[pick % len(candidates)]
        path = paths.partition_state(*tp)
        s = codec.decode_partition_state(self.zk.data(path))
        shrunk = codec.PartitionState(
            s.leader, s.leader_epoch, s.controller_epoch, tuple(r for r in s.isr if r in live)
        )
        self.zk.set(path, codec.encode_partition_state(shrunk), self.zk.version(path))
        self.agent_wrote[tp] = shrunk.isr
        self.pending_isr.add(tp)
        if notify:
            self.run(self._notify(isr_change=True))

    @precondition(lambda self: bool(self.pending_isr))
    @rule(isr_change=st.booleans())
    def controller_hears_of_isr_changes(self, isr_change: bool) -> None:
        """The notification of earlier agent writes arrives: the completion check (phase B
        once TRS ⊆ ISR, read from ZooKeeper)."""
        self.run(self._notify(isr_change=isr_change))

    @precondition(lambda self: len(self.ctx.brokers) > 2)
    @rule(pick=picks)
    def broker_dies(self, pick: int) -> None:
        alive = sorted(self.ctx.brokers)
        self.zk.delete(paths.broker(alive[pick % len(alive)]))
        self.run(self._brokers_changed())

    @precondition(lambda self: len(self.ctx.brokers) < len(BROKERS))
    @rule(pick=picks)
    def broker_returns(self, pick: int) -> None:
        dead = sorted(set(BROKERS) - set(self.ctx.brokers))
        self._register(dead[pick % len(dead)])
        self.run(self._brokers_changed())

    @rule(pick=picks)
    def broker_bounces(self, pick: int) -> None:
        """Gone and back before the controller looked: a new broker epoch (czxid)."""
        alive = sorted(self.ctx.brokers)
        b = alive[pick % len(alive)]
        self.zk.delete(paths.broker(b))
        self._register(b)
        self.run(self._brokers_changed())

    @rule(topic=st.sampled_from(TOPICS), enable=st.booleans())
    def set_unclean_election(self, topic: str, enable: bool) -> None:
        if not self.zk.has(paths.topic(topic)):
            return
        path = paths.config_topic(topic)
        data = admin_codec.encode_entity_config({UNCLEAN: "true" if enable else "false"})
        if self.zk.has(path):
            self.zk.set(path, data, -1)
        else:
            self.zk.create(path, data)

    @rule(topic=st.sampled_from(TOPICS))
    def delete_topic(self, topic: str) -> None:
        """``/admin/delete_topics/<t>``; the deletion waits for the topic's reassignments."""
        if not self.zk.has(paths.topic(topic)) or self.zk.has(paths.delete_topic(topic)):
            return
        self.zk.create(paths.delete_topic(topic))
        self.ctx.topics_to_delete = set(self.zk.child_names(paths.DELETE_TOPICS))
        self.run(self._after(self._broker_requests()))

    @rule(
        topic=st.sampled_from(TOPICS),
        perm=st.permutations(BROKERS),
        partitions=st.integers(1, 3),
        rf=st.integers(1, 3),
    )
    def create_topic(self, topic: str, perm: list[int], partitions: int, rf: int) -> None:
        if not self.zk.has(paths.topic(topic)):
            self._create_topic(topic, perm, partitions, rf)

    @rule()
    def failover(self) -> None:
        self.run(self._become_active())

    @precondition(lambda self: self.stale is not None)
    @rule(pick=picks, move=targets)
    def fenced_out_controller_acts(self, pick: int, move: tuple[list[int], int]) -> None:
        """The previous controller, unaware, runs a reassignment: ZooKeeper must not change."""
        old = self.stale
        assert old is not None
        tps = sorted(old.ctx.all_partitions())
        if not tps:
            return
        tp = tps[pick % len(tps)]
        current = old.ctx.assignment(tp)
        assert current is not None
        perm, size = move
        before = self.zk.snapshot()
        with contextlib.suppress(NotController):  # or nothing to write
            self.run(
                old.reassigner.reassign(
                    {tp: current.reassign_to(perm[:size])},
                    Source.API,
                    0,
                    BrokerRequestBatch(old.ctx, CONTROLLER_ID, wire=old.elections.wire),
                )
            )
        assert self.zk.snapshot() == before

    # --- invariants -------------------------------------------------------------------------------

    @invariant()
    def after_each_step(self) -> None:
        """Every check, in this order, after every step (then the step's record is reset)."""
        if self.active is None:
            return
        now, live = self._zk_partitions(), self._zk_live()
        self._zookeeper_equals_memory(now, live)
        self._codecs_round_trip_memory()
        self._partitions_are_well_formed(now, live)
        self._steps_only_move_forward(now, live)

    def _zookeeper_equals_memory(self, now: dict[TopicPartition, Seen], live: set[int]) -> None:
        assert not self.reports, self.reports
        assert not self.shared.problems, list(self.shared.problems)
        ctx = self.ctx
        topics = set(self.zk.child_names(paths.BROKER_TOPICS))
        assert set(ctx.assignments) == topics
        for topic in topics:
            znode = codec.decode_topic(self.zk.data(paths.topic(topic)))
            assert ctx.assignments[topic] == loader.assignment_of(znode)
            assert ctx.topic_ids.get(topic) == znode.topic_id
        assert set(ctx.states) == {tp for tp, seen in now.items() if seen.state is not None}
        for tp, seen in now.items():
            if seen.state is None:
                continue
            li = ctx.states[tp]
            if tp in self.pending_isr:
                assert li.version <= seen.version
            else:
                assert li == LeaderIsr(seen.state, seen.version), tp
        assert ctx.reassigning == {tp for tp, seen in now.items() if seen.assignment.is_being_reassigned}
        assert ctx.live_broker_ids == live
        assert ctx.topics_to_delete == set(self.zk.child_names(paths.DELETE_TOPICS))

    def _codecs_round_trip_memory(self) -> None:
        ctx = self.ctx
        for topic, parts in ctx.assignments.items():
            znode = codec.TopicZnode(
                {p: a.replicas for p, a in parts.items()},
                {p: a.adding for p, a in parts.items() if a.adding},
                {p: a.removing for p, a in parts.items() if a.removing},
                ctx.topic_ids.get(topic),
            )
            assert codec.decode_topic(codec.encode_topic(znode)) == znode
            assert loader.assignment_of(codec.decode_topic(codec.encode_topic(znode))) == parts
        for li in ctx.states.values():
            assert codec.decode_partition_state(codec.encode_partition_state(li.state)) == li.state

    def _partitions_are_well_formed(self, now: dict[TopicPartition, Seen], live: set[int]) -> None:
        ctx = self.ctx
        for tp, seen in now.items():
            a, s = seen.assignment, seen.state
            rs = set(a.replicas)
            assert a.replicas and len(rs) == len(a.replicas), a
            assert set(a.adding) <= rs and set(a.removing) <= rs, a
            assert not set(a.adding) & set(a.removing), a
            assert a.target_replicas, a
            if a.is_being_reassigned:
                assert set(a.original_replicas) == set(self.ghost_ors[tp]), (tp, a, self.ghost_ors[tp])
                assert a.target_replicas == self.ghost_trs[tp], (tp, a, self.ghost_trs[tp])
            if s is None:
                continue
            assert s.isr, (tp, s)
            if tp not in self.pending_isr and set(s.isr) - live:
                # a dead broker stays in the ISR only as its last member, the partition offline
                assert s.leader == NO_LEADER and len(s.isr) == 1, (tp, s, live)
            assert s.controller_epoch <= ctx.epoch
            if s.leader != NO_LEADER:
                assert s.leader in s.isr, (tp, s)
                assert s.leader in rs, (tp, a, s)
                assert s.leader in live, (tp, s, live)
            else:
                assert not [r for r in a.replicas if r in live and r in s.isr], (tp, a, s, live)
                if self.elections_ran and self._unclean(tp[0]):
                    assert not [r for r in a.replicas if r in live], ("unclean", tp, a, s, live)
        for tp in list(self.ghost_ors):
            # over (a topic is deleted only once its moves are: it may go in the same step)
            if tp not in now or not now[tp].assignment.is_being_reassigned:
                del self.ghost_ors[tp], self.ghost_trs[tp]

    def _steps_only_move_forward(self, now: dict[TopicPartition, Seen], live: set[int]) -> None:
        """Compare with ZooKeeper after the previous step (then forget what this step did)."""
        for tp, after in now.items():
            before = self.seen.get(tp)
            if before is not None:
                self._check_transition(tp, before, after, live)
        for tp, broker_id in self.deleted_replicas:  # StopReplica(delete) only off the replicas
            if (seen := now.get(tp)) is not None and tp[0] not in self.ctx.topics_to_delete:
                assert broker_id not in seen.assignment.replicas, (tp, broker_id, seen)
        self.seen = now
        self.requested.clear()
        self.retargeted.clear()
        self.agent_wrote.clear()
        self.deleted_replicas.clear()
        self.died.clear()
        self.elections_ran = False
        self.pending_isr &= set(now)

    def _check_transition(self, tp: TopicPartition, before: Seen, after: Seen, live: set[int]) -> None:
        a0, a1 = before.assignment, after.assignment
        requested = self.requested.get(tp)
        base = a0 if requested is None else requested
        dropped = set(a0.replicas) - set(base.replicas)
        # a re-target, cancel or stop drops adding replicas only: ORS stays until completion
        assert dropped <= set(a0.adding), (tp, a0, base)
        completed = a1 != base
        if completed:
            assert base.is_being_reassigned and a1 == base.completed(), (tp, base, a1)
            assert after.state is not None, tp
            assert set(base.target_replicas) <= set(after.state.isr), (tp, base, after)
        allowed = dropped | (set(base.removing) if completed else set())
        assert set(a0.replicas) - set(a1.replicas) <= allowed, (tp, a0, base, a1)
        s0, s1 = before.state, after.state
        if s0 is None:
            return
        assert s1 is not None, tp
        assert after.version >= before.version, (tp, before, after)
        if s1 != s0:
            assert after.version > before.version, (tp, before, after)
        assert s1.leader_epoch >= s0.leader_epoch, (tp, s0, s1)
        if s1.leader != s0.leader or (s1.isr != s0.isr and tp not in self.agent_wrote):
            assert s1.leader_epoch > s0.leader_epoch, (tp, s0, s1)
        # a new leader was in sync (before the step, or by the agent's write in it), unless the
        # topic allows an unclean election
        if s1.leader not in (NO_LEADER, s0.leader) and not self._unclean(tp[0]):
            in_sync = set(s0.isr) | set(self.agent_wrote.get(tp, ()))
            assert s1.leader in in_sync, ("unclean election", tp, s0, s1)
        # no step but a broker's death takes the last in-sync replica out of the replica set;
        # only the unclean-election permission may, and then an unclean election follows
        synced = set(s0.isr) & set(a0.replicas)
        if synced and not set(s1.isr) & set(a1.replicas) and not self.died:
            assert self._unclean(tp[0]), ("in-sync replicas all dropped", tp, a0, s0, a1, s1)
            offline_with_live = s1.leader == NO_LEADER and set(a1.replicas) & live
            assert not offline_with_live, ("no unclean election", tp, a1, s1)
        # out of the ISR: a broker that is dead or died in this step, a replica dropped from RS
        # now, RR at completion
        left_isr = {r for r in s0.isr if r in a0.replicas and r not in s1.isr}
        assert left_isr <= allowed | self.died | (set(BROKERS) - live), (tp, a0, s0, a1, s1, live)


# ~9 s when it passes (300 runs of up to 40 steps, derandomized); a failure's shrinking can take
# a minute or two on a slow machine, hence the longer timeout
@pytest.mark.timeout(300)
def test_core_state_machine(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.CRITICAL, logger="reassignd")  # thousands of expected warnings
    run_state_machine_as_test(
        CoreMachine,
        settings=settings(
            max_examples=300,
            stateful_step_count=40,
            deadline=None,
            derandomize=True,
            database=None,
            report_multiple_bugs=False,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )


# --- minimal failing examples of what the machine tolerates (each a real bug, see the notes) --------

TP0 = ("t0", 0)


def _machine(rf: int) -> CoreMachine:
    """t0 with one partition on brokers 1..rf, leader 1; five live brokers. Every step is checked
    by the machine's invariants."""
    machine = CoreMachine()
    machine.start(perm=list(BROKERS), partitions=1, rf=rf)
    machine.after_each_step()
    return machine


def _zk_state(machine: CoreMachine) -> tuple[ReplicaAssignment, codec.PartitionState]:
    seen = machine._zk_partitions()[TP0]
    assert seen.state is not None
    return seen.assignment, seen.state


def _step(machine: CoreMachine, action: Any) -> None:
    action()
    machine.after_each_step()


def test_invariants_hold_on_a_plain_move() -> None:
    machine = _machine(rf=2)
    try:
        _step(machine, lambda: machine.run(machine._alter({TP0: (3, 2)})))
        a, s = _zk_state(machine)
        assert (a.replicas, a.adding, a.removing, s.leader, s.isr) == ((3, 2, 1), (3,), (1,), 1, (1, 2))
        _step(machine, lambda: machine.replicas_catch_up(pick=0, count=1, notify=True))
        a, s = _zk_state(machine)
        assert (a, s.leader, s.isr) == (ReplicaAssignment((3, 2)), 3, (2, 3))
    finally:
        machine.teardown()


def test_retarget_that_drops_the_leader_elects_another() -> None:
    """Reassigner.reassign stops a dropped adding replica that leads (leader −1) and phase A
    elects nobody: the partition stays offline with a live in-sync replica (2) until some broker
    starts or a failover. Phase B (a cancel) does elect."""
    machine = _machine(rf=2)  # [1, 2]
    try:
        _step(machine, lambda: machine.run(machine._alter({TP0: (3, 4)})))  # RS [3, 4, 1, 2]
        _step(machine, lambda: machine.replicas_catch_up(pick=0, count=1, notify=True))  # ISR [1, 2, 3]
        _step(machine, lambda: machine.broker_dies(pick=0))  # 1 dies: 3 leads, ISR [2, 3]
        assert _zk_state(machine)[1].leader == 3
        machine.run(machine._alter({TP0: (4, 2)}))  # drops 3: RS [4, 2, 1]
        _a, s = _zk_state(machine)
        assert s.leader == 2, s  # observed: PartitionState(leader=-1, ..., isr=(2,))
    finally:
        machine.teardown()


def test_retarget_keeps_an_in_sync_replica() -> None:
    """ORS [1] moving to [2, 3]: 2 caught up and leads after 1 bounced (1 out of sync). A
    re-target to [3, 4] is accepted (validate_target) and drops 2, the only in-sync replica:
    StopReplica(delete) to it, leader −1, the ISR [2] outside the replicas. The cancel safety rule
    (no unclean election without the topic's permission) covers no re-target, not even a target
    equal to ORS as a set — a cancel in all but name (the KIP-236 sequenced path does check it)."""
    machine = _machine(rf=1)  # [1]
    try:
        _step(machine, lambda: machine.run(machine._alter({TP0: (2, 3)})))
        _step(machine, lambda: machine.replicas_catch_up(pick=0, count=1, notify=True))  # ISR [1, 2]
        _step(machine, lambda: machine.broker_bounces(pick=0))  # 2 leads, ISR [2]
        live = machine.ctx.live_broker_ids
        error = validate_target((3, 4), machine.ctx.assignment(TP0), live, topic_deleting=False)
        if error is None:
            machine.run(machine._alter({TP0: (3, 4)}))
        a, s = _zk_state(machine)
        assert set(s.isr) & set(a.replicas), (a, s)  # observed: RS [3, 4, 1], leader −1, ISR [2]
    finally:
        machine.teardown()


def test_unclean_cancel_elects_a_leader() -> None:
    """With unclean.leader.election.enable=true a cancel whose ORS is out of sync is accepted
    (as Kafka does), but nothing elects: the partition ends on [1] (live) with leader −1 and the
    ISR [2] of a deleted replica, offline until a broker starts (and then only once broker events
    pass the topic's unclean setting on)."""
    machine = _machine(rf=1)  # [1]
    try:
        _step(machine, lambda: machine.set_unclean_election(topic="t0", enable=True))
        _step(machine, lambda: machine.run(machine._alter({TP0: (2, 3)})))
        _step(machine, lambda: machine.replicas_catch_up(pick=0, count=1, notify=True))  # ISR [1, 2]
        _step(machine, lambda: machine.broker_bounces(pick=0))  # 2 leads, ISR [2]
        machine.run(machine._cancel([TP0], CancelMode.CANCEL))
        a, s = _zk_state(machine)
        assert a == ReplicaAssignment((1,))
        assert s.leader == 1, s  # observed: PartitionState(leader=-1, ..., isr=(2,))
    finally:
        machine.teardown()


def test_broker_failure_removes_it_from_the_isr_in_zookeeper() -> None:
    """3 catches up and its leader's agent adds it to the ISR; 3 dies before the controller has
    read that write (its IsrChangeNotification lingers, or is queued behind the BrokersChanged).
    The failure handling (BrokerEvents.on_broker_failure) picks the partitions and decides from
    the cached ISR, so 3 stays in the ISR in ZooKeeper until the leader's lag timeout. Kafka reads
    the states from ZooKeeper (ReplicaStateMachine.doRemoveReplicasFromIsr) for every partition
    with a replica on the dead broker."""
    machine = _machine(rf=3)  # [1, 2, 3]
    try:
        _step(machine, lambda: machine.broker_bounces(pick=2))  # 3 restarts: ISR [1, 2]
        _step(machine, lambda: machine.replicas_catch_up(pick=0, count=1, notify=False))  # ISR [1, 2, 3]
        _step(machine, lambda: machine.broker_dies(pick=2))  # 3 dies
        machine.controller_hears_of_isr_changes(isr_change=True)
        _a, s = _zk_state(machine)
        assert 3 not in s.isr, s  # observed: leader 1, ISR [1, 2, 3] with 3 dead
    finally:
        machine.teardown()

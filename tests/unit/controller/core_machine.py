"""The controller core's Hypothesis state machine (its rules and invariants: see test_core_properties)
and the helpers that drive one machine step by step."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from reassignd.control.protocol import ControlRequest, ControlResponse, StopReplicaRequest
from reassignd.controller.instance.event_queue import ControllerEventQueue
from reassignd.controller.instance.events import (
    ApiPartitionReassignment,
    BrokersChanged,
    ControllerEvent,
    IsrChangeNotified,
    PartitionStateChanged,
    StopReplicaConfirmed,
    TopicDeletionsChanged,
    TopicsChanged,
)
from reassignd.controller.instance.metrics import ControllerMetrics
from reassignd.controller.instance.shared import Shared
from reassignd.controller.leadership.rebalance_timer import RebalanceTimer
from reassignd.controller.model.moves import MoveState
from reassignd.controller.model.requests import AlterReassignments, AlterResult, CancelMode, Source
from reassignd.controller.partitions.partition_logic import NO_LEADER
from reassignd.controller.reads import loader
from reassignd.controller.reassignment.validation import (
    cancelled_assignment,
    in_original_order,
    validate_target,
)
from reassignd.controller.runtime import active, failover
from reassignd.controller.runtime.active import ActiveParts
from reassignd.controller.runtime.apply import apply
from reassignd.controller.runtime.controller_election import Won
from reassignd.controller.runtime.dispatch import dispatch
from reassignd.controller.settings import ControllerSettings
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.controller.state.context import ControllerContext, LeaderIsr
from reassignd.errors import (
    InvalidReplicaAssignment,
    NoReassignmentInProgress,
    NotController,
    ReassigndError,
    UnknownTopicOrPartition,
)
from reassignd.quotas.metrics import QuotaMetrics
from reassignd.topic_partition import TopicPartition
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.values import Fence
from tests.unit.controller.sim_zookeeper import SimZooKeeper

T = TypeVar("T")


BROKERS = (1, 2, 3, 4, 5)


TOPICS = ("t0", "t1")


CONTROLLER_ID = 9000


UNCLEAN = "unclean.leader.election.enable"


picks = st.integers(min_value=0, max_value=63)


targets = st.tuples(st.permutations(BROKERS), st.integers(min_value=1, max_value=4))


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


class RecordingChannel:
    """The control channel as the brokers see it: every request the controller sends, in order
    (the machine plays the brokers and confirms each StopReplica(delete))."""

    def __init__(self) -> None:
        self.sent: list[tuple[int, ControlRequest]] = []

    def add_broker(self, broker_id: int, url: str) -> None:
        pass

    async def remove_broker(self, broker_id: int) -> None:
        pass

    def send(self, broker_id: int, request: ControlRequest) -> None:
        self.sent.append((broker_id, request))


class CoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.zk = SimZooKeeper()
        for path in paths.PERSISTENT_PATHS:
            self.run(self.zk.ensure_path(path))
        self.zk.add(paths.CONTROLLER_EPOCH, codec.encode_controller_epoch(0))
        # the instance's services, as the controller composes them; the parts of each active term
        # are built by the real ``active.build`` and loaded by the real ``failover.load``
        metrics = ControllerMetrics()
        self.channel = RecordingChannel()
        settings = ControllerSettings("sim", controller_id=CONTROLLER_ID, auto_leader_rebalance_enable=False)
        self.shared = Shared(
            settings, self.zk, metrics, time.monotonic, ControllerEventQueue(time.monotonic), self.channel
        )
        self.quota_metrics = QuotaMetrics(metrics.registry)
        self.rebalance = RebalanceTimer(settings, time.monotonic, self.shared.queue)
        self.active: ActiveParts | None = None
        self.stale: ActiveParts | None = None
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

    # --- helpers: ZooKeeper and the brokers as the model plays them; the controller is the real one

    @property
    def ctx(self) -> ControllerContext:
        assert self.active is not None
        return self.active.ctx

    def _unclean(self, topic: str) -> bool:
        """The topic's ``unclean.leader.election.enable``, as the model set it."""
        path = paths.config_topic(topic)
        if not self.zk.has(path):
            return False
        config = admin_codec.decode_entity_config(self.zk.data(path))
        return config.get(UNCLEAN, "false").strip().lower() == "true"

    def _register(self, broker_id: int) -> None:
        self.zk.add(paths.broker(broker_id), codec.encode_broker(_registration(broker_id)))

    async def _become_active(self) -> None:
        """Election (the epoch bumped, its version the fence), then the real failover load: every
        value of the new context comes from ZooKeeper's bytes."""
        znode = await self.zk.get(paths.CONTROLLER_EPOCH)
        epoch = codec.decode_controller_epoch(znode.data) + 1
        stat = self.zk.put(paths.CONTROLLER_EPOCH, codec.encode_controller_epoch(epoch), znode.stat.version)
        won = Won(epoch, Fence(paths.CONTROLLER_EPOCH, stat.version))
        self.shared.records.start_epoch(epoch)
        parts = active.build(self.shared, won, self.zk, self.quota_metrics)
        self.stale, self.active = self.active, parts
        await failover.load(self.shared, parts)
        await self._brokers_answer()
        self.pending_isr.clear()
        self.elections_ran = True

    async def _handle(self, event: ControllerEvent) -> None:
        """One event through the real dispatch, then whatever it enqueued, then the brokers'
        answers (StopReplica confirmations, which may finish a topic deletion)."""
        assert self.active is not None
        await apply(self.shared, await dispatch(self.active, event, self.shared, self.rebalance))
        for queued in self.shared.queue.clear():
            await apply(self.shared, await dispatch(self.active, queued, self.shared, self.rebalance))
        await self._brokers_answer()

    async def _brokers_answer(self) -> None:
        assert self.active is not None
        while self.channel.sent:
            sent, self.channel.sent = self.channel.sent, []
            for broker_id, request in sent:
                if isinstance(request, StopReplicaRequest) and any(
                    p.delete_partition for p in request.partitions
                ):
                    for p in request.partitions:
                        if p.delete_partition:
                            self.deleted_replicas.append(((p.topic, p.partition), broker_id))
                    event = StopReplicaConfirmed(broker_id, request, ControlResponse(0))
                    await apply(self.shared, await dispatch(self.active, event, self.shared, self.rebalance))

    async def _request(self, request: AlterReassignments) -> AlterResult:
        reply: asyncio.Future[AlterResult] = self.loop.create_future()
        await self._handle(ApiPartitionReassignment(request, reply))
        return reply.result()

    def _zk_isr(self, tp: TopicPartition) -> tuple[int, ...]:
        seen = self._zk_partitions().get(tp)
        return () if seen is None or seen.state is None else seen.state.isr

    def _note_requests(self, updates: dict[TopicPartition, ReplicaAssignment]) -> None:
        """What the machine expects each accepted partition to be handed to the Reassigner."""
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

    async def _alter(self, wanted: dict[TopicPartition, tuple[int, ...]]) -> None:
        """AlterPartitionReassignments for targets, through the real intake: the machine predicts
        each partition's outcome from the pure rules and checks the answer against it."""
        ctx = self.ctx
        live = ctx.live_broker_ids
        expected: dict[TopicPartition, ReplicaAssignment | None] = {}
        for tp, target in wanted.items():
            current = ctx.assignment(tp)
            assert current is not None
            deleting = tp[0] in ctx.topics_to_delete
            error = validate_target(target, current, live, topic_deleting=deleting)
            ors = current.origins
            if set(target) - set(ors) - live:
                assert isinstance(error, InvalidReplicaAssignment), error
            elif deleting:
                assert isinstance(error, UnknownTopicOrPartition), error
            else:
                assert error is None, error
            if error is not None:
                expected[tp] = None
                continue
            new = current.reassign_to(target)
            isr = self._zk_isr(tp)
            if current.is_being_reassigned and not set(new.replicas) & set(isr) and not self._unclean(tp[0]):
                expected[tp] = None  # refused: 39, it would need an unclean leader election
                continue
            # always relative to ORS: the same as a move of a partition sitting at ORS
            assert new == ReplicaAssignment(ors).reassign_to(target)
            assert new.target_replicas == target
            assert new.origins == tuple(r for r in new.replicas if r in ors)
            assert set(new.replicas) == set(target) | set(ors)
            assert set(new.adding) == set(target) - set(ors)
            assert set(new.removing) == set(ors) - set(target)
            if current.is_being_reassigned:
                assert set(ors) == set(self.ghost_ors[tp])
            expected[tp] = new
        accepted = {tp: new for tp, new in expected.items() if new is not None}
        self._note_requests(accepted)
        self.retargeted |= set(accepted)
        if not wanted:
            return
        result = await self._request(AlterReassignments(tuple(wanted.items())))
        answered = {(r.topic, r.partition): r.error_code for r in result.results}
        assert {tp for tp, code in answered.items() if code == 0} == set(accepted), (answered, accepted)

    async def _cancel(self, tps: Sequence[TopicPartition], mode: CancelMode) -> None:
        """AlterPartitionReassignments for cancels (``replicas: null``), mode cancel or stop,
        through the real intake; the outcome predicted from the pure rules."""
        ctx = self.ctx
        expected: dict[TopicPartition, ReplicaAssignment | None] = {}
        for tp in tps:
            current = ctx.assignment(tp)
            isr = self._zk_isr(tp)
            unclean = current is not None and current.is_being_reassigned and self._unclean(tp[0])
            outcome = cancelled_assignment(tp[0], tp[1], current, isr, mode, unclean_allowed=unclean)
            if current is None or not current.is_being_reassigned:
                assert isinstance(outcome, NoReassignmentInProgress), outcome
                expected[tp] = None
                continue
            if tp[0] in ctx.topics_to_delete:
                expected[tp] = None  # a topic queued for deletion takes no cancel either (3)
                continue
            ors = current.origins
            assert set(ors) == set(self.ghost_ors[tp])
            # the unclean-election safety rule, and only it, refuses
            refused = mode is CancelMode.CANCEL and not unclean and not set(ors) & set(isr)
            assert isinstance(outcome, ReassigndError) == refused, (tp, current, isr, mode, outcome)
            if isinstance(outcome, ReassigndError):
                assert isinstance(outcome, InvalidReplicaAssignment), outcome
                expected[tp] = None
                continue
            assert not outcome.is_being_reassigned
            if mode is CancelMode.CANCEL:
                # back to ORS as a set, in the order it had before the move (the origins record)
                assert set(outcome.replicas) == set(ors) == set(self.ghost_ors[tp])
                outcome = ReplicaAssignment(in_original_order(outcome, current, self.ghost_ors[tp]).replicas)
            else:
                assert outcome.replicas[: len(ors)] == ors
                assert set(outcome.replicas) == set(ors) | (set(current.adding) & set(isr))
                outcome = in_original_order(outcome, current, self.ghost_ors[tp])
            expected[tp] = outcome
        accepted = {tp: new for tp, new in expected.items() if new is not None}
        self._note_requests(accepted)
        if not tps:
            return
        result = await self._request(AlterReassignments(tuple((tp, None) for tp in tps), mode))
        answered = {(r.topic, r.partition): r.error_code for r in result.results}
        assert {tp for tp, code in answered.items() if code == 0} == set(accepted), (answered, accepted)

    async def _notify(self, *, isr_change: bool) -> None:
        """The controller hears of the agents' ISR writes: their IsrChangeNotification, or the
        state-znode watch of reassigning partitions (PartitionStateChanged)."""
        tps = sorted(self.pending_isr)
        if isr_change:
            self.pending_isr.clear()
            await self._handle(IsrChangeNotified())
        else:
            watched = tuple(tp for tp in tps if tp in self.ctx.reassigning)
            self.pending_isr -= set(watched)
            await self._handle(PartitionStateChanged(watched))

    async def _brokers_changed(self) -> None:
        """BrokersChanged: the real BrokerEvents (failures first, then startups)."""
        before = dict(self.ctx.broker_epochs)
        await self._handle(BrokersChanged())
        after = dict(self.ctx.broker_epochs)
        gone = {b for b in before if b not in after or after[b] != before[b]}
        self.died |= gone
        if set(after) - set(before) or gone & set(after):
            self.elections_ran = True  # a startup brings offline partitions online

    def _create_topic(self, topic: str, perm: Sequence[int], partitions: int, rf: int) -> None:
        """A tool writes the topic znode (version 2, no topic id, as Kafka's did)."""
        replicas = {p: tuple(perm[(p + i) % len(perm)] for i in range(rf)) for p in range(partitions)}
        self.zk.add(paths.topic(topic), codec.encode_topic(codec.TopicZnode(replicas)))
        self.run(self._handle(TopicsChanged()))

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
            usable = [b for b in perm if not only_live or b in live or b in a.origins]
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
        usable = [b for b in perm if b in live or b in a.origins]
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
        self.zk.put(path, codec.encode_partition_state(grown), self.zk.version(path))
        self.zk.add(paths.ISR_CHANGE_PREFIX, admin_codec.encode_isr_change((tp,)), sequential=True)
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
        self.zk.put(path, codec.encode_partition_state(shrunk), self.zk.version(path))
        self.zk.add(paths.ISR_CHANGE_PREFIX, admin_codec.encode_isr_change((tp,)), sequential=True)
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
        self.zk.remove(paths.broker(alive[pick % len(alive)]))
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
        self.zk.remove(paths.broker(b))
        self._register(b)
        self.run(self._brokers_changed())

    @rule(topic=st.sampled_from(TOPICS), enable=st.booleans())
    def set_unclean_election(self, topic: str, enable: bool) -> None:
        if not self.zk.has(paths.topic(topic)):
            return
        path = paths.config_topic(topic)
        data = admin_codec.encode_entity_config({UNCLEAN: "true" if enable else "false"})
        if self.zk.has(path):
            self.zk.put(path, data, -1)
        else:
            self.zk.add(path, data)

    @rule(topic=st.sampled_from(TOPICS))
    def delete_topic(self, topic: str) -> None:
        """``/admin/delete_topics/<t>``; the deletion waits for the topic's reassignments."""
        if not self.zk.has(paths.topic(topic)) or self.zk.has(paths.delete_topic(topic)):
            return
        self.zk.add(paths.delete_topic(topic))
        self.run(self._handle(TopicDeletionsChanged()))

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
                    old.event_outputs(),
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
        # one move record per moving partition, equal to what ZooKeeper says moves, from the one
        # intake this machine drives (the API; a failover's resume claims for it too)
        for tp, move in ctx.moves.items():
            a = now[tp].assignment
            assert move.tp == tp
            assert move.target == a.target_replicas, (move, a)
            assert set(move.origins) == set(a.origins), (move, a)
            assert move.origins == self.ghost_ors[tp], (move, self.ghost_ors[tp])
            assert move.source in (Source.API, None), move
            # between events a move is live: FINISHING and REVERTING last within the event that
            # ends the move
            assert move.state in (MoveState.ADDING, MoveState.CATCHING_UP), move
            assert move.batch is None
        assert ctx.reassigning_topics == {t: sum(1 for tp in ctx.moves if tp[0] == t) for t, _ in ctx.moves}
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
                assert set(a.origins) == set(self.ghost_ors[tp]), (tp, a, self.ghost_ors[tp])
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

"""The controller: election, failover, and the single consumer of the event queue.

Kafka's ZooKeeper-mode controller (KafkaController.scala) is the reference: one event at a time,
ZooKeeper written (fenced) before memory, watches re-armed by the handlers that re-read.

An instance is composed, not layered: ``Shared`` holds what outlives an active term (settings,
ZooKeeper client, queue, channel, record log, problems), ``ActiveParts`` everything that exists
only while this instance is the active controller (built at the election, dropped whole at the
resignation), ``Publisher`` the snapshot, and ``ControllerApi`` what the HTTP layer may ask.
This module runs the loop, takes the instance events (election, session, hand-over) itself,
hands every other event to ``dispatch`` and applies the outcome of a failure (resign, or refuse
and reload).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import Callable

from reassignd.contracts.records import ControllerElected, ControllerReloaded, ControllerResigned
from reassignd.control.protocol import ControlRequest, ControlResponse, StopReplicaRequest
from reassignd.controller.api.controller_api import ControllerApi
from reassignd.controller.instance.channel import ControlChannel
from reassignd.controller.instance.event_queue import EventQueue
from reassignd.controller.instance.events import (
    ControllerChanged,
    ControllerEvent,
    ExecutorTick,
    HandOverRequested,
    Reelect,
    ReloadDue,
    RequestEvent,
    SelfHealingTick,
    SessionExpired,
    Startup,
    StopReplicaConfirmed,
    event_name,
)
from reassignd.controller.instance.metrics import ControllerMetrics
from reassignd.controller.instance.shared import Shared
from reassignd.controller.instance.timer import Timer
from reassignd.controller.leadership.rebalance_timer import RebalanceTimer
from reassignd.controller.model.placement import PlaceLostReplicas
from reassignd.controller.model.snapshot import ActiveController, ClusterSnapshot
from reassignd.controller.replication import failures
from reassignd.controller.replication.context import ControllerContext
from reassignd.controller.replication.failures import Failure
from reassignd.controller.runtime import active, controller_election, failover
from reassignd.controller.runtime.active import ActiveParts
from reassignd.controller.runtime.apply import apply
from reassignd.controller.runtime.coalesce import coalesce
from reassignd.controller.runtime.dispatch import dispatch
from reassignd.controller.runtime.publisher import Publisher
from reassignd.controller.runtime.reloads import Reloads, fail_request
from reassignd.controller.runtime.stall_watch import StallMetrics, watch_the_loop
from reassignd.controller.settings import ControllerSettings
from reassignd.errors import EventRefused, NotController, ReassigndError
from reassignd.quotas.metrics import QuotaMetrics
from reassignd.stream.record_log import RecordLog
from reassignd.zk import paths
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import ZkError
from reassignd.zk.values import SessionState

log = logging.getLogger(__name__)


REELECT_BACKOFF_MIN_S = 0.1
REELECT_BACKOFF_MAX_S = 2.0
# a term shorter than this that ends on a failure keeps the backoff growing
STABLE_TERM_S = 10.0
# a planned hand-over waits this long for a standby to win before going on without one (a
# standby wins within milliseconds of seeing /controller go; without one, this is a stop's cost)
HAND_OVER_WAIT_S = 1.0


class Controller:
    """One controller instance (active or standby); ``api`` is its ControllerView."""

    def __init__(
        self,
        settings: ControllerSettings,
        zk: ZkClient,
        metrics: ControllerMetrics | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        place_lost_replicas: PlaceLostReplicas | None = None,
        *,
        freeze_gc: bool = False,
    ) -> None:
        self.settings = settings
        self.freeze_gc = freeze_gc  # the process is ours alone: gc.freeze() what a load built
        self.place_lost_replicas = place_lost_replicas  # self-healing's placement (None: off)
        self.metrics = metrics or ControllerMetrics()
        self.http_url: str | None = None
        self.kafka_address: str | None = None  # the Kafka listener's advertised host:port
        queue: EventQueue[ControllerEvent] = EventQueue(clock, on_size=self.metrics.event_queue_size.set)
        self.channel = ControlChannel(
            request_timeout_s=settings.control_request_timeout_s,
            backoff_ms=settings.control_retry_backoff_ms,
            backoff_max_ms=settings.control_retry_backoff_max_ms,
            metrics=self.metrics,
            on_response=self._on_control_response,
        )
        self.shared = Shared(settings, zk, self.metrics, clock, queue, self.channel, wall_clock)
        self.publisher = Publisher(settings.controller_id, self.metrics)
        self.api = ControllerApi(
            self.shared,
            lambda: self.publisher.snapshot,
            lambda: self.parts is not None,
            clock(),
            self.publisher.published,
        )
        self.quota_metrics = QuotaMetrics(self.metrics.registry)
        self.parts: ActiveParts | None = None  # while this instance is the active controller
        self._active_controller: ActiveController | None = None
        self._epoch_seen = 0
        self._reelect_timer = Timer(clock, lambda: queue.put(Reelect()))
        self._reelect_backoff_s = REELECT_BACKOFF_MIN_S
        self._executor_timer = Timer(clock, lambda: queue.put(ExecutorTick()))
        self._healing_timer = Timer(clock, lambda: queue.put(SelfHealingTick()))
        self._rebalance = RebalanceTimer(settings, clock, queue)  # the auto leader rebalance checks
        self.last_failover_s: float | None = None  # election won -> ready, for the benchmark
        self._won: controller_election.Won | None = None  # this term's epoch and fence, while active
        self._loaded = False  # the failover load of this term completed
        self._term_started: float | None = None
        self._unstable = False  # the last term ended on a failure within STABLE_TERM_S
        self._hold_until: float | None = None  # no election attempt before this (backoff)
        self._leaving = False  # handed over for a stop: never run for election again
        self.handling: str | None = None  # the event in hand (named in a stall's log line)
        self._reloads = Reloads(self.shared, queue, clock)  # the reload budget and quarantine

    # what the process and the benchmarks read

    @property
    def active(self) -> bool:
        return self.parts is not None

    @property
    def ctx(self) -> ControllerContext | None:
        return None if self.parts is None else self.parts.ctx

    @property
    def records(self) -> RecordLog:
        return self.shared.records

    def snapshot(self) -> ClusterSnapshot:
        return self.publisher.snapshot

    # the event loop

    async def run(self) -> None:
        """The single consumer. Runs until cancelled."""
        queue = self.shared.queue
        self.shared.zk.on_session_state(self._on_session_state)
        await self.channel.start()
        queue.put(Startup())
        stalls = asyncio.create_task(
            watch_the_loop(
                StallMetrics(self.metrics.loop_stall_ms, self.metrics.loop_stall_worst_ms),
                lambda: self.handling,
            ),
            name="controller-stall-watch",
        )
        try:
            while True:
                event, queue_time_ms = await queue.get()
                self.metrics.event_queue_time_ms.observe(queue_time_ms)
                await self._process(coalesce(event, queue))
        finally:
            stalls.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stalls
            self._reelect_timer.cancel()
            self._executor_timer.cancel()
            self._healing_timer.cancel()
            self._reloads.cancel()
            self._rebalance.stop()
            for dropped in queue.clear():
                if isinstance(dropped, RequestEvent):
                    fail_request(dropped, NotController("the controller is shutting down"))
            await self.channel.close()

    async def _process(self, event: ControllerEvent) -> None:
        """Handle one event. No event is abandoned with the instance still active. A failure is
        one of two kinds (``failures.classify``):

        - **outcome unknown** (a lost connection, a timeout, an expired session, a failed fencing
          check): the instance resigns, gives ``/controller`` up and runs for election again, so
          the next active controller — this one or another — rebuilds everything from ZooKeeper
          (Kafka's triggerControllerMove). A failed election is retried with backoff;
        - **deterministic** (the next controller would meet the same failure): the event's input
          is refused and reported, and the instance stays active; it reloads the cluster from
          ZooKeeper under the same epoch, so memory holds nothing of the half-done event."""
        started = self.shared.clock()
        self.handling = event_name(event)
        try:
            if not self._reloads.held(event, self.parts is not None):
                await self._handle(event)
        except NotController as e:  # a fencing check failed (never an answer inside the loop)
            await self._give_up(event, e, Failure.FENCED)
        except ReassigndError as e:
            if isinstance(event, RequestEvent):  # an answer: the request is refused as it asked for
                fail_request(event, e)
            elif self.parts is not None and self._loaded:
                # a watch or tick event answers nobody: what it wrote before the error may be
                # half of what it meant to, so it is refused (reported) and memory reloaded
                await self._refuse(event, e)
        except Exception as e:
            failure = failures.classify(e)
            if failure is Failure.DETERMINISTIC and self.parts is not None and self._loaded:
                await self._refuse(event, e)
            else:
                await self._give_up(event, e, failure)
        finally:
            took_ms = (self.shared.clock() - started) * 1000
            self.metrics.event_time_ms.labels(event_name(event)).observe(took_ms)
            await self._publish()
            self._schedule_executor_tick()
            self._schedule_healing_tick()
            self._rebalance.schedule()  # planned only while active
            self.handling = None

    async def _give_up(self, event: ControllerEvent, e: Exception, failure: Failure) -> None:
        """Resign: fenced (follow the winner), or the outcome of a write is unknown (give
        ``/controller`` up and run again after a backoff)."""
        if failure is Failure.FENCED:
            if isinstance(event, RequestEvent):
                fail_request(event, NotController())
            log.warning(
                "fencing check failed while handling %s: another controller was elected", event_name(event)
            )
            await self._resign("fenced")
            self.shared.queue.put(ControllerChanged())
            return
        if failure is Failure.DETERMINISTIC:
            log.error(
                "the cluster could not be loaded while handling %s: %s",
                event_name(event),
                failures.describe(e).reason,
                exc_info=e,
            )
        elif isinstance(e, ZkError):
            log.error("ZooKeeper error while handling %s: %s", event_name(event), e)
        else:
            log.exception("unexpected error while handling %s", event_name(event))
        if isinstance(event, RequestEvent):
            fail_request(
                event, NotController(f"the controller gave up this request on an error ({e}); retry it")
            )
        if self._term_started is not None and self.parts is not None:
            # a term that ended soon after it began does not reset the backoff: an input that
            # fails every new term the same way must not turn into a failover storm
            self._unstable = self.shared.clock() - self._term_started < STABLE_TERM_S
            if not self._unstable:
                self._reelect_backoff_s = REELECT_BACKOFF_MIN_S
        await self._move_controller(f"{type(e).__name__} while handling {event_name(event)}")
        self._schedule_reelect()

    async def _refuse(self, event: ControllerEvent, e: Exception) -> None:
        """A deterministic failure: answer the request (if any) with the reason, report the
        input, and reload the cluster from ZooKeeper, staying the active controller — within the
        reload budget (``runtime/reload_budget.py``): over it, the reload is deferred and nothing
        runs until it is done; an input that fails again after its reload is quarantined."""
        refusal = failures.describe(e)
        name = event_name(event)
        where = refusal.path or name
        log.warning(
            "%s refused: %s; the controller stays active and reloads the cluster from ZooKeeper",
            name,
            refusal.reason,
            exc_info=e if refusal.bug else None,
        )
        self.shared.refuse(where, f"{name} refused: {refusal.reason}", "event")
        if isinstance(event, RequestEvent):
            fail_request(
                event, EventRefused(f"the controller could not apply this request: {refusal.reason}")
            )
        if not self._reloads.refused(event, where, refusal.reason):
            return  # deferred: a ReloadDue comes when the budget allows
        try:
            await self._reload(f"{name} refused")
        except Exception as reload_error:
            await self._give_up(event, reload_error, failures.classify(reload_error))

    async def _publish(self) -> None:
        await self.publisher.publish(
            self.parts, self._epoch_seen, self._active_controller, self.shared.problems
        )

    async def _reload_due(self) -> None:
        if not self._reloads.due(self.parts is not None and self._won is not None):
            return
        try:
            await self._reload("a deferred reload")
        except Exception as e:
            await self._give_up(ReloadDue(), e, failures.classify(e))

    def _schedule_executor_tick(self) -> None:
        """While some batch has work, an ExecutorTick every ``batch_tick_s``."""
        if self._executor_timer.pending or self.parts is None or not self.parts.runner.has_work:
            return
        self._executor_timer.after(self._reloads.tick_delay_s("ExecutorTick", self.settings.batch_tick_s))

    def _schedule_healing_tick(self) -> None:
        """While self-healing follows a lost broker, a SelfHealingTick when it wants one."""
        if self._healing_timer.pending or self.parts is None:
            return
        due = self.parts.healing.due_in_s()
        if due is not None:
            self._healing_timer.after(self._reloads.tick_delay_s("SelfHealingTick", due))

    def _schedule_reelect(self) -> None:
        """Run for election again after the backoff; until then this instance does not take
        ``/controller`` even when it sees it free (another instance may)."""
        if self._reelect_timer.pending:
            return
        delay = self._reelect_backoff_s
        self._reelect_backoff_s = min(delay * 2, REELECT_BACKOFF_MAX_S)
        self._hold_until = self.shared.clock() + delay
        log.info("running for election again in %.1f s", delay)
        self._reelect_timer.after(delay)

    def _on_control_response(
        self, broker_id: int, request: ControlRequest, response: ControlResponse
    ) -> None:
        if isinstance(request, StopReplicaRequest) and any(p.delete_partition for p in request.partitions):
            self.shared.queue.put(StopReplicaConfirmed(broker_id, request, response))
        for err in response.partition_errors:
            if err.error_code != 0:
                log.debug("broker %d: %s-%d error %d", broker_id, err.topic, err.partition, err.error_code)

    def _on_session_state(self, state: SessionState) -> None:
        log.info("ZooKeeper session %s", state.value)
        if state is SessionState.EXPIRED:
            self.shared.queue.put_first(SessionExpired())

    # dispatch

    async def _handle(self, event: ControllerEvent) -> None:
        """Instance events run in any role; every other event needs the active parts (a watch
        event that arrives after a resignation is dropped, a request fails with NotController)."""
        match event:
            case Startup():
                for path in paths.PERSISTENT_PATHS:
                    await self.shared.zk.ensure_path(path)
                await self._elect_or_follow()
                return
            case ControllerChanged():
                await self._elect_or_follow()
                return
            case SessionExpired():
                self.shared.forget_watches()
                self._active_controller = None  # unknown until /controller is read again
                if self.active:
                    await self._resign("session expired")
                await self._elect_or_follow()
                return
            case ReloadDue():
                await self._reload_due()
                return
            case Reelect():
                self._hold_until = None
                if not self.active and not self._leaving:
                    await self._elect_or_follow()
                return
            case HandOverRequested(leaving=leaving, reply=hand_over_reply):
                successor = None
                try:
                    successor = await self._hand_over(leaving)
                finally:  # a failure (ZooKeeper away) still answers: no known successor
                    if not hand_over_reply.done():
                        hand_over_reply.set_result(successor)
                return
        parts = self.parts
        if parts is None:
            if isinstance(event, RequestEvent):
                fail_request(event, NotController())
            return
        await apply(self.shared, await dispatch(parts, event, self.shared, self._rebalance))

    # election

    async def _elect_or_follow(self) -> None:
        """Win the election or follow the winner, with a watch on ``/controller`` either way.
        A ``/controller`` owned by this very session while this instance is not active (an
        election whose reply was lost, or a resignation whose delete did not reach ZooKeeper) is
        deleted and the election run again."""
        shared = self.shared
        zk = shared.zk
        me = self.settings.controller_id
        while True:
            znode = await zk.get_or_none(
                paths.CONTROLLER, watch=shared.watch(paths.CONTROLLER, ControllerChanged())
            )
            if znode is not None:
                info = shared.decode_controller(znode.data)
                mine = znode.stat.ephemeral_owner == zk.session_id
                if self.active and mine and info is not None and info.broker_id == me:
                    break
                if self.active:
                    await self._resign("another controller was elected")
                    continue  # the resignation dropped the watch just armed: read again
                if mine:
                    log.warning(
                        "/controller is this session's own but the instance is not active: deleting it"
                    )
                    await controller_election.delete_own(zk, znode.stat.version)
                    continue
                self._active_controller = (
                    None if info is None else ActiveController(info.broker_id, info.http, info.kafka)
                )
                self._epoch_seen, _ = await controller_election.read_epoch(zk)
                break
            if self.active:
                await self._resign("/controller disappeared")
                continue
            if self._leaving:
                break  # handed over for a stop: follow whoever wins, never run again
            if self._hold_until is not None and self.shared.clock() < self._hold_until:
                log.info("/controller is free; this instance runs again once its backoff is over")
                self._reelect_timer.at(self._hold_until)  # unless one is pending already
                break
            won = await controller_election.try_elect(
                zk, me, self.http_url, self.kafka_address, now_ms=shared.wall_ms()
            )
            if won is not None:
                await self._become_active(won)
                break
        if not self._unstable:
            self._reelect_backoff_s = REELECT_BACKOFF_MIN_S

    async def _become_active(self, won: controller_election.Won) -> None:
        log.info("elected as the active controller with epoch %d", won.epoch)
        events = self.shared.records
        self._epoch_seen = won.epoch
        events.start_epoch(won.epoch)
        events.emit(ControllerElected(controller_id=self.settings.controller_id, epoch=won.epoch))
        self._won = won
        self._term_started = self.shared.clock()
        self._active_controller = ActiveController(
            self.settings.controller_id, self.http_url, self.kafka_address
        )
        self.metrics.active.set(1)
        self.metrics.controller_epoch.set(won.epoch)
        self.metrics.elections.inc()
        started = self.shared.clock()
        await self._load(won)
        self.last_failover_s = self.shared.clock() - started

    async def _load(self, won: controller_election.Won) -> None:
        """Build this term's parts and load the cluster into them (the failover load)."""
        self._loaded = False
        self.parts = active.build(self.shared, won, self.quota_metrics, self.place_lost_replicas)
        # Loading a large cluster allocates millions of long-lived objects; generational GC
        # passes over them again and again would dominate the failover. Pause it meanwhile.
        # Once loaded, they live as long as the term: with ``freeze_gc`` they are moved out of
        # the collector's reach (gc.freeze), so its full passes — seconds at 100k partitions, the
        # loop held meanwhile — no longer walk them; a new load unfreezes the previous one's first.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        if self.freeze_gc:
            gc.unfreeze()
        try:
            await failover.load(self.shared, self.parts)
            self._loaded = True
            self._rebalance.start_term()
            await self._publish()
        finally:
            if self.freeze_gc:
                gc.freeze()
            if gc_was_enabled:
                gc.enable()

    async def _reload(self, reason: str) -> None:
        """After a refused event: the same term (epoch, fence) with fresh parts loaded from
        ZooKeeper, as a new controller would load them, so nothing of the half-done event stays
        in memory. Watches still armed stay armed (their events are data-less re-reads); the
        brokers get full LeaderAndIsr requests again."""
        won = self._won
        assert won is not None and self.parts is not None
        log.warning("reloading the cluster from ZooKeeper (epoch %d): %s", won.epoch, reason)
        self.metrics.reloads.inc()
        self.shared.records.emit(
            ControllerReloaded(controller_id=self.settings.controller_id, epoch=won.epoch, reason=reason)
        )
        await self.channel.remove_all()
        await self._load(won)

    async def _resign(self, reason: str, *, fail_queued: bool = True) -> None:
        parts = self.parts
        if parts is None:
            return
        log.warning("resigning as the active controller: %s", reason)
        self.shared.records.emit(
            ControllerResigned(
                controller_id=self.settings.controller_id, epoch=parts.ctx.epoch, reason=reason
            )
        )
        self.parts = None
        self._loaded = False
        self._won = None
        self._reloads.cancel()  # the next term loads afresh
        self._active_controller = None
        # watches armed for the active role would keep enqueuing its events: drop them all (the
        # next load arms what it needs) and re-arm the one a standby needs
        self.shared.drop_watches()
        self.publisher.reset()
        self._rebalance.stop()
        self.metrics.active.set(0)
        self.metrics.resignations.labels(reason).inc()
        if fail_queued:
            for dropped in self.shared.queue.clear():
                if isinstance(dropped, RequestEvent):
                    fail_request(dropped, NotController())
        await self.channel.remove_all()

    async def _hand_over(self, leaving: bool) -> ActiveController | None:
        """A planned resignation: give ``/controller`` up (fenced) so a standby wins at once, wait
        a little for it, and let the queued requests be answered NOT_CONTROLLER naming it (they
        stay queued: the standby role answers them next, with the successor published). Without a
        successor, an instance that is not leaving runs for election again."""
        if leaving:
            self._leaving = True
        parts = self.parts
        if parts is None:
            return self._active_controller
        log.warning("handing the active role over%s", " (stopping)" if leaving else "")
        await self._resign("hand-over", fail_queued=False)
        self._hold_until = self.shared.clock() + HAND_OVER_WAIT_S  # let a standby win
        with contextlib.suppress(ZkError, NotController):  # gone already, or another won: not ours
            await controller_election.give_up(self.shared.zk, parts.writer.fence)
        successor = await self._await_successor(HAND_OVER_WAIT_S)
        if successor is None and not leaving:
            self._hold_until = None  # nobody else runs: this instance takes the role again
        await self._elect_or_follow()
        await self._publish()
        return self._active_controller if successor is not None else None

    async def _await_successor(self, timeout_s: float) -> ActiveController | None:
        """The instance that won ``/controller`` after this one gave it up (None after
        ``timeout_s``)."""
        zk = self.shared.zk
        clock = self.shared.clock
        deadline = clock() + timeout_s
        while True:
            changed = asyncio.Event()  # set by the watch when /controller is created or changes

            def fired(_: str, changed: asyncio.Event = changed) -> None:
                changed.set()

            znode = await zk.get_or_none(paths.CONTROLLER, watch=fired)
            if znode is not None and znode.stat.ephemeral_owner != zk.session_id:
                info = self.shared.decode_controller(znode.data)
                if info is not None:
                    return ActiveController(info.broker_id, info.http, info.kafka)
            remaining_s = deadline - clock()
            if remaining_s <= 0:
                return None
            with contextlib.suppress(TimeoutError):  # read once more at the deadline
                async with asyncio.timeout(remaining_s):
                    await changed.wait()

    async def _move_controller(self, reason: str) -> None:
        """Resign and, if ``/controller`` is still this session's, delete it (fenced) so any
        instance can win and load the cluster afresh. Best effort: when ZooKeeper cannot be
        reached the session expires and takes the ephemeral znode with it."""
        parts = self.parts
        await self._resign(reason)
        if parts is None:
            return
        with contextlib.suppress(ZkError, NotController):
            await controller_election.give_up(self.shared.zk, parts.writer.fence)

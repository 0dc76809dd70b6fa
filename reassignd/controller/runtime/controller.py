"""The controller instance: the single consumer of the event queue and what a failure costs.

Kafka's ZooKeeper-mode controller (KafkaController.scala) is the reference: one event at a time,
ZooKeeper written (fenced) before memory, watches re-armed by the handlers that re-read.

An instance is composed, not layered: ``Shared`` holds what outlives an active term (settings,
ZooKeeper client, queue, channel, record log, problems), ``Term`` the role and, while active,
the term's parts (``runtime/term.py``: elect, load, reload, resign, hand over), ``Publisher`` the
snapshot, and ``ControllerApi`` what the HTTP layer may ask. This module runs the loop, hands
the instance events (election, session, hand-over) to the term and every other event to
``dispatch``, and classifies a failure: an input refused and reported (the instance stays
active and reloads), or an outcome unknown (the instance resigns).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from reassignd.control.protocol import ControlRequest, ControlResponse, StopReplicaRequest
from reassignd.controller.api.controller_api import ControllerApi
from reassignd.controller.effects import failures
from reassignd.controller.effects.failures import Failure
from reassignd.controller.instance.channel import ControlChannel
from reassignd.controller.instance.event_queue import ControllerEventQueue
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
from reassignd.controller.model.snapshot import ClusterSnapshot
from reassignd.controller.runtime.active import ActiveParts
from reassignd.controller.runtime.apply import apply
from reassignd.controller.runtime.coalesce import coalesce
from reassignd.controller.runtime.dispatch import dispatch
from reassignd.controller.runtime.publisher import Publisher
from reassignd.controller.runtime.reloads import Reloads, fail_request
from reassignd.controller.runtime.stall_watch import StallMetrics, watch_the_loop
from reassignd.controller.runtime.term import Term
from reassignd.controller.settings import ControllerSettings
from reassignd.controller.state.context import ControllerContext
from reassignd.errors import EventRefused, NotController, ReassigndError
from reassignd.stream.record_log import RecordLog
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import ZkError
from reassignd.zk.values import SessionState

log = logging.getLogger(__name__)


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
        self.zk = zk  # the session: its state, the election, the fenced sends (parts read: shared.reads)
        self.metrics = metrics or ControllerMetrics()
        queue: ControllerEventQueue[ControllerEvent] = ControllerEventQueue(
            clock, on_size=self.metrics.event_queue_size.set
        )
        self.channel = ControlChannel(
            request_timeout_s=settings.control_request_timeout_s,
            backoff_ms=settings.control_retry_backoff_ms,
            backoff_max_ms=settings.control_retry_backoff_max_ms,
            metrics=self.metrics,
            on_response=self._on_control_response,
        )
        self.shared = Shared(settings, zk, self.metrics, clock, queue, self.channel, wall_clock)
        self.publisher = Publisher(settings.controller_id, self.metrics)
        self._rebalance = RebalanceTimer(settings, clock, queue)  # the auto leader rebalance checks
        self._reloads = Reloads(self.shared, queue, clock)  # the reload budget and quarantine
        # freeze_gc: the process is ours alone (gc.freeze() what a load built)
        self.term = Term(
            self.shared,
            zk,
            self.channel,
            self.publisher,
            self._reloads,
            self._rebalance,
            place_lost_replicas,
            freeze_gc=freeze_gc,
        )
        self.api = ControllerApi(
            self.shared,
            zk,
            lambda: self.publisher.snapshot,
            lambda: self.term.active,
            clock(),
            self.publisher.published,
        )
        self._executor_timer = Timer(clock, lambda: queue.put(ExecutorTick()))
        self._healing_timer = Timer(clock, lambda: queue.put(SelfHealingTick()))
        self.handling: str | None = None  # the event in hand (named in a stall's log line)

    # what the process and the benchmarks read (and the composition sets)

    @property
    def active(self) -> bool:
        return self.term.active

    @property
    def parts(self) -> ActiveParts | None:
        """The active term's parts (None while standby)."""
        return self.term.parts

    @property
    def ctx(self) -> ControllerContext | None:
        parts = self.term.parts
        return None if parts is None else parts.ctx

    @property
    def records(self) -> RecordLog:
        return self.shared.records

    @property
    def last_failover_s(self) -> float | None:
        """Election won -> ready, for the benchmark."""
        return self.term.last_failover_s

    @property
    def http_url(self) -> str | None:
        return self.term.http_url

    @http_url.setter
    def http_url(self, url: str | None) -> None:
        self.term.http_url = url  # what /controller names

    @property
    def kafka_address(self) -> str | None:
        return self.term.kafka_address

    @kafka_address.setter
    def kafka_address(self, address: str | None) -> None:
        self.term.kafka_address = address  # the Kafka listener's advertised host:port

    def snapshot(self) -> ClusterSnapshot:
        return self.publisher.snapshot

    # the event loop

    async def run(self) -> None:
        """The single consumer. Runs until cancelled."""
        queue = self.shared.queue
        self.zk.on_session_state(self._on_session_state)
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
            self.term.stop()
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
        term = self.term
        try:
            if not self._reloads.held(event, term.active):
                await self._handle(event)
        except NotController as e:  # a fencing check failed (never an answer inside the loop)
            await self._give_up(event, e, Failure.FENCED)
        except ReassigndError as e:
            if isinstance(event, RequestEvent):  # an answer: the request is refused as it asked for
                fail_request(event, e)
            elif term.active and term.loaded:
                # a watch or tick event answers nobody: what it wrote before the error may be
                # half of what it meant to, so it is refused (reported) and memory reloaded
                await self._refuse(event, e)
        except Exception as e:
            failure = failures.classify(e)
            if failure is Failure.DETERMINISTIC and term.active and term.loaded:
                await self._refuse(event, e)
            else:
                await self._give_up(event, e, failure)
        finally:
            took_ms = (self.shared.clock() - started) * 1000
            self.metrics.event_time_ms.labels(event_name(event)).observe(took_ms)
            await term.publish()
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
            await self.term.resign("fenced")
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
        await self.term.move(f"{type(e).__name__} while handling {event_name(event)}")

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
            await self.term.reload(f"{name} refused")
        except Exception as reload_error:
            await self._give_up(event, reload_error, failures.classify(reload_error))

    async def _reload_due(self) -> None:
        if not self._reloads.due(self.term.active and self.term.won is not None):
            return
        try:
            await self.term.reload("a deferred reload")
        except Exception as e:
            await self._give_up(ReloadDue(), e, failures.classify(e))

    def _schedule_executor_tick(self) -> None:
        """While some batch has work, an ExecutorTick every ``batch_tick_s``."""
        parts = self.term.parts
        if self._executor_timer.pending or parts is None or not parts.runner.has_work:
            return
        self._executor_timer.after(self._reloads.tick_delay_s("ExecutorTick", self.settings.batch_tick_s))

    def _schedule_healing_tick(self) -> None:
        """While self-healing follows a lost broker, a SelfHealingTick when it wants one."""
        parts = self.term.parts
        if self._healing_timer.pending or parts is None:
            return
        due = parts.healing.due_in_s()
        if due is not None:
            self._healing_timer.after(self._reloads.tick_delay_s("SelfHealingTick", due))

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
        """Instance events run in any role (the term's); every other event needs the active
        parts (a watch event that arrives after a resignation is dropped, a request fails with
        NotController)."""
        term = self.term
        match event:
            case Startup():
                await term.start()
                return
            case ControllerChanged():
                await term.elect_or_follow()
                return
            case SessionExpired():
                await term.session_expired()
                return
            case ReloadDue():
                await self._reload_due()
                return
            case Reelect():
                await term.reelect()
                return
            case HandOverRequested(leaving=leaving, reply=hand_over_reply):
                successor = None
                try:
                    successor = await term.hand_over(leaving)
                finally:  # a failure (ZooKeeper away) still answers: no known successor
                    if not hand_over_reply.done():
                        hand_over_reply.set_result(successor)
                return
        parts = term.parts
        if parts is None:
            if isinstance(event, RequestEvent):
                fail_request(event, NotController())
            return
        await apply(self.shared, await dispatch(parts, event, self.shared, self._rebalance))

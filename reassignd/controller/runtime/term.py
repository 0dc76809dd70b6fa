"""The instance's role and its active term: elect (or follow the winner), load, reload, resign,
hand over, and run for election again after a backoff.

``Term.parts`` is everything that exists only while this instance is the active controller
(``ActiveParts``, built at the election, dropped whole at the resignation); the loop
(``runtime/controller.py``) calls these from its single consumer, so none of them runs beside
an event.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging

from reassignd.contracts.records import ControllerElected, ControllerReloaded, ControllerResigned
from reassignd.controller.instance.channel import ControlChannel
from reassignd.controller.instance.events import ControllerChanged, Reelect, RequestEvent
from reassignd.controller.instance.shared import Shared
from reassignd.controller.instance.timer import Timer
from reassignd.controller.leadership.rebalance_timer import RebalanceTimer
from reassignd.controller.model.placement import PlaceLostReplicas
from reassignd.controller.model.snapshot import ActiveControllerAddress
from reassignd.controller.runtime import active, controller_election, failover
from reassignd.controller.runtime.active import ActiveParts
from reassignd.controller.runtime.publisher import Publisher
from reassignd.controller.runtime.reloads import Reloads, fail_request
from reassignd.errors import NotController
from reassignd.quotas.metrics import QuotaMetrics
from reassignd.zk import paths
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import ZkError

log = logging.getLogger(__name__)

REELECT_BACKOFF_MIN_S = 0.1
REELECT_BACKOFF_MAX_S = 2.0
# a term shorter than this that ends on a failure keeps the backoff growing
STABLE_TERM_S = 10.0
# a planned hand-over waits this long for a standby to win before going on without one (a
# standby wins within milliseconds of seeing /controller go; without one, this is a stop's cost)
HAND_OVER_WAIT_S = 1.0


class Term:
    """This instance's role (active with its parts, or standby following the winner)."""

    def __init__(
        self,
        shared: Shared,
        zk: ZkClient,
        channel: ControlChannel,
        publisher: Publisher,
        reloads: Reloads,
        rebalance: RebalanceTimer,
        place_lost_replicas: PlaceLostReplicas | None,
        *,
        freeze_gc: bool,
    ) -> None:
        self.shared = shared
        self.zk = zk  # the session: its election, its fenced sends (the parts read via shared.reads)
        self.channel = channel
        self.publisher = publisher
        self.reloads = reloads
        self.rebalance = rebalance
        self.place_lost_replicas = place_lost_replicas  # self-healing's placement (None: off)
        self.freeze_gc = freeze_gc  # the process is ours alone: gc.freeze() what a load built
        self.quota_metrics = QuotaMetrics(shared.metrics.registry)
        self.http_url: str | None = None
        self.kafka_address: str | None = None  # the Kafka listener's advertised host:port
        self.parts: ActiveParts | None = None  # while this instance is the active controller
        self.won: controller_election.Won | None = None  # this term's epoch and fence, while active
        self.loaded = False  # the failover load of this term completed
        self.last_failover_s: float | None = None  # election won -> ready, for the benchmark
        self._active_controller: ActiveControllerAddress | None = None
        self._epoch_seen = 0
        self._reelect_timer = Timer(shared.clock, lambda: shared.queue.put(Reelect()))
        # a /controller naming this instance but held by another session (this instance's own
        # before its session expired) goes when the server ends that session: read it again
        # then even if its deletion's watch never comes
        self._recheck_timer = Timer(shared.clock, self._recheck_due)
        self.rechecks = 0  # re-reads of such a /controller that came due, for tests and logs
        self._reelect_backoff_s = REELECT_BACKOFF_MIN_S
        self._term_started: float | None = None
        self._unstable = False  # the last term ended on a failure within STABLE_TERM_S
        self._hold_until: float | None = None  # no election attempt before this (backoff)
        self._leaving = False  # handed over for a stop: never run for election again

    @property
    def active(self) -> bool:
        return self.parts is not None

    @property
    def recheck_pending(self) -> bool:
        """A re-read of a ``/controller`` that names this instance under another session is due."""
        return self._recheck_timer.pending

    def _recheck_due(self) -> None:
        self.rechecks += 1
        self.shared.queue.put(ControllerChanged())

    def stop(self) -> None:
        """The instance stops: no run for election pending."""
        self._reelect_timer.cancel()
        self._recheck_timer.cancel()

    async def publish(self) -> None:
        await self.publisher.publish(
            self.parts, self._epoch_seen, self._active_controller, self.shared.problems
        )

    # the instance events

    async def start(self) -> None:
        for path in paths.PERSISTENT_PATHS:
            await self.zk.ensure_path(path)
        await self.elect_or_follow()

    async def session_expired(self) -> None:
        self.shared.forget_watches()
        self._active_controller = None  # unknown until /controller is read again
        if self.active:
            await self.resign("session expired")
        await self.elect_or_follow()

    async def reelect(self) -> None:
        self._hold_until = None
        if not self.active and not self._leaving:
            await self.elect_or_follow()

    # election

    async def elect_or_follow(self) -> None:
        """Win the election or follow the winner, with a watch on ``/controller`` either way.
        A ``/controller`` owned by this very session while this instance is not active (an
        election whose reply was lost, or a resignation whose delete did not reach ZooKeeper) is
        deleted and the election run again."""
        shared = self.shared
        zk = self.zk
        me = shared.settings.controller_id
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
                    await self.resign("another controller was elected")
                    continue  # the resignation dropped the watch just armed: read again
                if mine:
                    log.warning(
                        "/controller is this session's own but the instance is not active: deleting it"
                    )
                    await controller_election.delete_own(zk, znode.stat.version)
                    continue
                self._active_controller = (
                    None if info is None else ActiveControllerAddress(info.broker_id, info.http, info.kafka)
                )
                if info is not None and info.broker_id == me and not self._leaving:
                    log.info(
                        "/controller still names this instance under its former session; reading it again in %.1f s",
                        shared.settings.session_timeout_s,
                    )
                    self._recheck_timer.after(shared.settings.session_timeout_s)
                self._epoch_seen, _ = await controller_election.read_epoch(zk)
                break
            if self.active:
                await self.resign("/controller disappeared")
                continue
            if self._leaving:
                break  # handed over for a stop: follow whoever wins, never run again
            if self._hold_until is not None and shared.clock() < self._hold_until:
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
        shared = self.shared
        me = shared.settings.controller_id
        self._epoch_seen = won.epoch
        shared.records.start_epoch(won.epoch)
        shared.records.emit(ControllerElected(controller_id=me, epoch=won.epoch))
        self.won = won
        self._term_started = shared.clock()
        self._active_controller = ActiveControllerAddress(me, self.http_url, self.kafka_address)
        shared.metrics.active.set(1)
        shared.metrics.controller_epoch.set(won.epoch)
        shared.metrics.elections.inc()
        started = shared.clock()
        await self._load(won)
        self.last_failover_s = shared.clock() - started

    async def _load(self, won: controller_election.Won) -> None:
        """Build this term's parts and load the cluster into them (the failover load)."""
        self.loaded = False
        self.parts = active.build(self.shared, won, self.zk, self.quota_metrics, self.place_lost_replicas)
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
            self.loaded = True
            self.rebalance.start_term()
            await self.publish()
        finally:
            if self.freeze_gc:
                gc.freeze()
            if gc_was_enabled:
                gc.enable()

    async def reload(self, reason: str) -> None:
        """After a refused event: the same term (epoch, fence) with fresh parts loaded from
        ZooKeeper, as a new controller would load them, so nothing of the half-done event stays
        in memory. Watches still armed stay armed (their events are data-less re-reads); the
        brokers get full LeaderAndIsr requests again."""
        won = self.won
        assert won is not None and self.parts is not None
        log.warning("reloading the cluster from ZooKeeper (epoch %d): %s", won.epoch, reason)
        self.shared.metrics.reloads.inc()
        self.shared.records.emit(
            ControllerReloaded(
                controller_id=self.shared.settings.controller_id, epoch=won.epoch, reason=reason
            )
        )
        await self.channel.remove_all()
        await self._load(won)

    async def resign(self, reason: str, *, fail_queued: bool = True) -> None:
        parts = self.parts
        if parts is None:
            return
        shared = self.shared
        log.warning("resigning as the active controller: %s", reason)
        shared.records.emit(
            ControllerResigned(
                controller_id=shared.settings.controller_id, epoch=parts.ctx.epoch, reason=reason
            )
        )
        self.parts = None
        self.loaded = False
        self.won = None
        self.reloads.cancel()  # the next term loads afresh
        self._active_controller = None
        # watches armed for the active role would keep enqueuing its events: drop them all (the
        # next load arms what it needs) and re-arm the one a standby needs
        self.zk.drop_watches()
        shared.forget_watches()
        self.publisher.reset()
        self.rebalance.stop()
        shared.metrics.active.set(0)
        shared.metrics.resignations.labels(reason).inc()
        if fail_queued:
            for dropped in shared.queue.clear():
                if isinstance(dropped, RequestEvent):
                    fail_request(dropped, NotController())
        await self.channel.remove_all()

    # leaving the role

    async def hand_over(self, leaving: bool) -> ActiveControllerAddress | None:
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
        await self.resign("hand-over", fail_queued=False)
        self._hold_until = self.shared.clock() + HAND_OVER_WAIT_S  # let a standby win
        with contextlib.suppress(ZkError, NotController):  # gone already, or another won: not ours
            await controller_election.give_up(self.zk, parts.writer.fence)
        successor = await self._await_successor(HAND_OVER_WAIT_S)
        if successor is None and not leaving:
            self._hold_until = None  # nobody else runs: this instance takes the role again
        await self.elect_or_follow()
        await self.publish()
        return self._active_controller if successor is not None else None

    async def _await_successor(self, timeout_s: float) -> ActiveControllerAddress | None:
        """The instance that won ``/controller`` after this one gave it up (None after
        ``timeout_s``): read again each time the znode's watch fires, and once at the end."""
        zk = self.zk
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
                    return ActiveControllerAddress(info.broker_id, info.http, info.kafka)
            remaining_s = deadline - clock()
            if remaining_s <= 0:
                return None
            with contextlib.suppress(TimeoutError):  # read once more at the deadline
                async with asyncio.timeout(remaining_s):
                    await changed.wait()

    async def move(self, reason: str) -> None:
        """After a failure whose outcome is unknown: resign and, if ``/controller`` is still this
        session's, delete it (fenced) so any instance can win and load the cluster afresh; then
        run for election again after the backoff. Best effort: when ZooKeeper cannot be reached
        the session expires and takes the ephemeral znode with it."""
        if self._term_started is not None and self.parts is not None:
            # a term that ended soon after it began does not reset the backoff: an input that
            # fails every new term the same way must not turn into a failover storm
            self._unstable = self.shared.clock() - self._term_started < STABLE_TERM_S
            if not self._unstable:
                self._reelect_backoff_s = REELECT_BACKOFF_MIN_S
        parts = self.parts
        await self.resign(reason)
        if parts is not None:
            with contextlib.suppress(ZkError, NotController):
                await controller_election.give_up(self.zk, parts.writer.fence)
        self._schedule_reelect()

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

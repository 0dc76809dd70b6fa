"""ISR changes as the partition leader, the ZooKeeper part (Kafka before AlterPartition).

Each change is a conditional setData of the partition state znode at the version the leader knows
(from its last LeaderAndIsr or its own last write), keeping the partition's controller epoch. A
version conflict is never overwritten: the znode is re-read; the leader's own write (its reply
lost) counts as written; a state of a newer leader epoch is the controller's, and the leader
changes nothing more in that ISR until the controller's LeaderAndIsr for it arrives (Kafka: a stale
cached zkVersion skips updates until then); a state of the same leader epoch (not the
controller's: it always bumps the epoch) is adopted and the change decided again from it. The changes of one review go as multis of up to
:data:`WRITES_PER_MULTI` of them (one ZooKeeper transaction each, many in flight): a multi is all
or nothing, so the one whose version conflicts is taken out (re-read, as a single write's
conflict is) and the rest written again. Successful changes are announced to the controller with
one ``/isr_change_notification/isr_change_`` sequential znode per linger window.

Which partitions to review, and when, is isr_plan.py's: those something happened to
(``mgr.isr_candidates``), and those whose ISR could shrink for lag by now (the schedule).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from reassignd.broker.isr_plan import IsrSchedule, IsrUpdate, isr_conflicted, isr_written, review_isr
from reassignd.broker.settings import BrokerSettings
from reassignd.broker.state import ReplicaManager
from reassignd.topic_partition import TopicPartition
from reassignd.zk import paths
from reassignd.zk.admin_codec import encode_isr_change
from reassignd.zk.client import ZkClient
from reassignd.zk.codec import CodecError, decode_partition_state, encode_partition_state
from reassignd.zk.errors import BadVersionError, MultiFailedError, NoNodeError, ZkError
from reassignd.zk.values import SetData, Stat

RETRY_S = 0.5
WRITES_PER_MULTI = 100


class IsrManager:
    def __init__(
        self, zk: ZkClient, mgr: ReplicaManager, settings: BrokerSettings, clock: Callable[[], float]
    ) -> None:
        self._zk = zk
        self._mgr = mgr
        self._settings = settings
        self._clock = clock
        self._log = logging.getLogger(f"reassignd.broker.{settings.broker_id}.isr")
        self._wake = asyncio.Event()
        self._schedule = IsrSchedule()
        self._in_flight: set[TopicPartition] = set()
        self._changed: set[TopicPartition] = set()  # written, not yet announced
        self._failed: list[tuple[TopicPartition, ZkError]] = []  # in the current batch
        self._announce = asyncio.Event()
        self.notifications_written = 0

    def nudge(self) -> None:
        """Partitions may need a review (``mgr.isr_candidates``)."""
        self._wake.set()

    async def run(self) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self._announce_loop(), name=f"broker-{self._settings.broker_id}-isr-notify")
            tg.create_task(self._change_loop(), name=f"broker-{self._settings.broker_id}-isr-change")

    async def _change_loop(self) -> None:
        while True:
            if not self._mgr.isr_candidates and not self._wake.is_set():
                next_s = self._schedule.next_s()
                try:
                    async with asyncio.timeout(None if next_s is None else max(0.0, next_s - self._clock())):
                        await self._wake.wait()
                except TimeoutError:
                    pass
            self._wake.clear()
            now = self._clock()
            tps = set(self._mgr.isr_candidates)
            self._mgr.isr_candidates.clear()
            tps.update(self._schedule.pop_due(now))
            review = review_isr(
                self._mgr, tps, now, self._settings.replica_lag_time_max_s, frozenset(self._in_flight)
            )
            for tp, when in review.deadlines.items():
                self._schedule.at(tp, when)
            if review.updates:
                await self._write_all(review.updates)

    async def _write_all(self, updates: list[IsrUpdate]) -> None:
        """Multis of up to WRITES_PER_MULTI conditional writes, all in flight at once."""
        self._in_flight.update(u.tp for u in updates)
        written: list[IsrUpdate] = []
        try:
            async with asyncio.TaskGroup() as tg:
                for i in range(0, len(updates), WRITES_PER_MULTI):
                    tg.create_task(
                        self._write_multi(updates[i : i + WRITES_PER_MULTI], written),
                        name=f"broker-{self._settings.broker_id}-isr-{i // WRITES_PER_MULTI}",
                    )
        finally:
            self._in_flight.difference_update(u.tp for u in updates)
        if written:  # one line per batch (per partition at debug level)
            first = written[0]
            self._log.info(
                "ISR changed for %d partition(s), e.g. %s-%d: %s", len(written), *first.tp, list(first.isr)
            )
        if self._failed:
            (tp, error), count = self._failed[0], len(self._failed)
            self._failed.clear()
            self._log.warning(
                "ISR write failed for %d partition(s), e.g. %s-%d (%s); will retry", count, *tp, error
            )

    async def _write_multi(self, updates: list[IsrUpdate], written: list[IsrUpdate]) -> None:
        """One multi for ``updates``; the op that fails it is handled alone and the others are
        written again (nothing of a failed multi was applied)."""
        todo = list(updates)
        while todo:
            ops = [
                SetData(paths.partition_state(*u.tp), encode_partition_state(u.state), u.partition_epoch)
                for u in todo
            ]
            try:
                stats = await self._zk.multi(ops)
            except MultiFailedError as e:
                await self._failed_write(todo.pop(e.index), e.cause)
                continue
            except ZkError as e:  # outcome unknown: each one is retried (a conflict then re-reads)
                for u in todo:
                    await self._failed_write(u, e)
                return
            for u, stat in zip(todo, stats, strict=True):
                assert isinstance(stat, Stat)
                self._written(u, stat.version, written)
            return

    async def _failed_write(self, update: IsrUpdate, error: ZkError) -> None:
        path = paths.partition_state(*update.tp)
        if isinstance(error, BadVersionError):
            await self._reread(update, path)
        elif isinstance(error, NoNodeError):
            isr_conflicted(self._mgr, update, None, -1)
            self._log.warning("%s-%d: state znode is gone; leaving the ISR alone", *update.tp)
        else:
            self._log.debug("%s-%d: ISR write failed (%s); will retry", *update.tp, error)
            self._failed.append((update.tp, error))
            self._schedule.at(update.tp, self._clock() + RETRY_S)

    def _written(self, update: IsrUpdate, version: int, written: list[IsrUpdate]) -> None:
        isr_written(self._mgr, update, version)
        self._log.debug("%s-%d: ISR is now %s (partition epoch %d)", *update.tp, list(update.isr), version)
        written.append(update)
        self._changed.add(update.tp)
        self._announce.set()

    async def _reread(self, update: IsrUpdate, path: str) -> None:
        try:
            znode = await self._zk.get_or_none(path)
            state = None if znode is None else decode_partition_state(znode.data)
        except (ZkError, CodecError) as e:
            self._log.warning("%s-%d: re-reading the state znode failed (%s)", *update.tp, e)
            self._schedule.at(update.tp, self._clock() + RETRY_S)
            return
        version = -1 if znode is None else znode.stat.version
        if state == update.state:
            # our own write, applied although its reply was lost (Kafka's checker compares the
            # data too): the controller must still hear of it
            self._changed.add(update.tp)
            self._announce.set()
        if isr_conflicted(self._mgr, update, state, version):
            self._log.info("%s-%d: cached partition epoch was stale; retrying at %d", *update.tp, version)
            self._mgr.isr_candidates.add(update.tp)
            self._wake.set()
        else:
            leader, epoch = (-1, -1) if state is None else (state.leader, state.leader_epoch)
            self._log.info(
                "%s-%d: the controller wrote the partition state (leader %d, leader epoch %d) over "
                "our epoch %d; not overwriting it, waiting for its LeaderAndIsr",
                *update.tp,
                leader,
                epoch,
                update.leader_epoch,
            )

    async def _announce_loop(self) -> None:
        while True:
            await self._announce.wait()
            await asyncio.sleep(self._settings.isr_linger_s)
            self._announce.clear()
            batch = tuple(sorted(self._changed))
            self._changed.clear()
            if not batch:
                continue
            try:
                await self._zk.create(
                    paths.ISR_CHANGE_PREFIX, encode_isr_change(batch), sequential=True, make_parents=True
                )
                self.notifications_written += 1
            except ZkError as e:
                self._log.warning("writing an ISR change notification failed (%s); retrying", e)
                self._changed.update(batch)
                await asyncio.sleep(RETRY_S)
                self._announce.set()

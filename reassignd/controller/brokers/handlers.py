"""Brokers appearing, bouncing and disappearing (Kafka's onBrokerStartup and onBrokerFailure)."""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable

from reassignd.concurrency import pace
from reassignd.contracts.records import BrokerLost, BrokerRegistered
from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.instance.events import BrokerModified, BrokersChanged
from reassignd.controller.instance.shared import Shared
from reassignd.controller.partitions.partition_logic import after_broker_failure
from reassignd.controller.partitions.partition_state_machine import PartitionStateMachine
from reassignd.controller.reads import loader
from reassignd.controller.reads.pipeline import for_each
from reassignd.controller.reassignment.algorithm import Reassigner
from reassignd.controller.state.context import ControllerContext
from reassignd.controller.topics.deletion import TopicDeleter
from reassignd.topic_partition import TopicPartition
from reassignd.zk import codec, paths

log = logging.getLogger(__name__)

_SLICE = 500  # partitions between two looks at the loop's pace


def _after_failure(
    replicas: tuple[int, ...], state: codec.PartitionState, live: Collection[int], epoch: int, unclean: bool
) -> codec.PartitionState | None:
    return after_broker_failure(replicas, state, live, epoch, unclean=unclean)


class BrokerEvents:
    def __init__(
        self,
        shared: Shared,
        ctx: ControllerContext,
        elections: PartitionStateMachine,
        reassigner: Reassigner,
        deleter: TopicDeleter,
    ) -> None:
        self.shared = shared
        self.ctx = ctx
        self.elections = elections
        self.reassigner = reassigner
        self.deleter = deleter

    async def _read_brokers(self, ids: Iterable[int]) -> dict[int, tuple[codec.BrokerRegistration, int]]:
        shared = self.shared
        found: dict[int, tuple[codec.BrokerRegistration, int]] = {}

        async def one(b: int) -> None:
            path = paths.broker(b)
            read = await loader.read_broker(
                shared.reads, b, shared.watch(path, BrokerModified(b)), shared.report
            )
            if read is not None:
                found[b] = read

        await for_each(ids, one)  # structured: a failed read stops the others, none outlives the event
        return {b: found[b] for b in sorted(found)}

    async def _registered(self, out: EventOutputs) -> dict[int, tuple[codec.BrokerRegistration, int]]:
        shared = self.shared
        ids = loader.parse_ids(
            await out.writes.children(paths.BROKER_IDS, shared.watch(paths.BROKER_IDS, BrokersChanged())),
            paths.BROKER_IDS,
            shared.report,
        )
        return await self._read_brokers(ids)

    async def load(self, out: EventOutputs) -> None:
        """At failover: every registered broker is live."""
        for reg, epoch in (await self._registered(out)).values():
            self._add_live_broker(reg, epoch)

    def _add_live_broker(self, reg: codec.BrokerRegistration, epoch: int) -> None:
        self.ctx.add_broker(reg, epoch)
        url = reg.control_url
        if url is None:
            log.warning(
                "broker %d registered no CONTROL endpoint; it cannot receive control requests", reg.broker_id
            )
        else:
            self.shared.channel.add_broker(reg.broker_id, url)

    async def on_brokers_changed(self, out: EventOutputs) -> bool:
        """The brokers that failed, then those that started, their requests in ``out``. True
        when some started: they resumed reassignments, which the caller finishes
        (``runtime.finish``)."""
        ctx, shared = self.ctx, self.shared
        current = await self._registered(out)
        known = dict(ctx.broker_epochs)
        dead = set(known) - set(current)
        new = set(current) - set(known)
        bounced = {b for b in set(current) & set(known) if current[b][1] > known[b]}
        if not (dead or new or bounced):
            return False
        log.info("brokers changed: new %s, dead %s, bounced %s", sorted(new), sorted(dead), sorted(bounced))
        for b in sorted(dead | bounced):
            shared.records.emit(BrokerLost(broker_id=b, bounced=b in bounced))
        for b in sorted(new | bounced):
            shared.records.emit(
                BrokerRegistered(broker_id=b, rack=current[b][0].rack, broker_epoch=current[b][1])
            )
        for b in dead | bounced:
            ctx.remove_broker(b)
            await shared.channel.remove_broker(b)
        if dead | bounced:
            await self.on_broker_failure(dead | bounced, out)
        for b in new | bounced:
            reg, epoch = current[b]
            self._add_live_broker(reg, epoch)
        if new | bounced:
            await self.on_broker_startup(new | bounced, out)
            return True
        return False

    async def on_broker_modified(self, broker_id: int, out: EventOutputs) -> None:
        ctx = self.ctx
        found = await self._read_brokers([broker_id])
        if broker_id not in found or broker_id not in ctx.brokers:
            return  # gone or new: BrokersChanged handles it
        reg, epoch = found[broker_id]
        if epoch != ctx.broker_epochs[broker_id]:
            return  # bounced: BrokersChanged handles it
        if reg != ctx.brokers[broker_id]:
            self._add_live_broker(reg, epoch)
            out.requests.add_update_metadata([])

    async def on_broker_failure(self, dead: Collection[int], out: EventOutputs) -> None:
        """Kafka's onBrokerFailure: replicas on dead brokers go offline; partitions they led
        elect a new leader (unclean when no ISR member lives and the topic allows it); dead
        replicas leave the ISR (never emptying it). The partitions they led go first, in a
        batch of their own (Kafka's offline partitions, then its offline replicas): their new
        leaders wait for no ISR shrink elsewhere. Both come from the per-broker index, so the
        event costs what the dead brokers hosted."""
        dead_set = set(dead)
        index = self.ctx.index
        hosted: set[TopicPartition] = set().union(*(index.hosted_by(b) for b in dead_set))
        led = hosted.intersection(set().union(*(index.led_by(b) for b in dead_set)))
        await self._replicas_offline(sorted(led), dead_set, out)
        await self._replicas_offline(sorted(hosted - led), dead_set, out)

    async def _replicas_offline(
        self, hosted: list[TopicPartition], dead: set[int], out: EventOutputs
    ) -> None:
        """New leaders and ISRs for ``hosted`` without the ``dead`` brokers, and their requests."""
        if not hosted:
            return
        ctx = self.ctx
        # decided from ZooKeeper, not the cache: a leader's agent may have added a dead broker to
        # an ISR that the controller has not read yet (Kafka reads them too)
        states, _ = await loader.read_states(self.shared.reads, hosted, self.shared.report)
        for i, (tp, fresh) in enumerate(states.items()):
            if i % _SLICE == 0:
                await pace()  # thousands of partitions: the loop is not held meanwhile
            ctx.set_state(tp, fresh)
        affected = []
        for i, tp in enumerate(hosted):
            if i % _SLICE == 0:
                await pace()
            li = ctx.states.get(tp)
            if li is not None and (li.state.leader in dead or not dead.isdisjoint(li.state.isr)):
                affected.append(tp)
        changed = await self.elections.elect(affected, _after_failure, out)
        broker_requests = self.elections.broker_requests()
        for i, tp in enumerate(changed):
            if i % _SLICE == 0:
                await pace()
            broker_requests.add_leader_and_isr(self.elections.replicas(tp), tp)
        broker_requests.add_update_metadata(changed)
        await broker_requests.prepare()  # the states encoded in slices before the batch is built
        out.add(broker_requests)

    async def on_broker_startup(self, started: Collection[int], out: EventOutputs) -> None:
        """Kafka's onBrokerStartup: full metadata to the new brokers, the new live-broker list to
        the others, LeaderAndIsr for the new brokers' replicas, then offline partitions online and
        the reassignments waiting for these brokers resumed, into ``out`` (the caller finishes
        it: ``runtime.finish``)."""
        ctx = self.ctx
        out.seal()  # what came before (the failures) goes out first, in a batch of its own
        broker_requests = out.requests
        broker_requests.add_full_update_metadata(brokers=started)
        broker_requests.add_update_metadata([], brokers=set(ctx.brokers) - set(started))
        for b in started:  # full LeaderAndIsr: a bounced broker deletes its stray replicas
            broker_requests.add_full_leader_and_isr(b)
        # partitions without a live leader: from the index, not a scan of every partition
        needs_online = sorted(ctx.index.without_live_leader(ctx.brokers))
        await self.elections.online_partitions(needs_online, out, broker_requests)
        await self.reassigner.resume(self.reassigner.partitions_targeting(started), out)
        self.deleter.on_broker_started(set(started), broker_requests)

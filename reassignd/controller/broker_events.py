"""Event handlers for brokers appearing, bouncing and disappearing (Kafka's onBrokerStartup and
onBrokerFailure).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable

from reassignd.controller import loader
from reassignd.controller.context import ControllerContext
from reassignd.controller.events import (
    BrokerModified,
    BrokersChanged,
)
from reassignd.controller.partition_events import PartitionEvents
from reassignd.controller.partition_logic import after_broker_failure
from reassignd.controller.pipeline import for_each
from reassignd.controller.request_batch import ControlBatch
from reassignd.zk import codec, paths

log = logging.getLogger(__name__)


class BrokerEvents(PartitionEvents):
    """Event handlers for brokers appearing, bouncing and disappearing (Kafka's onBrokerStartup and"""

    async def _read_brokers(self, ids: Iterable[int]) -> dict[int, tuple[codec.BrokerRegistration, int]]:
        found: dict[int, tuple[codec.BrokerRegistration, int]] = {}

        async def one(b: int) -> None:
            path = paths.broker(b)
            read = await loader.read_broker(self.zk, b, self._watch(path, BrokerModified(b)), self._report)
            if read is not None:
                found[b] = read

        await for_each(ids, one)  # structured: a failed read stops the others, none outlives the event
        return {b: found[b] for b in sorted(found)}

    async def _load_brokers(self) -> None:
        ctx = self._require_ctx()
        ids = loader.parse_ids(
            await self._children(paths.BROKER_IDS, BrokersChanged()), paths.BROKER_IDS, self._report
        )
        for reg, epoch in (await self._read_brokers(ids)).values():
            self._add_live_broker(ctx, reg, epoch)

    def _add_live_broker(self, ctx: ControllerContext, reg: codec.BrokerRegistration, epoch: int) -> None:
        ctx.add_broker(reg, epoch)
        url = reg.control_url
        if url is None:
            log.warning(
                "broker %d registered no CONTROL endpoint; it cannot receive control requests", reg.broker_id
            )
        else:
            self.channel.add_broker(reg.broker_id, url)

    async def _on_brokers_changed(self) -> None:
        ctx = self._require_ctx()
        ids = loader.parse_ids(
            await self._children(paths.BROKER_IDS, BrokersChanged()), paths.BROKER_IDS, self._report
        )
        current = await self._read_brokers(ids)
        known = dict(ctx.broker_epochs)
        dead = set(known) - set(current)
        new = set(current) - set(known)
        bounced = {b for b in set(current) & set(known) if current[b][1] > known[b]}
        if not (dead or new or bounced):
            return
        log.info("brokers changed: new %s, dead %s, bounced %s", sorted(new), sorted(dead), sorted(bounced))
        for b in sorted(dead | bounced):
            self.events.emit("broker_lost", broker_id=b, bounced=b in bounced)
        for b in sorted(new | bounced):
            self.events.emit(
                "broker_registered", broker_id=b, rack=current[b][0].rack, broker_epoch=current[b][1]
            )
        for b in dead | bounced:
            ctx.remove_broker(b)
            await self.channel.remove_broker(b)
        if dead | bounced:
            await self._on_broker_failure(dead | bounced)
        for b in new | bounced:
            reg, epoch = current[b]
            self._add_live_broker(ctx, reg, epoch)
        if new | bounced:
            await self._on_broker_startup(new | bounced)

    async def _on_broker_modified(self, broker_id: int) -> None:
        ctx = self._require_ctx()
        found = await self._read_brokers([broker_id])
        if broker_id not in found or broker_id not in ctx.brokers:
            return  # gone or new: BrokersChanged handles it
        reg, epoch = found[broker_id]
        if epoch != ctx.broker_epochs[broker_id]:
            return  # bounced: BrokersChanged handles it
        if reg != ctx.brokers[broker_id]:
            self._add_live_broker(ctx, reg, epoch)
            batch = ControlBatch(ctx, self.settings.controller_id)
            batch.add_update_metadata([])
            self._send(batch)

    async def _on_broker_failure(self, dead: Collection[int]) -> None:
        """Kafka's onBrokerFailure: replicas on dead brokers go offline; partitions they led
        elect a new leader (unclean when no ISR member lives and the topic allows it); dead
        replicas leave the ISR (never emptying it)."""
        ctx = self._require_ctx()
        # decided from ZooKeeper, not the cache: a leader's agent may have added a dead broker to
        # an ISR that the controller has not read yet (Kafka reads them too)
        dead_set = set(dead)
        hosted = [
            (t, p)
            for t, parts in ctx.assignments.items()
            for p, a in parts.items()
            if not dead_set.isdisjoint(a.replicas)
        ]
        states, _ = await loader.read_states(self.zk, hosted, self._report)
        for tp, fresh in states.items():
            ctx.set_state(tp, fresh)
        affected = [
            tp
            for tp in hosted
            if (li := ctx.states.get(tp)) is not None
            and (li.state.leader in dead_set or not dead_set.isdisjoint(li.state.isr))
        ]
        changed = await self._elect(
            affected,
            lambda replicas, state, live, epoch, unclean: after_broker_failure(
                replicas, state, live, epoch, unclean=unclean
            ),
        )
        batch = ControlBatch(ctx, self.settings.controller_id)
        for tp in changed:
            batch.add_leader_and_isr(self._replicas(tp), tp)
        batch.add_update_metadata(changed)
        self._send(batch)

    async def _on_broker_startup(self, started: Collection[int]) -> None:
        """Kafka's onBrokerStartup: full metadata to the new brokers, the new live-broker list to
        the others, LeaderAndIsr for the new brokers' replicas, then offline partitions online."""
        ctx = self._require_ctx()
        batch = ControlBatch(ctx, self.settings.controller_id)
        batch.add_update_metadata(ctx.states, brokers=started)
        batch.add_update_metadata([], brokers=set(ctx.brokers) - set(started))
        for b in started:  # full LeaderAndIsr: a bounced broker deletes its stray replicas
            batch.add_full_leader_and_isr(b)
        live = ctx.live_broker_ids
        needs_online = [
            tp
            for tp in ctx.all_partitions()
            if (li := ctx.states.get(tp)) is None or li.state.leader not in live
        ]
        await self._online_partitions(needs_online, batch)
        reassigner = self._reassigner()
        await reassigner.resume(reassigner.partitions_targeting(started), batch)
        self._deleter().on_broker_started(set(started), batch)
        await self._after_reassignments(batch)

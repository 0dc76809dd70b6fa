"""Kafka's partition state machine on the active controller: new partitions brought online,
leaders elected for offline ones (clean, or unclean when the topic allows it).

Each election is decided by a pure function of ``partition_logic`` over the cached state and
written through the event's fenced write gateway (``out.writes.write_states``: a fenced write at
the known partition epoch, then the cache); a partition whose znode changed under us is re-read
and decided again.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Callable, Collection, Iterable

from reassignd.concurrency import pace
from reassignd.controller.effects.broker_requests import BrokerRequestBatch
from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.instance.shared import Shared
from reassignd.controller.partitions.partition_logic import (
    initial_state,
    is_unclean_election,
    needs_unclean_election,
    offline_election,
)
from reassignd.controller.reads.topic_configs import (
    TopicConfigs,
    read_topic_configs,
    topics_of_entities,
)
from reassignd.controller.state.context import ControllerContext, LeaderIsr
from reassignd.controller.state.wire_states import WireStates
from reassignd.topic_partition import TopicPartition
from reassignd.zk import codec

log = logging.getLogger(__name__)

# (replicas, state, live brokers, controller epoch, unclean allowed) -> the new state, or None
Election = Callable[
    [tuple[int, ...], codec.PartitionState, Collection[int], int, bool], codec.PartitionState | None
]


def _offline(
    replicas: tuple[int, ...], state: codec.PartitionState, live: Collection[int], epoch: int, unclean: bool
) -> codec.PartitionState | None:
    return offline_election(replicas, state, live, epoch, unclean=unclean)


class PartitionStateMachine:
    def __init__(self, shared: Shared, ctx: ControllerContext, wire: WireStates) -> None:
        self.shared = shared
        self.ctx = ctx
        self.wire = wire

    def broker_requests(self) -> BrokerRequestBatch:
        return BrokerRequestBatch(self.ctx, self.shared.settings.controller_id, wire=self.wire)

    def replicas(self, tp: TopicPartition) -> tuple[int, ...]:
        a = self.ctx.assignment(tp)
        return () if a is None else a.replicas

    async def online_partitions(
        self,
        tps: Iterable[TopicPartition],
        out: EventOutputs,
        broker_requests: BrokerRequestBatch | None = None,
    ) -> None:
        """Kafka's triggerOnlinePartitionStateChange for ``tps``: create the state of new
        partitions (leader = first live replica), elect a leader for offline ones. The requests
        go to ``broker_requests`` (a batch of the caller's own), else to the event's."""
        ctx = self.ctx
        if broker_requests is None:
            broker_requests = out.requests
        live = ctx.live_broker_ids
        new_by_topic: dict[str, dict[int, codec.PartitionState]] = collections.defaultdict(dict)
        offline: list[TopicPartition] = []
        for tp in tps:
            a = ctx.assignment(tp)
            if a is None or tp in ctx.malformed_states:
                continue
            li = ctx.states.get(tp)
            if li is None:
                state = initial_state(a.replicas, live, ctx.epoch)
                if state is None:
                    log.warning("partition %s-%d has no live replica; it stays offline", *tp)
                else:
                    new_by_topic[tp[0]][tp[1]] = state
            elif li.state.leader not in live:
                offline.append(tp)
        for topic, new_states in new_by_topic.items():
            for p in await out.writes.create_states(topic, new_states):
                a = ctx.assignment((topic, p))
                assert a is not None
                broker_requests.add_leader_and_isr(a.replicas, (topic, p), is_new=True)
                broker_requests.add_update_metadata([(topic, p)])
        for tp in await self.elect(offline, _offline, out):
            broker_requests.add_leader_and_isr(self.replicas(tp), tp)
            broker_requests.add_update_metadata([tp])

    async def elect(
        self, tps: Collection[TopicPartition], election: Election, out: EventOutputs
    ) -> list[TopicPartition]:
        """Write the states ``election`` decides for ``tps`` (pipelined, fenced) and return the
        partitions that changed. Unclean elections follow each topic's
        ``unclean.leader.election.enable`` (or the broker default), read from ZooKeeper only for
        the topics of partitions that no clean election can help; each one is logged and counted."""
        ctx = self.ctx
        live = ctx.live_broker_ids
        needy: set[str] = set()
        for i, tp in enumerate(tps):
            if i % 500 == 0:
                await pace()  # thousands of partitions: the loop is not held meanwhile
            li = ctx.states.get(tp)
            if li is not None and needs_unclean_election(self.replicas(tp), li.state, live):
                needy.add(tp[0])
        configs = (
            await read_topic_configs(self.shared.reads, needy, self.shared.report)
            if needy
            else TopicConfigs()
        )
        unclean: dict[TopicPartition, tuple[codec.PartitionState, codec.PartitionState]] = {}

        def decide(tp: TopicPartition, li: LeaderIsr) -> codec.PartitionState | None:
            # a topic read above allows it or not; one whose partition needs it only after a
            # re-read (an agent's write raced ours) waits for the next trigger, as Kafka's retry
            allowed = tp[0] in needy and configs.unclean_leader_election(tp[0])
            new = election(self.replicas(tp), li.state, live, ctx.epoch, allowed)
            if new is not None and is_unclean_election(li.state, new):
                unclean[tp] = (li.state, new)
            else:
                unclean.pop(tp, None)
            return new

        changed = await out.writes.write_states(tps, decide)
        for tp in changed:
            if tp in unclean:
                before, after = unclean[tp]
                self.shared.metrics.unclean_leader_elections.inc()
                log.warning(
                    "unclean leader election for %s-%d: broker %d leads although it was not in the ISR %s "
                    "(no in-sync replica is alive); data not replicated to it may be lost",
                    tp[0],
                    tp[1],
                    after.leader,
                    list(before.isr),
                )
        return changed

    async def on_configs_changed(self, entity_paths: Iterable[str], out: EventOutputs) -> None:
        """Config change notifications: when a topic's config or the broker default changed, its
        partitions without a leader get an election, which is unclean if now allowed (Kafka's
        TopicUncleanLeaderElectionEnable and UncleanLeaderElectionEnable events)."""
        topics, default_changed = topics_of_entities(entity_paths)
        ctx = self.ctx
        offline = sorted(
            tp
            for tp in ctx.index.without_live_leader(ctx.brokers)
            if (default_changed or tp[0] in topics) and tp in ctx.states
        )
        if offline:
            await self.online_partitions(offline, out)

"""Leadership back to preferred replicas, on the active controller: ElectLeaders requests (HTTP
and the Kafka listener), Kafka's legacy ``/admin/preferred_replica_election`` znode, and the auto
leader rebalance (Kafka's ``auto.leader.rebalance.enable``).

All three run the same elections (:class:`~reassignd.controller.leadership.elect_leaders.LeaderElections`:
fenced state writes at the known partition epoch through the event's gateway, then the new states to the
replicas in the event's control batch), so they answer and fail the same way. Kafka's rule holds:
only an ElectLeaders request may ask for an unclean election; the znode and the rebalance elect
preferred replicas only.

Nothing here raises on bad input: a znode that cannot be decoded is reported and deleted, a
partition that does not exist or cannot take its preferred replica as leader is answered (or
logged) with Kafka's code and skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from reassignd.concurrency import pace
from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.effects.fenced_writes import Refused
from reassignd.controller.instance.shared import Shared
from reassignd.controller.leadership.elect_leaders import (
    ELECTION_NOT_NEEDED,
    NONE,
    UNKNOWN_TOPIC_OR_PARTITION,
    LeaderElections,
)
from reassignd.controller.leadership.leader_balance import Leadership, RebalancePlan, plan_rebalance
from reassignd.controller.model.admin_requests import ElectionResult, ElectionType, ElectLeaders
from reassignd.controller.partitions.partition_state_machine import PartitionStateMachine
from reassignd.controller.state.context import ControllerContext
from reassignd.topic_partition import TopicPartition
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.errors import BadVersionError, NoNodeError
from reassignd.zk.values import Delete, WatchCallback

log = logging.getLogger(__name__)


def _names(tps: Sequence[TopicPartition], limit: int = 10) -> str:
    shown = ", ".join(f"{t}-{p}" for t, p in tps[:limit])
    return shown + (f" and {len(tps) - limit} more" if len(tps) > limit else "")


class PreferredLeaders:
    def __init__(
        self,
        shared: Shared,
        ctx: ControllerContext,
        elections: PartitionStateMachine,
        watch_znode: Callable[[], WatchCallback | None],
    ) -> None:
        self.shared = shared
        self.ctx = ctx
        self.leaders = LeaderElections(ctx, elections)
        self._watch_znode = watch_znode

    def _count(self, trigger: str, results: Sequence[ElectionResult]) -> int:
        elected = sum(1 for r in results if r.error_code == NONE)
        if elected:
            self.shared.metrics.preferred_leader_elections.labels(trigger).inc(elected)
        return elected

    # --- ElectLeaders --------------------------------------------------------------------------------

    async def on_request(self, request: ElectLeaders, out: EventOutputs) -> list[ElectionResult]:
        """ElectLeaders from a client: preferred or unclean, named partitions or all."""
        results = await self.leaders.handle(request, out)
        if request.election_type is ElectionType.PREFERRED:
            self._count("request", results)
        return results

    # --- /admin/preferred_replica_election -----------------------------------------------------------

    async def on_znode(self, out: EventOutputs) -> None:
        """Kafka's ZooKeeper-triggered preferred-replica election: elect the preferred replica of
        every partition the znode names, then delete the znode (fenced, at the version read), as
        Kafka's controller does; an undecodable znode is reported and deleted. The watch is armed
        before the read: an exists watch while there is none, a data watch on one there is."""
        path = paths.PREFERRED_REPLICA_ELECTION
        znode = await self.shared.reads.get_or_none(path, watch=self._watch_znode())
        if znode is None:
            return
        try:
            named = admin_codec.decode_preferred_replica_election(znode.data)
        except codec.CodecError as e:
            self.shared.report(path, f"{e.reason}; the znode is deleted", "preferred_replica_election")
            await self._delete(znode.stat.version, out)
            return
        results = await self.leaders.handle(ElectLeaders(ElectionType.PREFERRED, named), out)
        self._count("znode", results)
        self._log_results(path, results)
        await self._delete(znode.stat.version, out)

    async def _delete(self, version: int, out: EventOutputs) -> None:
        """Delete the znode as read; one written again meanwhile (BadVersion) is left for the data
        watch its write fired, one already gone is fine. Then an exists watch for the next one."""
        path = paths.PREFERRED_REPLICA_ELECTION
        match await out.writes.write([Delete(path, version)], expect=(BadVersionError, NoNodeError)):
            case Refused(error=BadVersionError()):
                log.info("%s was written again while its election ran: it is read again", path)
            case _:  # deleted, or gone already
                pass
        await self.shared.reads.exists(path, watch=self._watch_znode())

    @staticmethod
    def _log_results(path: str, results: Sequence[ElectionResult]) -> None:
        by_code: dict[int, list[TopicPartition]] = {}
        for r in results:
            by_code.setdefault(r.error_code, []).append((r.topic, r.partition))
        elected = by_code.pop(NONE, [])
        not_needed = by_code.pop(ELECTION_NOT_NEEDED, [])
        unknown = by_code.pop(UNKNOWN_TOPIC_OR_PARTITION, [])
        log.info(
            "preferred replica election of %s: %d elected, %d led by their preferred replica already",
            path,
            len(elected),
            len(not_needed),
        )
        if unknown:
            log.warning(
                "%s names partitions that do not exist (or are being deleted): %s", path, _names(unknown)
            )
        for code, tps in sorted(by_code.items()):
            name = ElectionResult("", 0, code).error_name
            log.warning("%s: the preferred replica of %s cannot lead (%s)", path, _names(tps), name)

    # --- the auto leader rebalance -----------------------------------------------------------------

    async def plan(self) -> RebalancePlan:
        ctx = self.ctx
        partitions: dict[TopicPartition, Leadership] = {}
        for topic, assignments in ctx.assignments.items():
            await pace()  # every partition is read: a topic at a time
            for p, a in assignments.items():
                li = ctx.states.get((topic, p))
                partitions[(topic, p)] = (
                    Leadership(a.replicas, None)
                    if li is None
                    else Leadership(a.replicas, li.state.leader, li.state.isr)
                )
        return plan_rebalance(
            partitions,
            ctx.live_broker_ids,
            self.shared.settings.leader_imbalance_per_broker_percentage,
            reassigning=ctx.reassigning,
            deleting=ctx.topics_to_delete,
        )

    async def rebalance(self, out: EventOutputs) -> RebalancePlan:
        """Kafka's checkAndTriggerAutoLeaderRebalance: preferred-replica elections for the
        partitions of every broker above the imbalance threshold that can take them."""
        plan = await self.plan()
        self.shared.metrics.leader_imbalanced_brokers.set(len(plan.over_threshold))
        if not plan.over_threshold:
            log.debug("auto leader rebalance: no broker above the imbalance threshold")
            return plan
        ratios = ", ".join(
            f"broker {b.broker_id} {b.ratio:.0%} ({b.led_elsewhere}/{b.preferred})"
            for b in plan.imbalances
            if b.broker_id in plan.over_threshold
        )
        log.info(
            "auto leader rebalance: leader imbalance above %d%%: %s; %d preferred-replica elections, %d left "
            "as they are",
            self.shared.settings.leader_imbalance_per_broker_percentage,
            ratios,
            len(plan.elections),
            len(plan.skipped),
        )
        if plan.elections:
            results = await self.leaders.handle(ElectLeaders(ElectionType.PREFERRED, plan.elections), out)
            elected = self._count("auto", results)
            if elected < len(plan.elections):
                failed = [
                    (r.topic, r.partition) for r in results if r.error_code not in (NONE, ELECTION_NOT_NEEDED)
                ]
                log.info("auto leader rebalance: %d elected; not elected: %s", elected, _names(failed))
        return plan

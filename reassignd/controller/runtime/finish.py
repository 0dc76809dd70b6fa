"""The end of every event that ran the reassignment algorithm: what its completions and
cancellations set off (elections, the executor's next moves, the KIP-236 bookkeeping, deletions
waiting for a move), then every control request the event collected goes out.
"""

from __future__ import annotations

from reassignd.controller.batches.runner import BatchRunner
from reassignd.controller.instance.shared import Shared
from reassignd.controller.reassignment.algorithm import Reassigner
from reassignd.controller.reassignment.intake import Intake
from reassignd.controller.reassignment.sequenced import SequencedRequests
from reassignd.controller.replication.broker_requests import BrokerRequestBatch
from reassignd.controller.replication.context import ControllerContext
from reassignd.controller.replication.partition_state_machine import PartitionStateMachine
from reassignd.controller.topics.deletion import TopicDeleter


class Finisher:
    def __init__(
        self,
        shared: Shared,
        ctx: ControllerContext,
        elections: PartitionStateMachine,
        reassigner: Reassigner,
        intake: Intake,
        sequenced: SequencedRequests,
        runner: BatchRunner,
        deleter: TopicDeleter,
    ) -> None:
        self.shared = shared
        self.ctx = ctx
        self.elections = elections
        self.reassigner = reassigner
        self.intake = intake
        self.sequenced = sequenced
        self.runner = runner
        self.deleter = deleter

    async def after_reassignments(self, broker_requests: BrokerRequestBatch) -> None:
        """Completed (or cancelled) partitions left without a live leader get an offline election
        (a cancel allowed to need an unclean one gets it here), batch moves that ended free their
        slots for others at once, completed partitions leave the legacy znode and the sequenced
        requests, and every request of the event goes out."""
        ctx = self.ctx
        live = ctx.live_broker_ids
        reassigner = self.reassigner
        leaderless = [
            tp
            for tp in dict.fromkeys([*reassigner.completed, *sorted(reassigner.leaderless)])
            if (li := ctx.states.get(tp)) and li.state.leader not in live
        ]
        reassigner.leaderless.clear()
        if leaderless:
            await self.elections.online_partitions(leaderless, broker_requests)
        await self.runner.sync(broker_requests)
        await self.runner.tick(broker_requests)
        await self.runner.throttles()
        completed = list(reassigner.completed)
        await self.sequenced.after_completions(completed)
        await self.intake.after_completions()
        self.shared.send(broker_requests)
        if completed and ctx.topics_to_delete:
            await self.resume_deletions()

    async def resume_deletions(self) -> None:
        broker_requests = self.elections.broker_requests()
        await self.deleter.resume(broker_requests)
        self.shared.send(broker_requests)

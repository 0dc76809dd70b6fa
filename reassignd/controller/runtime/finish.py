"""The end of every event that ran the reassignment algorithm: what its completions and
cancellations set off (elections, the executor's next moves, the KIP-236 bookkeeping, deletions
waiting for a move); the requests collected so far are sealed for the applier
(``runtime.apply``). The event's outputs come in as one object (:class:`EventOutputs`), created
for the event, its completions taken here once; no part keeps them in a field between events.

It selects nothing by a move's state: ``out.completed`` holds the partitions whose move *ended*
in this event (completed or cancelled), which have no ``Move`` record left, so what it reads of
them is their assignment and state.
"""

from __future__ import annotations

from reassignd.controller.batches.runner import BatchRunner
from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.partitions.partition_state_machine import PartitionStateMachine
from reassignd.controller.reassignment.intake import Intake
from reassignd.controller.reassignment.sequenced import SequencedRequests
from reassignd.controller.state.context import ControllerContext
from reassignd.controller.topics.deletion import TopicDeleter
from reassignd.topic_partition import TopicPartition


class Finisher:
    def __init__(
        self,
        ctx: ControllerContext,
        elections: PartitionStateMachine,
        intake: Intake,
        sequenced: SequencedRequests,
        runner: BatchRunner,
        deleter: TopicDeleter,
    ) -> None:
        self.ctx = ctx
        self.elections = elections
        self.intake = intake
        self.sequenced = sequenced
        self.runner = runner
        self.deleter = deleter

    async def after_reassignments(self, out: EventOutputs) -> None:
        """Completed (or cancelled) partitions left without a live leader get an offline election
        (a cancel allowed to need an unclean one gets it here), batch moves that ended free their
        slots for others at once, completed partitions leave the legacy znode and the sequenced
        requests, and the requests collected so far are sealed (the applier sends them). Acts on
        each completion once: an event that runs it again acts only on what ended since."""
        ctx = self.ctx
        seen: set[TopicPartition] = set()
        await self._elect_leaderless(out, seen)
        await self.runner.sync(out)
        await self.runner.tick(out)
        # what the runner's moves ended just now (a revert, a reorder completed at once) is this
        # event's too
        await self._elect_leaderless(out, seen)
        await self.runner.throttles(out)
        completed, _ = out.take_completed()
        await self.sequenced.after_completions(completed, out)
        await self.intake.after_completions(completed, out)
        out.seal()
        if completed and ctx.topics_to_delete:
            await self.resume_deletions(out)

    async def _elect_leaderless(self, out: EventOutputs, seen: set[TopicPartition]) -> None:
        """An offline election for the partitions the event ended (not ``seen`` yet) whose
        leader is not live."""
        ctx = self.ctx
        live = ctx.live_broker_ids
        ended = [tp for tp in dict.fromkeys([*out.completed, *sorted(out.leaderless)]) if tp not in seen]
        seen.update(ended)
        leaderless = [tp for tp in ended if (li := ctx.states.get(tp)) and li.state.leader not in live]
        if leaderless:
            await self.elections.online_partitions(leaderless, out)

    async def resume_deletions(self, out: EventOutputs) -> None:
        """Deletions that can go on now: their requests in a batch of their own, after the
        event's others."""
        out.seal()
        await self.deleter.resume(out)
        out.seal()

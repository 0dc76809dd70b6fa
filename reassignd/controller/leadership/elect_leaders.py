"""Leader elections on demand (Kafka's ElectLeaders, KIP-460): preferred-replica elections and
unclean elections, for named partitions or all of them, inside the controller's event loop.

The decisions are pure (:func:`preferred_election`, :func:`unclean_election`, :func:`classify`),
made over the states as ZooKeeper has them when the election runs (read then, as Kafka does); the
writes go through :meth:`PartitionStateMachine.elect` (fenced, at the known partition epoch) and the new
states to the brokers in the event's control batch, as every other election.

Per-partition answers are Kafka's: 0 (elected), 84 ELECTION_NOT_NEEDED (the preferred replica
leads already; for unclean, a live leader), 80 PREFERRED_LEADER_NOT_AVAILABLE (the preferred
replica is not live or not in the ISR), 83 ELIGIBLE_LEADERS_NOT_AVAILABLE (unclean: no live
replica), 3 UNKNOWN_TOPIC_OR_PARTITION. With no partitions named (all), the ones that did not
need an election are left out of the answer, as Kafka does.
"""

from __future__ import annotations

from collections.abc import Collection

from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.model.admin_requests import ElectionResult, ElectionType, ElectLeaders
from reassignd.controller.partitions.partition_logic import offline_election
from reassignd.controller.partitions.partition_state_machine import PartitionStateMachine
from reassignd.controller.reads import loader
from reassignd.controller.state.context import ControllerContext, LeaderIsr
from reassignd.errors import DEFAULT_MESSAGES
from reassignd.topic_partition import TopicPartition
from reassignd.zk.codec import PartitionState

NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
PREFERRED_LEADER_NOT_AVAILABLE = 80
ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
ELECTION_NOT_NEEDED = 84


def preferred_election(
    replicas: tuple[int, ...], state: PartitionState, live: Collection[int], epoch: int, _unclean: bool
) -> PartitionState | None:
    """Kafka's PreferredReplicaPartitionLeaderElectionStrategy: the first replica, when it is
    live, in the ISR and not the leader already."""
    if not replicas:
        return None
    preferred = replicas[0]
    if state.leader == preferred or preferred not in live or preferred not in state.isr:
        return None
    return PartitionState(preferred, state.leader_epoch + 1, epoch, state.isr)


def unclean_election(
    replicas: tuple[int, ...], state: PartitionState, live: Collection[int], epoch: int, _unclean: bool
) -> PartitionState | None:
    """An election for a partition without a live leader that may pick a replica outside the
    ISR whatever the topic's config says (asked for explicitly)."""
    return offline_election(replicas, state, live, epoch, unclean=True)


def not_needed(
    election_type: ElectionType, replicas: tuple[int, ...], state: PartitionState, live: Collection[int]
) -> bool:
    """84 ELECTION_NOT_NEEDED: the preferred replica leads already (preferred), or a live
    replica leads (unclean). Needs no fresh ISR: the leader and the live brokers decide it."""
    if election_type is ElectionType.PREFERRED:
        return bool(replicas) and state.leader == replicas[0] and state.leader in live
    return state.leader in live


def classify(
    election_type: ElectionType,
    replicas: tuple[int, ...],
    state: PartitionState | None,
    live: Collection[int],
) -> int | None:
    """The answer when no election is to be tried (None: try it)."""
    if state is None or not replicas:
        return (
            PREFERRED_LEADER_NOT_AVAILABLE
            if election_type is ElectionType.PREFERRED
            else ELIGIBLE_LEADERS_NOT_AVAILABLE
        )
    if not_needed(election_type, replicas, state, live):
        return ELECTION_NOT_NEEDED
    if election_type is ElectionType.PREFERRED:
        if replicas[0] not in live or replicas[0] not in state.isr:
            return PREFERRED_LEADER_NOT_AVAILABLE
        return None
    if not any(r in live for r in replicas):
        return ELIGIBLE_LEADERS_NOT_AVAILABLE
    return None


def result(tp: TopicPartition, code: int) -> ElectionResult:
    return ElectionResult(tp[0], tp[1], code, DEFAULT_MESSAGES.get(code) if code else None)


class LeaderElections:
    """ElectLeaders on the active controller."""

    def __init__(self, ctx: ControllerContext, elections: PartitionStateMachine) -> None:
        self.ctx = ctx
        self.elections = elections

    async def handle(self, request: ElectLeaders, out: EventOutputs) -> list[ElectionResult]:
        """Elect, and tell the replicas of every partition whose leader changed (in the event's
        requests)."""
        broker_requests = out.requests
        results, changed = await self.elect(request, out)
        for tp in changed:
            broker_requests.add_leader_and_isr(self.elections.replicas(tp), tp)
            broker_requests.add_update_metadata([tp])
        return results

    async def elect(
        self, request: ElectLeaders, out: EventOutputs
    ) -> tuple[list[ElectionResult], list[TopicPartition]]:
        """The per-partition results and the partitions whose leader changed. The states of the
        partitions that may need an election are read from ZooKeeper first, as Kafka's partition
        state machine reads them: the brokers change ISRs there and tell the controller later
        (``/isr_change_notification``), so the cached ISR may lag behind."""
        ctx = self.ctx
        live = ctx.live_broker_ids
        kind = request.election_type
        everything = request.partitions is None
        wanted = list(ctx.states) if request.partitions is None else list(dict.fromkeys(request.partitions))
        answers: dict[TopicPartition, int] = {}
        maybe: list[TopicPartition] = []
        for tp in wanted:
            a = ctx.assignment(tp)
            if a is None or tp[0] in ctx.topics_to_delete:
                answers[tp] = UNKNOWN_TOPIC_OR_PARTITION
            elif (li := ctx.states.get(tp)) is not None and not_needed(kind, a.replicas, li.state, live):
                answers[tp] = ELECTION_NOT_NEEDED
            else:
                maybe.append(tp)
        fresh = await self._read_states(maybe)
        tried: list[TopicPartition] = []
        for tp in maybe:
            li = fresh.get(tp)
            code = classify(kind, self.elections.replicas(tp), None if li is None else li.state, live)
            if code is None:
                tried.append(tp)
            else:
                answers[tp] = code
        decide = preferred_election if kind is ElectionType.PREFERRED else unclean_election
        changed = await self.elections.elect(tried, decide, out) if tried else []
        done = set(changed)
        failed = (
            PREFERRED_LEADER_NOT_AVAILABLE
            if kind is ElectionType.PREFERRED
            else ELIGIBLE_LEADERS_NOT_AVAILABLE
        )
        for tp in tried:
            answers[tp] = NONE if tp in done else failed
        results = [
            result(tp, answers[tp])
            for tp in wanted
            if not (everything and answers[tp] == ELECTION_NOT_NEEDED)
        ]
        return results, changed

    async def _read_states(self, tps: list[TopicPartition]) -> dict[TopicPartition, LeaderIsr]:
        """The states of ``tps`` as ZooKeeper has them now, into the cache too; a state that is
        missing or undecodable there is left out (no election is tried for it)."""
        if not tps:
            return {}
        shared = self.elections.shared
        states, _ = await loader.read_states(shared.reads, tps, shared.report)
        for tp, li in states.items():
            self.ctx.set_state(tp, li)
        return states

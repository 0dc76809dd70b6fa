"""Helpers of the partition index tests: events, their application and broker registrations."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.controller.state.context import ControllerContext, LeaderIsr
from reassignd.topic_partition import TopicPartition
from reassignd.zk.codec import BrokerRegistration, Endpoint, PartitionState

BROKERS = range(1, 6)


TOPICS = ("a", "b", "c")


PARTITIONS = range(3)


def registration(b: int) -> BrokerRegistration:
    return BrokerRegistration(b, "127.0.0.1", 9000 + b, (Endpoint("PLAINTEXT", "127.0.0.1", 9000 + b),))


@dataclass(frozen=True)
class PutTopic:  # a topic created or its assignment re-read (partitions may come and go)
    topic: str
    partitions: dict[int, ReplicaAssignment]


@dataclass(frozen=True)
class SetAssignment:  # a move started, progressed or finished
    tp: TopicPartition
    assignment: ReplicaAssignment


@dataclass(frozen=True)
class SetState:  # an election, an ISR change, a state read back
    tp: TopicPartition
    state: PartitionState


@dataclass(frozen=True)
class LoadStates:  # many states at once, as the failover load sets them
    states: dict[TopicPartition, PartitionState]


@dataclass(frozen=True)
class RemoveTopic:
    topic: str


@dataclass(frozen=True)
class BrokerUp:
    broker: int


@dataclass(frozen=True)
class BrokerDown:
    broker: int


@dataclass(frozen=True)
class LoadOrigins:  # a topic's origins znode read (the failover load)
    topic: str
    origins: dict[int, tuple[int, ...]]


Event = PutTopic | SetAssignment | SetState | LoadStates | RemoveTopic | BrokerUp | BrokerDown | LoadOrigins


brokers = st.sampled_from(BROKERS)


replica_sets = st.lists(brokers, min_size=1, max_size=4, unique=True)


tps = st.tuples(st.sampled_from(TOPICS), st.sampled_from(PARTITIONS))


@st.composite
def assignments(draw: st.DrawFn) -> ReplicaAssignment:
    """A replica set, sometimes moving: AR and RR disjoint subsets of RS (TRS and ORS not empty)."""
    rs = draw(replica_sets)
    if len(rs) < 2 or draw(st.booleans()):
        return ReplicaAssignment.of(rs)
    cut = draw(st.integers(1, len(rs) - 1))
    adding = rs[:cut] if draw(st.booleans()) else []
    removing = rs[cut:] if draw(st.booleans()) else []
    return ReplicaAssignment.of(rs, adding, removing)


states = st.builds(
    PartitionState,
    leader=st.sampled_from((-1, *BROKERS)),
    leader_epoch=st.integers(0, 5),
    controller_epoch=st.just(7),
    isr=st.lists(brokers, max_size=4, unique=True).map(tuple),
)


events: st.SearchStrategy[Event] = st.one_of(
    st.builds(
        PutTopic,
        st.sampled_from(TOPICS),
        st.dictionaries(st.sampled_from(PARTITIONS), assignments(), min_size=1),
    ),
    st.builds(SetAssignment, tps, assignments()),
    st.builds(SetState, tps, states),
    st.builds(LoadStates, st.dictionaries(tps, states, max_size=6)),
    st.builds(RemoveTopic, st.sampled_from(TOPICS)),
    st.builds(BrokerUp, brokers),
    st.builds(BrokerDown, brokers),
    st.builds(
        LoadOrigins,
        st.sampled_from(TOPICS),
        st.dictionaries(st.sampled_from(PARTITIONS), replica_sets.map(tuple), max_size=3),
    ),
)


def _finishing(ctx: ControllerContext, tp: TopicPartition, assignment: ReplicaAssignment) -> None:
    """A move that the new assignment ends at its target goes through FINISHING first, as phase B
    takes it there before the write that completes it (the transition table has no other way)."""
    move = ctx.moves.get(tp)
    if (
        move is not None
        and not (assignment.adding or assignment.removing)
        and set(assignment.replicas) == set(move.target)
    ):
        ctx.move_finishing(tp)


def apply(ctx: ControllerContext, event: Event) -> None:
    """The event as the controller's handlers apply it: through the context's methods only (a
    state is set only for a partition with an assignment, as every handler does)."""
    match event:
        case PutTopic(topic, partitions):
            for p, assignment in partitions.items():
                _finishing(ctx, (topic, p), assignment)
            ctx.put_topic(topic, None, dict(partitions))
        case SetAssignment(tp, assignment):
            _finishing(ctx, tp, assignment)
            ctx.set_assignment(tp, assignment)
        case SetState(tp, state):
            if ctx.assignment(tp) is not None:
                ctx.set_state(tp, LeaderIsr(state, version=len(ctx.states)))
        case LoadStates(loaded):
            ctx.load_states(
                {
                    tp: LeaderIsr(state, version=1)
                    for tp, state in loaded.items()
                    if ctx.assignment(tp) is not None
                }
            )
        case RemoveTopic(topic):
            ctx.remove_topic(topic)
        case LoadOrigins(topic, recorded):
            ctx.load_origins(topic, recorded)
        case BrokerUp(b):
            ctx.add_broker(registration(b), 100 + b)
        case BrokerDown(b):
            ctx.remove_broker(b)

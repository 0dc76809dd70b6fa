"""The context's per-broker index (replicas, leaders, ISR members, stateless and under-replicated
partitions) against a recount from scratch, after random sequences of the events that change it:
assignment changes (moves included), state changes, topic deletions, brokers going and coming,
origins znodes read. The answers the handlers read from it (partitions without a live
leader, the offline count, what a broker hosts, the moving partitions targeting a broker) against
a scan of every partition; its move records against the assignments they follow."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reassignd.control.protocol import encode_state
from reassignd.controller.model.moves import MoveState
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.controller.state.context import ControllerContext
from reassignd.controller.state.partition_index import PartitionIndex, recount
from reassignd.controller.state.wire_states import WireStates, wire_state
from reassignd.topic_partition import TopicPartition
from tests.examples import examples
from tests.unit.controller.partition_index_helpers import BROKERS, Event, apply, events, registration

# --- the events -----------------------------------------------------------------------------------


# --- what the index must equal ----------------------------------------------------------------------


def recounted(ctx: ControllerContext) -> PartitionIndex:
    return recount(
        {t: {p: a.replicas for p, a in parts.items()} for t, parts in ctx.assignments.items()},
        {tp: li.state for tp, li in ctx.states.items()},
    )


def scanned_without_live_leader(ctx: ControllerContext) -> set[TopicPartition]:
    """Every partition with an assignment whose state is missing or whose leader is not live: the
    scan the index replaces (Kafka's onBrokerFailure and onBrokerStartup)."""
    return {
        tp
        for tp in ctx.all_partitions()
        if (li := ctx.states.get(tp)) is None or li.state.leader not in ctx.brokers
    }


def assigned(ctx: ControllerContext, tp: TopicPartition) -> ReplicaAssignment:
    a = ctx.assignment(tp)
    assert a is not None
    return a


def check(ctx: ControllerContext) -> None:
    index = ctx.index
    assert index == recounted(ctx)
    offline = scanned_without_live_leader(ctx)
    assert index.without_live_leader(ctx.brokers) == offline
    assert index.count_without_live_leader(ctx.brokers) == len(offline)
    for b in BROKERS:
        assert index.hosted_by(b) == {tp for tp in ctx.all_partitions() if b in assigned(ctx, tp).replicas}
        assert index.led_by(b) == {
            tp
            for tp in ctx.all_partitions()
            if (li := ctx.states.get(tp)) is not None and li.state.leader == b
        }
    assert index.under_replicated == {
        tp
        for tp in ctx.all_partitions()
        if (li := ctx.states.get(tp)) is not None and len(li.state.isr) < len(assigned(ctx, tp).replicas)
    }
    moving = {tp for tp in ctx.all_partitions() if assigned(ctx, tp).is_being_reassigned}
    assert ctx.reassigning == moving
    assert ctx.reassigning_topics == {
        t: sum(1 for tp in moving if tp[0] == t) for t in {tp[0] for tp in moving}
    }
    # one move record per moving partition, following its assignment; its original replicas are
    # ORS (RS − AR) as a set, in the order it was given
    assert set(ctx.moves) == moving
    for tp, m in ctx.moves.items():
        a = assigned(ctx, tp)
        assert (m.tp, m.target, m.state) == (tp, a.target_replicas, MoveState.ADDING)
        assert set(m.origins) == set(a.origins), (m, a)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(events, max_size=40))
def test_the_kept_index_equals_a_recount_after_any_sequence_of_events(sequence: list[Event]) -> None:
    ctx = ControllerContext(epoch=7, epoch_zk_version=6)
    for b in (1, 2, 3):
        ctx.add_broker(registration(b), 100 + b)
    check(ctx)
    for event in sequence:
        apply(ctx, event)
        check(ctx)


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(events, max_size=40), st.lists(st.integers(0, 40), max_size=6))
def test_the_kept_encodings_equal_the_states_encoded_anew(sequence: list[Event], reads: list[int]) -> None:
    """WireStates, read at random points of the sequence (each read follows a refresh, as a
    batch's build does), holds every partition's state as it would be encoded now."""
    ctx = ControllerContext(epoch=7, epoch_zk_version=6)
    wire = WireStates(ctx)
    for i, event in enumerate(sequence):
        apply(ctx, event)
        if i in reads:
            wire.refresh()
            wire.everything()
    wire.refresh()
    expected = {
        tp: encode_state(wire_state(tp, li, a, is_new=False))
        for tp, li in ctx.states.items()
        if (a := ctx.assignment(tp)) is not None
    }
    assert wire.everything() == expected
    for tp, encoded in expected.items():
        assert wire.get(tp) == encoded

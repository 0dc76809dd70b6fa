"""Kafka's ISR protocol in the agents (issue 37, point 8), as pure code: the decision function's
properties (Hypothesis), and the replica manager keeping a dead or restarted follower out of the
ISR until its own fetches in the current leader epoch reach the high watermark."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from reassignd.broker.isr_decision import UNKNOWN_OFFSET, FollowerView, IsrView, decide_isr
from reassignd.broker.isr_plan import isr_written, plan_isr_updates
from reassignd.broker.sim_config import topic_sim_config
from reassignd.control.protocol import LiveBroker, UpdateMetadataRequest
from tests.unit.broker.state_helpers import LAG_S, TP, GiB, cluster, header, lai, manager, pstate, run

NOW_S = 1000.0
IDS = st.integers(min_value=0, max_value=6)


@st.composite
def views(draw: st.DrawFn) -> IsrView:
    replicas = tuple(draw(st.lists(IDS, min_size=1, max_size=5, unique=True)))
    leader = draw(st.sampled_from(replicas))
    isr = tuple(draw(st.lists(IDS, max_size=5, unique=True)))  # may even miss the leader
    log_end_offset = draw(st.integers(min_value=0, max_value=10_000))
    high_watermark = draw(st.integers(min_value=0, max_value=log_end_offset))
    positions = st.one_of(st.just(UNKNOWN_OFFSET), st.integers(min_value=0, max_value=log_end_offset))
    caught_up = st.one_of(st.none(), st.floats(min_value=NOW_S - 3 * LAG_S, max_value=NOW_S))
    followers = draw(st.dictionaries(IDS, st.builds(FollowerView, positions, caught_up), max_size=7))
    return IsrView(
        leader=leader,
        replicas=replicas,
        isr=isr,
        zk_version=draw(st.integers(min_value=-1, max_value=20)),
        high_watermark=high_watermark,
        log_end_offset=log_end_offset,
        epoch_start_offset=draw(st.integers(min_value=0, max_value=log_end_offset)),
        followers=followers,
        live=draw(st.one_of(st.none(), st.frozensets(IDS))),
        version_stale=draw(st.booleans()),
    )


def lagging(view: IsrView, b: int) -> bool:
    f = view.followers.get(b)
    return f is None or f.last_caught_up_s is None or NOW_S - f.last_caught_up_s > LAG_S


def may_join(view: IsrView, b: int) -> bool:
    f = view.followers.get(b)
    return (
        f is not None
        and f.fetch_position != UNKNOWN_OFFSET
        and f.fetch_position >= view.high_watermark
        and f.fetch_position >= view.epoch_start_offset
    )


@given(views())
def test_the_isr_decision_keeps_kafkas_rules(view: IsrView) -> None:
    change = decide_isr(view, NOW_S, LAG_S)
    if view.version_stale or view.zk_version < 0:
        assert change is None  # a stale known version: nothing until the controller's LeaderAndIsr
        return
    isr = view.isr if change is None else change.isr
    if change is not None:
        assert change.expected_version == view.zk_version  # conditional on the known version
        assert set(change.isr) != set(view.isr) and len(set(change.isr)) == len(change.isr)
    assert view.leader in isr
    for b in (
        set(isr) - set(view.isr) - {view.leader}
    ):  # a follower added: an assigned, live replica whose fetch reached the HW
        assert b in view.replicas
        assert view.live is None or b in view.live
        assert may_join(view, b)
    for b in isr:
        if b != view.leader:
            assert not lagging(view, b)  # a follower lagging longer than the lag time is out
    for b in view.replicas:  # and nothing eligible is left out
        alive = view.live is None or b in view.live
        if b not in view.isr and alive and may_join(view, b) and not lagging(view, b):
            assert b in isr


def test_a_dead_followers_old_fetches_never_bring_it_back_over_the_controllers_shrink() -> None:
    """Broker 2 was in the ISR and caught up; it dies, the controller shrinks the ISR (leader
    epoch + 1). Neither that LeaderAndIsr, nor broker 2 coming back live, nor its first fetches
    from an empty log at 1 KB/s against 2 MB/s of produce put it back in the ISR."""
    leader, follower = cluster(initial=1000, produce=2_000_000, rate=10 * GiB)
    now = run(leader, follower, 1.0)
    [joined] = plan_isr_updates(leader, now, LAG_S)
    assert joined.isr == (1, 2)
    isr_written(leader, joined, version=1)
    now = run(leader, follower, now + 1.0, start=now)
    assert plan_isr_updates(leader, now, LAG_S) == []

    shrunk = pstate(epoch=2, isr=(1,), partition_epoch=2)
    leader.leader_and_isr(lai(leader, shrunk), now + 0.1)
    assert plan_isr_updates(leader, now + 0.2, LAG_S) == []
    live = tuple(LiveBroker(b, None, (f"CONTROL://h:{b}",)) for b in (1, 2))
    leader.update_metadata(UpdateMetadataRequest(header(leader), (), live), now + 3.0)
    assert plan_isr_updates(leader, now + 3.0, LAG_S) == []

    restarted = manager(2, rate=1000)
    restarted.set_topic_config(
        "orders", topic_sim_config({"reassignd.sim.produce.bytes.per.s": "2000000"}), now + 3.0
    )
    restarted.leader_and_isr(lai(restarted, shrunk), now + 3.0)
    end = run(leader, restarted, now + 8.0, start=now + 3.0)
    assert restarted.replicas[TP].lag_bytes > 1_000_000
    assert plan_isr_updates(leader, end, LAG_S) == []
    assert leader.replicas[TP].isr == (1,)

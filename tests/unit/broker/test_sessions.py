"""Incremental fetch sessions and incremental ISR reviews, driven as pure code: a leader's and a
follower's replica managers exchange fetches (through the JSON wire format) in simulated time."""

from __future__ import annotations

import json

from reassignd.broker.isr_plan import (
    IsrSchedule,
    IsrUpdate,
    isr_written,
    plan_isr_updates,
    review_isr,
)
from reassignd.broker.sessions import (
    MAX_PARTITIONS_PER_FETCH,
    REFUSED_BACKOFF_S,
    FetchOutcome,
    FollowerSession,
    apply_session_fetch,
    serve,
    session_request,
)
from reassignd.broker.sim_config import topic_sim_config
from reassignd.broker.state import ReplicaManager
from reassignd.control.fetch import (
    FETCH_SESSION_ID_NOT_FOUND,
    INVALID_FETCH_SESSION_EPOCH,
    NOT_LEADER_OR_FOLLOWER,
    FetchPartition,
    FetchRequest,
    FetchResponse,
)
from reassignd.control.protocol import (
    Header,
    LeaderAndIsrRequest,
    StopReplicaPartition,
    StopReplicaRequest,
    WirePartitionState,
)

LAG_S = 30.0


def manager(broker_id: int) -> ReplicaManager:
    mgr = ReplicaManager(broker_id, replication_bytes_per_s=1e12, now=0.0)
    mgr.broker_epoch = 100 + broker_id
    return mgr


def states(n: int, *, epoch: int = 1, isr: tuple[int, ...] = (1, 2)) -> tuple[WirePartitionState, ...]:
    return tuple(WirePartitionState("t", p, 7, 1, epoch, isr, 0, (1, 2)) for p in range(n))


def lai(mgr: ReplicaManager, parts: tuple[WirePartitionState, ...], now: float) -> None:
    assert mgr.broker_epoch is not None
    response = mgr.leader_and_isr(LeaderAndIsrRequest(Header(9000, 7, mgr.broker_epoch), parts), now)
    assert {e.error_code for e in response.partition_errors} == {0}


def wire(request: FetchRequest) -> FetchRequest:
    return FetchRequest.from_json(json.loads(json.dumps(request.to_json())))


class Link:
    """Follower 2 fetching from leader 1 in one session."""

    def __init__(self, leader: ReplicaManager, follower: ReplicaManager, session_id: int = 7) -> None:
        self.leader = leader
        self.follower = follower
        self.session = FollowerSession(leader.broker_id, session_id)
        self.requests: list[FetchRequest] = []
        self.responses: list[FetchResponse] = []

    def fetch(self, now: float) -> FetchOutcome | None:
        request = session_request(self.follower, self.session, now)
        if request is None:
            return None
        response = serve(self.leader, wire(request), now)
        response = FetchResponse.from_json(json.loads(json.dumps(response.to_json())))
        self.requests.append(request)
        self.responses.append(response)
        return apply_session_fetch(self.follower, self.session, request, response, now)

    def run(self, start: float, until: float, step: float = 0.5) -> float:
        now = start
        while now < until - 1e-9:
            now = round(now + step, 6)
            self.fetch(now)
        return now


def pair(n: int, initial: int = 0, isr: tuple[int, ...] = (1, 2)) -> Link:
    leader, follower = manager(1), manager(2)
    config = topic_sim_config({"reassignd.sim.initial.bytes": str(initial)})
    for mgr in (leader, follower):
        mgr.set_topic_config("t", config, 0.0)
        lai(mgr, states(n, isr=isr), 0.0)
    return Link(leader, follower)


def test_the_session_fields_are_optional_on_the_wire() -> None:
    plain = FetchRequest(2, (FetchPartition("t", 0, 1, 0, 100),))
    assert set(plain.to_json()) == {"replica_id", "partitions"}
    assert wire(plain) == plain
    incremental = FetchRequest(2, (), session_id=9, session_epoch=4, forgotten=(("t", 3),))
    assert incremental.to_json()["forgotten"] == [{"topic": "t", "partition": 3}]
    assert wire(incremental) == incremental


def test_an_idle_caught_up_follower_lists_nothing_and_stays_in_the_isr() -> None:
    link = pair(5000, initial=1000)
    outcome = link.fetch(0.1)  # the session starts with the first MAX_PARTITIONS_PER_FETCH
    assert len(link.requests[0].partitions) == MAX_PARTITIONS_PER_FETCH
    assert link.requests[0].session_epoch == 0
    assert outcome is not None and outcome.busy
    now = link.run(0.1, 200.0)
    # each partition listed twice (its bytes, then from the leader's end), then never again
    listed = [(p.topic, p.partition) for r in link.requests for p in r.partitions]
    assert len(listed) == 2 * 5000 and len(set(listed)) == 5000
    assert max(len(r.partitions) for r in link.requests) == MAX_PARTITIONS_PER_FETCH
    quiet = link.requests[8:]
    assert len(quiet) > 300 and all(r.partitions == () and r.forgotten == () for r in quiet)
    assert all(r.partitions == () for r in link.responses[8:])
    assert link.fetch(now + 0.5) == FetchOutcome(busy=False)
    # every follower is caught up as of the latest session fetch, long after its last listing
    assert plan_isr_updates(link.leader, now + 0.5, LAG_S) == []
    review = review_isr(link.leader, link.leader.led, now + 0.5, LAG_S)
    assert review.updates == [] and min(w for w in review.deadlines.values() if w) > now + LAG_S
    assert all(r.log_end_offset == 1000 and r.in_isr for r in link.follower.replicas.values())


def test_a_follower_whose_fetches_stop_leaves_the_isr_after_the_lag_time() -> None:
    link = pair(100)
    link.run(0.0, 10.0)
    review = review_isr(link.leader, link.leader.led, 10.0, LAG_S)
    deadline = min(w for w in review.deadlines.values() if w)
    assert 10.0 + LAG_S <= deadline <= 10.0 + LAG_S + 0.01  # the follower stops fetching at 10 s
    assert plan_isr_updates(link.leader, deadline - 0.01, LAG_S) == []
    assert {u.isr for u in plan_isr_updates(link.leader, deadline, LAG_S)} == {(1,)}


def test_growth_reaches_a_quiet_follower_which_stays_in_the_isr() -> None:
    link = pair(3)
    now = link.run(0.0, 100.0)  # quiet for long: its last listing is ~100 s old
    growing = topic_sim_config({"reassignd.sim.produce.bytes.per.s": "1000"})
    link.leader.set_topic_config("t", growing, now)
    link.follower.set_topic_config("t", growing, now)
    assert plan_isr_updates(link.leader, now + 0.1, LAG_S) == []
    outcome = link.fetch(now + 0.1)  # unlisted, but the leader reports its grown end
    assert outcome is not None and outcome.busy
    assert {(p.topic, p.partition) for p in link.responses[-1].partitions} == {("t", 0), ("t", 1), ("t", 2)}
    now = link.run(now + 0.1, now + 5.0, step=0.1)
    assert plan_isr_updates(link.leader, now, LAG_S) == []
    for r in link.follower.replicas.values():
        assert 4000 <= r.log_end_offset <= 5100 and r.lag_bytes <= 200
    assert all(len(r.partitions) == 3 for r in link.requests[-10:])  # a growing log is fetched


def test_a_new_leader_epoch_keeps_a_quiet_follower_in_the_isr() -> None:
    link = pair(2)
    now = link.run(0.0, 100.0)
    lai(link.leader, states(2, epoch=2), now)  # e.g. a reassignment's new replica set
    assert plan_isr_updates(link.leader, now + 1.0, LAG_S) == []
    link.fetch(now + 0.5)  # the follower still has epoch 1: nothing it could use
    assert not link.requests[-1].partitions and not link.responses[-1].partitions
    lai(link.follower, states(2, epoch=2), now + 0.7)
    link.fetch(now + 0.8)
    assert {(p.leader_epoch, p.fetch_offset) for p in link.requests[-1].partitions} == {(2, 0)}
    assert {p.error_code for p in link.responses[-1].partitions} == {0}
    assert plan_isr_updates(link.leader, now + LAG_S, LAG_S) == []


def test_refused_partitions_back_off_until_the_leader_can_serve_them() -> None:
    leader, follower = manager(1), manager(2)
    lai(follower, states(4), 0.0)  # the follower hears first
    link = Link(leader, follower)
    link.fetch(0.1)
    assert {p.error_code for p in link.responses[-1].partitions} == {NOT_LEADER_OR_FOLLOWER}
    link.fetch(0.2)
    assert link.requests[-1].partitions == ()  # backing off
    lai(leader, states(4, isr=(1,)), 0.3)
    link.fetch(0.4)  # not listed, but the leader reports them (it can serve them now)
    assert {p.error_code for p in link.responses[-1].partitions} == {0}
    assert plan_isr_updates(leader, 0.4, LAG_S) == []  # a refused listing is no proof of anything
    link.fetch(0.5)
    assert len(link.requests[-1].partitions) == 4
    assert {u.isr for u in plan_isr_updates(leader, 0.5, LAG_S)} == {(1, 2)}


def test_a_refused_partition_is_tried_again_after_the_backoff() -> None:
    leader, follower = manager(1), manager(2)
    lai(follower, states(1), 0.0)
    link = Link(leader, follower)
    link.fetch(0.1)
    link.fetch(0.1 + REFUSED_BACKOFF_S / 2)
    assert link.requests[-1].partitions == ()
    link.fetch(0.1 + REFUSED_BACKOFF_S)
    assert len(link.requests[-1].partitions) == 1


def test_a_restarted_leader_makes_the_follower_start_a_full_session() -> None:
    link = pair(10)
    link.run(0.0, 2.0)
    link.leader = manager(1)  # a new process: no sessions
    lai(link.leader, states(10), 2.0)
    outcome = link.fetch(2.5)
    assert link.responses[-1].error_code == FETCH_SESSION_ID_NOT_FOUND
    assert outcome == FetchOutcome()
    link.fetch(3.0)
    assert link.requests[-1].session_epoch == 0 and len(link.requests[-1].partitions) == 10
    assert link.responses[-1].error_code == 0


def test_an_out_of_order_epoch_is_refused() -> None:
    link = pair(1)
    link.run(0.0, 1.0)
    request = session_request(link.follower, link.session, 1.5)
    assert request is not None and request.session_epoch > 1
    stale = FetchRequest(2, (), session_id=request.session_id, session_epoch=request.session_epoch - 1)
    assert serve(link.leader, stale, 1.5).error_code == INVALID_FETCH_SESSION_EPOCH


def test_a_stopped_partition_is_forgotten_and_no_longer_credited() -> None:
    link = pair(2)
    link.run(0.0, 2.0)
    assert link.follower.broker_epoch is not None
    stop = StopReplicaRequest(
        Header(9000, 7, link.follower.broker_epoch), (StopReplicaPartition("t", 1, 1, True),)
    )
    link.follower.stop_replica(stop, 2.0)
    link.fetch(2.5)
    assert link.requests[-1].forgotten == (("t", 1),)
    assert set(link.leader.sessions[2].partitions) == {("t", 0)}
    now = link.run(2.5, 40.0)
    assert [(u.tp, u.isr) for u in plan_isr_updates(link.leader, now, LAG_S)] == [(("t", 1), (1,))]


def test_the_isr_schedule_keeps_one_time_per_partition() -> None:
    schedule = IsrSchedule()
    schedule.at(("t", 0), 5.0)
    schedule.at(("t", 1), 3.0)
    schedule.at(("t", 0), 2.0)  # supersedes 5.0
    schedule.at(("t", 2), 4.0)
    schedule.at(("t", 2), None)  # only when something happens to it
    assert schedule.next_s() == 2.0 and len(schedule) == 2
    assert schedule.pop_due(3.0) == [("t", 0), ("t", 1)]
    assert schedule.pop_due(10.0) == [] and schedule.next_s() is None


def test_the_leader_reports_changes_a_bounded_number_at_a_time() -> None:
    n = MAX_PARTITIONS_PER_FETCH + 500
    link = pair(n, isr=(1,))
    now = link.run(0.0, 5.0)
    assert {u.isr for u in plan_isr_updates(link.leader, now, LAG_S)} == {(1, 2)}
    for r in link.leader.replicas.values():  # the ISR writes succeed: followers hear of them
        isr_written(link.leader, IsrUpdate(r.tp, 1, 1, 0, 7, (1, 2)), 1)
    link.fetch(now + 0.1)
    link.fetch(now + 0.2)
    assert [len(r.partitions) for r in link.responses[-2:]] == [MAX_PARTITIONS_PER_FETCH, 500]
    assert all(r.in_isr for r in link.follower.replicas.values())


def test_a_leader_that_no_longer_leads_reports_nothing_and_credits_nothing() -> None:
    link = pair(3)
    now = link.run(0.0, 5.0)
    moved = tuple(WirePartitionState("t", p, 7, 2, 2, (1, 2), 1, (1, 2)) for p in range(3))
    lai(link.leader, moved, now)  # broker 1 now follows broker 2; broker 2 has not heard yet
    link.fetch(now + 0.1)
    assert link.responses[-1].partitions == ()
    assert link.leader.sessions[2].unserved == {("t", 0), ("t", 1), ("t", 2)}


def test_a_leader_outside_its_isr_puts_itself_in_and_drops_the_lagging_follower() -> None:
    leader = manager(1)
    lai(leader, (WirePartitionState("t", 0, 7, 1, 1, (2,), 0, (1, 2)),), 0.0)  # leader not in its ISR
    review = review_isr(leader, leader.led, 100.0, LAG_S)
    assert [u.isr for u in review.updates] == [(1,)] and ("t", 0) not in review.deadlines

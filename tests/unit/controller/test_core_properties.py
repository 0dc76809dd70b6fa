"""Property tests of the controller's core (issue 8, Build 6): Hypothesis stateful testing.

The state is a simulated ZooKeeper (``SimZooKeeper``: every znode as the codecs encode them) plus
the active controller's parts. The rules interleave what happens to a cluster — reassign,
re-target, cancel, stop, a replica catching up and joining the ISR (the agent's conditional write
and its ISR change notification, the controller told now or later), broker death, return and
bounce, unclean-election configs, topic deletion and re-creation, failover (a new term loaded from
ZooKeeper alone) and a fenced-out controller acting after it. The controller is the real one: each
term's parts are built by ``active.build`` and loaded by ``failover.load``, and each happening
reaches them as the event the controller would have queued, through the real ``dispatch`` (the
intakes, the Reassigner's phases U, A and B, the partition state machine, BrokerEvents,
TopicEvents, the TopicDeleter, the Finisher, the ZkWriter, the loader and the codecs). The
machine stores znodes, plays the brokers (ISR expansion, StopReplica confirmations) and predicts
each request's outcome from the pure rules; it never decides an assignment or a state itself.

After every step, from ZooKeeper's bytes: memory equals ZooKeeper and the codecs round-trip it;
AR ∩ RR = ∅, AR, RR, TRS ⊆ RS; a moving partition keeps its ORS (as a set) and its requested
TRS (in order); the ISR is never empty and holds the leader; a partition is offline only when no
live in-sync replica could lead; leader epochs and partition epochs only grow, and every
controller change of leader or ISR bumps the leader epoch; nothing leaves the replica set or the
ISR of a partition unless it died, or was an adding replica dropped by a re-target, cancel or
stop, or was a removing replica at completion — and completion happens only with TRS ⊆ ISR;
no replica in a partition's replica set is told to delete itself; a fenced-out controller
changes nothing in ZooKeeper.

The examples at the end of this file pin four bugs these properties found and that are fixed:
a re-target that drops the (adding) leader elects another at once; a re-target is refused when
it would drop every in-sync replica (the cancel safety rule covers re-targets); a cancel let
through by ``unclean.leader.election.enable`` elects a leader; a broker failure decides from the
states in ZooKeeper, so a dead broker an agent had just added leaves the ISR.
"""

from __future__ import annotations

import logging

import pytest
from hypothesis import HealthCheck, seed, settings
from hypothesis.stateful import run_state_machine_as_test

from reassignd.controller.model.requests import CancelMode
from reassignd.controller.partitions.partition_logic import NO_LEADER
from reassignd.controller.reassignment.validation import validate_target
from reassignd.controller.state.assignment import ReplicaAssignment
from tests.examples import examples
from tests.unit.controller.core_machine import TP0, CoreMachine, _machine, _step, _zk_state

pytestmark = pytest.mark.timeout(60)


PARTS = 3  # the runs in parts of their own, which parallel workers share out


# ~10 s in all when it passes (150 runs of up to 40 steps, 300 in the deep run), in PARTS tests of
# a third each, each from a seed of its own (deterministic, as derandomized runs are); a failure's
# shrinking can take a minute or two on a slow machine, hence the longer timeout
@pytest.mark.timeout(300)
@pytest.mark.parametrize("part", range(PARTS))
def test_core_state_machine(part: int, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.CRITICAL, logger="reassignd")  # thousands of expected warnings
    machine = seed(part)(type(f"CorePart{part}", (CoreMachine,), {}))
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=examples(300) // PARTS,  # at least 25 // 3
            stateful_step_count=40,
            deadline=None,
            database=None,
            report_multiple_bugs=False,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )


# --- minimal failing examples of what the machine tolerates (each a real bug, see the notes) --------


def test_invariants_hold_on_a_plain_move() -> None:
    machine = _machine(rf=2)
    try:
        _step(machine, lambda: machine.run(machine._alter({TP0: (3, 2)})))
        a, s = _zk_state(machine)
        assert (a.replicas, a.adding, a.removing, s.leader, s.isr) == ((3, 2, 1), (3,), (1,), 1, (1, 2))
        _step(machine, lambda: machine.replicas_catch_up(pick=0, count=1, notify=True))
        a, s = _zk_state(machine)
        assert (a, s.leader, s.isr) == (ReplicaAssignment((3, 2)), 3, (2, 3))
    finally:
        machine.teardown()


def test_retarget_that_drops_the_leader_elects_another() -> None:
    """Reassigner.reassign stops a dropped adding replica that leads (leader −1) and phase A
    elects nobody: the partition stays offline with a live in-sync replica (2) until some broker
    starts or a failover. Phase B (a cancel) does elect."""
    machine = _machine(rf=2)  # [1, 2]
    try:
        _step(machine, lambda: machine.run(machine._alter({TP0: (3, 4)})))  # RS [3, 4, 1, 2]
        _step(machine, lambda: machine.replicas_catch_up(pick=0, count=1, notify=True))  # ISR [1, 2, 3]
        _step(machine, lambda: machine.broker_dies(pick=0))  # 1 dies: 3 leads, ISR [2, 3]
        assert _zk_state(machine)[1].leader == 3
        machine.run(machine._alter({TP0: (4, 2)}))  # drops 3: RS [4, 2, 1]
        _a, s = _zk_state(machine)
        assert s.leader == 2, s  # observed: PartitionState(leader=-1, ..., isr=(2,))
    finally:
        machine.teardown()


def test_retarget_keeps_an_in_sync_replica() -> None:
    """ORS [1] moving to [2, 3]: 2 caught up and leads after 1 bounced (1 out of sync). A
    re-target to [3, 4] is accepted (validate_target) and drops 2, the only in-sync replica:
    StopReplica(delete) to it, leader −1, the ISR [2] outside the replicas. The cancel safety rule
    (no unclean election without the topic's permission) covers no re-target, not even a target
    equal to ORS as a set — a cancel in all but name (the KIP-236 sequenced path does check it)."""
    machine = _machine(rf=1)  # [1]
    try:
        _step(machine, lambda: machine.run(machine._alter({TP0: (2, 3)})))
        _step(machine, lambda: machine.replicas_catch_up(pick=0, count=1, notify=True))  # ISR [1, 2]
        _step(machine, lambda: machine.broker_bounces(pick=0))  # 2 leads, ISR [2]
        live = machine.ctx.live_broker_ids
        error = validate_target((3, 4), machine.ctx.assignment(TP0), live, topic_deleting=False)
        if error is None:
            machine.run(machine._alter({TP0: (3, 4)}))
        a, s = _zk_state(machine)
        assert set(s.isr) & set(a.replicas), (a, s)  # observed: RS [3, 4, 1], leader −1, ISR [2]
    finally:
        machine.teardown()


def test_unclean_cancel_elects_a_leader() -> None:
    """With unclean.leader.election.enable=true a cancel whose ORS is out of sync is accepted
    (as Kafka does), but nothing elects: the partition ends on [1] (live) with leader −1 and the
    ISR [2] of a deleted replica, offline until a broker starts (and then only once broker events
    pass the topic's unclean setting on)."""
    machine = _machine(rf=1)  # [1]
    try:
        _step(machine, lambda: machine.set_unclean_election(topic="t0", enable=True))
        _step(machine, lambda: machine.run(machine._alter({TP0: (2, 3)})))
        _step(machine, lambda: machine.replicas_catch_up(pick=0, count=1, notify=True))  # ISR [1, 2]
        _step(machine, lambda: machine.broker_bounces(pick=0))  # 2 leads, ISR [2]
        machine.run(machine._cancel([TP0], CancelMode.CANCEL))
        a, s = _zk_state(machine)
        assert a == ReplicaAssignment((1,))
        assert s.leader == 1, s  # observed: PartitionState(leader=-1, ..., isr=(2,))
    finally:
        machine.teardown()


def test_a_move_back_onto_the_only_in_sync_replica_elects_it() -> None:
    """An unclean cancel ends on [1] while 1 is dead: leader −1 and the ISR [2] of a deleted
    replica (Kafka keeps an ISR's last member). A new move adding 2 back makes a clean election
    possible — 2 is live, a replica again and in the ISR — so the same event elects it instead of
    leaving the partition offline until some broker changes (found by the state machine). The
    move does not complete (3 is not in sync): nothing else would elect."""
    machine = _machine(rf=1)  # [1]
    try:
        _step(machine, lambda: machine.set_unclean_election(topic="t0", enable=True))
        _step(machine, lambda: machine.run(machine._alter({TP0: (2, 3)})))
        _step(machine, lambda: machine.replicas_catch_up(pick=0, count=1, notify=True))  # ISR [1, 2]
        _step(machine, lambda: machine.broker_dies(pick=0))  # 1 dies: 2 leads, ISR [2]
        _step(machine, lambda: machine.run(machine._cancel([TP0], CancelMode.CANCEL)))
        a, s = _zk_state(machine)
        assert (a, s.leader, s.isr) == (ReplicaAssignment((1,)), NO_LEADER, (2,))
        _step(machine, lambda: machine.run(machine._alter({TP0: (2, 3)})))
        a, s = _zk_state(machine)
        assert a.adding == (2, 3) and s.leader == 2, (a, s)
    finally:
        machine.teardown()


def test_broker_failure_removes_it_from_the_isr_in_zookeeper() -> None:
    """3 catches up and its leader's agent adds it to the ISR; 3 dies before the controller has
    read that write (its IsrChangeNotification lingers, or is queued behind the BrokersChanged).
    The failure handling (BrokerEvents.on_broker_failure) picks the partitions and decides from
    the cached ISR, so 3 stays in the ISR in ZooKeeper until the leader's lag timeout. Kafka reads
    the states from ZooKeeper (ReplicaStateMachine.doRemoveReplicasFromIsr) for every partition
    with a replica on the dead broker."""
    machine = _machine(rf=3)  # [1, 2, 3]
    try:
        _step(machine, lambda: machine.broker_bounces(pick=2))  # 3 restarts: ISR [1, 2]
        _step(machine, lambda: machine.replicas_catch_up(pick=0, count=1, notify=False))  # ISR [1, 2, 3]
        _step(machine, lambda: machine.broker_dies(pick=2))  # 3 dies
        machine.controller_hears_of_isr_changes(isr_change=True)
        _a, s = _zk_state(machine)
        assert 3 not in s.isr, s  # observed: leader 1, ISR [1, 2, 3] with 3 dead
    finally:
        machine.teardown()

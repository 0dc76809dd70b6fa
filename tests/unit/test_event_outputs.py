"""An event's outputs are a value (issue 22, Build 1): the reassignment algorithm adds what an
event ended to the ``EventOutputs`` it is handed — the partitions phase B completed, the ones a
replica removal left without a leader — and ``Finisher.after_reassignments`` consumes that value;
no long-lived part keeps them between events.

Driven over the simulated ZooKeeper with the real parts of one active term (``active.build`` and
``failover.load``, through the property machine's setup), each handler called with an
``EventOutputs`` of its own so what it produced can be read off the value.
"""

from __future__ import annotations

import pytest

from reassignd.controller.model.requests import AlterReassignments, CancelMode
from reassignd.controller.reassignment.algorithm import Reassigner
from reassignd.controller.replication.assignment import ReplicaAssignment
from reassignd.controller.replication.partition_logic import NO_LEADER
from tests.unit.test_core_properties import TP0, _machine, _step, _zk_state

pytestmark = pytest.mark.timeout(60)


def test_the_reassigner_keeps_no_outputs_of_an_event() -> None:
    machine = _machine(rf=1)
    try:
        assert machine.active is not None
        reassigner = machine.active.reassigner
        assert isinstance(reassigner, Reassigner)
        for name in ("completed", "leaderless"):
            assert not hasattr(reassigner, name), name
    finally:
        machine.teardown()


def test_a_completion_is_in_the_events_outputs_and_only_there() -> None:
    machine = _machine(rf=1)  # [1]
    try:
        _step(machine, lambda: machine.run(machine._alter({TP0: (2,)})))  # RS [2, 1], moving
        # the agent adds 2 to the ISR; the controller is not told (no notification handled)
        machine.replicas_catch_up(pick=0, count=1, notify=False)
        parts = machine.active
        assert parts is not None
        out = parts.event_outputs()
        machine.run(parts.reassigner.check([TP0], out))  # phase B: complete
        assert out.completed == [TP0]
        assert out.leaderless == set()
        assert _zk_state(machine)[0] == ReplicaAssignment((2,))
        # what it ended is this event's: another event starts from nothing
        assert parts.event_outputs().completed == []
        machine.run(parts.finisher.after_reassignments(out))
        assert machine.channel.sent, "the event's requests went out"
    finally:
        machine.teardown()


def test_a_cancel_that_leaves_no_leader_is_elected_from_the_events_outputs() -> None:
    """A cancel allowed by unclean.leader.election.enable drops the only in-sync replica (2, the
    leader): the removal writes leader −1 and adds the partition to the event's ``leaderless``;
    the Finisher, handed that value, elects 1."""
    machine = _machine(rf=1)  # [1]
    try:
        _step(machine, lambda: machine.set_unclean_election(topic="t0", enable=True))
        _step(machine, lambda: machine.run(machine._alter({TP0: (2, 3)})))
        _step(machine, lambda: machine.replicas_catch_up(pick=0, count=1, notify=True))  # ISR [1, 2]
        _step(machine, lambda: machine.broker_bounces(pick=0))  # 2 leads, ISR [2]
        parts = machine.active
        assert parts is not None
        out = parts.event_outputs()
        cancel = AlterReassignments(((TP0, None),), CancelMode.CANCEL)
        result = machine.run(parts.intake.alter(cancel, out))
        assert [r.error_code for r in result.results] == [0]
        assert out.leaderless == {TP0}
        assert _zk_state(machine)[1].leader == NO_LEADER  # written, not yet elected
        machine.run(parts.finisher.after_reassignments(out))
        a, s = _zk_state(machine)
        assert a == ReplicaAssignment((1,))
        assert s.leader == 1, s
    finally:
        machine.teardown()

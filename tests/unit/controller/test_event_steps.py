"""The batches, self-healing and leadership hand their ZooKeeper writes to the applier as steps:
what an event of theirs writes is read off its ``EventOutputs.steps``, in order, and a refusal the
handler expects comes back as a value (the grep that no part writes itself is in
``test_event_outputs.py``).

Driven over the simulated ZooKeeper with the real parts of one active term (the property
machine's setup), as ``test_event_outputs.py`` is.
"""

from __future__ import annotations

import pytest

from reassignd.controller.effects.writes import Write
from reassignd.executor import paths as batch_paths
from reassignd.executor.model import BatchSpec, Limits, PartitionSpec
from reassignd.zk import admin_codec, paths
from reassignd.zk.errors import BadVersionError, NoNodeError
from reassignd.zk.values import Create, Delete
from tests.unit.controller.core_machine import TP0, _machine, _zk_state

pytestmark = pytest.mark.timeout(60)


def test_a_batch_submission_journals_through_the_events_steps() -> None:
    machine = _machine(rf=1)  # t0-0 on [1]
    try:
        parts = machine.active
        assert parts is not None
        out = parts.event_outputs()
        spec = BatchSpec("b1", (PartitionSpec("t0", 0, (2,)),), Limits(1, 1, 1))
        result = machine.run(parts.runner.submit(spec, out, {}))
        assert result.created
        writes = [s for s in out.steps if isinstance(s, Write)]
        head = batch_paths.batch("b1")
        first = writes[0].ops
        # the submission's journal first (head and chunks in one multi), then the move's start
        assert any(isinstance(op, Create) and op.path == head for op in first), first
        assert machine.run(machine.shared.zk.exists(head)) is not None
        assert _zk_state(machine)[0].target_replicas == (2,), "the move started after its journal"
    finally:
        machine.teardown()


def test_a_demotion_records_itself_through_the_events_steps() -> None:
    machine = _machine(rf=2)  # t0-0 on [1, 2], led by 1
    try:
        parts = machine.active
        assert parts is not None
        out = parts.event_outputs()
        machine.run(parts.demotions.demote(1, out))
        record = next(s for s in out.steps if isinstance(s, Write))
        assert isinstance(record.ops[0], Create) and record.ops[0].path == paths.demotion(1)
        assert machine.run(machine.shared.zk.exists(paths.demotion(1))) is not None
    finally:
        machine.teardown()


def test_the_preferred_election_znode_is_deleted_by_a_step_expecting_its_refusals() -> None:
    """A znode written again meanwhile (BadVersion) or gone already (NoNode) is a refusal the
    handler expects: a value, not a failure of the event."""
    machine = _machine(rf=2)
    try:
        parts = machine.active
        assert parts is not None
        zk = machine.shared.zk
        data = admin_codec.encode_preferred_replica_election((TP0,))
        machine.run(zk.create(paths.PREFERRED_REPLICA_ELECTION, data))
        out = parts.event_outputs()
        machine.run(parts.leaders.on_znode(out))
        (delete,) = [s for s in out.steps if isinstance(s, Write) and isinstance(s.ops[0], Delete)]
        assert delete.ops[0].path == paths.PREFERRED_REPLICA_ELECTION
        assert set(delete.expect) == {BadVersionError, NoNodeError}
        assert machine.run(zk.exists(paths.PREFERRED_REPLICA_ELECTION)) is None
    finally:
        machine.teardown()

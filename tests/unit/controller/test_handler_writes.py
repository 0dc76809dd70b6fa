"""The batches, self-healing and leadership write ZooKeeper through their event's fenced write
gateway (``out.writes``): what an event of theirs wrote is read back from ZooKeeper, in the order
it landed, and a refusal the handler expects comes back as a value it decides on (the grep that no
part writes itself is in ``test_event_outputs.py``).

Driven over the simulated ZooKeeper with the real parts of one active term (the property
machine's setup), as ``test_event_outputs.py`` is.
"""

from __future__ import annotations

import pytest

from reassignd.executor import paths as batch_paths
from reassignd.executor.model import BatchSpec, Limits, PartitionSpec
from reassignd.zk import admin_codec, paths
from tests.unit.controller.core_machine import TP0, _machine, _zk_state

pytestmark = pytest.mark.timeout(60)


def test_a_batch_submission_journals_before_its_move_starts() -> None:
    machine = _machine(rf=1)  # t0-0 on [1]
    try:
        parts = machine.active
        assert parts is not None
        zk = machine.zk
        out = parts.event_outputs()
        spec = BatchSpec("b1", (PartitionSpec("t0", 0, (2,)),), Limits(1, 1, 1))
        result = machine.run(parts.runner.submit(spec, out, {}))
        assert result.created
        head = machine.run(zk.exists(batch_paths.batch("b1")))
        topic = machine.run(zk.exists(paths.topic(TP0[0])))
        assert head is not None and topic is not None
        assert _zk_state(machine)[0].target_replicas == (2,), "the move started"
        assert head.czxid < topic.mzxid, "the submission's journal landed before the move's start"
    finally:
        machine.teardown()


def test_a_demotion_records_itself_in_zookeeper() -> None:
    machine = _machine(rf=2)  # t0-0 on [1, 2], led by 1
    try:
        parts = machine.active
        assert parts is not None
        assert machine.run(machine.zk.exists(paths.demotion(1))) is None
        machine.run(parts.demotions.demote(1, parts.event_outputs()))
        assert machine.run(machine.zk.exists(paths.demotion(1))) is not None
    finally:
        machine.teardown()


def test_the_preferred_election_znode_is_deleted_and_its_expected_refusals_are_values() -> None:
    """The znode is deleted at the version read. One written again meanwhile (BadVersion) is left
    for the data watch its write fired, and one gone already (NoNode) is fine: refusals the
    handler expects, decided on as values, not failures of the event."""
    machine = _machine(rf=2)
    try:
        parts = machine.active
        assert parts is not None
        zk = machine.zk
        path = paths.PREFERRED_REPLICA_ELECTION
        data = admin_codec.encode_preferred_replica_election((TP0,))
        machine.run(zk.create(path, data))
        machine.run(parts.leaders.on_znode(parts.event_outputs()))
        assert machine.run(zk.exists(path)) is None
        # written again after its read at version 0: the delete at version 0 is refused, kept
        machine.run(zk.create(path, data))
        machine.run(zk.set(path, data, 0))
        machine.run(parts.leaders._delete(0, parts.event_outputs()))
        assert machine.run(zk.exists(path)) is not None
        # gone already: the delete is refused, nothing raised
        machine.run(zk.delete(path))
        machine.run(parts.leaders._delete(1, parts.event_outputs()))
        assert machine.run(zk.exists(path)) is None
    finally:
        machine.teardown()

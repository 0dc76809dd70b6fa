"""What an event ended, sends and answers is a value (issue 22, Build 1; its ZooKeeper writes are
not: each is performed when awaited, through the fenced write gateway the outputs carry): the
reassignment algorithm adds what an event ended to the ``EventOutputs`` it is handed — the partitions phase B completed, the ones a
replica removal left without a leader — and ``Finisher.after_reassignments`` consumes that value;
no long-lived part keeps them between events. The handlers neither send nor answer: the one
applier (``runtime.apply``) sends the event's sealed requests, in order, then gives its replies.

Driven over the simulated ZooKeeper with the real parts of one active term (``active.build`` and
``failover.load``, through the property machine's setup), each handler called with an
``EventOutputs`` of its own so what it produced can be read off the value.
"""

from __future__ import annotations

import ast
import asyncio
import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

import reassignd.controller
from reassignd.control.protocol import ControlRequest
from reassignd.controller.effects.writer import ZkWriter
from reassignd.controller.instance.channel import ControlChannel
from reassignd.controller.instance.shared import Shared
from reassignd.controller.model.requests import AlterReassignments, CancelMode
from reassignd.controller.partitions.partition_logic import NO_LEADER
from reassignd.controller.reassignment.algorithm import Reassigner
from reassignd.controller.runtime.apply import apply
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.zk.client import ZkClient
from reassignd.zk.reads import ZkReads
from tests.unit.controller.core_machine import TP0, _machine, _step, _zk_state

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
        machine.channel.sent.clear()
        machine.run(parts.finisher.after_reassignments(out))
        assert out.completed == [], "the finisher acted on the completion: it is taken"
        assert machine.channel.sent == [], "handlers never send: the applier does"
        assert out.outgoing, "the event's requests are sealed for the applier"
        machine.run(apply(machine.shared, out))
        assert machine.channel.sent, "the event's requests went out"
        assert out.outgoing == []
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
        (result,) = machine.run(parts.intake.carry_out(machine.run(parts.intake.decide([cancel])), out))
        assert [r.error_code for r in result.results] == [0]
        assert out.leaderless == {TP0}
        assert _zk_state(machine)[1].leader == NO_LEADER  # written, not yet elected
        machine.run(parts.finisher.after_reassignments(out))
        a, s = _zk_state(machine)
        assert a == ReplicaAssignment((1,))
        assert s.leader == 1, s
    finally:
        machine.teardown()


def test_the_applier_sends_sealed_batches_in_order_then_answers() -> None:
    """Batches go out in the order they were sealed (a handler's own batch before the main one
    collected after it), each built when sealed; the replies only after every request was queued."""
    machine = _machine(rf=1)
    try:
        parts = machine.active
        assert parts is not None
        machine.channel.sent.clear()
        out = parts.event_outputs()
        first = parts.broker_requests()
        first.add_update_metadata([TP0])
        out.add(first)
        out.requests.add_leader_and_isr([1], TP0)
        reply: asyncio.Future[str] = machine.loop.create_future()
        answered_at_send: list[bool] = []
        record = machine.channel.send

        def send(broker_id: int, request: ControlRequest) -> None:
            answered_at_send.append(reply.done())
            record(broker_id, request)

        machine.channel.send = send  # type: ignore[method-assign]
        out.answer(reply, "done")
        assert machine.channel.sent == [] and not reply.done()
        machine.run(apply(machine.shared, out))
        kinds = [type(r).__name__ for _, r in machine.channel.sent]
        # every live broker hears the metadata of the first batch before broker 1 its LeaderAndIsr
        assert kinds == ["UpdateMetadataRequest"] * len(parts.ctx.brokers) + ["LeaderAndIsrRequest"], kinds
        assert machine.channel.sent[-1][0] == 1
        assert reply.result() == "done"
        assert answered_at_send == [False] * len(kinds), "answered only after every request was queued"
    finally:
        machine.teardown()


@functools.cache
def _nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of one module, parsed once for all the rules below (the package is read four
    times over)."""
    return tuple(ast.walk(ast.parse(path.read_text(), filename=str(path))))


def _attributes(root: Path) -> Iterator[tuple[str, ast.Attribute]]:
    """Every attribute read (a call's or a reference's) in the modules under ``root``, with its
    module's path relative to ``root``: a comment or a string naming a method is not a use of it."""
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in _nodes(path):
            if isinstance(node, ast.Attribute):
                yield rel, node


def _annotated(root: Path) -> Iterator[tuple[str, str]]:
    """The names in every annotation (a field's, a variable's, a parameter's) under ``root``."""
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in _nodes(path):
            annotation = node.annotation if isinstance(node, ast.AnnAssign | ast.arg) else None
            for part in ast.walk(annotation) if annotation is not None else ():
                if isinstance(part, ast.Name):
                    yield rel, part.id
                elif isinstance(part, ast.Constant) and isinstance(part.value, str):  # "ZkWriter"
                    yield rel, part.value


def _named(node: ast.expr, suffix: str) -> bool:
    """``zk``, ``self.zk``, ``self.shared.zk`` for suffix ``zk`` (also ``_zk``, ``inner_zk``)."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name.endswith(suffix)


def _method(cls: type, name: str) -> str:
    """``name``, once it is known to be a method of ``cls``: a rename fails here, loudly, instead of
    leaving a rule below that looks for a name nobody uses any more."""
    assert callable(getattr(cls, name, None)), f"{cls.__qualname__}.{name} is gone: update this rule"
    return name


def test_no_handler_sends_or_answers_outside_the_applier() -> None:
    """The acceptance rule: in the controller, control requests reach the channel only through
    ``Shared.deliver``, called only by the applier, and a request's reply is set only by the
    event's outputs (or by the instance itself: hand-over, failures)."""
    deliver = _method(Shared, "deliver")
    send = _method(ControlChannel, "send")
    set_result = _method(asyncio.Future, "set_result")
    root = Path(reassignd.controller.__file__).parent
    delivers, channel_sends, answers = set(), set(), set()
    for rel, node in _attributes(root):
        if node.attr == deliver:
            delivers.add(rel)
        if node.attr == send and _named(node.value, "channel"):
            channel_sends.add(rel)
        if node.attr == set_result:
            answers.add(rel)
    assert sorted(delivers) == ["runtime/apply.py"]
    assert sorted(channel_sends) == ["instance/shared.py"]
    assert sorted(answers) == ["effects/event_outputs.py", "runtime/controller.py"]


def test_no_handler_writes_zookeeper_outside_the_fenced_writer() -> None:
    """The acceptance rule for writes: in the controller, ZooKeeper is written only by the
    fenced write gateway's implementation (effects/writer.py), which handlers reach only through
    the event's outputs (``out.writes``; no part holds the writer), and by the instance for its own znodes (the
    election and the paths it needs before it may lead: no fence exists yet). Who may build a
    ``ZkWriter`` is an import rule: only ``runtime.active`` imports its module (the import-linter
    contract "only the active term's parts build the ZooKeeper writer")."""
    write_methods = {
        _method(ZkClient, name)
        for name in ("create", "set", "delete", "multi", "fenced_multi", "ensure_path")
    }
    root = Path(reassignd.controller.__file__).parent
    writes, holders = set(), set()
    for rel, node in _attributes(root):
        if node.attr in write_methods and (_named(node.value, "zk") or _named(node.value, "sender")):
            writes.add(rel)  # the writer's ``sender``: the session's fenced multi, handed by the term
        if node.attr == "writer" and isinstance(node.value, ast.Name) and node.value.id == "self":
            holders.add(rel)
    holders |= {rel for rel, name in _annotated(root) if name == ZkWriter.__name__}
    assert sorted(writes) == [
        "effects/writer.py",
        "runtime/controller_election.py",
        "runtime/term.py",  # the persistent paths, before the election
    ]
    assert sorted(holders) == ["runtime/active.py"]  # ActiveParts keeps it to hand to each event's outputs
    # nothing outside the controller takes its fence to write for it either
    fenced_multi = _method(ZkClient, "fenced_multi")
    package = root.parent
    fenced = {rel for rel, node in _attributes(package) if node.attr == fenced_multi}
    fenced |= {
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        for node in _nodes(path)
        if isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef) and node.name == fenced_multi
    }
    assert sorted(fenced) == [
        "controller/effects/writer.py",
        "controller/runtime/controller_election.py",  # giving /controller up, fenced by its own epoch
        "zk/client.py",  # its definition
    ]


def test_no_part_reads_zookeeper_but_through_the_read_port() -> None:
    """The read half (issue 36): the controller's parts read ZooKeeper only through the ZkReads
    port (``reads``, ``shared.reads``); the client itself is held only by the composition — the
    instance (its session), the term and its election (which read and write ``/controller`` and
    the epoch before any fence exists), and the API (the session's state, no reads) — and only
    the term and its election call a read on it."""
    read_methods = {name for name in vars(ZkReads) if not name.startswith("_")}
    assert {"get", "get_or_none", "exists", "children", "get_many", "last_zxid"} <= read_methods
    assert all(hasattr(ZkClient, name) for name in read_methods)  # the client has each read
    root = Path(reassignd.controller.__file__).parent
    direct = {
        rel for rel, node in _attributes(root) if node.attr in read_methods and _named(node.value, "zk")
    }
    assert sorted(direct) == ["runtime/controller_election.py", "runtime/term.py"]
    holders = {rel for rel, name in _annotated(root) if name == ZkClient.__name__}
    assert sorted(holders) == [
        "api/controller_api.py",
        "runtime/controller.py",
        "runtime/controller_election.py",
        "runtime/term.py",
    ]

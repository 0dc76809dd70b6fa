"""The move lifecycle's transition table, held by the real handlers: a step the table forbids is
refused (the event refused and reported, memory reloaded from ZooKeeper), and the controller
neither crashes nor resigns. In-process controller, real ZooKeeper, real agents."""

from __future__ import annotations

import msgspec

from reassignd.controller.model.moves import MoveState
from reassignd.controller.model.requests import AlterReassignments
from reassignd.controller.runtime.controller import Controller
from reassignd.errors import EventRefused
from reassignd.testing.controller import in_process_controller
from reassignd.testing.polling import eventually
from reassignd.zk import codec, paths
from reassignd.zk.client import ZkClient
from tests.faults.scenarios import wait_brokers, wait_online
from tests.integration.harness import Procs, controller_epoch, problems_text
from tests.integration.reassignment_helpers import make_topic, set_broker_rate


async def _true(value: object) -> bool:
    return bool(value)


def _reloads(controller: Controller) -> float:
    return controller.metrics.registry.get_sample_value("reassignd_controller_reloads_total") or 0.0


async def test_an_illegal_move_step_is_refused_and_the_controller_stays_active(
    procs: Procs, zk_connect: str, zk: ZkClient
) -> None:
    """A move record left FINISHING (the trace a bug would leave: phase B without its topic
    write) meets a cancel: the intake's step to REVERTING is one the table forbids. The cancel
    is refused before anything of it is written, reported, memory is reloaded from ZooKeeper
    (the record is CATCHING_UP again), the controller keeps its epoch, and the same cancel then
    succeeds; the other partition's move never stopped."""
    await set_broker_rate(zk, None, "1000")  # a slow copy: the moves stay in flight
    procs.cluster(4, 1)
    assert await wait_brokers(zk, {1, 2, 3, 4})
    async with in_process_controller(zk_connect, session_timeout_s=4.0) as c:
        await c.until_active()
        controller = c.controller
        await make_topic(zk, "x", {0: (1, 2), 1: (1, 2)}, initial_bytes=100_000_000)
        assert await wait_online(zk, [("x", 0), ("x", 1)], timeout_s=30.0)
        started = await controller.api.alter_reassignments(
            AlterReassignments(((("x", 0), (3, 2)), (("x", 1), (3, 2))))
        )
        assert [r.error_code for r in started.results] == [0, 0]
        ctx = controller.ctx
        assert ctx is not None
        tp = ("x", 0)
        assert ctx.moves[tp].state is MoveState.CATCHING_UP  # phase A sent
        epoch = await controller_epoch(zk)
        reloads = _reloads(controller)

        ctx.moves[tp] = msgspec.structs.replace(ctx.moves[tp], state=MoveState.FINISHING)
        try:
            await controller.api.alter_reassignments(AlterReassignments(((tp, None),)))
        except EventRefused as e:
            assert "illegal transition finishing -> reverting" in str(e), e
        else:
            raise AssertionError("a step the transition table forbids was taken")
        await eventually(
            lambda: _true("illegal transition finishing -> reverting" in problems_text(controller)),
            10.0,
            what="the refusal reported",
        )  # published once the event, its reload included, is done
        assert _reloads(controller) == reloads + 1
        assert controller.active
        assert await controller_epoch(zk) == epoch  # no resignation, no new election
        # nothing of the refused cancel was written: both partitions still move in ZooKeeper
        topic = codec.decode_topic((await zk.get(paths.topic("x"))).data)
        assert topic.adding == {0: (3,), 1: (3,)}, topic
        fresh = controller.ctx
        assert fresh is not None and fresh is not ctx  # memory rebuilt from ZooKeeper
        await eventually(
            lambda: _true(set(fresh.moves) == {("x", 0), ("x", 1)}), 10.0, what="the moves reloaded"
        )
        assert fresh.moves[tp].state is MoveState.CATCHING_UP, fresh.moves[tp]

        cancelled = await controller.api.alter_reassignments(AlterReassignments(((tp, None),)))
        assert [r.error_code for r in cancelled.results] == [0]
        assert tp not in fresh.moves and ("x", 1) in fresh.moves
        a = fresh.assignment(tp)
        assert a is not None and a.replicas == (1, 2)

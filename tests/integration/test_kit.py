"""The in-process cluster kit (reassignd/testing/kit.py) runs what the processes run: the same
command lines, an election, agents that register and serve, a move to the end; a planned stop
hands the active role over; what only a process can do says so; each component logs to its file."""

from __future__ import annotations

import pytest

from reassignd.testing.kit import NeedsAProcess
from reassignd.zk.client import ZkClient
from tests.integration.harness import Kit, active_one, controller_epoch, eventually, wait_brokers
from tests.integration.reassignment_helpers import alter, completed, make_topic


async def test_a_controller_and_agents_in_process_move_a_partition(kit: Kit, zk: ZkClient) -> None:
    first = kit.controller(9000)
    second = kit.controller(9001)
    active, status = await active_one(first, second)
    assert status["active"] and status["controller_id"] in (9000, 9001)
    agents = kit.cluster(3)
    await wait_brokers(active, {1, 2, 3})
    await make_topic(zk, "k", {0: (1, 2)}, initial_bytes=10_000)
    await alter(active, {("k", 0): [2, 3]})
    await eventually(lambda: completed(zk, "k", 0, (2, 3)), what="k-0 moved to [2, 3]")

    assert "elected as the active controller" in active.proc.log()
    assert "registered /brokers/ids/1" in agents.log()  # each component's lines in its own file
    assert "registered /brokers/ids/1" not in active.proc.log()
    assert "elected as the active controller" not in agents.log()
    with pytest.raises(NeedsAProcess):
        active.proc.kill()

    epoch = await controller_epoch(zk)
    await active.proc.stop()  # a planned stop: the standby takes over at once
    assert not active.proc.alive
    standby = second if active is first else first
    again, _ = await active_one(standby)
    assert again is standby
    assert await controller_epoch(zk) == epoch + 1


async def test_a_bad_command_line_fails_at_once(kit: Kit) -> None:
    with pytest.raises(Exception, match="session-timeout"):
        kit.controller(9000, -1.0)

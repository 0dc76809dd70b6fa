"""The agents keep Kafka's ISR protocol (issue 37, point 8), against a real ZooKeeper.

- Real processes (a controller and two agents, each killed on its own): a follower killed and
  restarted with replication throttled far below the topic's produce rate stays out of the ISR
  while it lags, the leader never writes the dead follower back over the controller's shrink, and
  killing the leader then leaves the partition offline instead of electing the lagging follower.
- In-process agents with the test playing the controller: the controller's write of the partition
  state wins over the leader's conditional write at the version it knew (BADVERSION), until the
  controller's LeaderAndIsr reaches the leader.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator

import aiohttp
import pytest

from reassignd.broker.settings import cluster_settings
from reassignd.testing.polling import eventually
from reassignd.zk import codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.agent_helpers import (
    CONTROLLER_EPOCH,
    Controller,
    GiB,
    Registered,
    agents,
    base,
    start_move,
)
from tests.integration.election_helpers import RATE, create_topic, led_by, set_config, stays, unclean_count
from tests.integration.harness import Procs, active_one, wait_brokers
from tests.integration.reassignment_helpers import FAST, replica_on

PRODUCE = "reassignd.sim.produce.bytes.per.s"


async def test_a_restarted_throttled_follower_stays_out_of_the_isr_and_is_never_elected_cleanly(
    procs: Procs, zk: ZkClient
) -> None:
    c = procs.controller(9000, 2.0)
    await active_one(c)
    await set_config(zk, paths.config_broker(None), **{RATE: FAST})
    brokers = {b: procs.broker(b) for b in (1, 2)}
    await wait_brokers(c, {1, 2})
    await create_topic(zk, "t", (1, 2), {PRODUCE: "2000000"})
    await eventually(lambda: led_by(zk, "t", 1, (1, 2)), what="t-0 led by 1, both in sync")

    # the follower dies: the controller shrinks the ISR, and the leader does not write it back
    brokers[2].kill()
    await eventually(lambda: led_by(zk, "t", 1, (1,)), what="the controller drops 2 from the ISR")
    await stays(lambda: led_by(zk, "t", 1, (1,)))

    # it comes back throttled to 1 KB/s against 2 MB/s of produce: it copies, lags, stays out
    await set_config(zk, paths.config_broker(2), **{RATE: "1000"})
    brokers[2] = procs.broker(2)
    await wait_brokers(c, {1, 2})
    replica = await eventually(functools.partial(replica_on, c, 2, "t", 0), what="2 copies t-0 again")
    assert replica["in_isr"] is False

    async def lagging_out_of_isr() -> bool:
        r = await replica_on(c, 2, "t", 0)
        return r is not None and not r["in_isr"] and r["lag_bytes"] > 0 and await led_by(zk, "t", 1, (1,))

    await stays(lagging_out_of_isr, 3.0)

    # the leader dies: no clean candidate, unclean elections off → offline, the follower not elected
    brokers[1].kill()
    await eventually(lambda: led_by(zk, "t", -1, (1,)), what="t-0 offline")
    await stays(lambda: led_by(zk, "t", -1, (1,)))
    assert await unclean_count(c) == 0


@pytest.fixture
async def controller(zk: ZkClient) -> AsyncIterator[Controller]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:
        yield Controller(zk, http)


async def test_the_controllers_write_wins_over_the_leaders_stale_conditional_write(
    zk_connect: str, controller: Controller, caplog: pytest.LogCaptureFixture
) -> None:
    """Broker 2, slow, copies orders-0 from broker 1. The controller rewrites the partition state
    (leader epoch + 1, ISR [1]) and its LeaderAndIsr has not reached the leader yet; then broker 2
    catches up. The leader's ISR write at the version it knew fails and is not retried: the
    controller's state stays. Once the LeaderAndIsr arrives, the leader adds broker 2 at the
    controller's version."""
    caplog.set_level(logging.INFO, logger="reassignd.broker.1.isr")
    await controller.set_config(paths.config_broker(2), {RATE: "2000"})
    settings = cluster_settings(base(zk_connect), 2, 1, None)
    async with agents(settings):
        b1, b2 = await controller.registered(1), await controller.registered(2)
        config = {"reassignd.sim.initial.bytes": "10000000", PRODUCE: "200000"}
        await start_move(controller, b1, b2, config)
        await eventually(lambda: _copying(controller, b2), 30.0, 0.05, "broker 2 copies, out of the ISR")
        before, version = await controller.state("orders")
        assert before.isr == (1,)
        written = codec.PartitionState(1, before.leader_epoch + 1, CONTROLLER_EPOCH, (1,))
        await controller.zk.set(
            paths.partition_state("orders", 0), codec.encode_partition_state(written), version
        )

        await controller.set_config(paths.config_broker(2), {RATE: str(GiB)})

        def refused() -> bool:
            return "waiting for its LeaderAndIsr" in caplog.text

        await eventually(refused, 30.0, 0.05, "the leader's stale write conflicts")
        assert "orders-0: the controller wrote the partition state (leader 1, leader epoch" in caplog.text

        async def controllers_state() -> bool:
            return await controller.state("orders") == (written, version + 1)

        await stays(controllers_state)

        # the controller's LeaderAndIsr: the leader knows the version again and adds broker 2
        state = await controller.wire_state("orders", (1, 2))
        for b in (b1, b2):
            response = await controller.leader_and_isr(b, (state,), (b1,))
            assert response["partition_errors"][0]["error_code"] == 0

        async def joined() -> bool:
            after, _ = await controller.state("orders")
            return after.isr == (1, 2)

        await eventually(joined, 30.0, 0.05, "broker 2 joins at the controller's version")
        after, v = await controller.state("orders")
        assert (after.leader, after.leader_epoch, v) == (1, written.leader_epoch, version + 2)


async def _copying(controller: Controller, b2: Registered) -> bool:
    r = (await controller.replicas(b2)).get(("orders", 0))
    return r is not None and r["log_end_offset"] > 0 and not r["in_isr"]

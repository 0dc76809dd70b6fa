"""What the controller does after a write ZooKeeper refuses the same way whoever the controller is
(NOAUTH: another principal owns the znode, tests/zk_acl.py): a sequenced request whose status
node cannot be written is never deleted, and a replica whose partition state could not be
written is not deleted from its broker. In-process controller, real ZooKeeper, real agents."""

from __future__ import annotations

import asyncio

import pytest

from reassignd.controller.model.requests import AlterReassignments, CancelReassignments
from reassignd.testing.controller import in_process_controller
from reassignd.testing.polling import eventually
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.client import ZkClient
from tests.faults.scenarios import FAST, SLOW, make_topic, set_rate, wait_online
from tests.integration.harness import Kit, controller_epoch, hosted, http_get, problems_text
from tests.zk_acl import own

pytestmark = pytest.mark.timeout(180)

BIG = 520


async def test_a_sequenced_request_stays_while_its_status_node_cannot_be_written(
    kit: Kit, zk_connect: str, zk: ZkClient
) -> None:
    kit.cluster(3, 1)
    await zk.ensure_path(paths.BROKER_TOPICS)
    await make_topic(zk, "s", {0: (1, 2)})
    # enough partitions that the status nodes take two fenced multis (500 ops each): the one
    # refused first, the request's own delete able to ride on a later one that lands
    await make_topic(zk, "t", {p: (1,) for p in range(BIG)})
    async with in_process_controller(zk_connect, session_timeout_s=4.0) as c:
        await c.until_active()
        controller = c.controller
        assert await wait_online(zk, [("s", 0), ("t", 0), ("t", BIG - 1)], timeout_s=60.0)
        # the status nodes of s go under a znode another principal owns: their creation is NOAUTH
        await zk.ensure_path(paths.REASSIGNMENTS)
        await own(zk_connect, paths.reassignment_status_topic("s"), create=True)
        epoch = await controller_epoch(zk)
        request = admin_codec.encode_reassignment_request(
            admin_codec.ReassignmentRequest({("s", 0): (2, 3), **{("t", p): (2,) for p in range(BIG)}})
        )
        path = await zk.create(paths.REASSIGNMENT_REQUEST_PREFIX, request, sequential=True)

        async def reported() -> bool:
            return "NOAUTH" in problems_text(controller) or "quarantined" in problems_text(controller)

        await eventually(reported, 20.0, what="the refused status write reported")
        for _ in range(4):  # the request is never deleted without its status node
            assert await zk.exists(path) is not None, path
            assert await zk.exists(paths.reassignment_status("s", 0)) is None
            await asyncio.sleep(0.5)
        assert controller.active
        assert await controller_epoch(zk) == epoch


async def test_a_replica_whose_state_write_was_given_up_is_not_deleted(
    kit: Kit, zk_connect: str, zk: ZkClient
) -> None:
    kit.cluster(4, 1)
    await zk.ensure_path(paths.BROKER_TOPICS)
    await set_rate(zk, None, FAST)
    await set_rate(zk, 4, SLOW)  # broker 4 never catches up: the move stays in flight
    await make_topic(zk, "r", {0: (1, 2)}, initial_bytes=20_000_000)
    state_path = paths.partition_state("r", 0)
    async with in_process_controller(zk_connect, session_timeout_s=4.0) as c:
        await c.until_active()
        controller = c.controller
        assert await wait_online(zk, [("r", 0)], timeout_s=60.0)

        async def registered() -> bool:
            return set(controller.snapshot().brokers) == {1, 2, 3, 4}

        await eventually(registered, 60.0, what="brokers 1-4 registered")
        moved = await controller.api.alter_reassignments(AlterReassignments(((("r", 0), (1, 2, 3, 4)),)))
        assert [r.error_code for r in moved.results] == [0]

        async def three_in_sync() -> bool:
            return 3 in codec.decode_partition_state((await zk.get(state_path)).data).isr

        await eventually(three_in_sync, 60.0, what="broker 3 caught up (in the ISR), 4 still adding")
        assert c.url is not None
        code, body = await http_get(c.url + "/v1/brokers")
        assert code == 200
        broker3 = next(b for b in body["brokers"] if b["id"] == 3)
        assert ("r", 0) in await hosted(broker3)
        # another principal owns the state: taking 3 out of the ISR is refused (NOAUTH)
        await own(zk_connect, state_path)
        epoch = await controller_epoch(zk)
        await controller.api.cancel_reassignments(CancelReassignments("r", 0))

        async def reported() -> bool:
            return "NOAUTH" in problems_text(controller)

        await eventually(reported, 20.0, what="the refused state write reported")
        state = codec.decode_partition_state((await zk.get(state_path)).data)
        assert 3 in state.isr, "the state was not written: ZooKeeper still has 3 in the ISR"
        for _ in range(4):  # ... so broker 3's copy is never deleted under it
            assert ("r", 0) in await hosted(broker3)
            await asyncio.sleep(0.5)
        assert controller.active
        assert await controller_epoch(zk) == epoch

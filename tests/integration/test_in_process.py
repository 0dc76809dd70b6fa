"""The controller in the test's own event loop (``reassignd.testing.controller``), for what can only
be seen from inside: how many ZooKeeper writes a move costs it, and what its failover reads.
Real ZooKeeper, real agents (a ``reassignd cluster`` process), real HTTP through the API client."""

from __future__ import annotations

from reassignd.api_client.client import ApiClient
from reassignd.testing.controller import in_process_controller
from reassignd.testing.polling import eventually
from reassignd.zk import codec, paths
from reassignd.zk.client import Create, ZkClient
from tests.integration.harness import Procs

PARTITIONS = 24


async def _true(value: object) -> bool:
    return bool(value)


async def test_a_move_costs_the_controller_at_most_three_writes_per_partition(
    procs: Procs, zk_connect: str, zk: ZkClient
) -> None:
    procs.cluster(4, 1)
    async with in_process_controller(zk_connect, session_timeout_s=2.0) as c:
        await c.until_active()
        controller = c.controller
        await eventually(lambda: _true(controller.ctx is not None and len(controller.ctx.brokers) == 4))
        topic = codec.TopicZnode({p: (1, 2, 3) for p in range(PARTITIONS)})
        await zk.multi([Create(paths.topic("w"), codec.encode_topic(topic))])
        await eventually(
            lambda: _true(controller.ctx is not None and len(controller.ctx.states) == PARTITIONS)
        )
        assert controller.parts is not None and c.url is not None
        writer = controller.parts.writer
        before = writer.ops_written
        async with ApiClient.open(c.url, timeout_s=10) as api:
            assert (await api.status())["controller_id"] == 9000
            results = await api.alter(
                {
                    "topics": [
                        {
                            "name": "w",
                            "partitions": [
                                {"partition": p, "replicas": [4, 2, 3]} for p in range(PARTITIONS)
                            ],
                        }
                    ]
                }
            )
            assert [r.error_code for r in results] == [0] * PARTITIONS

            async def moved() -> bool:
                return not await api.reassignments() and all(
                    info.replicas == (4, 2, 3) for info in (await api.topic("w")).values()
                )

            await eventually(moved, 60, what="every partition on 4, 2, 3")
        # start (TRS/AR/RR, epochs), then finish: Kafka's algorithm needs two phases of writes
        per_partition = (writer.ops_written - before) / PARTITIONS
        assert 2 <= per_partition <= 3, per_partition
    # the controller's session was closed on the way out: its /controller znode is gone
    assert await zk.exists(paths.CONTROLLER) is None

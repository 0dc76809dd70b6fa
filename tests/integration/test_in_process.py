"""The controller in the test's own event loop (``reassignd.testing.controller``), for what can only
be seen from inside: how many ZooKeeper writes a move costs it, and what its failover reads.
Real ZooKeeper, real agents (a ``reassignd cluster`` process), real HTTP through the API client."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from reassignd.api_client.client import ApiClient
from reassignd.api_client.shapes import partition_results, reassignments_by_partition
from reassignd.controller.batches.runner import API_CANCELLED
from reassignd.controller.instance.events import ApiPartitionReassignment
from reassignd.controller.model.moves import Move, MoveState
from reassignd.controller.model.requests import AlterReassignments, AlterResult, Source
from reassignd.controller.runtime.controller import Controller
from reassignd.executor.model import BatchMove, BatchMoveState
from reassignd.testing.controller import in_process_controller
from reassignd.testing.polling import eventually
from reassignd.zk import codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.values import Create
from tests.integration.harness import Procs
from tests.integration.reassignment_helpers import make_topic, set_broker_rate, topic_znode

PARTITIONS = 24


async def _true(value: object) -> bool:
    return bool(value)


async def _until_four_brokers(controller: Controller) -> None:
    """The cluster process registers its four agents one by one: a move onto a broker the
    controller has not yet seen is refused (INVALID_REPLICA_ASSIGNMENT)."""
    await eventually(
        lambda: _true(controller.ctx is not None and controller.ctx.live_broker_ids == {1, 2, 3, 4}),
        what="the four brokers registered",
    )


async def test_a_move_costs_the_controller_at_most_three_writes_per_partition(
    procs: Procs, zk_connect: str, zk: ZkClient
) -> None:
    procs.cluster(4, 1)
    async with in_process_controller(zk_connect, session_timeout_s=2.0) as c:
        await c.until_active()
        controller = c.controller
        await _until_four_brokers(controller)
        topic = codec.TopicZnode({p: (1, 2, 3) for p in range(PARTITIONS)})
        await zk.multi([Create(paths.topic("w"), codec.encode_topic(topic))])
        await eventually(
            lambda: _true(controller.ctx is not None and len(controller.ctx.states) == PARTITIONS)
        )
        assert controller.parts is not None and c.url is not None
        writer = controller.parts.writer
        before = writer.ops_written
        async with ApiClient.open(c.url, timeout_s=10) as api:
            assert (await api.status()).controller_id == 9000
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
            assert [r.error_code for _, r in partition_results(results)] == [0] * PARTITIONS

            async def moved() -> bool:
                return not (await api.reassignments()).topics and all(
                    info.replicas == (4, 2, 3) for info in (await api.topic("w")).values()
                )

            await eventually(moved, 60, what="every partition on 4, 2, 3")
        # start (TRS/AR/RR, epochs), then finish: Kafka's algorithm needs two phases of writes
        per_partition = (writer.ops_written - before) / PARTITIONS
        assert 2 <= per_partition <= 3, per_partition
    # the controller's session was closed on the way out: its /controller znode is gone
    assert await zk.exists(paths.CONTROLLER) is None


async def test_the_published_counts_follow_topics_moves_and_deletions(
    procs: Procs, zk_connect: str, zk: ZkClient
) -> None:
    """GET /v1/status's partition and moving-partition counts are kept by the publisher as views
    change (not summed per call): after each change they equal a count over the snapshot's views."""
    await set_broker_rate(zk, None, "1000")  # a slow copy: the moves stay in flight
    procs.cluster(4, 1)
    async with in_process_controller(zk_connect, session_timeout_s=2.0) as c:
        await c.until_active()
        controller = c.controller
        assert c.url is not None
        await _until_four_brokers(controller)

        async def counted(expected: tuple[int, int]) -> bool:
            snap = controller.snapshot()
            recount = replace(snap, counts=None)
            assert (snap.partition_count, snap.reassigning_count) == (
                recount.partition_count,
                recount.reassigning_count,
            )
            return (snap.partition_count, snap.reassigning_count) == expected

        await make_topic(zk, "a", {p: (1, 2) for p in range(3)}, initial_bytes=100_000_000)
        await make_topic(zk, "b", {0: (2, 3), 1: (3, 1)})
        await eventually(lambda: counted((5, 0)), what="5 partitions, none moving")
        async with ApiClient.open(c.url, timeout_s=10) as api:
            moves = [{"partition": p, "replicas": [4, 2]} for p in (0, 1)]
            results = await api.alter({"topics": [{"name": "a", "partitions": moves}]})
            assert [r.error_code for _, r in partition_results(results)] == [0, 0]
            await eventually(lambda: counted((5, 2)), what="two moving")
            await zk.create(paths.delete_topic("b"), make_parents=True)
            await eventually(lambda: counted((3, 2)), what="topic b deleted")
            await api.cancel([("a", 0), ("a", 1)])
            await eventually(lambda: counted((3, 0)), what="the moves cancelled")


async def test_queued_requests_are_committed_together_and_each_answered_as_alone(
    procs: Procs, zk_connect: str, zk: ZkClient
) -> None:
    """AlterPartitionReassignments requests queued together are handled as one group (one round
    of ZooKeeper writes) while they name disjoint partitions; each gets the results it would
    have got alone, and a request naming a partition of the group again is handled after it."""
    await set_broker_rate(zk, None, "1000")  # a slow copy: the moves stay in flight
    procs.cluster(4, 1)
    async with in_process_controller(zk_connect, session_timeout_s=2.0) as c:
        await c.until_active()
        controller = c.controller
        await _until_four_brokers(controller)
        await make_topic(zk, "g", {p: (1, 2, 3) for p in range(6)}, initial_bytes=100_000_000)
        registry = controller.metrics.registry

        def handled() -> float:
            labels = {"event": "ApiPartitionReassignment"}
            return registry.get_sample_value("reassignd_controller_event_time_ms_count", labels) or 0.0

        requests = [
            AlterReassignments(((("g", 0), (4, 2, 3)), (("g", 1), (4, 2, 3)))),
            AlterReassignments(((("g", 2), (4, 2, 3)), (("g", 3), (1, 2, 99)))),  # 99: no such broker
            # partition 4 named twice: its result where it was last named, as alone
            AlterReassignments(((("g", 4), (4, 2, 3)), (("g", 5), (4, 2, 3)), (("g", 4), (4, 2, 3)))),
            AlterReassignments(((("g", 0), (1, 2, 4)),)),  # partition 0 again: after the group
        ]
        before, version = handled(), (await zk.get(paths.topic("g"))).stat.version
        loop = asyncio.get_running_loop()
        replies: list[asyncio.Future[AlterResult]] = []
        for request in requests:  # queued at once, as concurrent HTTP requests would be
            replies.append(loop.create_future())
            controller.shared.queue.put(ApiPartitionReassignment(request, replies[-1]))
        async with asyncio.timeout(30):
            answers = [await reply for reply in replies]
        assert handled() - before == 2  # the first three as one, then the fourth
        assert [[(r.partition, r.error_code) for r in a.results] for a in answers] == [
            [(0, 0), (1, 0)],
            [(2, 0), (3, answers[1].results[1].error_code)],
            [(5, 0), (4, 0)],
            [(0, 0)],
        ]
        # one phase-U write of the topic znode for the group, one for the fourth request
        assert (await zk.get(paths.topic("g"))).stat.version == version + 2
        assert c.url is not None
        async with ApiClient.open(c.url, timeout_s=10) as api:
            alone = partition_results(
                await api.alter(
                    {"topics": [{"name": "g", "partitions": [{"partition": 3, "replicas": [1, 2, 99]}]}]}
                )
            )
            refused = answers[1].results[1]
            assert refused.error_code != 0
            assert (alone[0][1].error_code, alone[0][1].error_message) == (
                refused.error_code,
                refused.error_message,
            )
            moving = reassignments_by_partition(await api.reassignments())
        assert {(tp, info.adding_replicas) for tp, info in moving.items()} == {
            (("g", 0), (4,)),  # re-targeted by the fourth request: 1, 2, 4
            (("g", 1), (4,)),
            (("g", 2), (4,)),
            (("g", 4), (4,)),
            (("g", 5), (4,)),
        }
        assert (await topic_znode(zk, "g")).partitions[0] == (1, 2, 4, 3)
        # memory knows the topic znode's last change is its own write: reading it back after the
        # watch fired decodes nothing; a change made outside is still read (a partition added)
        assert controller.ctx is not None
        znode = await zk.get(paths.topic("g"))
        assert controller.ctx.topic_mzxids["g"] == znode.stat.mzxid
        grown = codec.decode_topic(znode.data)
        grown = replace(grown, partitions={**grown.partitions, 6: (1, 2, 3)})
        await zk.set(paths.topic("g"), codec.encode_topic(grown), znode.stat.version)
        await eventually(
            lambda: _true(controller.ctx is not None and ("g", 6) in controller.ctx.states),
            what="partition 6, added outside the controller, online",
        )


async def test_each_moving_partition_has_one_move_record_naming_its_source_and_batch(
    procs: Procs, zk_connect: str, zk: ZkClient
) -> None:
    """The context's move records, seen from inside: a batch's running move names the batch
    until another source re-targets it; an API move names the API; a stopped batch's
    move is reverted and its record gone."""
    await set_broker_rate(zk, None, "1000")  # a slow copy: the moves stay in flight
    procs.cluster(4, 1)
    async with in_process_controller(zk_connect, session_timeout_s=2.0) as c:
        await c.until_active()
        controller = c.controller
        assert c.url is not None
        await _until_four_brokers(controller)
        await make_topic(zk, "m", {p: (1, 2) for p in range(3)}, initial_bytes=100_000_000)
        await eventually(lambda: _true(controller.ctx is not None and len(controller.ctx.states) == 3))
        ctx = controller.ctx
        assert ctx is not None

        def move(p: int) -> Move | None:
            return ctx.moves.get(("m", p))

        async with ApiClient.open(c.url, timeout_s=10) as api:
            body = {
                "batch_id": "owner-1",
                "partitions": [{"topic": "m", "partition": p, "replicas": [3, 2]} for p in (0, 1)],
            }
            await api.post("/v1/batches", body)
            await eventually(lambda: _true(move(0) is not None and move(1) is not None), what="batch moves")
            for p in (0, 1):
                m = move(p)
                assert m is not None
                assert (m.source, m.batch) == (Source.BATCH, "owner-1")
                # phase A sent: the adding replica catches up (slowly)
                assert (m.target, m.origins, m.state) == ((3, 2), (1, 2), MoveState.CATCHING_UP)
            # the API re-targets one of the batch's moves: the move is the API's now
            results = await api.alter(
                {"topics": [{"name": "m", "partitions": [{"partition": 1, "replicas": [4, 2]}]}]}
            )
            assert [r.error_code for _, r in partition_results(results)] == [0]
            m1 = move(1)
            assert m1 is not None and (m1.source, m1.batch, m1.target) == (Source.API, None, (4, 2))
            assert m1.started_at_ms is not None
            # the batch stops: its running move goes back to (1, 2) and its record is gone
            await api.post("/v1/batches/owner-1/stop", {})
            await eventually(lambda: _true(move(0) is None), what="the batch's move reverted")
            a0 = ctx.assignment(("m", 0))
            assert a0 is not None and a0.replicas == (1, 2)
            assert set(ctx.moves) == {("m", 1)}
            await api.cancel([("m", 1)])
            await eventually(lambda: _true(not ctx.moves), what="no move left")


async def test_an_api_cancel_of_a_batch_move_is_journaled_cancelled_by_the_same_event(
    procs: Procs, zk_connect: str, zk: ZkClient
) -> None:
    """Cancelled through the API — a null target (AlterPartitionReassignments' cancel) or a
    DELETE — a move a batch runs is marked cancelled through the API in the batch by the event
    that answers the cancel (the dispatch journals it before the intake writes the topic znode),
    not later by the batch noticing its partition back at its original replicas."""
    await set_broker_rate(zk, None, "1000")  # a slow copy: the moves stay in flight
    procs.cluster(4, 1)
    async with in_process_controller(zk_connect, session_timeout_s=2.0) as c:
        await c.until_active()
        controller = c.controller
        assert c.url is not None
        await _until_four_brokers(controller)
        await make_topic(zk, "k", {p: (1, 2) for p in range(2)}, initial_bytes=100_000_000)
        await eventually(lambda: _true(controller.ctx is not None and len(controller.ctx.states) == 2))
        assert controller.parts is not None
        runner = controller.parts.runner

        def move_of(p: int) -> BatchMove:
            return runner.batches["cancel-1"].moves[("k", p)]

        async with ApiClient.open(c.url, timeout_s=10) as api:
            body = {
                "batch_id": "cancel-1",
                "partitions": [{"topic": "k", "partition": p, "replicas": [3, 2]} for p in (0, 1)],
            }
            await api.post("/v1/batches", body)
            await eventually(
                lambda: _true(
                    "cancel-1" in runner.batches
                    and all(move_of(p).state is BatchMoveState.RUNNING for p in (0, 1))
                ),
                what="both batch moves running",
            )
            assert [r.error_code for _, r in partition_results(await api.cancel([("k", 0)]))] == [0]
            m0 = move_of(0)
            assert (m0.state, m0.error_message) == (BatchMoveState.CANCELLED, API_CANCELLED)
            assert move_of(1).state is BatchMoveState.RUNNING
            assert [r.error_code for _, r in partition_results(await api.cancel_all())] == [
                0
            ]  # DELETE: k-1 left
            m1 = move_of(1)
            assert (m1.state, m1.error_message) == (BatchMoveState.CANCELLED, API_CANCELLED)

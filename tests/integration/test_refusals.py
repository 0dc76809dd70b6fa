"""Inputs ZooKeeper refuses the same way whoever the controller is (NOAUTH: another principal owns
the znode, tests/zk_acl.py): the failover load skips what they concern and completes, an event
gives up only the topic or partition concerned, and a request that keeps failing after a reload
is quarantined instead of costing reload after reload. In-process controller, real ZooKeeper,
real agents."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from reassignd.controller.model.requests import AlterReassignments
from reassignd.controller.runtime.controller import Controller
from reassignd.errors import EventRefused
from reassignd.testing.controller import in_process_controller
from reassignd.testing.polling import eventually
from reassignd.zk import paths
from reassignd.zk.client import ZkClient
from tests.faults.scenarios import make_topic, wait_brokers, wait_online
from tests.integration.harness import Kit, active_one, controller_epoch, problems_text
from tests.zk_acl import disown, own


def _reloads(controller: Controller) -> float:
    return controller.metrics.registry.get_sample_value("reassignd_controller_reloads_total") or 0.0


async def test_a_topic_another_principal_owns_is_skipped_and_the_load_completes(
    kit: Kit, zk_connect: str, zk: ZkClient
) -> None:
    kit.cluster(3, 1)
    await zk.ensure_path(paths.BROKER_TOPICS)
    await make_topic(zk, "u", {0: (1, 2), 1: (2, 3)})
    await make_topic(zk, "t", {0: (1, 2), 1: (2, 3)})
    # the state znodes of t cannot be created: its partitions znode is another principal's
    await own(zk_connect, paths.topic_partitions("t"), create=True)
    assert await wait_brokers(zk, {1, 2, 3})  # the failover load creates the states
    async with in_process_controller(zk_connect, session_timeout_s=4.0) as c:
        await c.until_active()
        controller = c.controller
        assert await wait_online(zk, [("u", 0), ("u", 1)], timeout_s=30.0)

        async def reported() -> bool:
            return f"{paths.topic_partitions('t')}" in problems_text(
                controller
            ) and "NOAUTH" in problems_text(controller)

        await eventually(reported, 10.0, what="topic t's NOAUTH reported")
        assert "(this session: anonymous)" in problems_text(controller)  # the principal refused
        epoch = await controller_epoch(zk)
        # topics whose only replica, broker 7, comes later: its registration event creates their
        # states, and gives t2 (the same ACL) up, nothing else
        await make_topic(zk, "t2", {0: (7,)})
        await make_topic(zk, "u2", {0: (7,)})
        await own(zk_connect, paths.topic_partitions("t2"), create=True)
        kit.cluster(1, 7)
        assert await wait_online(zk, [("u2", 0)], timeout_s=30.0)
        await eventually(
            lambda: _true(paths.topic_partitions("t2") in problems_text(controller)), 10.0, what="t2 reported"
        )
        for _ in range(6):  # the role stays, under the same epoch, without a reload
            await asyncio.sleep(0.5)
            assert controller.active and await controller_epoch(zk) == epoch
        assert _reloads(controller) == 0


async def _true(value: object) -> bool:
    return bool(value)


async def test_a_request_failing_after_its_reload_is_quarantined(
    kit: Kit, zk_connect: str, zk: ZkClient
) -> None:
    """A move of a topic whose znode another principal owns fails deterministically (NOAUTH) every
    time it is applied: the first costs a reload, the second too and quarantines it, every resend
    after that is refused at once without a reload."""
    kit.cluster(3, 1)
    await zk.ensure_path(paths.BROKER_TOPICS)
    await make_topic(zk, "q", {0: (1, 2)})
    await make_topic(zk, "u", {0: (1, 2)})
    async with in_process_controller(zk_connect, session_timeout_s=4.0) as c:
        await c.until_active()
        controller = c.controller
        assert await wait_online(zk, [("q", 0), ("u", 0)], timeout_s=30.0)
        await own(zk_connect, paths.topic("q"))  # from now on only readable to us
        move = AlterReassignments(((("q", 0), (2, 3)),))
        for attempt in range(6):
            try:
                await controller.api.alter_reassignments(move)
            except EventRefused as e:
                assert ("quarantined" in str(e)) == (attempt >= 2), (attempt, e)
            else:
                raise AssertionError("a move of a topic the controller may not write was accepted")
            await eventually(lambda: _true(controller.active), 10.0, what="active after the reload")
        assert _reloads(controller) == 2, _reloads(controller)
        assert "quarantined" in problems_text(controller)
        assert controller.active
        # other moves go on
        other = await controller.api.alter_reassignments(AlterReassignments(((("u", 0), (3, 2)),)))
        assert [r.error_code for r in other.results] == [0]


async def test_a_noauth_refusal_is_answered_and_audited_with_the_principal(
    kit: Kit, zk_connect: str, zk: ZkClient
) -> None:
    """A topic whose config znode another principal owns: that topic is refused with the reason
    (UNKNOWN_SERVER_ERROR, nothing of it written), the request's other topics are created, and the
    answer, the audit record and the problems name the znode and the session refused; the
    controller stays active without a reload. Once the other principal gives the znode back, the
    topic is created."""
    c = kit.controller(9000, 4.0)
    kit.cluster(1, 1)
    await active_one(c)
    await wait_brokers(zk, {1})
    epoch = await controller_epoch(zk)
    await zk.ensure_path(paths.CONFIG_TOPICS)
    await own(zk_connect, paths.config_topic("x"), create=True, data='{"version":1,"config":{}}')
    topics = [
        {"name": "x", "num_partitions": 1, "configs": {"retention.ms": "60000"}},
        {"name": "y", "num_partitions": 1},
    ]
    code, body = await c.post("/v1/topics", {"topics": topics})
    assert code == 200, body
    x, y = body["topics"]
    assert (x["name"], x["error_name"], y["name"], y["error_code"]) == (
        "x",
        "UNKNOWN_SERVER_ERROR",
        "y",
        0,
    ), body
    noauth = f"NOAUTH for {paths.config_topic('x')} (this session: anonymous)"
    assert noauth in x["error_message"], body
    assert await zk.exists(paths.topic("x")) is None  # nothing of it written
    assert await zk.exists(paths.topic("y")) is not None
    assert (await zk.get(paths.config_topic("y"))).data == b'{"version":1,"config":{}}'

    async def audited() -> dict[str, Any] | None:
        _, stream = await c.get("/v1/events?type=audit&last_event_id=0-0&max_s=0.5")
        records = [json.loads(line[5:]) for line in str(stream).splitlines() if line.startswith("data:")]
        return next((r for r in records if r.get("action") == "POST /v1/topics"), None)

    record = await eventually(audited, 10.0, what="the audit record")
    assert noauth in json.dumps(record["result"]), record
    _, status = await c.get("/v1/status")
    assert noauth in json.dumps(status["problems"]), status
    assert await active_one(c)  # the controller stays, in the same term
    assert await controller_epoch(zk) == epoch
    # once the znode's owner gives it back, the topic is created
    await disown(zk_connect, paths.config_topic("x"))
    code, body = await c.post("/v1/topics", {"topics": topics[:1]})
    assert (code, body["topics"][0]["error_code"]) == (200, 0), body
    assert await zk.exists(paths.topic("x")) is not None

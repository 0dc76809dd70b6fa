"""The foundation's acceptance: real ZooKeeper, real controller and agent processes, real HTTP."""

from __future__ import annotations

import asyncio
import functools
import json
import signal
import time
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.values import Create, Delete, SetData
from tests.integration.harness import Kit, Procs, active_one, eventually, hosted, state_of, wait_brokers

SESSION_TIMEOUT_S = 2.0


async def test_one_active_controller_and_failover_on_kill(procs: Procs, zk: ZkClient) -> None:
    a = procs.controller(9000, SESSION_TIMEOUT_S)
    b = procs.controller(9001, SESSION_TIMEOUT_S)
    active, status = await active_one(a, b)
    standby = b if active is a else a
    assert status["controller_epoch"] == 1
    assert (await zk.get(paths.CONTROLLER_EPOCH)).data == b"1"

    async def standby_sees_active() -> dict[str, Any] | None:
        s = await standby.status()
        return s if s and s["active_controller"] else None

    s = await eventually(standby_sees_active, what="standby reports the active controller")
    assert s["active"] is False
    assert s["active_controller"] == {"id": active.controller_id, "http": active.url}

    active.proc.kill()
    killed_at = time.monotonic()

    async def standby_active() -> dict[str, Any] | None:
        s = await standby.status()
        return s if s and s["active"] else None

    s = await eventually(standby_active, what="standby takes over")
    took_s = time.monotonic() - killed_at
    assert s["controller_epoch"] == 2
    assert (await zk.get(paths.CONTROLLER_EPOCH)).data == b"2"
    # ZooKeeper expires the dead session after the session timeout; the standby must follow
    # within 2 s of that (the acceptance bound of the foundation issue).
    assert took_s <= SESSION_TIMEOUT_S + 2.0, f"took {took_s:.2f}s"


async def test_outside_takeover_fences_old_controller(kit: Kit, zk: ZkClient) -> None:
    c = kit.controller(9000, SESSION_TIMEOUT_S)
    _, status = await active_one(c)
    epoch = status["controller_epoch"]
    kit.cluster(2)
    await wait_brokers(c, {1, 2})

    # an outside client takes over in one multi
    current = await zk.get(paths.CONTROLLER_EPOCH)
    fake = codec.ControllerInfo(7777, int(time.time() * 1000), "http://127.0.0.1:1")
    await zk.multi(
        [
            Delete(paths.CONTROLLER),
            Create(paths.CONTROLLER, codec.encode_controller(fake)),
            SetData(paths.CONTROLLER_EPOCH, codec.encode_controller_epoch(epoch + 1), current.stat.version),
        ]
    )

    async def deposed() -> dict[str, Any] | None:
        s = await c.status()
        return (
            s
            if s and not s["active"] and s["active_controller"] and s["active_controller"]["id"] == 7777
            else None
        )

    await eventually(deposed, what="old controller reports itself standby")
    await zk.create(paths.topic("after-takeover"), codec.encode_topic(codec.TopicZnode({0: (1, 2)})))
    await asyncio.sleep(1.0)  # give a misbehaving controller time to act (a watch and an election)
    assert await zk.exists(paths.partition_state("after-takeover", 0)) is None

    await zk.delete(paths.CONTROLLER)

    async def reelected() -> dict[str, Any] | None:
        s = await c.status()
        return s if s and s["active"] else None

    s = await eventually(reelected, what="controller wins again")
    assert s["controller_epoch"] == epoch + 2
    state = await eventually(lambda: state_of(zk, "after-takeover", 0), what="topic online")
    assert state.leader == 1
    assert state.isr == (1, 2)
    assert state.controller_epoch == epoch + 2


async def test_brokers_register_and_topics_in_v1_and_v2_come_online(kit: Kit, zk: ZkClient) -> None:
    c = kit.controller(9000, SESSION_TIMEOUT_S)
    await active_one(c)
    kit.cluster(3, first_id=1, racks=3)
    kit.broker(4, "--rack", "r-four")
    kit.broker(5)
    brokers = await wait_brokers(c, {1, 2, 3, 4, 5})
    by_id = {b["id"]: b for b in brokers}
    assert [by_id[i]["rack"] for i in (1, 2, 3, 4, 5)] == ["r0", "r1", "r2", "r-four", None]
    for b in brokers:
        assert any(e.startswith("CONTROL://127.0.0.1:") for e in b["endpoints"])
        assert b["broker_epoch"] > 0

    # Kafka's v1 format, as `kafka-topics --zookeeper` wrote it, and v2
    v1 = {"version": 1, "partitions": {"0": [1, 2], "1": [2, 3], "2": [3, 1]}}
    await zk.create(paths.topic("legacy-v1"), json.dumps(v1).encode())
    v2 = {
        "version": 2,
        "partitions": {"0": [4, 5, 1], "1": [5, 1, 4]},
        "adding_replicas": {},
        "removing_replicas": {},
    }
    await zk.create(paths.topic("modern-v2"), json.dumps(v2).encode())

    expected = {
        ("legacy-v1", 0): (1, 2),
        ("legacy-v1", 1): (2, 3),
        ("legacy-v1", 2): (3, 1),
        ("modern-v2", 0): (4, 5, 1),
        ("modern-v2", 1): (5, 1, 4),
    }
    for (topic, p), replicas in expected.items():
        state = await eventually(functools.partial(state_of, zk, topic, p), what=f"{topic}-{p} online")
        assert state.leader == replicas[0]
        assert state.isr == replicas
        assert state.leader_epoch == 0
        assert state.controller_epoch == 1

    code, topic = await c.get("/v1/topics/legacy-v1")
    assert code == 200
    assert [(p["partition"], p["replicas"], p["leader"]) for p in topic["partitions"]] == [
        (0, [1, 2], 1),
        (1, [2, 3], 2),
        (2, [3, 1], 3),
    ]
    for b in brokers:
        want = {tp for tp, replicas in expected.items() if b["id"] in replicas}

        async def agent_hosts(broker: dict[str, Any] = b, want: set[tuple[str, int]] = want) -> bool:
            return await hosted(broker) == want

        await eventually(agent_hosts, what=f"broker {b['id']} hosts exactly its replicas")


async def test_agent_death_elects_next_isr_member_and_restart_rejoins(procs: Procs, zk: ZkClient) -> None:
    c = procs.controller(9000, SESSION_TIMEOUT_S)
    await active_one(c)
    procs.cluster(2, 1, None, "--replica-lag-time-max-ms", "2000")
    victim = procs.broker(3, "--replica-lag-time-max-ms", "2000")
    await wait_brokers(c, {1, 2, 3})
    topic = {0: (3, 1, 2), 1: (3,), 2: (1, 2, 3), 3: (3, 2)}
    await zk.create(paths.topic("t"), codec.encode_topic(codec.TopicZnode(topic)))
    before = {}
    for p in topic:
        before[p] = await eventually(functools.partial(state_of, zk, "t", p), what=f"t-{p} online")
    assert before[0].leader == 3 and before[1].leader == 3

    victim.kill()

    async def settled() -> dict[int, codec.PartitionState] | None:
        states = {p: await state_of(zk, "t", p) for p in topic}
        done = {p: s for p, s in states.items() if s is not None and (3 not in s.isr or s.leader == -1)}
        return done if len(done) == len(topic) else None

    after = await eventually(settled, what="broker 3 out of every ISR")
    assert after[0].leader == 1 and after[0].isr == (1, 2)
    assert after[0].leader_epoch == before[0].leader_epoch + 1
    assert after[1].leader == -1 and after[1].isr == (3,)  # a single-member ISR stays as it is
    assert after[2].leader == 1 and after[2].isr == (1, 2)
    assert after[3].leader == 2 and after[3].isr == (2,)

    procs.broker(3, "--replica-lag-time-max-ms", "2000")

    async def rejoined() -> dict[int, codec.PartitionState] | None:
        states = {p: await state_of(zk, "t", p) for p in topic}
        if all(s is not None and 3 in s.isr for s in states.values()):
            return {p: s for p, s in states.items() if s is not None}
        return None

    back = await eventually(rejoined, what="broker 3 back in every ISR")
    assert back[1].leader == 3
    assert back[1].leader_epoch > after[1].leader_epoch


async def test_malformed_znodes_are_reported_and_skipped(procs: Procs, zk: ZkClient) -> None:
    await zk.ensure_path(paths.BROKER_TOPICS)
    await zk.ensure_path(paths.BROKER_IDS)
    await zk.create(paths.topic("garbage"), b"{not json")
    await zk.create(paths.topic("bad-state"), codec.encode_topic(codec.TopicZnode({0: (1,), 1: (1,)})))
    await zk.create(paths.partition_state("bad-state", 0), b'{"version":1,"leader":"one"}', make_parents=True)
    await zk.create(paths.broker(42), b"\xff\xfe", ephemeral=True)
    c = procs.controller(9000, SESSION_TIMEOUT_S)
    await active_one(c)
    procs.cluster(1)
    await zk.create(paths.topic("fine"), codec.encode_topic(codec.TopicZnode({0: (1,)})))
    state = await eventually(lambda: state_of(zk, "fine", 0), what="a good topic still comes online")
    assert state.leader == 1
    assert (
        await eventually(lambda: state_of(zk, "bad-state", 1), what="the good partition of bad-state")
    ).leader == 1
    await zk.create(paths.topic("garbage-later"), b"[1,2,3]")

    async def reported() -> dict[str, Any] | None:
        s = await c.status()
        problems = {p["path"] for p in s["problems"]} if s else set()
        want = {
            "/brokers/topics/garbage",
            "/brokers/topics/bad-state/partitions/0/state",
            "/brokers/ids/42",
            "/brokers/topics/garbage-later",
        }
        return s if want <= problems else None

    s = await eventually(reported, what="every malformed znode in /v1/status problems")
    assert s["active"] is True
    assert all(p["reason"] for p in s["problems"])
    code, metrics = await c.get("/metrics")
    assert code == 200
    errors = {
        s.labels["kind"]: s.value
        for family in text_string_to_metric_families(metrics)
        for s in family.samples
        if s.name == "reassignd_controller_znode_decode_errors_total"
    }
    assert errors == {"topic": 2.0, "partition_state": 1.0, "broker": 1.0}
    log = c.proc.log()
    assert "/brokers/topics/garbage" in log and "/brokers/ids/42" in log
    # the controller keeps serving
    code, _ = await c.get("/v1/topics")
    assert code == 200 and c.proc.alive


async def test_slow_follower_stays_out_of_isr_until_its_rate_rises(kit: Kit, zk: ZkClient) -> None:
    c = kit.controller(9000, SESSION_TIMEOUT_S)
    await active_one(c)
    await zk.create(
        paths.config_broker(2),
        admin_codec.encode_entity_config({"reassignd.sim.replication.bytes.per.s": "1000"}),
        make_parents=True,
    )
    await zk.create(
        paths.config_topic("grow"),
        admin_codec.encode_entity_config({"reassignd.sim.produce.bytes.per.s": "1000000"}),
        make_parents=True,
    )
    kit.cluster(2, 1, None, "--replica-lag-time-max-ms", "1500")
    await wait_brokers(c, {1, 2})
    await zk.create(paths.topic("grow"), codec.encode_topic(codec.TopicZnode({0: (1, 2)})))

    async def shrunk() -> codec.PartitionState | None:
        s = await state_of(zk, "grow", 0)
        return s if s is not None and s.isr == (1,) else None

    await eventually(shrunk, what="the slow follower leaves the ISR")
    await asyncio.sleep(1.5)  # it stays out while the leader keeps growing (a lag time, a reconcile)
    s = await state_of(zk, "grow", 0)
    assert s is not None and s.isr == (1,)

    znode = await zk.get(paths.config_broker(2))
    await zk.set(
        paths.config_broker(2),
        admin_codec.encode_entity_config({"reassignd.sim.replication.bytes.per.s": "1000000000"}),
        znode.stat.version,
    )

    async def rejoined() -> codec.PartitionState | None:
        s = await state_of(zk, "grow", 0)
        return s if s is not None and s.isr == (1, 2) else None

    await eventually(rejoined, what="the follower catches up and joins the ISR")


async def test_kip73_follower_throttle_slows_a_follower_the_same_way(kit: Kit, zk: ZkClient) -> None:
    """KIP-73 throttles apply to replicas outside the ISR (as in Kafka): a follower that starts
    out of the ISR (its broker was down at creation) stays out while throttled."""
    c = kit.controller(9000, SESSION_TIMEOUT_S)
    await active_one(c)
    await zk.create(
        paths.config_broker(2),
        admin_codec.encode_entity_config({"follower.replication.throttled.rate": "1000"}),
        make_parents=True,
    )
    await zk.create(
        paths.config_topic("throttled"),
        admin_codec.encode_entity_config(
            {
                "reassignd.sim.initial.bytes": "50000000",
                "reassignd.sim.produce.bytes.per.s": "1000000",
                "follower.replication.throttled.replicas": "0:2",
            }
        ),
        make_parents=True,
    )
    kit.broker(1, "--replica-lag-time-max-ms", "1500")
    await wait_brokers(c, {1})
    await zk.create(paths.topic("throttled"), codec.encode_topic(codec.TopicZnode({0: (1, 2)})))
    s = await eventually(lambda: state_of(zk, "throttled", 0), what="online without broker 2")
    assert s.isr == (1,)
    kit.broker(2, "--replica-lag-time-max-ms", "1500")
    await wait_brokers(c, {1, 2})
    await asyncio.sleep(1.5)  # throttled, it stays out while the leader keeps growing (a lag time)
    later = await state_of(zk, "throttled", 0)
    assert later is not None and later.isr == (1,)

    znode = await zk.get(paths.config_broker(2))
    await zk.set(paths.config_broker(2), admin_codec.encode_entity_config({}), znode.stat.version)

    async def rejoined() -> codec.PartitionState | None:
        s = await state_of(zk, "throttled", 0)
        return s if s is not None and s.isr == (1, 2) else None

    await eventually(rejoined, what="unthrottled, the follower joins the ISR")


async def test_session_loss_makes_the_controller_resign(procs: Procs, zk: ZkClient) -> None:
    """A controller frozen past its session timeout (SIGSTOP) loses its session; when it wakes
    it must stand down (the standby won meanwhile) instead of acting on a dead session."""
    a = procs.controller(9000, SESSION_TIMEOUT_S)
    await active_one(a)
    b = procs.controller(9001, SESSION_TIMEOUT_S)

    async def b_follows() -> bool:
        s = await b.status()
        return bool(s and s["active_controller"])

    await eventually(b_follows, what="standby follows")
    a.proc.popen.send_signal(signal.SIGSTOP)
    try:

        async def b_active() -> dict[str, Any] | None:
            s = await b.status()
            return s if s and s["active"] else None

        s = await eventually(b_active, what="standby wins after the frozen one's session expired")
        assert s["controller_epoch"] == 2
    finally:
        a.proc.popen.send_signal(signal.SIGCONT)

    async def a_standby() -> dict[str, Any] | None:
        s = await a.status()
        return (
            s
            if s and not s["active"] and s["active_controller"] and s["active_controller"]["id"] == 9001
            else None
        )

    await eventually(a_standby, what="the woken controller reports itself standby")
    assert "session" in a.proc.log().lower()

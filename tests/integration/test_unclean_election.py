"""Unclean leader election and the unclean-election safety rule of cancellation, end to end: a
real ZooKeeper, a controller and broker agents as separate processes (each killed and restarted
on its own), real HTTP.

A replica is kept out of sync by the simulation configs: a large ``reassignd.sim.initial.bytes``
on the topic and a tiny ``reassignd.sim.replication.bytes.per.s`` on its broker, so it is still
copying when the in-sync replicas die.
"""

from __future__ import annotations

import functools

from reassignd.zk import admin_codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.election_helpers import (
    BIG,
    INITIAL,
    RATE,
    create_topic,
    led_by,
    set_config,
    stays,
    unclean_count,
)
from tests.integration.harness import ControllerProc, Procs, active_one, eventually, wait_brokers
from tests.integration.reassignment_helpers import FAST, SLOW, alter, completed, replica_on, topic_znode

UNCLEAN = "unclean.leader.election.enable"


async def notify(zk: ZkClient, entity_path: str) -> None:
    """A config change notification, as kafka-configs writes one."""
    await zk.create(
        paths.CONFIG_CHANGE_PREFIX,
        admin_codec.encode_config_change(entity_path),
        sequential=True,
        make_parents=True,
    )


async def test_dead_isr_elects_an_out_of_sync_replica_only_when_allowed(procs: Procs, zk: ZkClient) -> None:
    c = procs.controller(9000, 2.0)
    await active_one(c)
    await set_config(zk, paths.config_broker(None), **{RATE: FAST})
    await set_config(zk, paths.config_broker(3), **{RATE: SLOW})
    brokers = {b: procs.broker(b) for b in (1, 2)}
    await wait_brokers(c, {1, 2})
    # created while broker 3 is away: the ISR is [1, 2]; 3 starts empty when it comes
    await create_topic(zk, "on", (1, 2, 3), {INITIAL: BIG, UNCLEAN: "true"})
    await create_topic(zk, "off", (1, 2, 3), {INITIAL: BIG})
    await create_topic(zk, "pinned", (1, 2, 3), {INITIAL: BIG, UNCLEAN: "false"})
    brokers[3] = procs.broker(3)
    await wait_brokers(c, {1, 2, 3})
    for t in ("on", "off", "pinned"):
        replica = await eventually(functools.partial(replica_on, c, 3, t, 0), what=f"{t}-0 copying to 3")
        assert replica["in_isr"] is False
        assert await led_by(zk, t, 1, (1, 2))

    # the whole ISR dies, one broker after the other (broker 1, the leader, last)
    brokers[2].kill()
    for t in ("on", "off", "pinned"):
        await eventually(functools.partial(led_by, zk, t, 1, (1,)), what=f"{t}-0 ISR shrinks to [1]")
    brokers[1].kill()
    await eventually(lambda: led_by(zk, "on", 3, (3,)), what="on-0: unclean election of broker 3")
    for t in ("off", "pinned"):
        await eventually(functools.partial(led_by, zk, t, -1, (1,)), what=f"{t}-0 offline")
    await stays(lambda: led_by(zk, "off", -1, (1,)))
    assert await unclean_count(c) == 1
    assert "unclean leader election for on-0: broker 3 leads" in c.proc.log()

    # the dynamic broker default allows it now: "off" follows it, "pinned" keeps its own false
    await set_config(zk, paths.config_broker(None), **{UNCLEAN: "true"})
    await notify(zk, "brokers/<default>")
    await eventually(lambda: led_by(zk, "off", 3, (3,)), what="off-0: unclean election by the default")
    await stays(lambda: led_by(zk, "pinned", -1, (1,)))
    assert await unclean_count(c) == 2
    code, topic = await c.get("/v1/topics/on")
    assert code == 200 and topic["partitions"][0]["leader"] == 3

    # a broker that was in sync comes back: it follows the unclean leader's log and rejoins
    await set_config(zk, paths.config_broker(3), **{RATE: FAST})
    brokers[1] = procs.broker(1)
    await eventually(lambda: led_by(zk, "on", 3, (3, 1)), timeout_s=60, what="broker 1 rejoins on-0's ISR")
    # (broker 3, fast again, may rejoin pinned-0's ISR right after: only the leader is checked)
    await eventually(lambda: led_by(zk, "pinned", 1), what="pinned-0: clean election of broker 1")
    assert await unclean_count(c) == 2


async def problems(c: ControllerProc) -> list[dict[str, str]]:
    code, status = await c.get("/v1/status")
    assert code == 200
    return list(status["problems"])


async def moving(zk: ZkClient, topic: str) -> bool:
    z = await topic_znode(zk, topic)
    return z.partitions[0] == (2, 3, 1) and z.adding.get(0) == (2, 3)


async def test_a_cancel_needing_an_unclean_election_is_refused_on_every_path_unless_allowed(
    procs: Procs, zk: ZkClient
) -> None:
    """Three moves from [1] to [2, 3] (3 slow); broker 1 is killed (2 leads) and comes back slow,
    out of the ISR: reverting to [1] needs an unclean election."""
    c = procs.controller(9000, 2.0)
    await active_one(c)
    await set_config(zk, paths.config_broker(None), **{RATE: FAST})
    await set_config(zk, paths.config_broker(3), **{RATE: SLOW})
    one = procs.broker(1)
    procs.cluster(2, 2)
    await wait_brokers(c, {1, 2, 3})
    for t in ("keep", "lossy", "legacy"):
        await create_topic(zk, t, (1,), {INITIAL: BIG, **({UNCLEAN: "true"} if t == "lossy" else {})})
    await alter(c, {("keep", 0): [2, 3], ("lossy", 0): [2, 3]})
    await zk.create(
        paths.REASSIGN_PARTITIONS,
        admin_codec.encode_legacy_reassignment((admin_codec.LegacyReassignmentEntry("legacy", 0, (2, 3)),)),
    )
    for t in ("keep", "lossy", "legacy"):
        await eventually(functools.partial(moving, zk, t), what=f"{t}-0 moving")
        await eventually(functools.partial(led_by, zk, t, 1, (1, 2)), what=f"{t}-0: 2 joins the ISR")
    one.kill()
    for t in ("keep", "lossy", "legacy"):
        await eventually(functools.partial(led_by, zk, t, 2, (2,)), what=f"{t}-0: 2 leads")
    await set_config(zk, paths.config_broker(1), **{RATE: SLOW})
    procs.broker(1)
    await wait_brokers(c, {1, 2, 3})
    await eventually(lambda: replica_on(c, 1, "keep", 0), what="broker 1 copies again, from nothing")

    # the API: a bulk cancel refuses what the topic does not allow and cancels the rest
    code, resp = await c.delete("/v1/reassignments")
    assert code == 200
    results = {(t["name"], p["partition"]): p for t in resp["responses"] for p in t["partitions"]}
    refused = "because it would require an unclean leader election."
    for t in ("keep", "legacy"):
        assert results[(t, 0)]["error_code"] == 39
        assert (
            results[(t, 0)]["error_message"] == f"Unable to revert partition assignment for {t}-0 {refused}"
        )
    assert results[("lossy", 0)]["error_code"] == 0
    await eventually(lambda: completed(zk, "lossy", 0, (1,)), what="lossy-0 back to [1]")
    await eventually(lambda: led_by(zk, "lossy", 1, (1,)), what="lossy-0: unclean election of broker 1")
    assert await unclean_count(c) == 1
    code, single = await c.delete("/v1/reassignments/keep/0")
    assert code == 200 and single["responses"][0]["partitions"][0]["error_code"] == 39
    # the same rule for a re-target that would drop every in-sync replica (2, an adding one)
    retarget = await alter(c, {("keep", 0): [3, 1]})
    assert retarget[("keep", 0)]["error_code"] == 39
    assert (
        retarget[("keep", 0)]["error_message"] == f"Unable to reassign partition keep-0 to [3, 1] {refused}"
    )
    assert await moving(zk, "keep")

    # a sequenced request naming the original replicas (a cancel): skipped and reported
    data = admin_codec.encode_reassignment_request(admin_codec.ReassignmentRequest({("keep", 0): (1,)}))
    await zk.create(paths.REASSIGNMENT_REQUEST_PREFIX, data, sequential=True, make_parents=True)
    await eventually(
        lambda: _reported(c, "keep-0 not cancelled: Unable to revert"),
        what="the sequenced cancel is reported",
    )
    assert not await zk.children(paths.REASSIGNMENT_REQUESTS)
    # /admin/reassign_cancel: the legacy move is not rolled back, and reported
    await zk.create(paths.REASSIGN_CANCEL)
    await eventually(
        lambda: _reported(c, "legacy-0 not rolled back: it would require an unclean leader election"),
        what="the rollback refusal is reported",
    )
    for t in ("keep", "legacy"):
        assert await moving(zk, t)
        assert await led_by(zk, t, 2, (2,))
    assert await unclean_count(c) == 1


async def _reported(c: ControllerProc, reason: str) -> bool:
    return any(reason in p["reason"] for p in await problems(c))

"""Reconciliation after failover, end to end: a new controller sends every live broker a full
LeaderAndIsr (KIP-516's ``type: full``) and each agent deletes exactly the replicas it hosts that
the request does not name. Real ZooKeeper, controller and agent processes; the strays are made
the way they arise in a real cluster (znodes changed while no controller runs, a topic znode
removed behind a running controller's back).
"""

from __future__ import annotations

import io
from typing import Any

import aiohttp
import pytest

from reassignd.control.protocol import FullSet, Header, LeaderAndIsrRequest, WirePartitionState
from reassignd.control.request_sizes import encode_request
from reassignd.control.wire import LEADER_AND_ISR_PATH, MAX_CONTROL_BODY_BYTES
from reassignd.zk import codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.harness import (
    Procs,
    active_one,
    eventually,
    http_get,
    wait_brokers,
)

pytestmark = pytest.mark.timeout(240)

TP = tuple[str, int]


def control_url(broker: dict[str, Any]) -> str:
    control: str = next(e for e in broker["endpoints"] if e.startswith("CONTROL://"))
    return "http://" + control.removeprefix("CONTROL://")


async def reports(brokers: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Each agent's ``GET /replicas`` (``brokers`` as ``GET /v1/brokers`` lists them)."""
    out = {}
    for b in brokers:
        code, report = await http_get(control_url(b) + "/replicas", timeout_s=30)
        assert code == 200
        out[b["id"]] = report
    return out


def counters(got: dict[int, dict[str, Any]], key: str) -> dict[int, int]:
    return {b: r[key] for b, r in got.items()}


def hosted_of(report: dict[str, Any]) -> set[TP]:
    return {(r["topic"], r["partition"]) for r in report["replicas"]}


async def assigned(zk: ZkClient, brokers: set[int]) -> dict[int, set[TP]]:
    """What ZooKeeper says each broker should host: every partition whose replica set holds it."""
    out: dict[int, set[TP]] = {b: set() for b in brokers}
    for topic in await zk.children(paths.BROKER_TOPICS):
        z = codec.decode_topic((await zk.get(paths.topic(topic))).data)
        for p, replicas in z.partitions.items():
            for r in replicas:
                if r in out:
                    out[r].add((topic, p))
    return out


async def create_topic(zk: ZkClient, name: str, assignment: dict[int, tuple[int, ...]]) -> None:
    """As Kafka's tools did: write the topic znode; the controller creates the partitions."""
    await zk.create(paths.topic(name), codec.encode_topic(codec.TopicZnode(assignment)))


async def hosting(
    brokers: list[dict[str, Any]], expected: dict[int, set[TP]], what: str, timeout_s: float = 60
) -> None:
    async def probe() -> bool:
        got = await reports(brokers)
        return all(want <= hosted_of(got[b]) for b, want in expected.items())

    await eventually(probe, timeout_s=timeout_s, interval_s=0.5, what=what)


async def test_a_new_controller_deletes_exactly_the_strays(procs: Procs, zk: ZkClient) -> None:
    first = procs.controller(9000, 2.0)
    await active_one(first)
    cluster = procs.cluster(3)
    brokers = await wait_brokers(first, {1, 2, 3})
    await create_topic(zk, "kept", {0: (1, 2), 1: (2, 3), 2: (3, 1)})
    await create_topic(zk, "gone", {0: (1, 2), 1: (2, 3)})
    await create_topic(zk, "moved", {0: (2, 1)})
    await hosting(
        brokers,
        {1: {("kept", 0), ("kept", 2), ("gone", 0), ("moved", 0)}, 2: {("gone", 1)}, 3: {("gone", 1)}},
        "the agents host every replica",
    )

    # the controller dies; meanwhile "gone" is deleted (its StopReplica never sent) and the move of
    # moved-0 from (2, 1) to (2) completes in ZooKeeper, but broker 1 never hears StopReplica
    first.proc.kill()
    await zk.delete_recursive(paths.topic("gone"))
    state_path = paths.partition_state("moved", 0)
    znode = await zk.get(state_path)
    state = codec.decode_partition_state(znode.data)
    await zk.set(paths.topic("moved"), codec.encode_topic(codec.TopicZnode({0: (2,)})), -1)
    await zk.set(
        state_path,
        codec.encode_partition_state(
            codec.PartitionState(2, state.leader_epoch + 1, state.controller_epoch, (2,))
        ),
        znode.stat.version,
    )
    before = await reports(brokers)
    assert ("gone", 0) in hosted_of(before[1]) and ("moved", 0) in hosted_of(before[1])
    assert counters(before, "stray_replicas_deleted") == {1: 0, 2: 0, 3: 0}

    second = procs.controller(9001, 2.0)
    await active_one(second)
    want = await assigned(zk, {1, 2, 3})
    assert ("moved", 0) not in want[1] and not any(t == "gone" for b in want.values() for t, _ in b)

    async def reconciled() -> dict[int, dict[str, Any]] | None:
        got = await reports(brokers)
        return got if all(hosted_of(got[b]) == want[b] for b in want) else None

    after = await eventually(
        reconciled, timeout_s=60, interval_s=0.5, what="agents host exactly their replicas"
    )
    assert counters(after, "stray_replicas_deleted") == {1: 2, 2: 2, 3: 1}
    done_before = counters(before, "full_requests_completed")  # (one each when they registered)
    assert all(r["full_requests_completed"] > done_before[b] for b, r in after.items())
    log = cluster.log()
    for stray in ("gone-0", "gone-1", "moved-0"):
        assert f"deleted stray replica {stray}" in log
    assert "deleted stray replica kept" not in log


async def test_a_full_leader_and_isr_in_several_chunks(procs: Procs, zk: ZkClient) -> None:
    """Thousands of partitions with long names: each broker's full set needs several bodies, and
    more than the agent would take in one."""
    first = procs.controller(9000, 2.0)
    await active_one(first)
    standby = procs.controller(9001, 2.0)
    procs.cluster(2)
    brokers = await wait_brokers(first, {1, 2})
    big, n = "b" * 240, 4000
    await create_topic(zk, big, {p: (1, 2) if p % 2 else (2, 1) for p in range(n)})
    await create_topic(zk, "dropped", {p: (1, 2) for p in range(4)})
    every = {(big, p) for p in range(n)} | {("dropped", p) for p in range(4)}
    await hosting(brokers, {1: every, 2: every}, "the agents host every replica", timeout_s=120)

    # the controller dies; meanwhile the topic znode is removed (as `zkCli deleteall` would), so
    # nobody tells the agents
    first.proc.kill()
    await zk.delete_recursive(paths.topic("dropped"))
    before = await reports(brokers)
    assert all(("dropped", 0) in hosted_of(r) for r in before.values())

    # unsplit, one broker's full set is more than an agent takes in one body
    one = next(b for b in brokers if b["id"] == 1)
    states = tuple(WirePartitionState(big, p, 1, 1, 0, (1, 2), 0, (1, 2)) for p in range(n))
    unsplit = LeaderAndIsrRequest(Header(9000, 1, one["broker_epoch"]), states, (), FullSet(1, n))
    body = encode_request(unsplit)
    assert len(body) > MAX_CONTROL_BODY_BYTES
    async with (
        aiohttp.ClientSession() as session,
        session.post(control_url(one) + LEADER_AND_ISR_PATH, data=io.BytesIO(body)) as resp,
    ):
        assert resp.status == 413

    await active_one(standby)

    async def reconciled() -> dict[int, dict[str, Any]] | None:
        got = await reports(brokers)
        keep = {(big, p) for p in range(n)}
        return got if all(hosted_of(r) == keep for r in got.values()) else None

    after = await eventually(reconciled, timeout_s=90, interval_s=0.5, what="the strays are deleted")
    assert counters(after, "stray_replicas_deleted") == {1: 4, 2: 4}
    done_before = counters(before, "full_requests_completed")
    assert counters(after, "full_requests_completed") == {b: done_before[b] + 1 for b in (1, 2)}
    code, metrics = await standby.get("/metrics")
    assert code == 200
    sent = sum(
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith("reassignd_control_requests_total{")
        and 'request="LeaderAndIsrRequest"' in line
        and 'outcome="ok"' in line
    )
    assert sent >= 6  # at least three chunks to each broker (2,000 states per chunk at most)


async def test_a_topic_removed_behind_a_running_controller_leaves_no_replica(
    procs: Procs, zk: ZkClient
) -> None:
    """Kafka's controller forgets such a topic and its replicas stay on the brokers until they
    restart; reassignd deletes them at once."""
    c = procs.controller(9000, 2.0)
    await active_one(c)
    procs.cluster(2)
    brokers = await wait_brokers(c, {1, 2})
    await create_topic(zk, "kept", {0: (1, 2)})
    await create_topic(zk, "dropped", {0: (1, 2), 1: (2, 1)})
    every = {("kept", 0), ("dropped", 0), ("dropped", 1)}
    await hosting(brokers, {1: every, 2: every}, "the agents host every replica")
    await zk.delete_recursive(paths.topic("dropped"))

    async def cleaned() -> bool:
        got = await reports(brokers)
        return all(hosted_of(r) == {("kept", 0)} for r in got.values())

    await eventually(cleaned, timeout_s=30, interval_s=0.3, what="the removed topic's replicas deleted")

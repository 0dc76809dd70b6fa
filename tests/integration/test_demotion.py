"""Broker demotion end to end: a real ZooKeeper, controller and agent processes, real HTTP and the
``reassignd admin demote|promote`` command line.

Demote moves every leadership off the broker without changing a replica set (so no rack changes
either): each partition hosting it gets the same replicas with it last, and the partitions it led
a preferred election; it stays in every ISR. A partition it leads alone is refused with the
reason. The orders before are recorded in ZooKeeper, so a controller killed in between still
promotes: the recorded orders come back, leaderships with them, and the record is deleted.
"""

from __future__ import annotations

from typing import Any

import pytest

from reassignd.zk import admin_codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.admin_cli import reassignd_cli
from tests.integration.event_stream import Stream
from tests.integration.harness import (
    ControllerProc,
    Launcher,
    Procs,
    active_one,
    eventually,
    state_of,
    wait_brokers,
)
from tests.integration.reassignment_helpers import FAST, make_topic, set_broker_rate, topic_znode

pytestmark = pytest.mark.timeout(180)

# broker 1 leads d-0, d-3 and d-4 (alone), follows in d-1 and d-2; d-5 does not involve it
ASSIGNMENT = {0: (1, 2, 3), 1: (2, 1, 4), 2: (3, 1, 2), 3: (1, 4), 4: (1,), 5: (2, 3)}


async def admin(verb: str, *args: str) -> tuple[int, list[str], str]:
    """``python -m reassignd admin VERB ARGS`` → (exit code, stdout lines, stderr)."""
    code, out, err = await reassignd_cli("admin", verb, *args)
    return code, out.splitlines(), err


async def leaders(zk: ZkClient) -> dict[int, int]:
    out = {}
    for p in ASSIGNMENT:
        s = await state_of(zk, "d", p)
        assert s is not None
        out[p] = s.leader
    return out


async def isrs(zk: ZkClient) -> dict[int, set[int]]:
    out = {}
    for p in ASSIGNMENT:
        s = await state_of(zk, "d", p)
        assert s is not None
        out[p] = set(s.isr)
    return out


async def started(procs: Launcher[Any], zk: ZkClient) -> ControllerProc:
    c = procs.controller(9000, 2.0)
    await active_one(c)
    await set_broker_rate(zk, None, FAST)
    procs.cluster(4, 1, 2)  # racks: 1 and 3 on one, 2 and 4 on the other
    await wait_brokers(c, {1, 2, 3, 4})
    await make_topic(zk, "d", ASSIGNMENT)

    async def settled() -> bool:
        return (await leaders(zk)) == {p: r[0] for p, r in ASSIGNMENT.items()} and all(
            set(ASSIGNMENT[p]) == isr for p, isr in (await isrs(zk)).items()
        )

    await eventually(settled, what="every partition led by its first replica, every replica in sync")
    return c


async def test_demote_moves_every_leadership_off_and_promote_restores_the_orders(
    procs: Procs, zk: ZkClient
) -> None:
    c = await started(procs, zk)
    http = ("--bootstrap-controller", c.url)

    with Stream(c.url) as live:
        code, out, err = await admin("demote", "--broker", "1", *http)
        await eventually(lambda: any(r["type"] == "broker_demoted" for r in live.records), what="the record")
    assert (code, err) == (1, ""), out  # d-4 refused: exit 1
    [record] = [r for r in live.records if r["type"] == "broker_demoted"]
    assert (record["broker_id"], record["reordered"], record["leaders_moved"], record["refused"]) == (
        1,
        4,
        2,
        1,
    )
    assert out == [
        "Refused d-4: ELIGIBLE_LEADERS_NOT_AVAILABLE (83): broker 1 is the only live in-sync replica of "
        "d-4: its leadership has nowhere to go",
        "Broker 1 demoted: 4 partition(s) done, 2 leadership(s) moved, 1 refused.",
    ]
    z = await topic_znode(zk, "d")
    # the same replica sets, broker 1 last; d-5 untouched; d-4 refused and left as it was
    assert z.partitions == {0: (2, 3, 1), 1: (2, 4, 1), 2: (3, 2, 1), 3: (4, 1), 4: (1,), 5: (2, 3)}
    assert not z.adding and not z.removing
    assert await leaders(zk) == {0: 2, 1: 2, 2: 3, 3: 4, 4: 1, 5: 2}
    assert all(1 in isr for p, isr in (await isrs(zk)).items() if 1 in ASSIGNMENT[p])  # still in sync
    assert await zk.exists(paths.demotion(1)) is not None
    recorded = admin_codec.decode_demoted_orders((await zk.get(paths.demotion_topic(1, "d"))).data)
    assert recorded == {0: (1, 2, 3), 1: (2, 1, 4), 2: (3, 1, 2), 3: (1, 4)}
    code, listed = await c.get("/v1/brokers")
    assert code == 200 and listed["demoted"] == {"1": 4}, listed

    # demoting again changes nothing and keeps the first demotion's orders
    code, body = await c.post("/v1/brokers/1/demote", None)
    assert code == 200 and body["leaders_moved"] == 0 and body["refused"] == 1, body
    assert admin_codec.decode_demoted_orders((await zk.get(paths.demotion_topic(1, "d"))).data) == recorded

    code, body = await c.post("/v1/brokers/77/demote", None)
    assert (code, body["error_code"]) == (404, 42), body
    assert "no broker 77" in body["error_message"]

    # a failover in between: the record is ZooKeeper's, the new controller promotes from it
    c.proc.kill()
    c = procs.restart_controller(c)
    await active_one(c)
    code, out, err = await admin("promote", "--broker", "1", "--bootstrap-controller", c.url)
    assert (code, err) == (0, ""), out
    assert out == ["Broker 1 promoted: 4 partition(s) done, 2 leadership(s) moved, 0 refused."]
    assert (await topic_znode(zk, "d")).partitions == ASSIGNMENT
    assert await leaders(zk) == {p: r[0] for p, r in ASSIGNMENT.items()}
    assert await zk.exists(paths.demotion(1)) is None
    code, listed = await c.get("/v1/brokers")
    assert code == 200 and listed["demoted"] == {}, listed
    code, out, _ = await admin("promote", "--broker", "1", "--bootstrap-controller", c.url)
    assert (code, out) == (0, ["Broker 1: nothing to promote."])
    code, metrics = await c.get("/metrics")
    assert code == 200
    assert 'reassignd_preferred_leader_elections_total{trigger="demotion"} 2.0' in metrics

"""Helpers of the reassignment tests: topics and broker rates in ZooKeeper, reassignments through the
controller's HTTP API, a controller and a cluster started as processes."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.harness import (
    ControllerProc,
    Launcher,
    active_one,
    eventually,
    http_get,
    state_of,
    wait_brokers,
)

FAST = "1000000000"


SLOW = "2000"


async def set_broker_rate(zk: ZkClient, broker: int | None, rate: str) -> None:
    path = paths.config_broker(broker)
    data = admin_codec.encode_entity_config({"reassignd.sim.replication.bytes.per.s": rate})
    znode = await zk.get_or_none(path)
    if znode is None:
        await zk.create(path, data, make_parents=True)
    else:
        await zk.set(path, data, znode.stat.version)


async def make_topic(
    zk: ZkClient, name: str, assignment: dict[int, tuple[int, ...]], initial_bytes: int = 0
) -> None:
    if initial_bytes:
        await zk.create(
            paths.config_topic(name),
            admin_codec.encode_entity_config({"reassignd.sim.initial.bytes": str(initial_bytes)}),
            make_parents=True,
        )
    await zk.create(paths.topic(name), codec.encode_topic(codec.TopicZnode(assignment)))
    for p in assignment:
        await eventually(functools.partial(state_of, zk, name, p), what=f"{name}-{p} online")


async def topic_znode(zk: ZkClient, name: str) -> codec.TopicZnode:
    return codec.decode_topic((await zk.get(paths.topic(name))).data)


def body(targets: Mapping[tuple[str, int], list[int] | None], **extra: Any) -> dict[str, Any]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for (t, p), replicas in targets.items():
        topics.setdefault(t, []).append({"partition": p, "replicas": replicas})
    return {**extra, "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]}


async def alter(
    c: ControllerProc, targets: Mapping[tuple[str, int], list[int] | None], **extra: Any
) -> dict[tuple[str, int], dict[str, Any]]:
    code, resp = await c.post("/v1/reassignments", body(targets, **extra))
    assert code == 200, resp
    assert resp["error_code"] == 0
    return {(t["name"], p["partition"]): p for t in resp["responses"] for p in t["partitions"]}


async def replica_on(c: ControllerProc, broker: int, topic: str, p: int) -> dict[str, Any] | None:
    _, brokers = await c.get("/v1/brokers")
    b = next(b for b in brokers["brokers"] if b["id"] == broker)
    control = next(e for e in b["endpoints"] if e.startswith("CONTROL://"))
    code, replicas = await http_get("http://" + control.removeprefix("CONTROL://") + "/replicas")
    assert code == 200
    for r in replicas["replicas"]:
        if (r["topic"], r["partition"]) == (topic, p):
            return dict(r)
    return None


async def listed(c: ControllerProc) -> dict[tuple[str, int], dict[str, Any]]:
    code, resp = await c.get("/v1/reassignments")
    assert code == 200
    return {(t["name"], p["partition"]): p for t in resp["topics"] for p in t["partitions"]}


async def none_listed(c: ControllerProc, timeout_s: float = 30.0) -> None:
    """The controller lists no move. Its published view follows ZooKeeper by an event: a move the
    znodes already show complete may be listed an instant longer."""

    async def empty() -> bool:
        return await listed(c) == {}

    await eventually(empty, timeout_s=timeout_s, what="no move listed")


async def completed(zk: ZkClient, topic: str, p: int, replicas: tuple[int, ...]) -> codec.TopicZnode | None:
    z = await topic_znode(zk, topic)
    return z if z.partitions[p] == replicas and p not in z.adding and p not in z.removing else None


async def start(procs: Launcher[Any], zk: ZkClient, brokers: int, rate: str = FAST) -> ControllerProc:
    """A controller and ``brokers`` agents replicating at ``rate``, started together (their
    start-ups overlap), once the controller is active and has them all registered."""
    await set_broker_rate(zk, None, rate)
    c = procs.controller(9000, 2.0)
    procs.cluster(brokers)
    await active_one(c)
    await wait_brokers(c, set(range(1, brokers + 1)))
    return c


async def _not_hosted(c: ControllerProc, broker: int, topic: str, p: int) -> bool:
    return await replica_on(c, broker, topic, p) is None

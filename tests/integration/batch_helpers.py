"""Helpers of the batch tests: a batch's body, its submission and state, broker configs and the journal."""

from __future__ import annotations

from typing import Any

from reassignd.executor.model import Batch
from reassignd.zk import admin_codec
from reassignd.zk.client import ZkClient
from tests.integration.harness import ControllerProc, read_journal

TP = tuple[str, int]


SIZE = 200_000


RATE = "100000"


def batch_body(batch_id: str, moves: dict[TP, list[int]], **extra: Any) -> dict[str, Any]:
    return {
        "batch_id": batch_id,
        "partitions": [{"topic": t, "partition": p, "replicas": r} for (t, p), r in moves.items()],
        **extra,
    }


async def submit(c: ControllerProc, body: dict[str, Any]) -> dict[str, Any]:
    code, resp = await c.post("/v1/batches", body)
    assert code == 200, resp
    return dict(resp)


async def status(c: ControllerProc, batch_id: str) -> dict[str, Any]:
    code, resp = await c.get(f"/v1/batches/{batch_id}")
    assert code == 200, resp
    return dict(resp)


async def state_is(c: ControllerProc, batch_id: str, *states: str) -> dict[str, Any] | None:
    s = await status(c, batch_id)
    return s if s["state"] in states else None


async def journaled(zk: ZkClient, batch_id: str) -> Batch:
    return (await read_journal(zk, batch_id)).batch


async def config_of(zk: ZkClient, path: str) -> dict[str, str] | None:
    znode = await zk.get_or_none(path)
    return None if znode is None else dict(admin_codec.decode_entity_config(znode.data))


async def put_config(zk: ZkClient, path: str, config: dict[str, str]) -> None:
    await zk.create(path, admin_codec.encode_entity_config(config), make_parents=True)


THROTTLE_KEYS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")

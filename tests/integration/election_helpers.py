"""Helpers of the leader-election tests: topics with a config, who leads, unclean-election counts."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.harness import ControllerProc, eventually, http_get, state_of

INITIAL = "reassignd.sim.initial.bytes"


RATE = "reassignd.sim.replication.bytes.per.s"


BIG = str(100_000_000)  # at SLOW (2000 B/s) a replica starting empty never catches up here


async def set_config(zk: ZkClient, path: str, **changes: str) -> None:
    """Merge ``changes`` into an entity config znode."""
    znode = await zk.get_or_none(path)
    config = {} if znode is None else admin_codec.decode_entity_config(znode.data)
    config.update(changes)
    data = admin_codec.encode_entity_config(config)
    if znode is None:
        await zk.create(path, data, make_parents=True)
    else:
        await zk.set(path, data, znode.stat.version)


async def create_topic(zk: ZkClient, name: str, replicas: tuple[int, ...], config: dict[str, str]) -> None:
    await zk.create(paths.config_topic(name), admin_codec.encode_entity_config(config), make_parents=True)
    await zk.create(paths.topic(name), codec.encode_topic(codec.TopicZnode({0: replicas})))
    await eventually(lambda: state_of(zk, name, 0), what=f"{name}-0 online")


async def led_by(zk: ZkClient, topic: str, leader: int, isr: tuple[int, ...] | None = None) -> bool:
    """``topic``-0 has this leader (and this ISR, in any order)."""
    s = await state_of(zk, topic, 0)
    return s is not None and s.leader == leader and (isr is None or sorted(s.isr) == sorted(isr))


async def unclean_count(c: ControllerProc) -> float:
    code, text = await http_get(c.url + "/metrics")
    assert code == 200
    found = re.search(r"^reassignd_unclean_leader_elections_total (\S+)$", text, re.MULTILINE)
    assert found is not None, "the metric is exported"
    return float(found.group(1))


async def stays(probe: Any, seconds: float = 1.5) -> None:
    """``probe`` holds for a while (after the controller already handled what could change it)."""
    for _ in range(int(seconds / 0.1)):
        assert await probe()
        await asyncio.sleep(0.1)

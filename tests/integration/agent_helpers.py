"""Helpers of the broker agent tests: a stand-in controller speaking the control protocol to real agents."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import msgspec

from reassignd.broker.agent import run_agents
from reassignd.broker.settings import BrokerSettings
from reassignd.control.protocol import (
    ControlRequest,
    Header,
    LeaderAndIsrRequest,
    LiveBroker,
    UpdateMetadataRequest,
    WirePartitionState,
    path_of,
)
from reassignd.control.wire import REPLICAS_PATH
from reassignd.testing.polling import eventually
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.client import ZkClient

GiB = 1024**3


CONTROLLER_ID = 9000


CONTROLLER_EPOCH = 5


@dataclass(frozen=True)
class Registered:
    broker_id: int
    url: str
    epoch: int  # czxid
    reg: codec.BrokerRegistration
    raw: dict[str, Any]

    @property
    def live(self) -> LiveBroker:
        return LiveBroker(self.broker_id, self.reg.rack, tuple(str(e) for e in self.reg.endpoints))


class Controller:
    """Just enough of a controller: znodes written directly, requests POSTed by hand."""

    def __init__(self, zk: ZkClient, http: aiohttp.ClientSession) -> None:
        self.zk = zk
        self.http = http
        self.epoch = CONTROLLER_EPOCH

    async def registered(self, broker_id: int, timeout_s: float = 30.0) -> Registered:
        async def probe() -> Registered | None:
            znode = await self.zk.get_or_none(paths.broker(broker_id))
            if znode is None:
                return None
            reg = codec.decode_broker(broker_id, znode.data)
            assert reg.control_url is not None and znode.data is not None
            return Registered(broker_id, reg.control_url, znode.stat.czxid, reg, json.loads(znode.data))

        return await eventually(probe, timeout_s, 0.05, f"broker {broker_id} registered")

    async def create_topic(
        self, topic: str, replicas: tuple[int, ...], isr: tuple[int, ...], config: dict[str, str]
    ) -> None:
        await self.zk.create(
            paths.config_topic(topic), admin_codec.encode_entity_config(config), make_parents=True
        )
        await self.zk.create(
            paths.topic(topic), codec.encode_topic(codec.TopicZnode({0: replicas})), make_parents=True
        )
        state = codec.PartitionState(replicas[0], 0, self.epoch, isr)
        await self.zk.create(
            paths.partition_state(topic, 0), codec.encode_partition_state(state), make_parents=True
        )

    async def state(self, topic: str) -> tuple[codec.PartitionState, int]:
        znode = await self.zk.get(paths.partition_state(topic, 0))
        return codec.decode_partition_state(znode.data), znode.stat.version

    async def wire_state(
        self, topic: str, replicas: tuple[int, ...], *, is_new: bool = False
    ) -> WirePartitionState:
        state, version = await self.state(topic)
        return WirePartitionState(
            topic,
            0,
            state.controller_epoch,
            state.leader,
            state.leader_epoch,
            state.isr,
            version,
            replicas,
            is_new=is_new,
        )

    def header(self, b: Registered, epoch: int | None = None) -> Header:
        return Header(CONTROLLER_ID, self.epoch if epoch is None else epoch, b.epoch)

    async def post(self, b: Registered, request: ControlRequest) -> dict[str, Any]:
        async with self.http.post(b.url + path_of(request), json=request.to_json()) as resp:
            assert resp.status == 200, await resp.text()
            body: dict[str, Any] = await resp.json()
            return body

    async def leader_and_isr(
        self, b: Registered, states: tuple[WirePartitionState, ...], leaders: tuple[Registered, ...] = ()
    ) -> dict[str, Any]:
        return await self.post(b, LeaderAndIsrRequest(self.header(b), states, tuple(x.live for x in leaders)))

    async def update_metadata(self, b: Registered, live: tuple[Registered, ...]) -> dict[str, Any]:
        return await self.post(b, UpdateMetadataRequest(self.header(b), (), tuple(x.live for x in live)))

    async def replicas(self, b: Registered) -> dict[tuple[str, int], dict[str, Any]]:
        async with self.http.get(b.url + REPLICAS_PATH) as resp:
            body = await resp.json()
        assert body["broker_id"] == b.broker_id
        return {(r["topic"], r["partition"]): r for r in body["replicas"]}

    async def isr_notifications(self) -> list[tuple[str, int]]:
        try:
            children = await self.zk.children(paths.ISR_CHANGE_NOTIFICATION)
        except Exception:
            return []
        out: list[tuple[str, int]] = []
        for child in sorted(children):
            znode = await self.zk.get(paths.isr_change(child))
            out.extend(admin_codec.decode_isr_change(znode.data))
        return out

    async def set_config(self, path: str, config: dict[str, str]) -> None:
        data = admin_codec.encode_entity_config(config)
        if await self.zk.exists(path) is None:
            await self.zk.create(path, data, make_parents=True)
        else:
            await self.zk.set(path, data, -1)


@contextlib.asynccontextmanager
async def agents(settings: list[BrokerSettings]) -> AsyncIterator[asyncio.Event]:
    stop = asyncio.Event()
    task = asyncio.create_task(run_agents(settings, stop), name="test-agents")
    try:
        yield stop
    finally:
        stop.set()
        async with asyncio.timeout(15):
            await task


def base(
    zk_connect: str, *, session_timeout_s: float = 4.0, replication_bytes_per_s: float = 100e6
) -> BrokerSettings:
    return BrokerSettings(
        zk_connect=zk_connect,
        broker_id=1,
        session_timeout_s=session_timeout_s,
        replication_bytes_per_s=replication_bytes_per_s,
        fetch_interval_ms=50,
    )


async def start_move(
    controller: Controller,
    b1: Registered,
    b2: Registered,
    config: dict[str, str],
    *,
    leaders: bool = True,
    topic: str = "orders",
    stale: bool = False,
) -> None:
    """<topic>-0 created on broker 1 alone, then reassigned to [1, 2]: broker 2 is an adding
    replica. ``stale``: the state znode is rewritten behind the leader's back, so the partition
    epoch it knows is one behind and its ISR write conflicts."""
    await controller.create_topic(topic, (1,), (1,), config)
    created = await controller.wire_state(topic, (1,), is_new=True)
    assert (await controller.leader_and_isr(b1, (created,)))["partition_errors"][0]["error_code"] == 0
    moving = await controller.wire_state(topic, (1, 2))
    leader_state = msgspec.structs.replace(moving, leader_epoch=moving.leader_epoch + 1)
    await controller.zk.set(
        paths.partition_state(topic, 0),
        codec.encode_partition_state(
            codec.PartitionState(1, leader_state.leader_epoch, CONTROLLER_EPOCH, (1,))
        ),
        moving.partition_epoch,
    )
    bumped = msgspec.structs.replace(leader_state, partition_epoch=moving.partition_epoch + 1)
    assert (await controller.leader_and_isr(b1, (bumped,)))["partition_errors"][0]["error_code"] == 0
    if stale:
        state, version = await controller.state(topic)
        await controller.zk.set(paths.partition_state(topic, 0), codec.encode_partition_state(state), version)
    adding = msgspec.structs.replace(bumped, is_new=True, adding_replicas=(2,))
    response = await controller.leader_and_isr(b2, (adding,), (b1,) if leaders else ())
    assert response["partition_errors"][0]["error_code"] == 0
    for b in (b1, b2):
        assert (await controller.update_metadata(b, (b1, b2)))["error_code"] == 0

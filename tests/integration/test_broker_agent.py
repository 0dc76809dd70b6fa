"""Broker agents against a real ZooKeeper, with the test playing the controller: it writes the
topic and partition state znodes and POSTs LeaderAndIsr / UpdateMetadata / StopReplica to the
agents' CONTROL endpoints, then watches ZooKeeper and ``GET /replicas``.

Agents run in this process (``run_agents``) where only their behaviour matters, and as real
processes (``python -m reassignd.broker``) where process death matters. Every wait is a bounded
poll, never a speed assertion.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
import pytest

from reassignd.broker.settings import cluster_settings
from reassignd.control.protocol import (
    Header,
    LeaderAndIsrRequest,
    StopReplicaPartition,
    StopReplicaRequest,
    UpdateMetadataRequest,
    WirePartitionState,
)
from reassignd.control.wire import LEADER_AND_ISR_PATH, STOP_REPLICA_PATH, UPDATE_METADATA_PATH
from reassignd.testing.polling import eventually
from reassignd.zk import codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.agent_helpers import (
    CONTROLLER_EPOCH,
    CONTROLLER_ID,
    Controller,
    GiB,
    Registered,
    agents,
    base,
    start_move,
)

T = TypeVar("T")


@pytest.fixture
async def controller(zk: ZkClient) -> AsyncIterator[Controller]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:
        yield Controller(zk, http)


# --- registration and the control checks ---------------------------------------------------------


async def test_registration_is_kafka_v5_with_a_control_endpoint_and_the_czxid_is_the_epoch(
    zk_connect: str, controller: Controller
) -> None:
    settings = cluster_settings(base(zk_connect, session_timeout_s=30.0), brokers=2, first_id=4, racks=2)
    async with agents(settings) as stop:
        b4, b5 = await controller.registered(4), await controller.registered(5)
        raw = b4.raw
        assert raw["version"] == 5 and raw["jmx_port"] == -1 and raw["features"] == {}
        assert raw["host"] == "127.0.0.1" and isinstance(raw["port"], int) and raw["port"] > 0
        assert raw["endpoints"] == [
            f"PLAINTEXT://127.0.0.1:{raw['port']}",
            f"CONTROL://127.0.0.1:{raw['port']}",
        ]
        assert raw["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT", "CONTROL": "PLAINTEXT"}
        assert int(raw["timestamp"]) > 0
        assert (raw["rack"], b5.raw["rack"]) == ("r0", "r1")
        stat = await controller.zk.exists(paths.broker(4))
        assert stat is not None and stat.ephemeral_owner != 0
        assert b4.epoch != b5.epoch

        assert (await controller.update_metadata(b4, (b4, b5)))["error_code"] == 0
        stale = UpdateMetadataRequest(Header(CONTROLLER_ID, CONTROLLER_EPOCH, b4.epoch - 1), (), ())
        assert (await controller.post(b4, stale))["error_code"] == 77
        stop.set()
        # a clean stop closes the sessions: the registrations go well before the 30 s session
        # timeout could expire them

        async def gone() -> bool:
            return all([await controller.zk.exists(paths.broker(b)) is None for b in (4, 5)])

        await eventually(gone, 10, 0.05, "registrations removed on a clean stop")


async def test_control_requests_are_checked_like_kafka(zk_connect: str, controller: Controller) -> None:
    async with agents([base(zk_connect)]):
        b1 = await controller.registered(1)
        await controller.create_topic("orders", (1, 2), (1, 2), {})
        state = await controller.wire_state("orders", (1, 2))
        ok = await controller.leader_and_isr(b1, (state,))
        assert ok == {
            "error_code": 0,
            "partition_errors": [{"topic": "orders", "partition": 0, "error_code": 0}],
        }
        # a resend after a lost response changes nothing
        again = await controller.leader_and_isr(b1, (state,))
        assert again["partition_errors"][0]["error_code"] == 11
        older = WirePartitionState("orders", 0, CONTROLLER_EPOCH, 2, -1, (1, 2), 0, (1, 2))
        assert (await controller.leader_and_isr(b1, (older,)))["partition_errors"][0]["error_code"] == 11
        not_mine = WirePartitionState("other", 0, CONTROLLER_EPOCH, 2, 0, (2, 3), 0, (2, 3))
        assert (await controller.leader_and_isr(b1, (not_mine,)))["partition_errors"][0]["error_code"] == 3
        stale_controller = LeaderAndIsrRequest(controller.header(b1, CONTROLLER_EPOCH - 1), (state,))
        assert (await controller.post(b1, stale_controller))["error_code"] == 11
        stale_broker = StopReplicaRequest(
            Header(CONTROLLER_ID, CONTROLLER_EPOCH, b1.epoch + 1),
            (StopReplicaPartition("orders", 0, 0, True),),
        )
        assert (await controller.post(b1, stale_broker))["error_code"] == 77
        replicas = await controller.replicas(b1)
        assert replicas[("orders", 0)]["leader"] is True
        assert ("other", 0) not in replicas
        for path, body in [
            (LEADER_AND_ISR_PATH, b"{not json"),
            (STOP_REPLICA_PATH, b'{"controller_id": "x"}'),
        ]:
            async with controller.http.post(b1.url + path, data=body) as resp:
                assert resp.status == 400
                assert (await resp.json())["error_code"] == 42
        async with controller.http.post(b1.url + UPDATE_METADATA_PATH, json=[1]) as resp:
            assert resp.status == 400


# --- replication and the ISR ---------------------------------------------------------------------


async def isr_of(controller: Controller) -> tuple[int, ...]:
    state, _ = await controller.state("orders")
    return state.isr


async def test_isr_writes_go_as_multis_and_a_conflicting_one_is_retried_alone(
    zk_connect: str, controller: Controller, caplog: pytest.LogCaptureFixture
) -> None:
    """Five followers catch up at once: the leader writes their ISR changes together. The one
    whose partition epoch it knows is stale fails that write; it is re-read and written again,
    and the four others are written all the same."""
    caplog.set_level(logging.INFO, logger="reassignd.broker.1.isr")
    topics = [f"m{i}" for i in range(5)]
    settings = cluster_settings(base(zk_connect, replication_bytes_per_s=1000 * GiB), 2, 1, None)
    async with agents(settings):
        b1, b2 = await controller.registered(1), await controller.registered(2)
        config = {"reassignd.sim.initial.bytes": str(GiB)}
        for topic in topics:
            await start_move(controller, b1, b2, config, leaders=False, topic=topic, stale=topic == "m2")

        async def all_joined() -> bool:
            states = [(await controller.state(t))[0] for t in topics]
            return all(s.isr == (1, 2) for s in states)

        await eventually(all_joined, 30.0, 0.05, "broker 2 in the ISR of every partition")

        async def all_announced() -> bool:  # in one or more linger windows
            return {(t, 0) for t in topics} <= set(await controller.isr_notifications())

        await eventually(all_announced, 30.0, 0.05, "an ISR change notification for every partition")
    stale = [r.getMessage() for r in caplog.records if "cached partition epoch was stale" in r.getMessage()]
    assert stale and all(m.startswith("m2-0:") for m in stale), stale


async def test_a_follower_catches_up_and_the_leader_adds_it_to_the_isr(
    zk_connect: str, controller: Controller
) -> None:
    settings = cluster_settings(base(zk_connect, replication_bytes_per_s=1000 * GiB), 2, 1, None)
    async with agents(settings):
        b1, b2 = await controller.registered(1), await controller.registered(2)
        await start_move(controller, b1, b2, {"reassignd.sim.initial.bytes": str(100 * GiB)}, leaders=False)
        before, version = await controller.state("orders")

        async def joined() -> codec.PartitionState | None:
            state, _ = await controller.state("orders")
            return state if state.isr == (1, 2) else None

        after = await eventually(joined, 30.0, 0.05, "broker 2 in the ISR of orders-0")
        _, new_version = await controller.state("orders")
        assert new_version == version + 1
        assert (after.leader, after.leader_epoch, after.controller_epoch) == (
            1,
            before.leader_epoch,
            CONTROLLER_EPOCH,
        )
        assert ("orders", 0) in await eventually(
            controller.isr_notifications, 30.0, 0.05, "an ISR change notification"
        )
        follower = (await controller.replicas(b2))[("orders", 0)]
        assert follower["log_end_offset"] == 100 * GiB and follower["lag_bytes"] == 0
        assert follower["leader"] is False

        async def follower_in_isr() -> bool:
            return bool((await controller.replicas(b2))[("orders", 0)]["in_isr"])

        await eventually(follower_in_isr, 30.0, 0.05, "the follower learns it is in the ISR")
        leader = (await controller.replicas(b1))[("orders", 0)]
        assert leader["leader"] is True and leader["in_isr"] is True and leader["log_end_offset"] == 100 * GiB


async def wait_lagging_then_joining(
    controller: Controller, b2: Registered, release: Callable[[], Awaitable[None]]
) -> None:
    """The follower falls further behind the growing leader and stays out of the ISR; after
    ``release`` it catches up and joins."""
    first = (await controller.replicas(b2))[("orders", 0)]

    async def fell_behind() -> bool:
        assert await isr_of(controller) == (1,)  # all along
        now = (await controller.replicas(b2))[("orders", 0)]
        assert not now["in_isr"]
        return bool(
            now["lag_bytes"] > first["lag_bytes"] + 400_000
            and now["log_end_offset"] > first["log_end_offset"]
        )

    await eventually(fell_behind, 30.0, 0.05, "the slow follower moves, but falls behind")
    assert not (await controller.replicas(b2))[("orders", 0)]["in_isr"]
    await release()

    async def joined() -> bool:
        return await isr_of(controller) == (1, 2)

    await eventually(joined, 30.0, 0.05, "the released follower joins the ISR")


async def test_a_slow_follower_stays_out_of_the_isr_until_its_bandwidth_is_raised(
    zk_connect: str, controller: Controller
) -> None:
    await controller.set_config(paths.config_broker(2), {"reassignd.sim.replication.bytes.per.s": "2000"})
    settings = cluster_settings(base(zk_connect), 2, 1, None)
    async with agents(settings):
        b1, b2 = await controller.registered(1), await controller.registered(2)
        config = {"reassignd.sim.initial.bytes": "10000000", "reassignd.sim.produce.bytes.per.s": "200000"}
        await start_move(controller, b1, b2, config)

        async def raise_bandwidth() -> None:
            await controller.set_config(
                paths.config_broker(2), {"reassignd.sim.replication.bytes.per.s": str(GiB)}
            )

        await wait_lagging_then_joining(controller, b2, raise_bandwidth)


async def test_a_kip73_follower_throttle_holds_a_listed_replica_back(
    zk_connect: str, controller: Controller
) -> None:
    await controller.set_config(paths.config_broker(2), {"follower.replication.throttled.rate": "2000"})
    settings = cluster_settings(base(zk_connect), 2, 1, None)
    async with agents(settings):
        b1, b2 = await controller.registered(1), await controller.registered(2)
        config = {
            "reassignd.sim.initial.bytes": "10000000",
            "reassignd.sim.produce.bytes.per.s": "200000",
            "follower.replication.throttled.replicas": "0:2",
        }
        await start_move(controller, b1, b2, config)

        async def unthrottle() -> None:
            del config["follower.replication.throttled.replicas"]
            await controller.set_config(paths.config_topic("orders"), config)

        await wait_lagging_then_joining(controller, b2, unthrottle)


async def test_stop_replica_stops_and_delete_removes_the_replica(
    zk_connect: str, controller: Controller
) -> None:
    settings = cluster_settings(base(zk_connect), 2, 1, None)
    async with agents(settings):
        b1, b2 = await controller.registered(1), await controller.registered(2)
        await start_move(controller, b1, b2, {"reassignd.sim.initial.bytes": "1000"})

        async def caught_up() -> bool:
            return bool((await controller.replicas(b2))[("orders", 0)]["log_end_offset"] == 1000)

        await eventually(caught_up, 30.0, 0.05, "the follower catches up")
        state = await controller.wire_state("orders", (1, 2))

        async def stop(delete: bool) -> dict[str, Any]:
            part = StopReplicaPartition("orders", 0, state.leader_epoch, delete)
            return await controller.post(b2, StopReplicaRequest(controller.header(b2), (part,)))

        assert (await stop(delete=False))["partition_errors"][0]["error_code"] == 0
        assert ("orders", 0) in await controller.replicas(b2)
        assert (await stop(delete=True))["partition_errors"][0]["error_code"] == 0
        assert await controller.replicas(b2) == {}
        assert (await stop(delete=True))["partition_errors"][0]["error_code"] == 0  # resend: nothing left
        assert ("orders", 0) in await controller.replicas(b1)


# --- agents as real processes ---------------------------------------------------------------------


class AgentProcess:
    def __init__(self, zk_connect: str, broker_id: int, log_path: Path, session_timeout_s: float) -> None:
        self.log_path = log_path
        self._log = log_path.open("ab")
        args = ["--zk", zk_connect, "--id", str(broker_id), "--session-timeout-s", str(session_timeout_s)]
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "reassignd", "broker", *args],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
            start_new_session=True,
        )

    def signal(self, sig: int) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(sig)

    async def wait(self, timeout_s: float = 15.0) -> int:
        return await asyncio.to_thread(self.popen.wait, timeout_s)

    def close(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait(timeout=10)
        self._log.close()


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Callable[..., AgentProcess]]:
    started: list[AgentProcess] = []

    def start(zk_connect: str, broker_id: int, session_timeout_s: float) -> AgentProcess:
        proc = AgentProcess(
            zk_connect, broker_id, tmp_path / f"broker-{broker_id}-{len(started)}.log", session_timeout_s
        )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.close()


async def test_sigterm_removes_the_registration_at_once(
    zk_connect: str, controller: Controller, processes: Callable[..., AgentProcess]
) -> None:
    # a session timeout far beyond the wait: only a closed session can explain the quick removal
    proc = processes(zk_connect, 7, 30.0)
    first = await controller.registered(7)
    assert "listening on http://127.0.0.1:" in proc.log_path.read_text()
    # a second agent with the same id waits for the registration to go; SIGTERM stops it anyway
    duplicate = processes(zk_connect, 7, 30.0)

    async def waiting() -> bool:
        return "held by another session" in duplicate.log_path.read_text()

    await eventually(waiting, 30.0, 0.05, "the duplicate waits for the id")
    duplicate.signal(signal.SIGTERM)
    assert await duplicate.wait() == 0
    assert (await controller.registered(7)).epoch == first.epoch
    proc.signal(signal.SIGTERM)
    assert await proc.wait() == 0
    assert await controller.zk.exists(paths.broker(7)) is None


async def test_sigkill_looks_like_a_crash_and_a_restart_gets_a_new_epoch(
    zk_connect: str, controller: Controller, processes: Callable[..., AgentProcess]
) -> None:
    proc = processes(zk_connect, 8, 2.0)
    first = await controller.registered(8)
    proc.signal(signal.SIGKILL)
    await proc.wait()
    assert await controller.zk.exists(paths.broker(8)) is not None  # until ZooKeeper expires the session
    restarted = processes(zk_connect, 8, 2.0)  # waits out the dead session's registration

    async def re_registered() -> Registered | None:
        b = await controller.registered(8)
        return b if b.epoch > first.epoch else None

    second = await eventually(re_registered, 30.0, 0.05, "broker 8 registered again with a higher czxid")
    assert second.url != first.url or second.epoch > first.epoch
    restarted.signal(signal.SIGTERM)
    assert await restarted.wait() == 0


async def test_an_expired_session_re_registers_with_a_new_epoch(
    zk_connect: str, controller: Controller, processes: Callable[..., AgentProcess]
) -> None:
    proc = processes(zk_connect, 9, 2.0)
    first = await controller.registered(9)
    proc.signal(signal.SIGSTOP)  # a long pause: ZooKeeper expires the session
    try:

        async def expired() -> bool:
            return await controller.zk.exists(paths.broker(9)) is None

        await eventually(expired, 30.0, 0.05, "the paused agent's session expires")
    finally:
        proc.signal(signal.SIGCONT)

    async def re_registered() -> Registered | None:
        b = await controller.registered(9)
        return b if b.epoch > first.epoch else None

    second = await eventually(re_registered, 30.0, 0.05, "broker 9 registers again with a higher czxid")
    assert second.url == first.url  # same process, same listener
    assert (await controller.update_metadata(second, (second,)))["error_code"] == 0
    assert (await controller.update_metadata(first, (second,)))["error_code"] == 77
    proc.signal(signal.SIGTERM)
    assert await proc.wait() == 0

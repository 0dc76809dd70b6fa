"""The console script as operators run it: one `listening on` line, readiness over HTTP and in
ZooKeeper, JSON logs, and a clean stop (exit 0, ephemeral znodes gone at once) on SIGTERM/SIGINT."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal

from reassignd.zk import paths
from reassignd.zk.client import ZkClient
from tests.integration.harness import Proc, Procs, eventually, http_get

# Long enough that an ephemeral znode still present after the stop can only mean the process did
# not close its session.
SESSION_TIMEOUT_S = 30.0


async def stop_with(proc: Proc, sig: signal.Signals) -> int:
    proc.popen.send_signal(sig)
    return await asyncio.to_thread(proc.popen.wait, 20)


async def test_controller_and_cluster_start_and_stop_cleanly(procs: Procs, zk: ZkClient) -> None:
    controller = procs.controller(9000, SESSION_TIMEOUT_S, "--log-format", "json")
    cluster = procs.cluster(2, 1, 2, "--session-timeout-s", str(SESSION_TIMEOUT_S))

    async def ready() -> bool:
        code, _ = await http_get(controller.url + "/readyz")
        return code == 200

    await eventually(ready, what="controller /readyz")

    async def registered() -> list[str] | None:
        children = await zk.children(paths.BROKER_IDS)
        return children if sorted(children) == ["1", "2"] else None

    await eventually(registered, what="both brokers registered")
    assert await zk.exists(paths.CONTROLLER) is not None

    # One `listening on` line carrying the real URL, and JSON lines throughout.
    records = [json.loads(line) for line in controller.proc.log().splitlines() if line.strip()]
    assert all({"ts", "level", "logger", "msg"} <= set(r) for r in records)
    listening = [r["msg"] for r in records if r["msg"].startswith("listening on ")]
    assert listening == [f"listening on {controller.url}"]
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", controller.url)

    assert await stop_with(cluster, signal.SIGINT) == 0
    assert await stop_with(controller.proc, signal.SIGTERM) == 0
    # Sessions closed: the ephemerals are gone now, not after the 30 s session timeout.
    assert await zk.children(paths.BROKER_IDS) == []
    assert await zk.exists(paths.CONTROLLER) is None


async def test_broker_stops_cleanly_on_sigterm(procs: Procs, zk: ZkClient) -> None:
    broker = procs.broker(7, "--rack", "r1", "--session-timeout-s", str(SESSION_TIMEOUT_S))

    async def registered() -> bool:
        return await zk.exists(paths.broker(7)) is not None

    await eventually(registered, what="broker 7 registered")
    assert await stop_with(broker, signal.SIGTERM) == 0
    assert await zk.exists(paths.broker(7)) is None


async def test_cluster_in_processes_registers_every_agent_and_stops_them_all(
    procs: Procs, zk: ZkClient
) -> None:
    cluster = procs.cluster(3, 1, None, "--processes", "2", "--session-timeout-s", str(SESSION_TIMEOUT_S))

    async def registered() -> list[str] | None:
        children = await zk.children(paths.BROKER_IDS)
        return children if sorted(children) == ["1", "2", "3"] else None

    await eventually(registered, what="the three brokers registered")
    started = dict(re.findall(r"process (\d+) runs (agents-[\d-]+)", cluster.log()))
    assert sorted(started.values()) == ["agents-1-2", "agents-3"]
    assert cluster.popen.pid not in {int(pid) for pid in started}
    assert await stop_with(cluster, signal.SIGTERM) == 0
    assert await zk.children(paths.BROKER_IDS) == []  # every child closed its sessions


async def test_cluster_in_processes_fails_when_a_child_dies_and_stops_the_others(
    procs: Procs, zk: ZkClient
) -> None:
    cluster = procs.cluster(2, 1, None, "--processes", "2", "--session-timeout-s", str(SESSION_TIMEOUT_S))

    async def registered() -> list[str] | None:
        children = await zk.children(paths.BROKER_IDS)
        return children if sorted(children) == ["1", "2"] else None

    await eventually(registered, what="both brokers registered")
    pids = {name: int(pid) for pid, name in re.findall(r"process (\d+) runs (agents-[\d-]+)", cluster.log())}
    os.kill(pids["agents-1"], signal.SIGKILL)
    assert await asyncio.to_thread(cluster.popen.wait, 20) == 1
    assert "agent process exited while the cluster ran: agents-1 (exit code -9)" in cluster.log()
    # broker 2's child was stopped cleanly: its registration is gone at once (1's expires later)
    assert "2" not in await zk.children(paths.BROKER_IDS)

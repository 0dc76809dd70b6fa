"""Fixtures of the fault suite: an ``Env`` on the shared ZooKeeper (for faults that leave the
server alone), or on a ZooKeeper server of the module's own (for faults that freeze or restart
it: the session-wide server is never frozen or restarted)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from reassignd.zk.client import ZkClient
from reassignd.zk.server import LocalZooKeeper
from reassignd.zk.values import ZkSettings
from tests.faults.scenarios import Env
from tests.integration.harness import Procs


@pytest.fixture
async def env(procs: Procs, zk: ZkClient, zk_connect: str) -> Env:
    return Env(procs, zk, zk_connect)


@pytest.fixture(scope="module")
def own_zookeeper() -> Iterator[LocalZooKeeper]:
    server = LocalZooKeeper(tick_time_ms=250).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def own_env(
    own_zookeeper: LocalZooKeeper, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Env]:
    """An Env whose ZooKeeper server the test may freeze and restart (a chroot of its own)."""
    if own_zookeeper.process is None or own_zookeeper.process.poll() is not None:
        own_zookeeper.start()
    connect = f"{own_zookeeper.connect}/t-{uuid.uuid4().hex[:12]}"
    procs = Procs(connect, tmp_path_factory.mktemp("procs"))
    client = ZkClient(ZkSettings(connect, session_timeout_s=5.0))
    await client.start()
    try:
        yield Env(procs, client, connect, own_zookeeper)
    finally:
        procs.close()
        own_zookeeper.thaw()
        await client.close()

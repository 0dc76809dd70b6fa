"""Shared fixtures: one real ZooKeeper server per test session, a fresh chroot per test."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from reassignd.zk.client import ZkClient, ZkSettings
from reassignd.zk.server import LocalZooKeeper
from tests.integration.harness import Procs


@pytest.fixture(scope="session")
def zookeeper() -> Iterator[LocalZooKeeper]:
    server = LocalZooKeeper(tick_time_ms=250).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def zk_connect(zookeeper: LocalZooKeeper) -> str:
    """A connect string with a chroot of its own, so tests never see each other's znodes."""
    return f"{zookeeper.connect}/t-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def procs(zk_connect: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Procs]:
    p = Procs(zk_connect, tmp_path_factory.mktemp("procs"))
    try:
        yield p
    finally:
        p.close()


@pytest.fixture
async def zk(zk_connect: str) -> AsyncIterator[ZkClient]:
    """A plain ZooKeeper session on the test's chroot, for writing and checking znodes."""
    client = ZkClient(ZkSettings(zk_connect, session_timeout_s=5.0))
    await client.start()
    try:
        yield client
    finally:
        await client.close()

"""Shared fixtures: one real ZooKeeper server per test session, a fresh chroot per test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from reassignd.zk.server import LocalZooKeeper


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

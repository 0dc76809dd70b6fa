"""Fixtures of the fault suite: an ``Env`` on the shared ZooKeeper (for faults that leave the
server alone), or on a ZooKeeper server of the module's own (for faults that freeze or restart
it: the session-wide server is never frozen or restarted).

A test parametrized with ``secured`` True runs on the secured ZooKeeper instead (SASL
DIGEST-MD5, a server of the module's own): every controller and agent authenticates as the
cluster's principal and creates its znodes with Kafka's ACLs (``--zk-set-acl``), and so does the
test's own session."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from reassignd.zk.client import ZkClient
from reassignd.zk.server import LocalZooKeeper
from reassignd.zk.values import DEFAULT_REQUEST_TIMEOUT_S, SaslCredentials, ZkSettings
from tests.faults.scenarios import Env
from tests.integration.harness import Procs
from tests.integration.secured_helpers import secured_args
from tests.zk_acl import SASL_PASSWORD, SASL_USER


@pytest.fixture
def secured() -> bool:
    """False: an open ZooKeeper. A test's ``@pytest.mark.parametrize("secured", ...)`` overrides it."""
    return False


def _settings(connect: str, secured: bool, session_timeout_s: float, request_timeout_s: float) -> ZkSettings:
    sasl = SaslCredentials(SASL_USER, SASL_PASSWORD) if secured else None
    return ZkSettings(connect, session_timeout_s, request_timeout_s, sasl=sasl, set_acl=secured)


@pytest.fixture
def zk_connect(secured: bool, request: pytest.FixtureRequest) -> str:
    """The test's chroot on the shared ZooKeeper, or on the secured one."""
    server: LocalZooKeeper = request.getfixturevalue("secured_zookeeper" if secured else "zookeeper")
    return f"{server.connect}/t-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def procs(zk_connect: str, secured: bool, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Procs]:
    log_dir = tmp_path_factory.mktemp("procs")
    p = Procs(zk_connect, log_dir, tuple(secured_args(log_dir)) if secured else ())
    try:
        yield p
    finally:
        p.close()


@pytest.fixture
async def zk(zk_connect: str, secured: bool) -> AsyncIterator[ZkClient]:
    client = ZkClient(_settings(zk_connect, secured, 6.0, 10.0))
    await client.start()
    try:
        yield client
    finally:
        await client.close()


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
def own_server(secured: bool, request: pytest.FixtureRequest) -> LocalZooKeeper:
    """The module's own server: open, or the secured one (also the module's own)."""
    server: LocalZooKeeper = request.getfixturevalue("secured_zookeeper" if secured else "own_zookeeper")
    return server


@pytest.fixture
async def own_env(
    own_server: LocalZooKeeper, secured: bool, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Env]:
    """An Env whose ZooKeeper server the test may freeze and restart (a chroot of its own)."""
    if own_server.process is None or own_server.process.poll() is not None:
        own_server.start()
    connect = f"{own_server.connect}/t-{uuid.uuid4().hex[:12]}"
    log_dir = tmp_path_factory.mktemp("procs")
    procs = Procs(connect, log_dir, tuple(secured_args(log_dir)) if secured else ())
    client = ZkClient(_settings(connect, secured, 5.0, DEFAULT_REQUEST_TIMEOUT_S))
    await client.start()
    try:
        yield Env(procs, client, connect, own_server)
    finally:
        procs.close()
        own_server.thaw()
        await client.close()

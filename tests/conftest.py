"""Shared fixtures: one real ZooKeeper server per test session, a fresh chroot per test; and the
markers that say what a test needs beyond Python (``bash scripts/test.sh --unit`` deselects them)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterator
from pathlib import Path
from typing import Protocol

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from hypothesis import HealthCheck, settings

from reassignd.zk.client import ZkClient
from reassignd.zk.server import LocalZooKeeper
from reassignd.zk.values import ZkSettings
from tests.examples import examples
from tests.integration.harness import Kit, Launcher, Procs
from tests.tier_times import TierTimes
from tests.zk_acl import SASL_PASSWORD, SASL_USER

# tests under these directories run real processes on a real ZooKeeper, whatever fixtures they use
_NEEDS_ZOOKEEPER = ("integration", "faults", "browser")
_ZOOKEEPER_FIXTURES = frozenset({"zookeeper", "own_zookeeper", "kit", "secured_zookeeper"})
_LOG_TAIL_LINES = 40
# The tiers whose tests drive third-party clients against processes they kill: a socket that
# kafka-python, aiokafka or aiohttp leaves unclosed when its peer goes away is collected in
# whichever test runs next on that worker, and the "error" filter turned its ResourceWarning into
# that unrelated test's failure (seen once in a full run: a controller's HTTP connection, from the
# test before, failing a SASL test). There it is ignored; the unit tier keeps the error.
_PROCESS_TIERS = ("integration", "faults", "browser", "feeder")
_LEAKS_OF_CLIENTS_IGNORED = pytest.mark.filterwarnings("ignore:unclosed:ResourceWarning")

# no per-example deadline: a loaded machine (parallel workers, a CI runner) makes an example slow,
# never wrong; the per-test timeout still bounds a test
# and half the examples of a test that names none (tests/examples.py: the deep run draws them all)
settings.register_profile(
    "reassignd", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=examples(100)
)
settings.load_profile("reassignd")


def pytest_configure(config: pytest.Config) -> None:
    """The time-per-tier line at the end of every run (tests/tier_times.py)."""
    config.pluginmanager.register(TierTimes(), "reassignd-tier-times")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed test's report carries the last lines of every component it started (the logs of
    its ``procs`` or ``kit``): a CI run shows why a controller never became active."""
    report = yield
    if report.failed and call.when in ("call", "teardown"):
        for launcher in getattr(item, "funcargs", {}).values():
            if isinstance(launcher, Launcher):
                for component in launcher.started:
                    report.sections.append((f"log {component.log_path.name}", _tail(component.log_path)))
    return report


def _tail(path: Path, lines: int = _LOG_TAIL_LINES) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as e:
        return f"(unreadable: {e})"
    return "\n".join(text.splitlines()[-lines:])


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """``zookeeper`` on every test that starts or uses a ZooKeeper server (by its fixtures, or
    its directory), ``faults`` and ``browser`` on their directories' tests, ``spark`` on those
    that take a Spark session."""
    for item in items:
        parts = item.path.parts
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & _ZOOKEEPER_FIXTURES or any(d in parts for d in _NEEDS_ZOOKEEPER):
            item.add_marker(pytest.mark.zookeeper)
        if "faults" in parts:
            item.add_marker(pytest.mark.faults)
        if "browser" in parts:
            item.add_marker(pytest.mark.browser)
        if "spark" in fixtures:
            item.add_marker(pytest.mark.spark)
        if any(d in parts for d in _PROCESS_TIERS):
            item.add_marker(_LEAKS_OF_CLIENTS_IGNORED)


@pytest.fixture(scope="session")
def zookeeper() -> Iterator[LocalZooKeeper]:
    server = LocalZooKeeper(tick_time_ms=250).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def secured_zookeeper() -> Iterator[LocalZooKeeper]:
    """A ZooKeeper with SASL DIGEST-MD5 (users kafka and other), anonymous sessions allowed: the
    znodes' ACLs say what each may do, as in a Kafka cluster run with zookeeper.set.acl."""
    server = LocalZooKeeper(tick_time_ms=250, sasl_users={SASL_USER: SASL_PASSWORD, "other": "x"}).start()
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
async def kit(zk_connect: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Kit]:
    """The in-process cluster kit: controllers and agents in the test's loop, started from the
    command lines ``procs`` gives processes, stopped at teardown."""
    k = Kit(zk_connect, tmp_path_factory.mktemp("kit"))
    try:
        yield k
    finally:
        await k.close()


@pytest.fixture
async def zk(zk_connect: str) -> AsyncIterator[ZkClient]:
    """The one plain ZooKeeper session of a test, on its chroot, for writing and checking znodes."""
    client = ZkClient(ZkSettings(zk_connect, session_timeout_s=6.0, request_timeout_s=10.0))
    await client.start()
    try:
        yield client
    finally:
        await client.close()


class AgentReplicas(Protocol):
    """A stand-in broker agent: answers ``GET /replicas``."""

    async def replicas(self, request: web.Request) -> web.StreamResponse: ...


@pytest.fixture
async def serve_agent() -> AsyncIterator[Callable[[AgentReplicas], Awaitable[str]]]:
    """Starts an agent's ``GET /replicas`` on loopback: its CONTROL endpoint."""
    servers: list[TestServer] = []

    async def start(agent: AgentReplicas) -> str:
        app = web.Application()
        app.router.add_get("/replicas", agent.replicas)
        server = TestServer(app, host="127.0.0.1")
        await server.start_server()
        servers.append(server)
        return f"CONTROL://127.0.0.1:{server.port}"

    yield start
    for server in servers:
        await server.close()

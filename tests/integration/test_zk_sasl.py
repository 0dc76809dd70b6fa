"""Our ZooKeeper client against a secured ZooKeeper (SASL DIGEST-MD5, Kafka's ACLs): it
authenticates on every connection, its znodes carry Kafka's ACLs, an anonymous session may read
where Kafka allows and write nowhere, a wrong password is a clear refusal."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from reassignd.zk.acls import ALL, READ, Acl
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import NoAuthError, ZkAuthFailed
from reassignd.zk.server import LocalZooKeeper
from reassignd.zk.values import SaslCredentials, SessionState, ZkSettings
from tests.integration.harness import eventually
from tests.zk_acl import SASL_PASSWORD, SASL_USER

USER, PASSWORD = SASL_USER, SASL_PASSWORD
KAFKA_ACLS = [Acl(ALL, "sasl", USER), Acl(READ, "world", "anyone")]
CREATOR_ONLY = [Acl(ALL, "sasl", USER)]


@pytest.fixture
def chroot(secured_zookeeper: LocalZooKeeper) -> str:
    return f"{secured_zookeeper.connect}/s-{uuid.uuid4().hex[:12]}"


def settings(connect: str, *, password: str | None = PASSWORD, set_acl: bool = True) -> ZkSettings:
    sasl = None if password is None else SaslCredentials(USER, password)
    return ZkSettings(connect, session_timeout_s=6.0, request_timeout_s=10.0, sasl=sasl, set_acl=set_acl)


@pytest.fixture
async def kafka_zk(chroot: str) -> AsyncIterator[ZkClient]:
    client = ZkClient(settings(chroot))
    await client.start()
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
async def anonymous(chroot: str, kafka_zk: ZkClient) -> AsyncIterator[ZkClient]:
    client = ZkClient(settings(chroot, password=None, set_acl=False))
    await client.start()
    try:
        yield client
    finally:
        await client.close()


async def test_znodes_get_kafkas_acls_and_anonymous_sessions_only_read(
    kafka_zk: ZkClient, anonymous: ZkClient
) -> None:
    await kafka_zk.create("/brokers/topics/t", b"{}", make_parents=True)
    await kafka_zk.create("/config/users/alice", b"{}", make_parents=True)
    await kafka_zk.create("/config/brokers/1", b"{}", make_parents=True)
    await kafka_zk.multi([])  # nothing: still fine
    for path in ("/brokers", "/brokers/topics", "/brokers/topics/t", "/config"):
        assert (await kafka_zk.get_acl(path))[0] == KAFKA_ACLS, path
    for path in ("/config/users", "/config/users/alice", "/config/brokers", "/config/brokers/1"):
        assert (await kafka_zk.get_acl(path))[0] == CREATOR_ONLY, path
    assert (await anonymous.get("/brokers/topics/t")).data == b"{}"
    with pytest.raises(NoAuthError):
        await anonymous.get("/config/users/alice")
    with pytest.raises(NoAuthError, match=r"NOAUTH for /brokers/topics/t \(this session: anonymous\)"):
        await anonymous.set("/brokers/topics/t", b"x", -1)
    with pytest.raises(NoAuthError):
        await anonymous.create("/brokers/topics/t/partitions", b"")
    with pytest.raises(NoAuthError):
        await anonymous.delete("/brokers/topics/t")
    await kafka_zk.set("/brokers/topics/t", b"y", -1)


async def test_a_noauth_names_the_authenticated_session(chroot: str, kafka_zk: ZkClient) -> None:
    await kafka_zk.create("/mine", b"")
    other = ZkClient(ZkSettings(chroot, 6.0, 10.0, sasl=SaslCredentials("other", "x")))
    await other.start()
    try:
        with pytest.raises(NoAuthError, match=r"NOAUTH for /mine \(this session: sasl:other\)"):
            await other.delete("/mine")
    finally:
        await other.close()


async def test_without_set_acl_znodes_are_open(chroot: str) -> None:
    client = ZkClient(settings(chroot, set_acl=False))
    await client.start()
    try:
        await client.create("/a", b"")
        assert (await client.get_acl("/a"))[0] == [Acl(ALL, "world", "anyone")]
    finally:
        await client.close()


async def test_a_wrong_password_is_refused_at_start(chroot: str) -> None:
    client = ZkClient(settings(chroot, password="wrong"))
    with pytest.raises(ZkAuthFailed, match="kafka") as refused:
        await client.start()
    assert "wrong" not in str(refused.value)


async def test_a_server_without_sasl_is_a_clear_refusal(zookeeper: LocalZooKeeper) -> None:
    client = ZkClient(settings(f"{zookeeper.connect}/plain"))
    with pytest.raises(ZkAuthFailed, match="offers no SASL challenge"):
        await client.start()


async def test_the_session_authenticates_again_after_the_server_restarts(
    secured_zookeeper: LocalZooKeeper, kafka_zk: ZkClient
) -> None:
    states: list[SessionState] = []
    kafka_zk.on_session_state(states.append)
    await kafka_zk.create("/before", b"")
    secured_zookeeper.restart()

    async def back() -> bool | None:
        return (SessionState.SUSPENDED in states and kafka_zk.connected) or None

    await eventually(back, timeout_s=30)
    await kafka_zk.create("/after", b"")  # the connection authenticated again: it may write
    await kafka_zk.set("/before", b"x", -1)
    assert (await kafka_zk.get_acl("/after"))[0] == KAFKA_ACLS


async def test_a_server_requiring_sasl_takes_an_authenticated_session() -> None:
    with LocalZooKeeper(tick_time_ms=250, sasl_users={USER: PASSWORD}, sasl_required=True) as server:
        client = ZkClient(settings(server.connect + "/r"))
        await client.start()
        try:
            await client.create("/x", b"1")
            assert (await client.get("/x")).data == b"1"
        finally:
            await client.close()

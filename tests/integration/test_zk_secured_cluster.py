"""A controller and a cluster of agents against a secured ZooKeeper, as a production Kafka cluster
runs it: authenticated with SASL DIGEST-MD5 as the cluster's principal and creating every znode
with Kafka's ACLs (``--zk-set-acl``), they create, move and delete a topic; every znode they
created carries Kafka's ACLs, and an anonymous session reads where Kafka allows and writes
nowhere. After the server restarts they authenticate again and keep working. A wrong password
ends the controller at startup: exit 2, one line."""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from reassignd.zk.acls import sensitive_path
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import NoAuthError, NoNodeError
from reassignd.zk.server import LocalZooKeeper
from reassignd.zk.values import SaslCredentials
from tests.integration.harness import Kit, active_one, eventually, wait_brokers
from tests.integration.reassignment_helpers import FAST, set_broker_rate
from tests.integration.secured_helpers import client, create_move_delete, kafka_acls, secured_args, tree
from tests.zk_acl import SASL_PASSWORD, SASL_USER


@pytest.fixture
def chroot(secured_zookeeper: LocalZooKeeper) -> str:
    return f"{secured_zookeeper.connect}/c-{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def kafka_zk(chroot: str) -> AsyncIterator[ZkClient]:
    zk = await client(chroot, SaslCredentials(SASL_USER, SASL_PASSWORD))
    try:
        yield zk
    finally:
        await zk.close()


@pytest.fixture
async def secured_kit(chroot: str, tmp_path: Path, kafka_zk: ZkClient) -> AsyncIterator[Kit]:
    kit = Kit(chroot, tmp_path)
    try:
        yield kit
    finally:
        await kit.close()


async def test_an_authenticated_cluster_creates_moves_and_deletes_with_kafkas_acls(
    secured_zookeeper: LocalZooKeeper, secured_kit: Kit, kafka_zk: ZkClient, chroot: str, tmp_path: Path
) -> None:
    args = secured_args(tmp_path)
    c = secured_kit.controller(9000, 2.0, *args)
    _, status = await active_one(c)
    assert {k: status["zookeeper"][k] for k in ("principal", "tls", "acls")} == {
        "principal": "sasl:kafka",
        "tls": False,
        "acls": "kafka",
    }
    await set_broker_rate(kafka_zk, None, FAST)
    secured_kit.cluster(3, 1, None, *args)
    await wait_brokers(c, {1, 2, 3})
    await create_move_delete(c, kafka_zk, "orders")
    # a broker's own config: under a sensitive root (only its creator may read it)
    await kafka_zk.create("/config/brokers/1", b'{"version":1,"config":{}}', make_parents=True)

    paths = await tree(kafka_zk)
    assert {"/brokers/ids/1", "/controller", "/controller_epoch", "/admin/delete_topics"} <= set(paths)
    wrong = {p: acls for p in paths if (acls := (await kafka_zk.get_acl(p))[0]) != kafka_acls(p)}
    assert not wrong, wrong

    anonymous = await client(chroot, None)
    try:
        for path in paths:
            if sensitive_path(path):
                with pytest.raises(NoAuthError):
                    await anonymous.get(path)
            else:
                await anonymous.get(path)
            with pytest.raises(NoAuthError):
                await anonymous.set(path, b"x", -1)
            with pytest.raises(NoAuthError):
                await anonymous.create(f"{path.rstrip('/')}/intruder", b"")
            if path != "/":
                with pytest.raises((NoAuthError, NoNodeError)):
                    await anonymous.delete(path)  # NoNode never: the parent refuses first
    finally:
        await anonymous.close()
    for path in paths[1:]:
        assert await kafka_zk.exists(path) is not None, f"{path} deleted by an anonymous session"

    # the server restarts: every session reconnects (or is re-established) and authenticates again
    before = {b["id"]: b["broker_epoch"] for b in await wait_brokers(c, {1, 2, 3})}
    await asyncio.to_thread(secured_zookeeper.restart)  # the kit's components run on this loop
    await active_one(c)

    async def registered_again() -> bool:
        """Each agent registered by a session connected now: its session survived the restart
        (same epoch) or it registered again with a new one (a new epoch); a registration of a
        session that never came back (it goes when the server expires it) does not count."""
        live = await asyncio.to_thread(secured_zookeeper.connected_sessions)
        owners = [await kafka_zk.exists(f"/brokers/ids/{b}") for b in before]
        if not all(stat is not None and stat.ephemeral_owner in live for stat in owners):
            return False
        code, body = await c.get("/v1/brokers")  # and the controller follows them
        now = {b["id"]: b["broker_epoch"] for b in body["brokers"]} if code == 200 else {}
        return now == {b: stat.czxid for b, stat in zip(before, owners, strict=True) if stat is not None}

    await eventually(registered_again, timeout_s=60, what="the agents registered by live sessions")
    await create_move_delete(c, kafka_zk, "after-restart")


@pytest.mark.parametrize(
    ("command", "extra"),
    [
        ("controller", ["--http", "127.0.0.1:0", "--log-level", "error"]),
        ("admin reassign", ["--rollback"]),
        ("admin zk-acls", ["--secure"]),
        ("cluster", ["--brokers", "2", "--log-level", "error"]),
        ("cluster", ["--brokers", "2", "--processes", "2", "--log-level", "error"]),
    ],
)
async def test_a_wrong_password_ends_the_process_with_exit_2_and_one_line(
    chroot: str, tmp_path: Path, command: str, extra: list[str]
) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "reassignd",
        *command.split(),
        "--zk",
        chroot,
        *secured_args(tmp_path, "not-the-password"),
        *extra,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=90)
    assert proc.returncode == 2, err.decode()
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1, lines
    refused = "ZooKeeper refused the SASL authentication of 'kafka': AUTHFAILED"
    assert lines[0].startswith(f"reassignd {command}: error: {refused}"), lines[0]
    assert "not-the-password" not in err.decode() + out.decode()

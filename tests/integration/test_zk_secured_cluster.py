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
from typing import Any

import pytest

from reassignd.zk.acls import ALL, READ, Acl, sensitive_path
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import NoAuthError, NoNodeError
from reassignd.zk.server import LocalZooKeeper
from reassignd.zk.values import SaslCredentials, ZkSettings
from tests.integration.harness import ControllerProc, Kit, active_one, eventually, wait_brokers
from tests.integration.reassignment_helpers import FAST, alter, completed, set_broker_rate
from tests.zk_acl import SASL_PASSWORD, SASL_USER

OPEN = [Acl(ALL, "world", "anyone")]
KAFKA_ACLS = [Acl(ALL, "sasl", SASL_USER), Acl(READ, "world", "anyone")]
CREATOR_ONLY = [Acl(ALL, "sasl", SASL_USER)]


@pytest.fixture
def chroot(secured_zookeeper: LocalZooKeeper) -> str:
    return f"{secured_zookeeper.connect}/c-{uuid.uuid4().hex[:12]}"


def secured_args(tmp_path: Path, password: str = SASL_PASSWORD) -> list[str]:
    path = tmp_path / f"zk-password-{uuid.uuid4().hex[:6]}"
    path.write_text(password + "\n")
    return ["--zk-sasl-user", SASL_USER, "--zk-sasl-password-file", str(path), "--zk-set-acl"]


async def client(connect: str, sasl: SaslCredentials | None) -> ZkClient:
    zk = ZkClient(ZkSettings(connect, 6.0, 10.0, sasl=sasl, set_acl=sasl is not None))
    await zk.start()
    return zk


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


async def tree(zk: ZkClient, root: str = "/") -> list[str]:
    out = [root]
    for child in sorted(await zk.children(root)):
        out += await tree(zk, f"{root.rstrip('/')}/{child}")
    return out


def kafka_acls(path: str) -> list[Acl]:
    if path == "/consumers":
        return OPEN
    return CREATOR_ONLY if sensitive_path(path) else KAFKA_ACLS


async def topic_api(c: ControllerProc, method: str, path: str, body: Any = None) -> dict[str, Any]:
    code, resp = await (c.post(path, body) if method == "POST" else c.get(path))
    assert code == 200, resp
    assert isinstance(resp, dict)
    return resp


async def create_move_delete(c: ControllerProc, zk: ZkClient, topic: str) -> None:
    body = {"topics": [{"name": topic, "assignments": {"0": [1, 2], "1": [2, 3]}}]}

    async def created() -> bool | None:
        code, resp = await c.post("/v1/topics", body)
        if code == 503:  # NOT_CONTROLLER: still (re-)electing after the server came back
            return None
        if resp["topics"][0]["error_code"] == 39:  # the agents are registering again
            return None
        assert code == 200 and resp["topics"][0]["error_code"] == 0, resp
        return True

    await eventually(created, timeout_s=60, what=f"{topic} created")
    await alter(c, {(topic, 0): [3, 1]})
    await eventually(lambda: completed(zk, topic, 0, (3, 1)), timeout_s=60, what=f"{topic}-0 moved")
    resp = await topic_api(c, "POST", "/v1/topics/delete", {"topics": [topic]})
    assert resp["responses"][0]["error_code"] == 0, resp

    async def gone() -> bool | None:
        return (await zk.exists(f"/brokers/topics/{topic}") is None) or None

    await eventually(gone, timeout_s=60, what=f"{topic} deleted")


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

    async def registered_again() -> bool:  # each agent's new session registered (new epochs)
        code, body = await c.get("/v1/brokers")
        now = {b["id"]: b["broker_epoch"] for b in body["brokers"]} if code == 200 else {}
        return set(now) == set(before) and all(now[b] != before[b] for b in before)

    await eventually(registered_again, timeout_s=60, what="the agents registered with new sessions")
    await create_move_delete(c, kafka_zk, "after-restart")


@pytest.mark.parametrize(
    ("command", "extra"),
    [
        ("controller", ["--http", "127.0.0.1:0", "--log-level", "error"]),
        ("admin reassign", ["--rollback"]),
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

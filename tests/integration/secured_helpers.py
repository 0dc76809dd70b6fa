"""Helpers of the tests against the secured ZooKeeper (``secured_zookeeper``): the ACLs Kafka's
rules give, a controller's secured flags, a session as the cluster's principal or anonymous, the
whole tree of a chroot, a topic created, moved and deleted through a controller."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from reassignd.zk.acls import ALL, READ, Acl, sensitive_path
from reassignd.zk.client import ZkClient
from reassignd.zk.values import SaslCredentials, ZkSettings
from tests.integration.harness import ControllerProc, eventually
from tests.integration.reassignment_helpers import alter, completed
from tests.zk_acl import SASL_PASSWORD, SASL_USER

OPEN = [Acl(ALL, "world", "anyone")]
KAFKA_ACLS = [Acl(ALL, "sasl", SASL_USER), Acl(READ, "world", "anyone")]
CREATOR_ONLY = [Acl(ALL, "sasl", SASL_USER)]


def secured_args(tmp_path: Path, password: str = SASL_PASSWORD) -> list[str]:
    path = tmp_path / f"zk-password-{uuid.uuid4().hex[:6]}"
    path.write_text(password + "\n")
    return ["--zk-sasl-user", SASL_USER, "--zk-sasl-password-file", str(path), "--zk-set-acl"]


async def client(connect: str, sasl: SaslCredentials | None) -> ZkClient:
    zk = ZkClient(ZkSettings(connect, 6.0, 10.0, sasl=sasl, set_acl=sasl is not None))
    await zk.start()
    return zk


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

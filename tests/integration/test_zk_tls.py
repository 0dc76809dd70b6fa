"""TLS to ZooKeeper's secure client port (KIP-515), with SASL on top: the client verifies the
server's certificate (a server the CA did not sign is refused at startup, exit 2 for a process),
presents a client certificate when given one, and a controller with agents runs over it."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from reassignd.tls import ClientTls
from reassignd.zk._reaper import close_sessions
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import ZkTlsRefused
from reassignd.zk.server import LocalZooKeeper, ServerTls
from reassignd.zk.values import SaslCredentials, ZkSettings
from tests.integration.harness import Kit, active_one, eventually, wait_brokers
from tests.pki import Pki, make_pki
from tests.zk_acl import SASL_PASSWORD, SASL_USER


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("zk-pki"))


@pytest.fixture(scope="module")
def tls_zookeeper(pki: Pki) -> Iterator[LocalZooKeeper]:
    server = LocalZooKeeper(
        tick_time_ms=250,
        sasl_users={SASL_USER: SASL_PASSWORD},
        tls=ServerTls(pki.server_cert, pki.server_key, pki.ca_cert, client_auth="want"),
    ).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def chroot(tls_zookeeper: LocalZooKeeper) -> str:
    return f"{tls_zookeeper.secure_connect}/tls-{uuid.uuid4().hex[:12]}"


def settings(connect: str, tls: ClientTls) -> ZkSettings:
    return ZkSettings(
        connect, 6.0, 10.0, sasl=SaslCredentials(SASL_USER, SASL_PASSWORD), set_acl=True, tls=tls
    )


@pytest.mark.parametrize("client_cert", [False, True])
async def test_a_client_verifying_the_server_works_over_tls(pki: Pki, chroot: str, client_cert: bool) -> None:
    tls = ClientTls(str(pki.ca_cert))
    if client_cert:
        tls = ClientTls(str(pki.ca_cert), str(pki.client_cert), str(pki.client_key))
    client = ZkClient(settings(chroot, tls))
    await client.start()
    try:
        await client.create("/brokers/ids", b"x", make_parents=True)
        assert (await client.get("/brokers/ids")).data == b"x"
        acls, _ = await client.get_acl("/brokers/ids")
        # the creator is every identity the session proved: its certificate too (the x509 scheme)
        creator = {"sasl:kafka", "x509:CN=client"} if client_cert else {"sasl:kafka"}
        assert {f"{acl.scheme}:{acl.id}" for acl in acls} == creator | {"world:anyone"}
    finally:
        await client.close()


async def test_zk_acls_secures_an_open_tree_for_both_identities_and_a_second_run_changes_nothing(
    pki: Pki, chroot: str, tmp_path: Path
) -> None:
    """With a client certificate as well as SASL, ZooKeeper's creator entry names both; the walk
    learns them (whoAmI), so a migrated tree reads back as wanted."""
    tls = ClientTls(str(pki.ca_cert), str(pki.client_cert), str(pki.client_key))
    open_client = ZkClient(dataclasses.replace(settings(chroot, tls), set_acl=False))
    await open_client.start()
    try:
        await open_client.create("/brokers/topics/t/partitions/0/state", b"{}", make_parents=True)
        await open_client.create("/config/users/alice", b"{}", make_parents=True)
        password = tmp_path / "zk-password"
        password.write_text(SASL_PASSWORD)
        args = [
            "--zk", chroot, "--zk-tls-ca", str(pki.ca_cert), "--zk-tls-cert", str(pki.client_cert),
            "--zk-tls-key", str(pki.client_key), "--zk-sasl-user", SASL_USER,
            "--zk-sasl-password-file", str(password),
        ]  # fmt: skip
        outputs = []
        for _ in range(2):
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "reassignd", "admin", "zk-acls", "--secure", *args,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            out, err = await asyncio.wait_for(proc.communicate(), timeout=90)
            assert (proc.returncode, err.decode()) == (0, "")
            outputs.append(out.decode().strip())
        creator = {"sasl:kafka:cdrwa", "x509:CN=client:cdrwa"}
        assert {str(acl) for acl in (await open_client.get_acl("/brokers/topics/t"))[0]} == creator | {
            "world:anyone:r"
        }
        assert {str(acl) for acl in (await open_client.get_acl("/config/users/alice"))[0]} == creator
        assert outputs[0].startswith("--secure: 10 znode(s) checked, 10 changed, 0 unchanged"), outputs[0]
        assert outputs[1] == "--secure: 10 znode(s) checked, 0 changed, 10 unchanged, 0 failed.", outputs[1]
    finally:
        await open_client.close()


async def test_a_server_another_ca_signed_is_refused_at_start(pki: Pki, chroot: str) -> None:
    client = ZkClient(settings(chroot, ClientTls(str(pki.other_ca_cert))))
    with pytest.raises(ZkTlsRefused, match="certificate verify failed"):
        await client.start()


async def test_a_server_whose_certificate_names_another_host_is_refused_at_start(
    pki: Pki, tmp_path: Path
) -> None:
    """Signed by the trusted CA, but for zookeeper.elsewhere.example: the host name is checked too,
    a process exits 2 with one line saying so."""
    tls = ServerTls(pki.elsewhere_server_cert, pki.elsewhere_server_key, pki.ca_cert)
    with LocalZooKeeper(tick_time_ms=250, tls=tls) as server:
        connect = f"{server.secure_connect}/tls-{uuid.uuid4().hex[:12]}"
        client = ZkClient(settings(connect, ClientTls(str(pki.ca_cert))))
        with pytest.raises(ZkTlsRefused, match="mismatch"):
            await client.start()
        err = await controller_exits_2(connect, pki.ca_cert)
    assert "certificate verify failed" in err and "mismatch" in err and "127.0.0.1" in err, err


async def controller_exits_2(connect: str, ca_file: Path) -> str:
    """A controller process started against ``connect`` trusting ``ca_file``: it exits 2 with one
    line on stderr, which is returned."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "reassignd", "controller", "--zk", connect, "--http", "127.0.0.1:0",
        "--zk-tls-ca", str(ca_file), "--log-level", "error",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await asyncio.wait_for(proc.communicate(), timeout=90)
    assert proc.returncode == 2, err.decode()
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("reassignd controller: error: TLS to ZooKeeper at 127.0.0.1:"), lines[0]
    return lines[0]


async def test_a_controller_and_agents_run_over_tls(pki: Pki, chroot: str, tmp_path: Path) -> None:
    password = tmp_path / "zk-password"
    password.write_text(SASL_PASSWORD)
    args = [
        "--zk-tls-ca", str(pki.ca_cert), "--zk-sasl-user", SASL_USER,
        "--zk-sasl-password-file", str(password), "--zk-set-acl",
    ]  # fmt: skip
    kit = Kit(chroot, tmp_path)
    try:
        c = kit.controller(9000, 2.0, *args)
        _, status = await active_one(c)
        assert (status["zookeeper"]["principal"], status["zookeeper"]["tls"]) == ("sasl:kafka", True)
        kit.cluster(2, 1, None, *args)
        await wait_brokers(c, {1, 2})
        code, resp = await c.post("/v1/topics", {"topics": [{"name": "t", "num_partitions": 2}]})
        assert code == 200 and resp["topics"][0]["error_code"] == 0, resp
    finally:
        await kit.close()


async def test_a_controller_not_trusting_the_server_exits_2_with_one_line(pki: Pki, chroot: str) -> None:
    assert "certificate verify failed" in await controller_exits_2(chroot, pki.other_ca_cert)


async def test_an_abandoned_session_is_closed_over_tls(
    pki: Pki, chroot: str, tls_zookeeper: LocalZooKeeper
) -> None:
    tls = ClientTls(str(pki.ca_cert))
    owner, observer = ZkClient(settings(chroot, tls)), ZkClient(settings(chroot, tls))
    await owner.start()
    await observer.start()
    try:
        await owner.create("/ephemeral", b"", ephemeral=True)
        session = owner._session
        assert session is not None and session.session_id is not None
        assert tls_zookeeper.secure_port is not None
        await close_sessions(
            "127.0.0.1",
            tls_zookeeper.secure_port,
            [(session.session_id, session.password)],
            timeout_s=5.0,
            ssl_context=tls.context(),
        )

        async def gone() -> bool | None:
            return (await observer.exists("/ephemeral") is None) or None

        await eventually(gone, timeout_s=10, what="the closed session's ephemeral gone")
    finally:
        await owner.close()
        await observer.close()

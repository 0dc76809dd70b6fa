"""HTTPS for the HTTP API with a CA and certificates made at test time (``tests.pki``): the API
client, ``admin`` and ``feed`` verify the controller's certificate (against ``--ca-file``, never
not at all), mutual TLS refuses a client without a certificate, ``--http-advertised`` is what
``/controller`` and a standby's 41 answers name, and ``events tail`` verifies a TLS Kafka listener
with ``--ca-file``. Real controller processes on loopback."""

from __future__ import annotations

import json
import ssl
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from reassignd.api_client.client import ApiClient
from reassignd.api_client.errors import Unreachable
from reassignd.tls import ClientTls
from reassignd.zk import codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.server import free_port
from tests.integration.harness import ControllerProc, Procs, eventually
from tests.pki import Pki, make_pki

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def https_controller(procs: Procs, pki: Pki, controller_id: int, *extra: str) -> tuple[ControllerProc, str]:
    c = procs.controller(
        controller_id, 2.0, "--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key), *extra
    )
    return c, c.url.replace("http://", "https://", 1)


async def status(url: str, tls: ClientTls) -> dict[str, Any]:
    async with ApiClient.open(url, timeout_s=5, follow_active=False, tls=tls) as api:
        doc: dict[str, Any] = await api.get("/v1/status")  # the raw document, as asserted
        return doc


async def wait_active(url: str, tls: ClientTls) -> dict[str, Any]:
    async def probe() -> dict[str, Any] | None:
        s = await status(url, tls)
        return s if s["active"] else None

    return await eventually(probe, what=f"{url} active")


def reassignd(*args: str, timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reassignd", *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


async def test_https_is_verified_against_the_ca_file(procs: Procs, pki: Pki, tmp_path: Path) -> None:
    c, url = https_controller(procs, pki, 9000)
    trusted = ClientTls(str(pki.ca_cert))
    s = await wait_active(url, trusted)
    assert s["active_controller"]["http"] == url  # the bound address, as https://

    # the system's CAs do not know the test CA, nor does another CA: refused, never skipped
    for tls in (ClientTls(), ClientTls(str(pki.other_ca_cert))):
        with pytest.raises(Unreachable, match="TLS certificate is not trusted"):
            await status(url, tls)
    # plain HTTP to the HTTPS port gets nothing
    with pytest.raises((aiohttp.ClientError, OSError)):
        async with aiohttp.ClientSession() as session, session.get(c.url + "/healthz") as resp:
            await resp.read()

    # admin: --ca-file verifies; without it the one-line error says what to do
    done = reassignd(
        "admin", "reassign", "--bootstrap-controller", url, "--list", "--ca-file", str(pki.ca_cert)
    )
    assert done.returncode == 0, done.stderr
    done = reassignd("admin", "batch", "list", "--bootstrap-controller", url)
    assert done.returncode == 1
    assert "TLS certificate is not trusted" in done.stderr and "--ca-file" in done.stderr
    done = reassignd(
        "admin", "batch", "list", "--bootstrap-controller", url, "--ca-file", str(tmp_path / "no.pem")
    )
    assert done.returncode == 2 and "cannot load the TLS files" in done.stderr

    # feed run: a batch naming a partition that does not exist is created completed, over HTTPS
    plan = tmp_path / "plan"
    plan.mkdir()
    body = {"batch_id": "tls-0001", "partitions": [{"topic": "nope", "partition": 0, "replicas": [1]}]}
    (plan / "batches.json").write_text(json.dumps({"batches": [body]}))
    feed = ["feed", "run", str(plan), "--bootstrap-controller", url, "--poll-s", "0.2"]
    done = reassignd(*feed, "--ca-file", str(pki.ca_cert))
    assert "tls-0001" in done.stdout, done.stdout + done.stderr
    assert "not trusted" not in done.stderr
    done = reassignd(*feed, "--ca-file", str(pki.other_ca_cert))
    assert done.returncode == 1 and "TLS certificate is not trusted" in done.stderr
    done = reassignd(*feed, "--cert-file", str(pki.client_cert))
    assert done.returncode == 2 and "give both --cert-file and --key-file" in done.stderr


async def test_mutual_tls_wants_a_client_certificate(procs: Procs, pki: Pki) -> None:
    _, url = https_controller(procs, pki, 9000, "--tls-client-ca", str(pki.ca_cert))
    with_cert = ClientTls(str(pki.ca_cert), str(pki.client_cert), str(pki.client_key))
    await wait_active(url, with_cert)
    with pytest.raises(Unreachable):
        await status(url, ClientTls(str(pki.ca_cert)))
    # a certificate from another CA is no better than none
    stranger = ClientTls(str(pki.ca_cert), str(pki.other_server_cert), str(pki.other_server_key))
    with pytest.raises(Unreachable):
        await status(url, stranger)
    files = [
        "--ca-file",
        str(pki.ca_cert),
        "--cert-file",
        str(pki.client_cert),
        "--key-file",
        str(pki.client_key),
    ]
    done = reassignd("admin", "reassign", "--bootstrap-controller", url, "--list", *files)
    assert done.returncode == 0, done.stderr


async def test_the_advertised_url_is_what_standbys_send_clients_to(procs: Procs, zk: ZkClient) -> None:
    port = free_port()
    advertised = f"http://localhost:{port}"  # another spelling of the bound 127.0.0.1
    active = procs.start(
        "controller-9000",
        ["controller", "--zk", procs.zk_connect, "--controller-id", "9000", "--http", f"127.0.0.1:{port}",
         "--http-advertised", advertised, "--session-timeout-s", "2"],
    )  # fmt: skip

    async def registered() -> codec.ControllerInfo | None:
        znode = await zk.get_or_none(paths.CONTROLLER)
        return None if znode is None else codec.decode_controller(znode.data)

    info = await eventually(registered, what="/controller")
    assert (info.broker_id, info.http) == (9000, advertised)
    assert active.alive

    standby = procs.controller(9001)

    async def follows() -> dict[str, Any] | None:
        s = await standby.status()
        return s if s and s["active_controller"] else None

    s = await eventually(follows, what="the standby knowing the active controller")
    assert s["active_controller"] == {"id": 9000, "http": advertised}
    code, body = await standby.post("/v1/topics", {"topics": [{"name": "t", "num_partitions": 1}]})
    assert code == 503 and body["error_code"] == 41
    assert body["active_controller"] == {"id": 9000, "http": advertised}
    # and the API client follows it there
    async with ApiClient.open(standby.url, timeout_s=5) as api:
        assert api.base_url == advertised


async def test_events_tail_verifies_a_tls_kafka_listener(procs: Procs, pki: Pki) -> None:
    kafka_port = free_port()
    c = procs.controller(
        9000, 2.0, "--kafka-listener", f"127.0.0.1:{kafka_port}",
        "--kafka-tls-cert", str(pki.server_cert), "--kafka-tls-key", str(pki.server_key),
    )  # fmt: skip

    async def ready() -> bool:
        s = await c.status()
        return bool(s and s["active"])

    await eventually(ready, what="controller active")
    tail = ["events", "tail", "--bootstrap-servers", f"127.0.0.1:{kafka_port}", "--timeout-s", "1"]
    # verified: the handshake and the Metadata request go through, and the listener (which serves
    # admin requests only) says the topic is not there
    done = reassignd(*tail, "--ca-file", str(pki.ca_cert), timeout_s=60)
    assert done.returncode == 1 and "UnknownTopicOrPartition" in done.stderr, done.stderr
    assert "CERTIFICATE_VERIFY_FAILED" not in done.stderr
    done = reassignd(*tail, "--ca-file", str(pki.other_ca_cert), timeout_s=60)
    assert done.returncode == 1 and "cannot read" in done.stderr
    assert "UnknownTopicOrPartition" not in done.stderr, done.stderr
    done = reassignd(*tail, "--security-protocol", "plaintext", "--ca-file", str(pki.ca_cert))
    assert done.returncode == 2 and "--ca-file needs a TLS protocol" in done.stderr


def test_the_server_context_speaks_tls_1_2_or_newer(pki: Pki) -> None:
    from reassignd.tls import server_context  # noqa: PLC0415

    context = server_context(str(pki.server_cert), str(pki.server_key), str(pki.ca_cert))
    assert context.minimum_version >= ssl.TLSVersion.TLSv1_2
    assert context.verify_mode is ssl.CERT_REQUIRED

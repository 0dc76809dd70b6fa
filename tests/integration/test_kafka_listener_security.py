"""The Kafka listener's security and robustness: SASL/PLAIN with the tokens file's users, TLS, the
bind rule, bad input (oversized, truncated, garbled frames, unknown APIs and versions, requests
before SASL), a Hypothesis fuzz test and a bounded connection flood against a live listener."""

from __future__ import annotations

import asyncio
import socket
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaConnectionError as AIOKafkaConnectionError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.errors import KafkaError, TopicAuthorizationFailedError
from kafka.protocol.admin import (
    AlterPartitionReassignmentsRequest,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    ListPartitionReassignmentsRequest,
)
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest

from reassignd.zk.server import free_port
from tests.integration.harness import Procs, eventually
from tests.integration.kafka_clients import (
    TOKENS,
    KafkaController,
    admin_client,
    off_loop,
    raw_call,
    send_bytes,
    start_controller,
    wait_active,
    wait_listening,
)

pytestmark = pytest.mark.timeout(240)


def sasl(user: str, password: str) -> dict[str, str]:
    return {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": user,
        "sasl_plain_password": password,
    }


async def _kafka_ready(k: KafkaController, brokers: int, **config: str) -> None:
    await wait_listening(k)

    async def probe() -> bool:
        try:
            admin = await admin_client(k.address, request_timeout_ms=3000, **config)
        except KafkaError:
            return False
        try:
            described = await off_loop(admin.describe_cluster)
            # the agents' ids (1..n), not a count: before it is active an instance lists itself
            # (its controller id) as the one node, which a count of 1 would take for a broker
            return {b["broker_id"] for b in described["brokers"]} == set(range(1, brokers + 1))
        finally:
            await off_loop(admin.close)

    await eventually(probe, what="the Kafka listener serving", timeout_s=60)


async def test_sasl_plain_viewer_admin_and_a_wrong_password(
    procs: Procs, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(TOKENS)
    k = start_controller(procs, tokens=tokens)
    procs.cluster(2, 1)
    await _kafka_ready(k, 2, **sasl("alice", "alice-secret"))

    alice = await admin_client(k.address, **sasl("alice", "alice-secret"))
    victor = await admin_client(k.address, **sasl("victor", "victor-secret"))
    try:
        await off_loop(alice.create_topics, [NewTopic("secured", 2, 2)])
        assert "secured" in await off_loop(victor.list_topics)
        with pytest.raises(TopicAuthorizationFailedError):
            await off_loop(victor.create_topics, [NewTopic("nope", 1, 1)])
        assert "nope" not in await off_loop(alice.list_topics)
        # AlterConfigs needs the admin role (29 topic, 31 broker); the describe calls do not
        denied = await off_loop(
            victor.alter_configs,
            [
                ConfigResource(ConfigResourceType.TOPIC, "secured", {"retention.ms": "1"}),
                ConfigResource(ConfigResourceType.BROKER, "1", {"leader.replication.throttled.rate": "1"}),
            ],
            incremental=False,
        )
        assert "TopicAuthorizationFailed" in denied["topic"]["secured"], denied
        assert "ClusterAuthorizationFailed" in denied["broker"]["1"], denied
        assert await off_loop(victor.describe_user_scram_credentials) == {}
        page = await off_loop(victor.describe_topic_partitions, ["secured"])
        assert [(t["name"], len(t["partitions"])) for t in page["topics"]] == [("secured", 2)]
    finally:
        await off_loop(alice.close)
        await off_loop(victor.close)

    # a wrong password: the listener answers SASL_AUTHENTICATION_FAILED (58) with its reason and
    # the client gives up at once (aiokafka's; kafka-python's retries its bootstrap until its 30 s
    # bootstrap timeout whatever the answer)
    wrong = AIOKafkaAdminClient(bootstrap_servers=k.address, **sasl("alice", "not-the-token"))
    caplog.clear()
    try:
        with pytest.raises(AIOKafkaConnectionError):
            await wrong.start()
    finally:
        await wrong.close()
    refused = [r.getMessage() for r in caplog.records if r.name.startswith("aiokafka")]
    assert any(
        "[Error 58] SaslAuthenticationFailed" in m and "Invalid username or password" in m for m in refused
    ), refused
    # a request before SASL closes the connection
    with pytest.raises(ConnectionError):
        raw_call(k.host, k.port, MetadataRequest(topics=None, allow_auto_topic_creation=False), 12)


def _self_signed(tmp_path: Path) -> tuple[Path, Path]:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )  # fmt: skip
    return cert, key


async def test_tls_and_sasl_over_tls(procs: Procs, tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(TOKENS)
    k = start_controller(
        procs, 9000, "--kafka-tls-cert", str(cert), "--kafka-tls-key", str(key), tokens=tokens
    )
    procs.cluster(1, 1)
    config = {**sasl("alice", "alice-secret"), "security_protocol": "SASL_SSL", "ssl_cafile": str(cert)}
    await _kafka_ready(k, 1, **config)
    admin = await admin_client(k.address, **config)
    try:
        await off_loop(admin.create_topics, [NewTopic("tls", 1, 1)])
        assert "tls" in await off_loop(admin.list_topics)
    finally:
        await off_loop(admin.close)
    # plaintext bytes on the TLS port get nothing back
    frame = _api_versions_frame(3)
    assert send_bytes(k.host, k.port, frame, timeout_s=3) is None


def test_binding_beyond_loopback_without_tokens_is_refused() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "reassignd",
            "controller",
            "--zk",
            "127.0.0.1:1",
            "--kafka-listener",
            "0.0.0.0:9092",
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "refusing to bind the Kafka listener" in result.stderr


# --- bad input -------------------------------------------------------------------------------------


def _api_versions_frame(version: int, correlation_id: int = 1) -> bytes:
    request = ApiVersionsRequest(client_software_name="t", client_software_version="1")
    request.API_VERSION = version
    request.with_header(correlation_id=correlation_id, client_id="t")
    data: bytes = request.encode(header=True, framed=True)
    return data


def _serving(k: KafkaController) -> bool:
    response = raw_call(
        k.host, k.port, ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3
    )
    return response.error_code == 0 and any(a.api_key == 45 for a in response.api_keys)


async def test_bad_input_is_answered_or_closed(procs: Procs) -> None:
    k = start_controller(procs)
    await wait_active(k)
    # KIP-511: a too-new ApiVersions gets UNSUPPORTED_VERSION with our ranges in a v0 body
    payload = send_bytes(k.host, k.port, _api_versions_frame(4))
    assert payload is not None
    answer = ApiVersionsResponse.decode(payload, version=4, header=True)
    assert answer.error_code == 35 and {a.api_key for a in answer.api_keys} >= {3, 18, 45, 46}
    # closed: over the size limit, an unknown API, an unserved version, garbage, a truncated frame
    assert send_bytes(k.host, k.port, struct.pack(">i", 64 * 1024 * 1024) + b"x" * 100) is None
    assert send_bytes(k.host, k.port, struct.pack(">ihhi", 8, 999, 0, 1)) is None
    assert send_bytes(k.host, k.port, struct.pack(">ihhih", 10, 3, 13, 1, -1)) is None
    assert send_bytes(k.host, k.port, struct.pack(">i", 12) + b"\xff" * 12) is None
    assert send_bytes(k.host, k.port, struct.pack(">i", -5)) is None
    with socket.create_connection((k.host, k.port), timeout=5) as sock:
        sock.sendall(_api_versions_frame(3)[:9])  # then EOF
    # a client stalled in the middle of a frame does not hold up anyone else
    stalled = socket.create_connection((k.host, k.port), timeout=5)
    try:
        stalled.sendall(_api_versions_frame(3)[:10])
        assert _serving(k)
    finally:
        stalled.close()
    assert k.c.proc.alive
    assert "closed: frame of 67108864 bytes is over the limit" in k.c.proc.log()


def _valid_frames() -> list[bytes]:
    requests = [
        (ApiVersionsRequest(client_software_name="f", client_software_version="1"), 3),
        (MetadataRequest(topics=None, allow_auto_topic_creation=False), 12),
        (MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name="t")]), 1),
        (ListPartitionReassignmentsRequest(timeout_ms=1000, topics=None), 0),
        (
            CreateTopicsRequest(
                topics=[
                    CreateTopicsRequest.CreatableTopic(
                        name="fz", num_partitions=1, replication_factor=1, assignments=[], configs=[]
                    )
                ],
                timeout_ms=1000,
                validate_only=True,
            ),
            7,
        ),
        (DeleteTopicsRequest(topic_names=["nothing"], timeout_ms=1000), 4),
        (
            AlterPartitionReassignmentsRequest(
                timeout_ms=1000,
                topics=[
                    AlterPartitionReassignmentsRequest.ReassignableTopic(
                        name="x",
                        partitions=[
                            AlterPartitionReassignmentsRequest.ReassignableTopic.ReassignablePartition(
                                partition_index=0, replicas=[1]
                            )
                        ],
                    )
                ],
            ),
            0,
        ),
    ]
    frames = []
    for request, version in requests:
        request.API_VERSION = version
        request.with_header(correlation_id=3, client_id="fuzz")
        frames.append(request.encode(header=True, framed=True))
    return frames


FRAMES = _valid_frames()


@st.composite
def hostile_frames(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["random", "mutated", "resized", "prefix"]))
    if kind == "random":
        body = draw(st.binary(max_size=300))
        return struct.pack(">i", len(body)) + body
    frame = bytearray(draw(st.sampled_from(FRAMES)))
    if kind == "prefix":
        return bytes(frame[: draw(st.integers(0, len(frame)))])
    if kind == "resized":
        struct.pack_into(">i", frame, 0, draw(st.integers(-(2**31), 2**31 - 1)))
        return bytes(frame[: 4 + min(len(frame) - 4, 200)])
    for _ in range(draw(st.integers(1, 8))):
        at = draw(st.integers(4, len(frame) - 1))
        match draw(st.sampled_from(["flip", "insert", "delete"])):
            case "flip":
                frame[at] = draw(st.integers(0, 255))
            case "insert":
                frame[at:at] = draw(st.binary(min_size=1, max_size=8))
            case _:
                del frame[at]
    struct.pack_into(">i", frame, 0, len(frame) - 4)
    return bytes(frame)


def _throw(host: str, port: int, data: bytes) -> None:
    with socket.create_connection((host, port), timeout=2) as sock:
        sock.settimeout(0.5)
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(65536):
                pass
        except OSError:
            pass


async def test_fuzzed_frames_leave_the_listener_serving(procs: Procs) -> None:
    k = start_controller(procs)
    await wait_active(k)

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(hostile_frames())
    def fuzz(data: bytes) -> None:
        _throw(k.host, k.port, data)

    await asyncio.to_thread(fuzz)
    assert k.c.proc.alive
    assert await asyncio.to_thread(_serving, k)
    assert "Traceback" not in k.c.proc.log()


async def test_a_connection_flood_leaves_the_listener_serving(procs: Procs) -> None:
    # the flood comes from one address: the per-address cap (test_kafka_listener_door.py) is
    # raised here so the flood reaches the listener's other bounds
    k = start_controller(procs, 9000, "--kafka-max-connections-per-ip", "1000")
    await wait_active(k)
    writers: list[asyncio.StreamWriter] = []
    try:
        for i in range(400):  # bounded, loopback only
            _, writer = await asyncio.open_connection(k.host, k.port)
            writers.append(writer)
            if i % 3 == 0:
                writer.write(b"\x00\x00\x01\x00garbage")
            elif i % 3 == 1:
                writer.write(_api_versions_frame(3)[:7])
        await asyncio.gather(*(w.drain() for w in writers), return_exceptions=True)
        assert await asyncio.to_thread(_serving, k)
        admin = await admin_client(k.address)
        try:
            assert await off_loop(admin.list_topics) == []
        finally:
            await off_loop(admin.close)
    finally:
        for w in writers:
            w.close()
    assert k.c.proc.alive
    status = await k.c.status()
    assert status is not None and status["active"]
    free_port()  # the machine still has ports to give

"""Helpers for the Kafka listener's tests: a controller started with ``--kafka-listener``, stock
clients run off the event loop, a raw client that sends one request at a chosen version, and the
configs and config change notifications as stored in ZooKeeper."""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from kafka.admin import KafkaAdminClient
from kafka.protocol.api_message import ApiMessage

from reassignd.zk import admin_codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.server import free_port
from tests.integration.harness import ControllerProc, Launcher, eventually

T = TypeVar("T")

TOKENS = """
[tokens."alice-secret"]
user = "alice"
role = "admin"

[tokens."victor-secret"]
user = "victor"
role = "viewer"
"""


class KafkaController:
    def __init__(self, c: ControllerProc, address: str) -> None:
        self.c = c
        self.address = address
        host, _, port = address.rpartition(":")
        self.host, self.port = host, int(port)


def start_controller(
    procs: Launcher[Any], controller_id: int = 9000, *extra: str, tokens: Path | None = None
) -> KafkaController:
    port = free_port()
    args = ["--kafka-listener", f"127.0.0.1:{port}", *extra]
    if tokens is not None:
        args += ["--auth-tokens", str(tokens)]
    c = procs.controller(controller_id, 2.0, *args)
    return KafkaController(c, f"127.0.0.1:{port}")


async def wait_active(k: KafkaController) -> None:
    async def probe() -> bool:
        s = await k.c.status()
        return bool(s and s["active"])

    await eventually(probe, what="controller active")


async def wait_listening(k: KafkaController) -> None:
    """The listener accepts connections (kafka-python leaks a socket on a refused one)."""

    async def probe() -> bool:
        try:
            _, writer = await asyncio.open_connection(k.host, k.port)
        except OSError:
            return False
        writer.close()
        await writer.wait_closed()
        return True

    await eventually(probe, what="the Kafka listener accepting connections")


async def wait_brokers(k: KafkaController, n: int) -> None:
    async def probe() -> bool:
        s = await k.c.status()
        return bool(s and len(s["brokers"]["live"]) == n)

    await eventually(probe, what=f"{n} brokers")


async def off_loop(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """kafka-python's admin client is blocking: run it in a thread."""
    return await asyncio.to_thread(fn, *args, **kwargs)


async def admin_client(address: str, **config: Any) -> KafkaAdminClient:
    config.setdefault("request_timeout_ms", 20000)
    return await off_loop(KafkaAdminClient, bootstrap_servers=address, **config)


def raw_call(
    host: str, port: int, request: ApiMessage, version: int, client_id: str = "raw", timeout_s: float = 20.0
) -> Any:
    """One request at ``version`` on a fresh connection (no ApiVersions, no SASL); the decoded
    response. Raises ConnectionError when the server closes the connection instead."""
    request.API_VERSION = version
    request.with_header(correlation_id=7, client_id=client_id)
    data = request.encode(header=True, framed=True)
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        sock.sendall(data)
        payload = _read_frame(sock)
    response_class = type(request).__name__.replace("Request", "Response")
    module = __import__(type(request).__module__, fromlist=[response_class])
    cls = getattr(module, response_class)
    return cls.decode(payload, version=version, header=True)


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("closed by the server")
        out += chunk
    return out


def _read_frame(sock: socket.socket) -> bytes:
    (size,) = struct.unpack(">i", _read_exactly(sock, 4))
    return _read_exactly(sock, size)


def send_bytes(host: str, port: int, data: bytes, timeout_s: float = 5.0) -> bytes | None:
    """Send raw bytes; the first frame answered, or None when the server closed the connection."""
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        sock.sendall(data)
        try:
            return _read_frame(sock)
        except (ConnectionError, TimeoutError, OSError):
            return None


async def stored(zk: ZkClient, path: str) -> dict[str, str]:
    """The config stored at a config znode (``{}`` when absent or empty)."""
    znode = await zk.get_or_none(path)
    return {} if znode is None or not znode.data else dict(admin_codec.decode_entity_config(znode.data))


async def notified(zk: ZkClient) -> list[str]:
    """The entities of every ``/config/changes`` notification, oldest first."""
    changes = sorted(await zk.children(paths.CONFIG_CHANGES))
    return [
        admin_codec.decode_config_change((await zk.get(f"{paths.CONFIG_CHANGES}/{c}")).data) for c in changes
    ]

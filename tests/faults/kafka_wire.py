"""A Kafka-wire client of a controller process's listener for the adversarial fault cases: one
connection, SASL/PLAIN with a tokens file's user, kafka-python's request classes sent at a chosen
version and their answers decoded (``tests/integration/kafka_door.py``'s client), and raw sockets
for what comes before authentication."""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import AsyncIterator

from kafka.protocol.sasl import SaslAuthenticateRequest, SaslHandshakeRequest

from tests.integration.kafka_door import Client

TOKENS = """
[tokens."alice-secret"]
user = "alice"
role = "admin"

[tokens."victor-secret"]
user = "victor"
role = "viewer"
"""
ADMIN = ("alice", "alice-secret")
VIEWER = ("victor", "victor-secret")


async def connect(address: str) -> Client:
    host, _, port = address.rpartition(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    return Client(reader, writer)


async def authenticated(address: str, user: tuple[str, str], timeout_s: float = 20.0) -> Client:
    """A connection authenticated as ``user`` (SaslHandshake v1, SaslAuthenticate v2)."""
    client = await connect(address)
    try:
        handshake = await client.call(SaslHandshakeRequest(mechanism="PLAIN"), 1, timeout_s)
        if handshake.error_code != 0:
            raise ConnectionError(f"SaslHandshake answered {handshake.error_code}")
        token = b"\0" + user[0].encode() + b"\0" + user[1].encode()
        auth = await client.call(SaslAuthenticateRequest(auth_bytes=token), 2, timeout_s)
        if auth.error_code != 0:
            raise ConnectionError(f"SaslAuthenticate answered {auth.error_code}: {auth.error_message}")
    except BaseException:
        await client.close()
        raise
    return client


@contextlib.asynccontextmanager
async def session(address: str, user: tuple[str, str]) -> AsyncIterator[Client]:
    client = await authenticated(address, user)
    try:
        yield client
    finally:
        await client.close()


async def announce(address: str, size_bytes: int, body: bytes = b"") -> Client:
    """A connection that announced a frame of ``size_bytes`` (and sent ``body`` of it)."""
    client = await connect(address)
    client.writer.write(struct.pack(">i", size_bytes) + body)
    await client.writer.drain()
    return client

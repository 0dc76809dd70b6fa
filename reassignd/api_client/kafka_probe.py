"""Does an address speak the Kafka protocol? A client pointed at a Kafka listener instead of the
controller's HTTP API gets a disconnect or garbage from aiohttp; one ApiVersions request (v0, the
version every Kafka server answers) tells the user what they reached."""

from __future__ import annotations

import asyncio
import contextlib
import struct
from urllib.parse import urlsplit

API_VERSIONS = 18
CORRELATION_ID = 0x5EA551
CLIENT_ID = b"reassignd-probe"
PROBE_TIMEOUT_S = 3.0


def api_versions_request() -> bytes:
    """A length-prefixed ApiVersions v0 request (header v1: key, version, correlation id, client id)."""
    body = struct.pack(">hhih", API_VERSIONS, 0, CORRELATION_ID, len(CLIENT_ID)) + CLIENT_ID
    return struct.pack(">i", len(body)) + body


def is_api_versions_answer(frame_head: bytes) -> bool:
    """The first 8 bytes of an answer: a sane length and our correlation id."""
    if len(frame_head) < 8:
        return False
    size, correlation_id = struct.unpack(">ii", frame_head[:8])
    return bool(4 <= size < 1 << 20 and correlation_id == CORRELATION_ID)


async def speaks_kafka(url: str, timeout_s: float = PROBE_TIMEOUT_S) -> bool:
    """True when ``url``'s host and port answer a Kafka ApiVersions request (plain TCP only: an
    https:// address is never probed)."""
    parts = urlsplit(url)
    if parts.scheme != "http" or parts.hostname is None:
        return False
    try:
        async with asyncio.timeout(timeout_s):
            reader, writer = await asyncio.open_connection(parts.hostname, parts.port or 80)
            try:
                writer.write(api_versions_request())
                await writer.drain()
                head = await reader.readexactly(8)
            finally:
                writer.close()
                with contextlib.suppress(OSError):
                    await writer.wait_closed()
    except (OSError, TimeoutError, asyncio.IncompleteReadError):
        return False
    return is_api_versions_answer(head)

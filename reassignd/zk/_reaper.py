"""Close sessions the client has given up, so their ephemeral znodes go at once.

When the supervisor gives a session up (no connection for the session timeout), the server may
still hold it — a restarted standalone server even restores it from disk — and its ephemerals
(``/controller``, a broker registration) would linger for another session timeout. Once a server is
reachable, this opens a throwaway connection that resumes the old session and closes it (over
TLS when the client's connections are: ``ssl_context``). No SASL: closing a session needs none,
and a server that requires SASL closes an unauthenticated session anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl

from reassignd.zk import _aiozk, _wire

log = logging.getLogger(__name__)


async def close_sessions(
    host: str,
    port: int,
    sessions: list[tuple[int, bytes]],
    *,
    timeout_s: float,
    ssl_context: ssl.SSLContext | None = None,
) -> None:
    for session_id, password in sessions:
        try:
            async with asyncio.timeout(timeout_s):
                closed = await _close_session(host, port, session_id, password, timeout_s, ssl_context)
        except (OSError, TimeoutError, asyncio.IncompleteReadError) as e:
            log.info("could not close abandoned ZooKeeper session 0x%x: %r", session_id, e)
            continue
        if closed:
            log.info("closed abandoned ZooKeeper session 0x%x", session_id)
        else:
            log.info("abandoned ZooKeeper session 0x%x had already expired", session_id)


async def _close_session(
    host: str,
    port: int,
    session_id: int,
    password: bytes,
    timeout_s: float,
    ssl_context: ssl.SSLContext | None,
) -> bool:
    if ssl_context is None:
        reader, writer = await asyncio.open_connection(host, port)
    else:
        reader, writer = await asyncio.open_connection(host, port, ssl=ssl_context, server_hostname=host)
    try:
        connect = _aiozk.connect_request(
            last_zxid=0, timeout_ms=int(timeout_s * 1000), session_id=session_id, password=password
        )
        writer.write(_wire.SIZE_PREFIX.pack(len(connect)) + connect)
        (size,) = _wire.SIZE_PREFIX.unpack(await reader.readexactly(4))
        try:
            response = _aiozk.connect_reply(await reader.readexactly(size))
        except ValueError:
            return False
        if response.session_id != session_id:
            return False
        close = _wire.close_session().serialize(1)
        writer.write(_wire.SIZE_PREFIX.pack(len(close)) + close)
        (size,) = _wire.SIZE_PREFIX.unpack(await reader.readexactly(4))
        await reader.readexactly(size)
        return True
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()

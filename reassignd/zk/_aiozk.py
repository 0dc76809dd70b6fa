"""The only module that imports aiozk: the session handshake's two messages.

aiozk (0.32) is the chosen ZooKeeper client library, but its Session and Connection were unsafe for
us (see ``_transport``'s docstring), so reassignd runs its own, typed, and takes from aiozk only
what it does well: the ConnectRequest/ConnectResponse records that open or resume a session. The
rest of the wire format (requests, replies, watch events) is ``_wire``'s, in ``struct``.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiozk import protocol


@dataclass(frozen=True, slots=True)
class ConnectReply:
    """The server's answer to a ConnectRequest. ``session_id`` 0: the session asked to resume has
    expired (the connection is closed by the server after this)."""

    session_id: int
    timeout_ms: int
    password: bytes


def connect_request(*, last_zxid: int, timeout_ms: int, session_id: int, password: bytes) -> bytes:
    """The body of a ConnectRequest (without its size prefix): a new session when ``session_id``
    is 0, else resuming that one. Read-only sessions are never asked for."""
    body: bytes = protocol.ConnectRequest(
        protocol_version=0,
        last_seen_zxid=last_zxid,
        timeout=timeout_ms,
        session_id=session_id,
        password=password,
        read_only=False,
    ).serialize()
    return body


def connect_reply(body: bytes) -> ConnectReply:
    """Decode a ConnectResponse body (raises ValueError when it is not one)."""
    try:
        response = protocol.ConnectResponse.deserialize(body)
    except Exception as e:  # aiozk raises struct.error or IndexError on short input
        raise ValueError(f"unreadable ConnectResponse ({len(body)} bytes): {e!r}") from None
    return ConnectReply(int(response.session_id), int(response.timeout), bytes(response.password or b""))

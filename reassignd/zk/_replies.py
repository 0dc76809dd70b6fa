"""Replies and refusals of the client: stat tuples to ``Stat``, error codes to ``ZkError``
types, a multi's replies to its results, the size check every request passes before sending."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from reassignd.zk import _wire
from reassignd.zk.errors import (
    BadArgumentsError,
    BadVersionError,
    ConnectionLostError,
    InvalidAclError,
    MultiFailedError,
    NoAuthError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    UnimplementedError,
    ZkError,
    ZnodeTooLargeError,
)
from reassignd.zk.values import Create, Op, SetData, Stat


def stat(t: _wire.StatTuple) -> Stat:
    # czxid, mzxid, version, cversion, ephemeral_owner, num_children, data_length, aversion
    # (positional: this runs once per znode of a bulk read)
    return Stat(t[0], t[1], t[4], t[5], t[7], t[9], t[8], t[6])


def error(code: int, path: str | None, principal: str | None = None) -> ZkError:
    """The error for the server's ``code``; a NOAUTH names who the session is (``principal``:
    ``sasl:kafka``, ``anonymous``), the first thing to check against the znode's ACL."""
    name = _wire.ERROR_NAMES.get(code, f"code {code}")
    who = f" (this session: {principal})" if principal and code == _wire.NO_AUTH else ""
    return ERRORS.get(code, ZkError)(
        f"ZooKeeper answered {name}" + (f" for {path}" if path else "") + who, path, code
    )


def too_large(what: str, size: int, limit: int, path: str | None) -> ZnodeTooLargeError:
    where = f" for {path}" if path else ""
    return ZnodeTooLargeError(
        f"{what} of {size} bytes{where}: over {limit}, the most ZooKeeper accepts by default "
        "(jute.maxbuffer; a larger request drops the connection); split it",
        path,
    )


def check_packet(request: _wire.Request, path: str | None) -> None:
    """ZnodeTooLargeError when ``request`` is over the server's packet limit (nothing is sent:
    the server would drop the connection)."""
    if request.packet_size > _wire.MAX_PACKET_BYTES:
        raise too_large("request", request.packet_size, _wire.MAX_PACKET_BYTES, path)


def multi_results(
    ops: Sequence[Op],
    values: list[Any],
    *,
    offset: int,
    relative: Callable[[str], str],
    principal: str | None = None,
) -> list[Stat | str | None]:
    """A multi's results per op (SetData → Stat, Create → created path, else None); raises
    MultiFailedError for the op that failed (index counted from ``offset``)."""
    failures = [i for i, v in enumerate(values) if isinstance(v, _wire.ServerError)]
    if failures:
        real = [i for i in failures if values[i].code not in ROLLED_BACK]
        index = real[0] if real else failures[0]
        raise MultiFailedError(offset + index, error(values[index].code, ops[index].path, principal))
    results: list[Stat | str | None] = []
    for op, value in zip(ops, values, strict=True):
        if isinstance(op, SetData):
            results.append(stat(value))
        elif isinstance(op, Create):
            results.append(relative(value))
        else:
            results.append(None)
    return results


ROLLED_BACK = (_wire.OK, _wire.RUNTIME_INCONSISTENCY)
ERRORS: dict[int, type[ZkError]] = {
    _wire.NO_NODE: NoNodeError,
    _wire.NODE_EXISTS: NodeExistsError,
    _wire.BAD_VERSION: BadVersionError,
    _wire.NOT_EMPTY: NotEmptyError,
    _wire.BAD_ARGUMENTS: BadArgumentsError,
    _wire.NO_AUTH: NoAuthError,
    _wire.INVALID_ACL: InvalidAclError,
    _wire.UNIMPLEMENTED: UnimplementedError,
    _wire.CONNECTION_LOSS: ConnectionLostError,
    _wire.SESSION_EXPIRED: ConnectionLostError,
    _wire.SESSION_MOVED: ConnectionLostError,
}

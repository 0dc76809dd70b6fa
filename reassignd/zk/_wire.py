"""ZooKeeper's jute wire format for the requests reassignd sends, encoded and decoded with ``struct``.

aiozk's own ``protocol`` classes parse field by field through generic ``Part`` objects; decoding
100,000 znodes that way costs seconds. A ``Request`` is encoded once (its size is known before it
is sent); ``decode_reply`` turns a reply payload into plain Python values, ``decode_watch_event``
a watch notification. Pure functions of bytes: no I/O, no asyncio.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from reassignd.zk.acls import OPEN_ACL_UNSAFE, Acl

_INT = struct.Struct("!i")
SIZE_PREFIX = _INT  # every packet starts with its length
_REQUEST_HEADER = struct.Struct("!ii")  # xid, opcode
REPLY_HEADER = struct.Struct("!iqi")  # xid, zxid, error code
_MULTI_HEADER = struct.Struct("!i?i")  # type, done, error
_STAT = struct.Struct("!qqqqiiiqiiq")

# ZooKeeper opcodes (zookeeper.jute / ZooDefs.OpCode)
CREATE = 1
DELETE = 2
EXISTS = 3
GET_DATA = 4
SET_DATA = 5
GET_ACL = 6
SET_ACL = 7
GET_CHILDREN = 8
PING = 11
GET_CHILDREN2 = 12
CHECK = 13
MULTI = 14
CREATE2 = 15
MULTI_READ = 22
SET_WATCHES = 101
WHO_AM_I = 107  # ZooKeeper 3.7+
SASL = 102
CLOSE = -11
ERROR = -1

# watch event types (Watcher.Event.EventType)
EVENT_CREATED = 1
EVENT_DELETED = 2
EVENT_DATA_CHANGED = 3
EVENT_CHILDREN_CHANGED = 4

# reserved xids (ClientCnxn): a watch notification, a ping's reply
WATCH_XID = -1
PING_XID = -2

EPHEMERAL_FLAG = 1
SEQUENTIAL_FLAG = 2

# ZooKeeper's error codes (KeeperException.Code) that reassignd tells apart.
OK = 0  # in a failed multi: this op was rolled back
RUNTIME_INCONSISTENCY = -2  # in a failed multi: an op after the failing one
CONNECTION_LOSS = -4
UNIMPLEMENTED = -6  # a request the server does not know (whoAmI before 3.7)
MARSHALLING_ERROR = -5
BAD_ARGUMENTS = -8
NO_NODE = -101
NO_AUTH = -102
BAD_VERSION = -103
NODE_EXISTS = -110
NOT_EMPTY = -111
INVALID_ACL = -114
SESSION_EXPIRED = -112
AUTH_FAILED = -115
SESSION_MOVED = -118
SESSION_CLOSED_REQUIRE_SASL_AUTH = -124

ERROR_NAMES = {
    OK: "OK",
    -1: "SYSTEMERROR",
    RUNTIME_INCONSISTENCY: "RUNTIMEINCONSISTENCY",
    -3: "DATAINCONSISTENCY",
    CONNECTION_LOSS: "CONNECTIONLOSS",
    MARSHALLING_ERROR: "MARSHALLINGERROR",
    UNIMPLEMENTED: "UNIMPLEMENTED",
    -7: "OPERATIONTIMEOUT",
    BAD_ARGUMENTS: "BADARGUMENTS",
    -13: "NEWCONFIGNOQUORUM",
    -14: "RECONFIGINPROGRESS",
    -100: "APIERROR",
    NO_NODE: "NONODE",
    NO_AUTH: "NOAUTH",
    BAD_VERSION: "BADVERSION",
    -108: "NOCHILDRENFOREPHEMERALS",
    NODE_EXISTS: "NODEEXISTS",
    NOT_EMPTY: "NOTEMPTY",
    SESSION_EXPIRED: "SESSIONEXPIRED",
    -113: "INVALIDCALLBACK",
    -114: "INVALIDACL",
    AUTH_FAILED: "AUTHFAILED",
    SESSION_MOVED: "SESSIONMOVED",
    -119: "NOTREADONLY",
    -120: "EPHEMERALONLOCALSESSION",
    -121: "NOWATCHER",
    -122: "REQUESTTIMEOUT",
    -123: "RECONFIGDISABLED",
    SESSION_CLOSED_REQUIRE_SASL_AUTH: "SESSIONCLOSEDREQUIRESASLAUTH",
    -125: "QUOTAEXCEEDED",
    -127: "THROTTLEDOP",
}

# Default jute.maxbuffer: a server drops the connection of a client whose request packet is larger.
MAX_PACKET_BYTES = 0xFFFFF
MAX_ZNODE_BYTES = 1024 * 1024  # the most data a write may carry (default jute.maxbuffer)


# A reply's decoded value: None, a path, a stat tuple, (data, stat), children, or a list of those.
StatTuple = tuple[int, int, int, int, int, int, int, int, int, int, int]


class ServerError(Exception):
    """The server answered with error ``code`` (a KeeperException code)."""

    def __init__(self, code: int) -> None:
        super().__init__(f"{ERROR_NAMES.get(code, 'UNKNOWN')} ({code})")
        self.code = code


class Request:
    """One request, its body encoded once (so its size is known before it is sent)."""

    __slots__ = ("body", "opcode", "path")

    def __init__(self, opcode: int, body: bytes, path: str | None = None) -> None:
        self.opcode = opcode
        self.body = body
        self.path = path

    def serialize(self, xid: int | None = None) -> bytes:
        return _REQUEST_HEADER.pack(xid or 0, self.opcode) + self.body

    @property
    def packet_size(self) -> int:
        return _REQUEST_HEADER.size + len(self.body)

    def __str__(self) -> str:
        return f"Request(opcode={self.opcode}, path={self.path!r}, {len(self.body)} bytes)"


def _string(value: str) -> bytes:
    raw = value.encode()
    return _INT.pack(len(raw)) + raw


def _buffer(value: bytes | None) -> bytes:
    if value is None:
        return _INT.pack(-1)
    return _INT.pack(len(value)) + value


def _flag(value: bool) -> bytes:
    return b"\x01" if value else b"\x00"


def get_data(path: str, watch: bool = False) -> Request:
    return Request(GET_DATA, _string(path) + _flag(watch), path)


def get_children(path: str, watch: bool = False) -> Request:
    return Request(GET_CHILDREN, _string(path) + _flag(watch), path)


def exists(path: str, watch: bool = False) -> Request:
    return Request(EXISTS, _string(path) + _flag(watch), path)


def encode_acls(acls: Sequence[Acl]) -> bytes:
    """A jute ``vector<ACL>`` (perms, then the id's scheme and id)."""
    parts = [_INT.pack(len(acls))]
    for acl in acls:
        parts.append(_INT.pack(acl.perms) + _string(acl.scheme) + _string(acl.id))
    return b"".join(parts)


OPEN_ACL = encode_acls(OPEN_ACL_UNSAFE)  # world:anyone, every permission


def create(
    path: str, data: bytes | None, acls: bytes, *, ephemeral: bool = False, sequential: bool = False
) -> Request:
    """``acls``: the znode's ACL list, encoded by :func:`encode_acls`."""
    flags = (EPHEMERAL_FLAG if ephemeral else 0) | (SEQUENTIAL_FLAG if sequential else 0)
    return Request(CREATE, _string(path) + _buffer(data) + acls + _INT.pack(flags), path)


def get_acl(path: str) -> Request:
    return Request(GET_ACL, _string(path), path)


def set_acl(path: str, acls: Sequence[Acl], aversion: int) -> Request:
    """ZooKeeper's setACL: the znode's whole ACL list, if its ACL version is ``aversion`` (-1:
    any). The reply is the znode's stat."""
    return Request(SET_ACL, _string(path) + encode_acls(acls) + _INT.pack(aversion), path)


def who_am_i() -> Request:
    """ZooKeeper 3.7+'s whoAmI: the ids the server holds for this session; its reply is a list
    of (scheme, id) (jute ``WhoAmIResponse``: ``vector<ClientInfo>``)."""
    return Request(WHO_AM_I, b"")


def sasl(token: bytes) -> Request:
    """A SASL token for the server (jute ``GetSASLRequest``); its reply is the server's token
    (``SetSASLResponse``), bytes or None."""
    return Request(SASL, _buffer(token))


def set_data(path: str, data: bytes, version: int) -> Request:
    return Request(SET_DATA, _string(path) + _buffer(data) + _INT.pack(version), path)


def delete(path: str, version: int) -> Request:
    return Request(DELETE, _string(path) + _INT.pack(version), path)


def check(path: str, version: int) -> Request:
    return Request(CHECK, _string(path) + _INT.pack(version), path)


def multi_op_size(request: Request) -> int:
    """Bytes ``request`` adds to a multi (or multiRead) packet."""
    return _MULTI_HEADER.size + len(request.body)


EMPTY_MULTI_SIZE = _REQUEST_HEADER.size + _MULTI_HEADER.size


def multi(requests: Sequence[Request], *, read: bool = False) -> Request:
    """A write multi (opcode 14) or, with ``read``, a ZooKeeper 3.6+ multiRead (opcode 22)."""
    parts = []
    for request in requests:
        parts.append(_MULTI_HEADER.pack(request.opcode, False, -1))
        parts.append(request.body)
    parts.append(_MULTI_HEADER.pack(-1, True, -1))
    return Request(MULTI_READ if read else MULTI, b"".join(parts))


def multi_read(opcode: int, paths: Sequence[str]) -> Request:
    """A multiRead of ``opcode`` (GET_DATA or GET_CHILDREN, no watch) for every path."""
    header = _MULTI_HEADER.pack(opcode, False, -1)
    pack = _INT.pack
    parts = []
    for path in paths:
        raw = path.encode()
        parts.append(header + pack(len(raw)) + raw + b"\x00")
    parts.append(_MULTI_HEADER.pack(-1, True, -1))
    return Request(MULTI_READ, b"".join(parts))


def set_watches(
    relative_zxid: int, data: Sequence[str], exist: Sequence[str], child: Sequence[str]
) -> Request:
    body = [struct.pack("!q", relative_zxid)]
    for paths in (data, exist, child):
        body.append(_INT.pack(len(paths)))
        body.extend(_string(path) for path in paths)
    return Request(SET_WATCHES, b"".join(body))


def close_session() -> Request:
    return Request(CLOSE, b"")


def ping() -> Request:
    """Sent with ``PING_XID``; its reply comes back with that xid."""
    return Request(PING, b"")


# --- replies -------------------------------------------------------------------------------------


def _read_string(buf: bytes, offset: int) -> tuple[str, int]:
    (size,) = _INT.unpack_from(buf, offset)
    offset += 4
    return buf[offset : offset + size].decode(), offset + size


def _read_data_and_stat(buf: bytes, offset: int) -> tuple[tuple[bytes | None, StatTuple], int]:
    (size,) = _INT.unpack_from(buf, offset)
    offset += 4
    data: bytes | None = None
    if size >= 0:
        data = buf[offset : offset + size]
        offset += size
    stat: StatTuple = _STAT.unpack_from(buf, offset)
    return (data, stat), offset + _STAT.size


def _read_children(buf: bytes, offset: int) -> tuple[list[str], int]:
    (count,) = _INT.unpack_from(buf, offset)
    offset += 4
    children = []
    for _ in range(max(count, 0)):
        (size,) = _INT.unpack_from(buf, offset)
        offset += 4
        children.append(buf[offset : offset + size].decode())
        offset += size
    return children, offset


def _read_buffer(buf: bytes, offset: int) -> tuple[bytes | None, int]:
    (size,) = _INT.unpack_from(buf, offset)
    offset += 4
    if size < 0:
        return None, offset
    return buf[offset : offset + size], offset + size


def _read_acls(buf: bytes, offset: int) -> tuple[tuple[list[Acl], StatTuple], int]:
    (count,) = _INT.unpack_from(buf, offset)
    offset += 4
    acls = []
    for _ in range(max(count, 0)):
        (perms,) = _INT.unpack_from(buf, offset)
        scheme, offset = _read_string(buf, offset + 4)
        ident, offset = _read_string(buf, offset)
        acls.append(Acl(perms, scheme, ident))
    stat: StatTuple = _STAT.unpack_from(buf, offset)
    return (acls, stat), offset + _STAT.size


def _read_client_infos(buf: bytes, offset: int) -> tuple[list[tuple[str, str]], int]:
    (count,) = _INT.unpack_from(buf, offset)
    offset += 4
    ids = []
    for _ in range(max(count, 0)):
        scheme, offset = _read_string(buf, offset)
        ident, offset = _read_string(buf, offset)
        ids.append((scheme, ident))
    return ids, offset


def _read_one(opcode: int, buf: bytes, offset: int) -> tuple[Any, int]:
    if opcode == GET_DATA:
        return _read_data_and_stat(buf, offset)
    if opcode == SASL:
        return _read_buffer(buf, offset)
    if opcode == GET_ACL:
        return _read_acls(buf, offset)
    if opcode == WHO_AM_I:
        return _read_client_infos(buf, offset)
    if opcode in (SET_DATA, EXISTS, SET_ACL):
        stat: StatTuple = _STAT.unpack_from(buf, offset)
        return stat, offset + _STAT.size
    if opcode == CREATE:
        return _read_string(buf, offset)
    if opcode == CREATE2:
        path, offset = _read_string(buf, offset)
        return path, offset + _STAT.size
    if opcode in (GET_CHILDREN, GET_CHILDREN2):
        children, offset = _read_children(buf, offset)
        if opcode == GET_CHILDREN2:
            offset += _STAT.size
        return children, offset
    if opcode in (DELETE, CHECK, PING, SET_WATCHES, CLOSE):
        return None, offset
    raise ValueError(f"no decoder for opcode {opcode}")


def _read_multi(buf: bytes, offset: int) -> list[Any]:
    """A multi or multiRead reply: per op its value, or a ServerError (type -1 entries)."""
    results: list[Any] = []
    header = _MULTI_HEADER.unpack_from
    header_size = _MULTI_HEADER.size
    integer = _INT.unpack_from
    stat = _STAT.unpack_from
    stat_size = _STAT.size
    while True:
        op_type, done, _error = header(buf, offset)
        offset += header_size
        if done:
            return results
        if op_type == GET_DATA:  # the bulk of a multiRead: inlined
            (size,) = integer(buf, offset)
            offset += 4
            data = None
            if size >= 0:
                data = buf[offset : offset + size]
                offset += size
            results.append((data, stat(buf, offset)))
            offset += stat_size
            continue
        if op_type == ERROR:
            (code,) = _INT.unpack_from(buf, offset)
            offset += 4
            results.append(ServerError(code))
            continue
        value, offset = _read_one(op_type, buf, offset)
        results.append(value)


def can_decode(opcode: int) -> bool:
    return opcode in _DECODABLE


_DECODABLE = frozenset(
    {
        CREATE,
        DELETE,
        EXISTS,
        GET_DATA,
        SET_DATA,
        GET_CHILDREN,
        PING,
        GET_CHILDREN2,
        CHECK,
        MULTI,
        CREATE2,
        MULTI_READ,
        SET_WATCHES,
        CLOSE,
        SASL,
        GET_ACL,
        SET_ACL,
        WHO_AM_I,
    }
)


def decode_reply(opcode: int, buf: bytes, offset: int = 0) -> Any:
    """The value of a successful reply (``buf[offset:]`` is what follows the reply header)."""
    if opcode in (MULTI, MULTI_READ):
        return _read_multi(buf, offset)
    value, _ = _read_one(opcode, buf, offset)
    return value


def decode_watch_event(buf: bytes, offset: int = 0) -> tuple[int, int, str]:
    """A watch notification (the payload after a reply header with ``WATCH_XID``): its event type
    (1 created, 2 deleted, 3 data changed, 4 children changed; -1 a state event), the keeper state
    and the path."""
    event_type, state = _TWO_INTS.unpack_from(buf, offset)
    path, _ = _read_string(buf, offset + _TWO_INTS.size)
    return event_type, state, path


_TWO_INTS = struct.Struct("!ii")

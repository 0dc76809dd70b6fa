"""The ZooKeeper client's values: what it reads (``Stat``, ``Znode``), the ops of a multi, the
controller's fencing token, watch kinds, and the client's settings. Pure."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec

from reassignd.tls import ClientTls
from reassignd.zk import _supervisor


class Stat(msgspec.Struct, frozen=True, gc=False):
    """A znode's stat, as much of it as reassignd reads. Stat and Znode are msgspec structs: a
    failover builds one of each per znode it reads (101,000 at 100,000 partitions), and a frozen
    dataclass costs about 3 µs to build against 0.2 µs."""

    czxid: int
    mzxid: int
    version: int
    cversion: int
    ephemeral_owner: int
    num_children: int
    data_length: int
    aversion: int = 0  # the ACL's version (what setACL checks)


class Znode(msgspec.Struct, frozen=True, gc=False):
    path: str
    data: bytes | None
    stat: Stat


@dataclass(frozen=True, slots=True)
class Create:
    path: str
    data: bytes | None = None
    ephemeral: bool = False
    sequential: bool = False


@dataclass(frozen=True, slots=True)
class SetData:
    path: str
    data: bytes
    version: int  # -1 = any (only for znodes nobody else writes)


@dataclass(frozen=True, slots=True)
class Delete:
    path: str
    version: int = -1


@dataclass(frozen=True, slots=True)
class Check:
    path: str
    version: int


Op = Create | SetData | Delete | Check


@dataclass(frozen=True, slots=True)
class Fence:
    """The controller's fencing token: ``check(path, version)`` is the first op of every multi."""

    path: str
    version: int


SessionState = _supervisor.SessionState  # CONNECTED, SUSPENDED, EXPIRED, CLOSED


class WatchKind(enum.Enum):
    DATA = "data"  # fires on data change or deletion of an existing znode
    CHILDREN = "children"  # fires on children change or deletion
    EXISTS = "exists"  # fires on creation, data change or deletion


WatchCallback = Callable[[str], None]  # called with the (chroot-relative) path; must not block

# every role's default ZooKeeper session timeout and request timeout (the controller's, the
# agents', the flags'): stated here once
DEFAULT_SESSION_TIMEOUT_S = 6.0
DEFAULT_REQUEST_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class SaslCredentials:
    """The SASL DIGEST-MD5 identity a client authenticates to ZooKeeper with (the ``Client``
    section of a Kafka cluster's JAAS file). The password is never in a repr or a log line."""

    user: str
    password: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class ZkAccess:
    """How a client is connected, as ``GET /v1/status`` shows it (never the password)."""

    principal: str  # sasl:<user>, its certificate, or anonymous
    tls: bool
    set_acl: bool


@dataclass(frozen=True, slots=True)
class ZkSettings:
    connect: str  # "host:port[,host:port...][/chroot]"
    session_timeout_s: float = DEFAULT_SESSION_TIMEOUT_S
    request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S
    role: str = "client"  # names the client's I/O thread (zk-io-<role>)
    sasl: SaslCredentials | None = None  # authenticate on every connection (else anonymous)
    set_acl: bool = False  # Kafka's zookeeper.set.acl: the znodes created get Kafka's ACLs (acls.py)
    tls: ClientTls | None = None  # TLS to ZooKeeper's secureClientPort, the server verified (KIP-515)

    @property
    def principal(self) -> str:
        """Who a client with these settings is to ZooKeeper (never the password): ``sasl:<user>``
        and its certificate when it presents one over TLS, or ``anonymous``."""
        ids = [f"sasl:{self.sasl.user}"] if self.sasl is not None else []
        if self.tls is not None and self.tls.cert_file is not None:
            ids.append(f"x509:<the subject of {self.tls.cert_file}>")
        return " + ".join(ids) or "anonymous"

    @property
    def access(self) -> ZkAccess:
        return ZkAccess(self.principal, self.tls is not None, self.set_acl)

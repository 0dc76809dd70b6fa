"""The ZooKeeper client's errors: one type per server answer the code acts on, and the client's
own (a request too large to send, a timeout, a lost connection). A failed fencing check is no
ZooKeeper error: it raises :class:`reassignd.errors.NotController`."""

from __future__ import annotations

from reassignd.errors import StartupError


class ZkError(Exception):
    """Any ZooKeeper failure. ``path`` is the znode it concerns, when known; ``code`` is the
    server's error code when the server answered one (None for failures of the client's own)."""

    def __init__(self, message: str, path: str | None = None, code: int | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.code = code


class NoNodeError(ZkError): ...


class NodeExistsError(ZkError): ...


class BadVersionError(ZkError): ...


class NotEmptyError(ZkError): ...


class BadArgumentsError(ZkError):
    """The server refused the request's arguments (BADARGUMENTS: e.g. a path that is not a valid
    znode name, such as ``.`` or ``..``)."""


class NoAuthError(ZkError):
    """NOAUTH: the znode's ACL does not let this session do what it asked (another principal
    owns it, as in a Kafka cluster run with ``zookeeper.set.acl``). The same every time."""


class InvalidAclError(ZkError):
    """INVALIDACL: the ACL of a create or setACL is not valid. The same every time."""


class UnimplementedError(ZkError):
    """UNIMPLEMENTED: the server does not know the request (whoAmI before ZooKeeper 3.7)."""


class ZkAuthFailed(ZkError, StartupError):
    """The server refused this client's SASL authentication (a wrong user or password, a server
    without SASL), or the server could not prove it knows the password. The reason says which;
    never the password. At startup it ends the process (exit 2, one line: a StartupError)."""


class ZkTlsRefused(ZkAuthFailed):
    """The server's TLS certificate cannot be verified (another CA, another host name), or the
    TLS handshake failed: the server is not the one the settings trust. At startup it ends the
    process (exit 2), as a refused SASL authentication does."""


class ZnodeTooLargeError(ZkError):
    """Refused before sending: the data is over MAX_ZNODE_BYTES."""


class ZkTimeoutError(ZkError):
    """The request did not complete within the request timeout (connection lost, or outage)."""


class ConnectionLostError(ZkError):
    """The session is suspended or lost; the request was not (known to be) applied."""


class MultiFailedError(ZkError):
    """A multi failed on op ``index`` (0-based, counted without the fencing check) with ``cause``
    (one of the errors above). Nothing of it was applied."""

    def __init__(self, index: int, cause: ZkError) -> None:
        super().__init__(f"multi op {index} failed: {cause}", cause.path)
        self.index = index
        self.cause = cause

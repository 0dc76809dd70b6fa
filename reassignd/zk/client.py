"""The one place that talks to aiozk: fenced writes, pipelined reads, watches, session supervision.

INTERFACE STUB — to be implemented (see the docstrings). Everything else in reassignd uses only
this module's names, never aiozk's.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MAX_ZNODE_BYTES = 1024 * 1024  # ZooKeeper's default jute.maxbuffer


# --- errors --------------------------------------------------------------------------------------


class ZkError(Exception):
    """Any ZooKeeper failure. ``path`` is the znode it concerns, when known."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class NoNodeError(ZkError): ...


class NodeExistsError(ZkError): ...


class BadVersionError(ZkError): ...


class NotEmptyError(ZkError): ...


class ZnodeTooLargeError(ZkError):
    """Refused before sending: the data is over MAX_ZNODE_BYTES."""


class ZkTimeoutError(ZkError):
    """The request did not complete within the request timeout (connection lost, or outage)."""


class ConnectionLostError(ZkError):
    """The session is suspended or lost; the request was not (known to be) applied."""


class NotControllerError(ZkError):
    """The fencing check in a fenced multi failed: another controller was elected."""


class MultiFailedError(ZkError):
    """A multi failed on op ``index`` (0-based, counted without the fencing check) with ``cause``
    (one of the errors above). Nothing of it was applied."""

    def __init__(self, index: int, cause: ZkError) -> None:
        super().__init__(f"multi op {index} failed: {cause}", cause.path)
        self.index = index
        self.cause = cause


# --- values --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Stat:
    czxid: int
    mzxid: int
    version: int
    cversion: int
    ephemeral_owner: int
    num_children: int
    data_length: int


@dataclass(frozen=True, slots=True)
class Znode:
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


class SessionState(enum.Enum):
    CONNECTED = "connected"  # connected, same session as before
    SUSPENDED = "suspended"  # connection lost, session may still be alive
    EXPIRED = "expired"  # the session is gone (expired, or aiozk silently opened a new one)
    CLOSED = "closed"


class WatchKind(enum.Enum):
    DATA = "data"  # fires on data change or deletion of an existing znode
    CHILDREN = "children"  # fires on children change or deletion
    EXISTS = "exists"  # fires on creation, data change or deletion


WatchCallback = Callable[[str], None]  # called with the (chroot-relative) path; must not block


@dataclass(frozen=True, slots=True)
class ZkSettings:
    connect: str  # "host:port[,host:port...][/chroot]"
    session_timeout_s: float = 6.0
    request_timeout_s: float = 10.0


class ZkClient:
    """A ZooKeeper session for one process role (controller, or one broker agent).

    - Every call has a timeout (``request_timeout_s``) and raises ``ZkTimeoutError`` past it.
    - ``session_id`` is the current session; a new session id after a reconnect is reported as
      ``SessionState.EXPIRED`` (aiozk reopens sessions silently).
    - ``on_session_state(cb)`` registers a callback invoked (via loop.call_soon, never blocking)
      on every state change: SUSPENDED when the connection drops, CONNECTED when the same
      session comes back, EXPIRED when the session was lost, CLOSED on close().
      The supervisor must notice SUSPENDED → EXPIRED within the session timeout of losing it.
    - Watches are one-shot, like ZooKeeper's: ``get(path, watch=cb)`` arms a data watch and ``cb``
      is called at most once. After an EXPIRED report, armed watches are dropped; the owner re-arms.
    - Writes larger than MAX_ZNODE_BYTES raise ``ZnodeTooLargeError`` before sending.
    """

    def __init__(self, settings: ZkSettings) -> None:
        self.settings = settings
        raise NotImplementedError

    @property
    def session_id(self) -> int | None:
        raise NotImplementedError

    @property
    def connected(self) -> bool:
        raise NotImplementedError

    def on_session_state(self, callback: Callable[[SessionState], None]) -> None:
        raise NotImplementedError

    async def start(self) -> None:
        """Connect, open a session, create the chroot if missing."""
        raise NotImplementedError

    async def close(self) -> None:
        """Close the session (ephemeral znodes go at once); cancels every watch task; never hangs."""
        raise NotImplementedError

    # reads
    async def get(self, path: str, watch: WatchCallback | None = None) -> Znode:
        """Raises NoNodeError."""
        raise NotImplementedError

    async def get_or_none(self, path: str, watch: WatchCallback | None = None) -> Znode | None:
        """None when the znode does not exist (with ``watch``, an EXISTS watch is armed then)."""
        raise NotImplementedError

    async def exists(self, path: str, watch: WatchCallback | None = None) -> Stat | None:
        raise NotImplementedError

    async def children(self, path: str, watch: WatchCallback | None = None) -> list[str]:
        """Raises NoNodeError."""
        raise NotImplementedError

    async def get_many(self, paths: Sequence[str]) -> list[Znode | None]:
        """Pipelined/batched reads (multiRead); None for missing znodes; result order = paths."""
        raise NotImplementedError

    async def children_many(self, paths: Sequence[str]) -> list[list[str] | None]:
        raise NotImplementedError

    # plain writes (agents, tools, tests)
    async def create(
        self,
        path: str,
        data: bytes | None = None,
        *,
        ephemeral: bool = False,
        sequential: bool = False,
        make_parents: bool = False,
    ) -> str:
        """Returns the created path (with the sequence suffix). Raises NodeExistsError/NoNodeError."""
        raise NotImplementedError

    async def set(self, path: str, data: bytes, version: int) -> Stat:
        raise NotImplementedError

    async def delete(self, path: str, version: int = -1) -> None:
        raise NotImplementedError

    async def delete_recursive(self, path: str) -> None:
        """Delete a subtree (no-op if missing)."""
        raise NotImplementedError

    async def ensure_path(self, path: str) -> None:
        """Create every missing persistent znode on the way (null data)."""
        raise NotImplementedError

    async def multi(self, ops: Sequence[Op]) -> list[Stat | str | None]:
        """Atomic multi. Per op: SetData → Stat, Create → created path, Delete/Check → None.
        Raises MultiFailedError (index of the failing op) when it failed: nothing applied."""
        raise NotImplementedError

    async def fenced_multi(self, fence: Fence, ops: Sequence[Op]) -> list[Stat | str | None]:
        """``multi([Check(fence), *ops])``; results without the check. A failed check raises
        NotControllerError; another op's failure raises MultiFailedError (index without the check).
        Large op lists are split into several fenced multis of bounded size (each carrying the
        check), sent pipelined; they are not atomic with each other."""
        raise NotImplementedError

"""The read port: :class:`ZkReads`, every kind of ZooKeeper read the controller's parts make, one
declaration each. The parts (and the quota readers they call) take ``reads: ZkReads``; the
composition hands them the real :class:`~reassignd.zk.client.ZkClient`, which satisfies it
structurally (mypy strict checks it where it is handed), and the property tests hand them their
simulated ZooKeeper. Writes go the other way, through the fenced write gateway
(``controller/effects/fenced_writes.py``).

It lives here, beside the client it describes, rather than in a controller part: the layer
contracts put ``reassignd.zk`` below every user of the port — each of the controller's parts
(``instance/shared.py``, the lowest that holds it, included) and ``reassignd.quotas``, whose
readers the quota handlers call with it — while a module inside ``reassignd.controller`` could
not be imported by ``reassignd.quotas``. It imports nothing but the client's values.

The error semantics are the client's: ``get`` and ``children`` raise NoNodeError for a missing
znode, the others answer None for one; anything else ZooKeeper or the connection fails with
raises its ZkError (a lost connection: ConnectionLostError). A ``watch`` is armed as the read's
ZooKeeper request arms it (``exists`` on a missing znode: an exists watch, which fires when it
is created).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from reassignd.zk.values import Stat, WatchCallback, Znode


class ZkReads(Protocol):
    """The reads of a controller's parts, with ZooKeeper's (and the client's) error semantics."""

    async def get(self, path: str, watch: WatchCallback | None = None) -> Znode:
        """The znode's data and stat, ``watch`` armed on its data. Raises NoNodeError."""
        ...

    async def get_or_none(self, path: str, watch: WatchCallback | None = None) -> Znode | None:
        """The znode, or None when it does not exist (with ``watch``, an exists watch is armed
        then: it fires when the znode is created)."""
        ...

    async def exists(self, path: str, watch: WatchCallback | None = None) -> Stat | None:
        """The znode's stat, or None when it does not exist; ``watch`` armed either way."""
        ...

    async def children(self, path: str, watch: WatchCallback | None = None) -> list[str]:
        """The names of the znode's children, ``watch`` armed on them. Raises NoNodeError."""
        ...

    async def get_many(self, paths: Sequence[str]) -> list[Znode | None]:
        """Many znodes in one pipelined read, in the order of ``paths``; None for a missing one."""
        ...

    async def children_many(self, paths: Sequence[str]) -> list[list[str] | None]:
        """Many children lists in one pipelined read; None for a missing znode."""
        ...

    @property
    def last_zxid(self) -> int:
        """The newest zxid this session has seen: a read sent after it reflects at least that."""
        ...

    async def watch_data_since(self, watches: Mapping[str, WatchCallback], zxid: int) -> None:
        """A data watch on each path as if the znode had been read at ``zxid`` (SetWatches): it
        fires at once for a znode changed or deleted since."""
        ...

    def watching(self, callback: WatchCallback) -> bool:
        """Whether ``callback``, armed by a read, is still armed (it has not fired, its read did
        not fail, and it was not dropped)."""
        ...

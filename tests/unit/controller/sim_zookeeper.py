"""A ZooKeeper made of dicts, for the property tests of the controller's core. Pure, no I/O.

It is what the controller's parts are built with in the property tests: their read port
(:class:`~reassignd.zk.reads.ZkReads`) and the writer's fenced multi, both structurally (mypy
checks it where the machine hands it, no cast), with the plain writes the model makes beside them.
It answers with ZooKeeper's rules: versions checked on every conditional
write, a multi applies all or nothing (``MultiFailedError`` naming the op), a failed fencing
check raises ``NotController``, creates need the parent, sequential names count per parent,
deletes need no children, a zxid per write (``czxid`` is a broker's epoch). The model's own
writes (a broker registering, an agent changing an ISR, a tool writing a topic znode) use the
synchronous ``add``/``put``/``remove``, unfenced, as those clients do. Watches are not simulated:
the model delivers the notifications itself, as the events they would have enqueued.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from reassignd.errors import NotController
from reassignd.zk.errors import (
    BadVersionError,
    MultiFailedError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    ZkError,
)
from reassignd.zk.values import Check, Create, Delete, Fence, Op, SetData, Stat, WatchCallback, Znode


@dataclass(frozen=True, slots=True)
class _Node:
    data: bytes | None
    version: int
    czxid: int
    mzxid: int
    # the names of its children, kept by every create and delete (a listing needs no scan of
    # every znode: the property test lists children thousands of times)
    children: frozenset[str] = frozenset()


def _parent(path: str) -> str:
    head = path.rsplit("/", 1)[0]
    return head or "/"


def _name(path: str) -> str:
    return path.rsplit("/", 1)[1]


class SimZooKeeper:
    session_id = 1
    connected = True

    def __init__(self) -> None:
        self.nodes: dict[str, _Node] = {"/": _Node(None, 0, 0, 0)}
        self.zxid = 0
        self.sequences: dict[str, int] = {}  # parent -> next sequential number

    # --- the model's side (unfenced) ---------------------------------------------------------------

    def add(self, path: str, data: bytes | None = None, *, sequential: bool = False) -> str:
        created: list[str] = []
        self.nodes = self._apply(
            self.nodes, [Create(path, data, sequential=sequential)], multi=False, created=created
        )
        return created[0]

    def put(self, path: str, data: bytes, version: int) -> Stat:
        self.nodes = self._apply(self.nodes, [SetData(path, data, version)], multi=False)
        return self.stat(path)

    def remove(self, path: str) -> None:
        self.nodes = self._apply(self.nodes, [Delete(path)], multi=False)

    def data(self, path: str) -> bytes | None:
        return self.nodes[path].data

    def version(self, path: str) -> int:
        return self.nodes[path].version

    def has(self, path: str) -> bool:
        return path in self.nodes

    def child_names(self, path: str) -> list[str]:
        return self._children(self.nodes, path)

    def stat(self, path: str) -> Stat:
        node = self.nodes[path]
        return Stat(
            czxid=node.czxid,
            mzxid=node.mzxid,
            version=node.version,
            cversion=0,
            ephemeral_owner=0,
            num_children=len(node.children),
            data_length=len(node.data or b""),
        )

    def snapshot(self) -> dict[str, tuple[bytes | None, int]]:
        return {p: (n.data, n.version) for p, n in self.nodes.items()}

    # --- the read port (ZkReads) and the client's writes ------------------------------------------

    async def get(self, path: str, watch: WatchCallback | None = None) -> Znode:
        if path not in self.nodes:
            raise NoNodeError(f"no node {path}", path)
        return Znode(path, self.nodes[path].data, self.stat(path))

    async def get_or_none(self, path: str, watch: WatchCallback | None = None) -> Znode | None:
        return Znode(path, self.nodes[path].data, self.stat(path)) if path in self.nodes else None

    async def get_many(self, paths: Sequence[str]) -> list[Znode | None]:
        return [await self.get_or_none(p) for p in paths]

    async def exists(self, path: str, watch: WatchCallback | None = None) -> Stat | None:
        return self.stat(path) if path in self.nodes else None

    async def children(self, path: str, watch: WatchCallback | None = None) -> list[str]:
        if path not in self.nodes:
            raise NoNodeError(f"no node {path}", path)
        return self._children(self.nodes, path)

    async def children_many(self, paths: Sequence[str]) -> list[list[str] | None]:
        return [self._children(self.nodes, p) if p in self.nodes else None for p in paths]

    @property
    def last_zxid(self) -> int:
        return self.zxid

    async def watch_data_since(self, watches: Mapping[str, WatchCallback], zxid: int) -> None:
        """Watches are the model's: nothing to arm."""

    def watching(self, callback: WatchCallback) -> bool:
        return False

    def drop_watches(self) -> None:
        pass

    async def create(
        self,
        path: str,
        data: bytes | None = None,
        *,
        ephemeral: bool = False,
        sequential: bool = False,
        make_parents: bool = False,
    ) -> str:
        if make_parents:
            await self.ensure_path(_parent(path))
        return self.add(path, data, sequential=sequential)

    async def set(self, path: str, data: bytes, version: int) -> Stat:
        return self.put(path, data, version)

    async def delete(self, path: str, version: int = -1) -> None:
        self.nodes = self._apply(self.nodes, [Delete(path, version)], multi=False)

    async def ensure_path(self, path: str) -> None:
        parts = [p for p in path.split("/") if p]
        for i in range(1, len(parts) + 1):
            here = "/" + "/".join(parts[:i])
            if here not in self.nodes:
                self.add(here)

    async def delete_recursive(self, path: str) -> None:
        if path not in self.nodes:
            return
        for child in self._children(self.nodes, path):
            await self.delete_recursive(f"{path.rstrip('/')}/{child}")
        await self.delete(path)

    async def multi(self, ops: Sequence[Op]) -> list[Stat | str | None]:
        created: list[str] = []
        self.nodes = self._apply(self.nodes, ops, created=created)
        names = iter(created)
        return [
            self.stat(op.path) if isinstance(op, SetData) else next(names) if isinstance(op, Create) else None
            for op in ops
        ]

    async def fenced_multi(
        self, fence: Fence, ops: Sequence[Op], *, atomic: bool = False
    ) -> list[Stat | str | None]:
        node = self.nodes.get(fence.path)
        if node is None or node.version != fence.version:
            raise NotController(f"fence {fence.path}@{fence.version} failed")
        return await self.multi(ops)

    # --- all or nothing ---------------------------------------------------------------------------

    @staticmethod
    def _children(nodes: dict[str, _Node], path: str) -> list[str]:
        node = nodes.get(path)
        return [] if node is None else sorted(node.children)

    def _apply(
        self,
        nodes: dict[str, _Node],
        ops: Sequence[Op],
        *,
        multi: bool = True,
        created: list[str] | None = None,
    ) -> dict[str, _Node]:
        """The nodes after ``ops``, or MultiFailedError (nothing applied); outside a multi, the
        op's own error. The names of the created znodes (sequential ones numbered) go to
        ``created``."""
        out = dict(nodes)
        sequences = dict(self.sequences)
        names: list[str] = []
        zxid = self.zxid
        for index, given in enumerate(ops):
            zxid += 1
            op = given
            try:
                if isinstance(given, Create) and given.sequential:
                    parent = _parent(given.path)
                    number = sequences.get(parent, 0)
                    sequences[parent] = number + 1
                    op = replace(given, path=f"{given.path}{number:010d}", sequential=False)
                self._one(out, op, zxid)
                if isinstance(op, Create):
                    names.append(op.path)
            except ZkError as e:
                if not multi:
                    raise
                raise MultiFailedError(index, e) from None
        self.zxid = zxid
        self.sequences = sequences
        if created is not None:
            created.extend(names)
        return out

    @staticmethod
    def _one(out: dict[str, _Node], op: Op, zxid: int) -> None:
        node = out.get(op.path)
        match op:
            case Create(path=path, data=data):
                if node is not None:
                    raise NodeExistsError(f"node {path} exists", path)
                parent = out.get(_parent(path))
                if parent is None:
                    raise NoNodeError(f"no parent of {path}", path)
                out[path] = _Node(data, 0, zxid, zxid)
                out[_parent(path)] = replace(parent, children=parent.children | {_name(path)})
            case SetData(path=path, data=data, version=version):
                if node is None:
                    raise NoNodeError(f"no node {path}", path)
                if version not in (-1, node.version):
                    raise BadVersionError(f"{path} is at version {node.version}, not {version}", path)
                out[path] = replace(node, data=data, version=node.version + 1, mzxid=zxid)
            case Delete(path=path, version=version):
                if node is None:
                    raise NoNodeError(f"no node {path}", path)
                if version not in (-1, node.version):
                    raise BadVersionError(f"{path} is at version {node.version}, not {version}", path)
                if node.children:
                    raise NotEmptyError(f"{path} has children", path)
                del out[path]
                parent = out[_parent(path)]
                out[_parent(path)] = replace(parent, children=parent.children - {_name(path)})
            case Check(path=path, version=version):
                if node is None:
                    raise NoNodeError(f"no node {path}", path)
                if node.version != version:
                    raise BadVersionError(f"{path} is at version {node.version}, not {version}", path)

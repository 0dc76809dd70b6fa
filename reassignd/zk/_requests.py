"""The wire request of each write op, built in one place: the path made absolute (the chroot),
the data's size checked before anything is sent, and — for every create, single, in a multi or a
parent added on the way — the znode's ACLs, Kafka's ``ZkData.defaultAcls`` for its
chroot-relative path (``acls.py``; open unless ``--zk-set-acl``). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable

from reassignd.zk import _wire
from reassignd.zk._replies import check_packet, too_large
from reassignd.zk.acls import Acl, default_acls
from reassignd.zk.values import Check, Create, Delete, Op, SetData


class Requests:
    def __init__(
        self, absolute: Callable[[str], str], relative: Callable[[str], str], *, set_acl: bool
    ) -> None:
        self._absolute = absolute
        self._relative = relative
        self._set_acl = set_acl
        self._encoded_acls: dict[tuple[Acl, ...], bytes] = {}  # three lists at most

    def op(self, op: Op) -> _wire.Request:
        """The wire request for ``op``, refused (ZnodeTooLargeError, before anything is sent)
        when too large."""
        absolute = self._absolute(op.path)
        data: bytes | None = None
        match op:
            case Create(_, data, ephemeral, sequential):
                request = self.create(absolute, data, ephemeral=ephemeral, sequential=sequential)
            case SetData(_, data, version):
                request = _wire.set_data(absolute, data, version)
            case Delete(_, version):
                request = _wire.delete(absolute, version)
            case Check(_, version):
                request = _wire.check(absolute, version)
        if data is not None and len(data) > _wire.MAX_ZNODE_BYTES:
            raise too_large("data", len(data), _wire.MAX_ZNODE_BYTES, op.path)
        check_packet(request, op.path)
        return request

    def create(
        self, absolute: str, data: bytes | None, *, ephemeral: bool = False, sequential: bool = False
    ) -> _wire.Request:
        """Every create the client sends is built here, with the ACLs of its path."""
        acls = default_acls(self._set_acl, self._relative(absolute))
        encoded = self._encoded_acls.get(acls)
        if encoded is None:
            encoded = self._encoded_acls[acls] = _wire.encode_acls(acls)
        return _wire.create(absolute, data, encoded, ephemeral=ephemeral, sequential=sequential)

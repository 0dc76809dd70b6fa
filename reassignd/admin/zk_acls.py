"""``reassignd admin zk-acls --secure|--unsecure``: which ACL each znode of an existing tree should
have, whether the one it has is that, and the lines the run prints. Pure (the walk that reads and
writes the ACLs: :mod:`reassignd.admin.zk_acls_walk`).

What Kafka's ``zookeeper-security-migration.sh --zookeeper.acl secure|unsecure`` does: the root
(the chroot's znode) alone, then every znode under Kafka's secure roots and reassignd's own
(:data:`reassignd.zk.paths.SECURE_ROOT_PATHS`) gets the ACL a process would give it on create —
:func:`reassignd.zk.acls.default_acls`, Kafka's ``ZkData.defaultAcls``: with ``--secure`` the
creator (this session's principal) all and anyone read, the creator only under the sensitive
roots; with ``--unsecure`` anyone all (``OPEN_ACL_UNSAFE``).

ZooKeeper stores an ``auth:`` entry as the ids the session authenticated with (``sasl:kafka``), so
the ACL a znode should read back as is :func:`wanted` (the ``auth:`` entry resolved), and the one
sent is :func:`to_set` (``auth:``, resolved by the server, exactly as a create sends it). A znode
is left alone when its ACL is already the wanted one, in any order (:func:`needs_change`): a run
on a migrated tree writes nothing.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from reassignd.zk import paths
from reassignd.zk.acls import Acl, default_acls


class AclMode(enum.Enum):
    SECURE = "secure"
    UNSECURE = "unsecure"

    @property
    def flag(self) -> str:
        return f"--{self.value}"


@dataclass(frozen=True, slots=True)
class Visit:
    """A znode to set: ``recurse`` for a secure root (its subtree too), not for the root "/"."""

    path: str
    recurse: bool


# the root alone (Kafka's setAclIndividually("/")), then each secure root with its subtree
VISITS: tuple[Visit, ...] = (Visit("/", False), *(Visit(root, True) for root in paths.SECURE_ROOT_PATHS))


def to_set(mode: AclMode, path: str) -> tuple[Acl, ...]:
    """The ACL list sent with setACL: the one a create of ``path`` carries in ``mode``."""
    return default_acls(mode is AclMode.SECURE, path)


def wanted(mode: AclMode, path: str, creator: Sequence[tuple[str, str]]) -> tuple[Acl, ...]:
    """The ACL list ``path`` reads back as once set by a session whose authenticated ids
    (scheme, id) are ``creator``: each ``auth:`` entry is one entry per id, with its permissions."""
    resolved: list[Acl] = []
    for acl in to_set(mode, path):
        if acl.scheme == "auth":
            resolved.extend(Acl(acl.perms, scheme, ident) for scheme, ident in creator)
        else:
            resolved.append(acl)
    return tuple(resolved)


def needs_change(current: Sequence[Acl], want: Sequence[Acl]) -> bool:
    """Whether ``current`` is not ``want`` (as sets: ZooKeeper keeps an ACL list in the order it
    was given, and the order grants nothing)."""
    return frozenset(current) != frozenset(want)


def acl_text(acls: Sequence[Acl]) -> str:
    """zkCli's form: ``sasl:kafka:cdrwa,world:anyone:r`` (``(none)`` for an empty list)."""
    return ",".join(str(acl) for acl in acls) or "(none)"


@dataclass(frozen=True, slots=True)
class Tally:
    """A run's counts: each znode ``checked`` is ``changed`` (would be, in a dry run),
    ``unchanged`` (already right) or ``failed`` (NOAUTH, or its ACL kept changing); ``vanished``
    ones were deleted during the walk (not checked)."""

    changed: int = 0
    unchanged: int = 0
    failed: int = 0
    vanished: int = 0

    @property
    def checked(self) -> int:
        return self.changed + self.unchanged + self.failed


def change_line(path: str, current: Sequence[Acl], want: Sequence[Acl]) -> str:
    return f"Would change {path}: {acl_text(current)} -> {acl_text(want)}"


def noauth_line(path: str, principal: str, current: Sequence[Acl] | None, doing: str) -> str:
    """A znode this session may not ``doing`` (read the ACL of, set the ACL of, list): NOAUTH,
    with who this session is and, when it could be read, the znode's ACL (whom it lets)."""
    acl = "" if current is None else f"; its ACL is {acl_text(current)}"
    return f"Failed {path}: NOAUTH: {principal} may not {doing} it{acl}"


def summary_line(mode: AclMode, tally: Tally, *, dry_run: bool) -> str:
    verb = "would change" if dry_run else "changed"
    vanished = f", {tally.vanished} vanished during the walk" if tally.vanished else ""
    return (
        f"{mode.flag}{' (dry run)' if dry_run else ''}: {tally.checked} znode(s) checked, "
        f"{tally.changed} {verb}, {tally.unchanged} unchanged, {tally.failed} failed{vanished}."
    )


def exit_code(tally: Tally) -> int:
    """1 when a znode failed, else 0 (bad arguments and a refused start are 2, elsewhere)."""
    return 1 if tally.failed else 0

"""The ACLs of the znodes reassignd creates: Kafka's ``ZkData.defaultAcls``, exactly. Pure.

Open (``--zk-set-acl`` off, Kafka's ``zookeeper.set.acl=false``): every znode is ``world:anyone``
with every permission (ZooKeeper's ``OPEN_ACL_UNSAFE``). Secure: the creator gets every permission
(``auth:`` — the server stores the session's authenticated ids, ``sasl:<user>`` for a session that
authenticated with SASL) and anyone may read, except under the sensitive roots (Kafka's
``SensitiveRootPaths``: user and broker configs, delegation tokens), which only the creator may
read; the old consumers' path ``/consumers`` stays open (consumers of any principal write under
it). Paths are the chroot-relative ones Kafka sees.
"""

from __future__ import annotations

from dataclasses import dataclass

# ZooDefs.Perms
READ = 1
WRITE = 2
CREATE = 4
DELETE = 8
ADMIN = 16
ALL = READ | WRITE | CREATE | DELETE | ADMIN

_PERM_LETTERS = ((CREATE, "c"), (DELETE, "d"), (READ, "r"), (WRITE, "w"), (ADMIN, "a"))


@dataclass(frozen=True, slots=True)
class Acl:
    perms: int
    scheme: str
    id: str

    def __str__(self) -> str:  # zkCli's form: sasl:kafka:cdrwa
        letters = "".join(letter for bit, letter in _PERM_LETTERS if self.perms & bit)
        return f"{self.scheme}:{self.id}:{letters}"


OPEN_ACL_UNSAFE = (Acl(ALL, "world", "anyone"),)
CREATOR_ALL_ACL = (Acl(ALL, "auth", ""),)
READ_ACL_UNSAFE = (Acl(READ, "world", "anyone"),)

# Kafka's ZkData.SensitiveRootPaths: ConfigEntityTypeZNode.path(USER), .path(BROKER),
# DelegationTokensZNode.path. Matched as Kafka does, by prefix (``path.startsWith``).
SENSITIVE_ROOT_PATHS = ("/config/users", "/config/brokers", "/delegation_token/tokens")
CONSUMERS_PATH = "/consumers"  # Kafka's ConsumerPathZNode: open whatever the mode


def sensitive_path(path: str) -> bool:
    return any(path.startswith(root) for root in SENSITIVE_ROOT_PATHS)


def default_acls(secure: bool, path: str) -> tuple[Acl, ...]:
    """Kafka's ``ZkData.defaultAcls(isSecure, path)``."""
    if not secure or path == CONSUMERS_PATH:
        return OPEN_ACL_UNSAFE
    if sensitive_path(path):
        return CREATOR_ALL_ACL
    return CREATOR_ALL_ACL + READ_ACL_UNSAFE

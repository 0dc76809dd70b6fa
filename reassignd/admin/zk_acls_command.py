"""``reassignd admin zk-acls --secure|--unsecure [--dry-run]``'s command line: its arguments and
its settings (the run: :mod:`reassignd.admin.zk_acls_walk`; the rules: :mod:`reassignd.admin.zk_acls`).

The mode and ``--dry-run`` are per run (command line only); ``--zk`` and the ZooKeeper SASL and TLS
flags are every admin client's (``REASSIGND_*``, the ``[admin]`` table). ``--secure`` needs SASL
credentials: the znodes become the authenticated principal's, and an anonymous session has none to
give. Problems are ``ValueError`` with a one-line reason (the CLI exits 2 with it).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field

from reassignd.admin.connection import optional_str
from reassignd.admin.zk_acls import AclMode
from reassignd.log_setup import LogSettings
from reassignd.zk.security import NO_SECURITY, ZkSecurity, zk_security

DESCRIPTION = (
    "Re-set the ACLs of Kafka's znodes in an existing tree, like zookeeper-security-migration "
    "--zookeeper.acl secure|unsecure."
)
EPILOG = (
    "--secure, --unsecure and --dry-run are command-line only; the other flags also read "
    "REASSIGND_<FLAG> and the --config file (top level or an [admin] table). Exit codes: 0 every "
    "znode right, 1 a znode failed (NOAUTH) or the run failed, 2 bad arguments or ZooKeeper "
    "refusing the credentials."
)
WINDOW = 64  # ZooKeeper requests in flight during the walk


@dataclass(frozen=True, slots=True)
class ZkAclsSettings:
    mode: AclMode
    zk_connect: str
    dry_run: bool = False
    zk_security: ZkSecurity = NO_SECURITY
    request_timeout_s: float = 60.0
    window: int = WINDOW


@dataclass(frozen=True, slots=True)
class AdminZkAclsCommand:
    """``reassignd admin zk-acls``: a one-shot client, not a service."""

    settings: ZkAclsSettings
    log: LogSettings = field(default_factory=lambda: LogSettings(level="warning"))


def add_zk_acls_arguments(parser: argparse.ArgumentParser) -> None:
    modes = parser.add_mutually_exclusive_group(required=True)
    modes.add_argument(
        AclMode.SECURE.flag,
        dest="mode",
        action="store_const",
        const=AclMode.SECURE,
        help="Kafka's ACLs (zookeeper.set.acl): the authenticated principal all, anyone read; "
        "only the principal under /config/users, /config/brokers, /delegation_token/tokens",
    )
    modes.add_argument(
        AclMode.UNSECURE.flag,
        dest="mode",
        action="store_const",
        const=AclMode.UNSECURE,
        help="every permission for anyone (world:anyone:cdrwa), as an open cluster creates them",
    )
    parser.add_argument(
        "--dry-run",
        dest="dry_run",
        action="store_true",
        help="print each znode whose ACL would change, its ACL now and after; write nothing",
    )


def zk_acls_settings(arguments: Mapping[str, object], values: Mapping[str, object]) -> ZkAclsSettings:
    """ValueError with a one-line reason for anything unusable."""
    mode = arguments.get("mode")
    assert isinstance(mode, AclMode), "argparse requires --secure or --unsecure"
    zk = optional_str(values, "zk")
    if zk is None:
        raise ValueError("zk-acls needs --zk (or REASSIGND_ZK): the ZooKeeper whose ACLs it sets")
    security = zk_security(values)
    if mode is AclMode.SECURE and security.zk_sasl_user is None and security.zk_jaas_config is None:
        raise ValueError(
            "--secure needs SASL credentials (--zk-sasl-user with a password, or --zk-jaas-config): "
            "the znodes become the authenticated principal's, and an anonymous session has none"
        )
    timeout = values["request-timeout-s"]
    assert isinstance(timeout, int | float)
    return ZkAclsSettings(
        mode=mode,
        zk_connect=zk,
        dry_run=bool(arguments.get("dry_run", False)),
        zk_security=security,
        request_timeout_s=float(timeout),
    )

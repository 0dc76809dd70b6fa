"""The ZooKeeper session of the admin commands that write znodes themselves (the KIP-236 verbs of
``admin reassign``, ``admin zk-acls``): ``--zk`` and the security flags turned into a started
client, or a one-line error."""

from __future__ import annotations

from reassignd.errors import starting
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import ZkError
from reassignd.zk.security import ZkSecurity

SESSION_TIMEOUT_S = 10.0


async def open_session(
    zk_security: ZkSecurity, zk_connect: str, request_timeout_s: float, bad_settings: type[Exception]
) -> ZkClient:
    """A started client (the caller closes it). Settings that cannot be used (a password file
    that cannot be read, say) raise ``bad_settings``; a ZooKeeper that cannot be reached or
    refuses the credentials is a StartupError (exit 2, one line)."""
    try:
        zk_settings = zk_security.zk_settings(zk_connect, SESSION_TIMEOUT_S, request_timeout_s, role="admin")
    except ValueError as e:
        raise bad_settings(str(e)) from None
    zk = ZkClient(zk_settings)
    with starting(f"ZooKeeper unreachable (--zk {zk_connect})", ZkError):
        await zk.start()
    return zk

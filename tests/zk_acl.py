"""Znodes another ZooKeeper principal owns, for tests: created through Debian's ZooKeeper CLI
with the ``digest`` scheme (no server configuration needed), as a Kafka cluster run with
``zookeeper.set.acl`` owns its znodes. Our own sessions are anonymous: such a znode gives them
read access only, so a write meets NOAUTH, the same whoever the controller is."""

from __future__ import annotations

import asyncio
import base64
import hashlib

ZK_CLI = "/usr/share/zookeeper/bin/zkCli.sh"
USER, PASSWORD = "other", "secret"
# the principal the secured ZooKeeper of the tests knows (SASL DIGEST-MD5), as a Kafka cluster's
# JAAS Server section (the ``secured_zookeeper`` fixture)
SASL_USER, SASL_PASSWORD = "kafka", "kafka-secret"


def digest_id(user: str = USER, password: str = PASSWORD) -> str:
    """The ``digest`` scheme's id: user:base64(sha1(user:password))."""
    hashed = base64.b64encode(hashlib.sha1(f"{user}:{password}".encode()).digest()).decode()
    return f"{user}:{hashed}"


async def disown(zk_connect: str, path: str) -> None:
    """Give ``path`` back to anyone (every permission), as the other principal."""
    await _cli(zk_connect, path, "", "world:anyone:cdrwa", "'world,'anyone")


async def own(zk_connect: str, path: str, *, create: bool = False, data: str = "") -> None:
    """Give ``path`` (relative to ``zk_connect``'s chroot) to the other principal: every
    permission for it, read for anyone. ``create``: create it first (holding ``data``, with that
    ACL at once: no moment open to anyone; its parent must exist; ``data`` without spaces or
    single quotes), else it exists (open to anyone, as our sessions create znodes)."""
    _, _, chroot = zk_connect.partition("/")
    absolute = f"/{chroot}{path}" if chroot else path
    acl = f"digest:{digest_id()}:cdrwa,world:anyone:r"
    if create:  # checked by its answer: a controller may take (delete) it at once
        await _cli(zk_connect, path, f"create {absolute} '{data}' {acl}\n", "", f"Created {absolute}")
        return
    await _cli(zk_connect, path, "", acl, f"'digest,'{digest_id()}")


async def _cli(zk_connect: str, path: str, before: str, acl: str, expect: str) -> None:
    server, _, chroot = zk_connect.partition("/")
    absolute = f"/{chroot}{path}" if chroot else path
    set_acl = f"setAcl {absolute} {acl}\ngetAcl {absolute}\n" if acl else ""
    script = f"addauth digest {USER}:{PASSWORD}\n" + before + set_acl + "quit\n"
    proc = await asyncio.create_subprocess_exec(
        ZK_CLI,
        "-server",
        server,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(script.encode()), timeout=60.0)
    text = out.decode(errors="replace")
    if expect not in text:
        raise AssertionError(f"zkCli did not set the ACL of {absolute}:\n{text[-2000:]}")

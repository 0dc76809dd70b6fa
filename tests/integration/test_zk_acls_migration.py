"""``reassignd admin zk-acls`` as an operator runs it (a process), on the secured ZooKeeper: an open
controller and agents (no ``--zk-set-acl``, anonymous) write a tree; ``--secure --dry-run`` lists
every znode and writes nothing; ``--secure`` gives every znode Kafka's ACLs (an anonymous session
then writes nowhere); a second ``--secure`` changes nothing; a controller and agents with
``--zk-set-acl`` then create, move and delete a topic on it; ``--unsecure`` opens every znode again.
A znode another principal owns is one NOAUTH line (path, principal) and exit 1, the rest fixed."""

from __future__ import annotations

import asyncio
import io
import os
import re
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from reassignd.admin.zk_acls import AclMode, to_set, wanted
from reassignd.admin.zk_acls_walk import ZkAclWalk
from reassignd.zk.acls import Acl, sensitive_path
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import NoAuthError
from reassignd.zk.server import LocalZooKeeper
from reassignd.zk.values import Create, SaslCredentials, Stat, ZkSettings
from tests.integration.harness import Kit, active_one, wait_brokers
from tests.integration.reassignment_helpers import FAST, set_broker_rate
from tests.integration.secured_helpers import OPEN, client, create_move_delete, kafka_acls, secured_args, tree
from tests.zk_acl import SASL_PASSWORD, SASL_USER

SUMMARY = re.compile(
    r"^--(?P<mode>secure|unsecure)(?P<dry> \(dry run\))?: (?P<checked>\d+) znode\(s\) checked, "
    r"(?P<changed>\d+) (?:would change|changed), (?P<unchanged>\d+) unchanged, (?P<failed>\d+) failed\.$"
)


@pytest.fixture
def chroot(secured_zookeeper: LocalZooKeeper) -> str:
    return f"{secured_zookeeper.connect}/m-{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def kafka_zk(chroot: str) -> AsyncIterator[ZkClient]:
    """The cluster's principal, creating znodes open (no --zk-set-acl), as an open cluster does;
    the chroot it creates is open too."""
    zk = ZkClient(ZkSettings(chroot, 6.0, 10.0, sasl=SaslCredentials(SASL_USER, SASL_PASSWORD)))
    await zk.start()
    try:
        yield zk
    finally:
        await zk.close()


async def zk_acls(chroot: str, tmp_path: Path, *args: str, sasl: bool = True) -> tuple[int, list[str], str]:
    """``python -m reassignd admin zk-acls ARGS`` → (exit code, stdout lines, stderr)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("REASSIGND_")}
    credentials = secured_args(tmp_path)[:4] if sasl else []  # without --zk-set-acl: it creates nothing
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "reassignd",
        "admin",
        "zk-acls",
        *args,
        "--zk",
        chroot,
        *credentials,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=clean,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    assert proc.returncode is not None
    return proc.returncode, out.decode().splitlines(), err.decode()


def summary(lines: list[str]) -> dict[str, int]:
    match = SUMMARY.match(lines[-1])
    assert match, lines[-1]
    return {
        k: int(v) for k, v in match.groupdict().items() if k in ("checked", "changed", "unchanged", "failed")
    }


async def acls_of(zk: ZkClient, paths: list[str]) -> dict[str, list[Acl]]:
    return {path: (await zk.get_acl(path))[0] for path in paths}


async def write_an_open_tree(chroot: str, tmp_path: Path, kafka_zk: ZkClient) -> None:
    """An open controller and agents (anonymous, no --zk-set-acl) create and move a topic."""
    (tmp_path / "open").mkdir()
    kit = Kit(chroot, tmp_path / "open")
    try:
        c = kit.controller(9000, 2.0)
        await active_one(c)
        await set_broker_rate(kafka_zk, None, FAST)
        kit.cluster(3)
        await wait_brokers(c, {1, 2, 3})
        await create_move_delete(c, kafka_zk, "open-deleted")
        code, resp = await c.post("/v1/topics", {"topics": [{"name": "open", "assignments": {"0": [1, 2]}}]})
        assert code == 200 and resp["topics"][0]["error_code"] == 0, resp
    finally:
        await kit.close()
    # a broker's and a user's config: under the sensitive roots
    await kafka_zk.create("/config/brokers/1", b'{"version":1,"config":{}}', make_parents=True)
    await kafka_zk.create("/config/users/alice", b'{"version":1,"config":{}}', make_parents=True)


async def test_secure_then_a_secured_cluster_then_unsecure(
    chroot: str, tmp_path: Path, kafka_zk: ZkClient
) -> None:
    await write_an_open_tree(chroot, tmp_path, kafka_zk)
    paths = await tree(kafka_zk)
    assert {"/brokers/topics/open", "/brokers/topics/open/partitions/0/state", "/admin/delete_topics"} <= set(
        paths
    )
    assert all(acls == OPEN for acls in (await acls_of(kafka_zk, paths)).values())

    # --dry-run: every znode listed with its ACL now and after, nothing written
    code, lines, err = await zk_acls(chroot, tmp_path, "--secure", "--dry-run")
    assert (code, err) == (0, ""), (lines, err)
    listed = {line.split()[2].rstrip(":") for line in lines[:-1]}
    assert listed == set(paths)  # every znode of the tree is one the walk covers
    assert "Would change /brokers/topics/open: world:anyone:cdrwa -> sasl:kafka:cdrwa,world:anyone:r" in lines
    assert "Would change /config/users/alice: world:anyone:cdrwa -> sasl:kafka:cdrwa" in lines
    assert summary(lines) == {"checked": len(paths), "changed": len(paths), "unchanged": 0, "failed": 0}
    assert all(acls == OPEN for acls in (await acls_of(kafka_zk, paths)).values())

    # --secure: every znode has Kafka's ACLs; an anonymous session writes nowhere
    code, lines, err = await zk_acls(chroot, tmp_path, "--secure")
    assert (code, err) == (0, ""), (lines, err)
    assert summary(lines) == {"checked": len(paths), "changed": len(paths), "unchanged": 0, "failed": 0}
    wrong = {p: acls for p, acls in (await acls_of(kafka_zk, paths)).items() if acls != kafka_acls(p)}
    assert not wrong, wrong
    anonymous = await client(chroot, None)
    try:
        for path in paths:
            if sensitive_path(path):
                with pytest.raises(NoAuthError):
                    await anonymous.get(path)
            with pytest.raises(NoAuthError):
                await anonymous.set(path, b"x", -1)
            with pytest.raises(NoAuthError):
                await anonymous.create(f"{path.rstrip('/')}/intruder", b"")
    finally:
        await anonymous.close()

    # a second run: nothing to change
    code, lines, err = await zk_acls(chroot, tmp_path, "--secure")
    assert (code, err, lines) == (
        0,
        "",
        [f"--secure: {len(paths)} znode(s) checked, 0 changed, {len(paths)} unchanged, 0 failed."],
    )

    # a secured controller and agents run on the migrated tree
    (tmp_path / "secured").mkdir()
    kit = Kit(chroot, tmp_path / "secured")
    try:
        args = secured_args(tmp_path)
        c = kit.controller(9000, 2.0, *args)
        await active_one(c)
        kit.cluster(3, 1, None, *args)
        await wait_brokers(c, {1, 2, 3})
        await create_move_delete(c, kafka_zk, "secured")
        code, resp = await c.post(
            "/v1/topics", {"topics": [{"name": "secured-kept", "assignments": {"0": [2, 3]}}]}
        )
        assert code == 200 and resp["topics"][0]["error_code"] == 0, resp
        await create_move_delete(c, kafka_zk, "secured-2")
    finally:
        await kit.close()
    paths = await tree(kafka_zk)
    assert "/brokers/topics/secured-kept" in paths
    wrong = {p: acls for p, acls in (await acls_of(kafka_zk, paths)).items() if acls != kafka_acls(p)}
    assert not wrong, wrong

    # --unsecure: open again, every znode
    code, lines, err = await zk_acls(chroot, tmp_path, "--unsecure")
    assert (code, err) == (0, ""), (lines, err)
    assert summary(lines) == {"checked": len(paths), "changed": len(paths), "unchanged": 0, "failed": 0}
    wrong = {p: acls for p, acls in (await acls_of(kafka_zk, paths)).items() if acls != OPEN}
    assert not wrong, wrong
    anonymous = await client(chroot, None)
    try:
        await anonymous.set("/config/users/alice", b"{}", -1)
        await anonymous.create("/brokers/topics/secured-kept/anyone", b"")
    finally:
        await anonymous.close()


async def test_a_znode_another_principal_owns_is_reported_and_the_rest_fixed(
    chroot: str, tmp_path: Path, kafka_zk: ZkClient
) -> None:
    anonymous = await client(chroot, None)  # open, as an open cluster writes
    try:
        for path in ("/brokers/topics/mine/partitions/0/state", "/config/users/bob", "/reassignd/origins"):
            await anonymous.create(path, b"{}", make_parents=True)
    finally:
        await anonymous.close()
    fixed = await tree(kafka_zk)
    other = await client(chroot, SaslCredentials("other", "x"))  # --zk-set-acl as "other"
    try:
        await other.create("/brokers/topics/theirs", b"{}")  # sasl:other all, anyone read
        await other.create("/config/users/carol", b"{}")  # sensitive: sasl:other only
        await other.create("/config/users/carol/clients", b"{}")
        open_other = ZkClient(ZkSettings(chroot, 6.0, 10.0, sasl=SaslCredentials("other", "x")))
        await open_other.start()  # "other" without --zk-set-acl: an open znode under its own
        try:
            await open_other.create("/brokers/topics/theirs/partitions", b"")
        finally:
            await open_other.close()
    finally:
        await other.close()

    code, lines, err = await zk_acls(chroot, tmp_path, "--secure")
    assert (code, err) == (1, ""), (lines, err)
    failures = sorted(line for line in lines if line.startswith("Failed"))
    assert failures == [
        "Failed /brokers/topics/theirs: NOAUTH: sasl:kafka may not set the ACL of it; its ACL is "
        "sasl:other:cdrwa,world:anyone:r",
        "Failed /config/users/carol: NOAUTH: sasl:kafka may not read the ACL of it",
    ]
    assert summary(lines)["failed"] == 2
    fixed.append("/brokers/topics/theirs/partitions")  # under a znode it could not set: walked
    wrong = {p: acls for p, acls in (await acls_of(kafka_zk, fixed)).items() if acls != kafka_acls(p)}
    assert not wrong, wrong
    assert (await kafka_zk.get_acl("/brokers/topics/theirs"))[0] == [
        Acl(31, "sasl", "other"),
        Acl(1, "world", "anyone"),
    ]


async def test_who_am_i_names_the_ids_an_auth_entry_resolves_to(chroot: str, kafka_zk: ZkClient) -> None:
    ids = await kafka_zk.who_am_i()
    assert ("sasl", SASL_USER) in ids
    assert {scheme for scheme, _ in ids} <= {"sasl", "ip"}
    await kafka_zk.create("/probe", b"")
    _, stat = await kafka_zk.get_acl("/probe")
    await kafka_zk.set_acl("/probe", to_set(AclMode.SECURE, "/probe"), stat.aversion)
    creator = [(scheme, ident) for scheme, ident in ids if scheme != "ip"]
    assert (await kafka_zk.get_acl("/probe"))[0] == list(wanted(AclMode.SECURE, "/probe", creator))
    anonymous = await client(chroot, None)
    try:
        assert {scheme for scheme, _ in await anonymous.who_am_i()} <= {"ip"}
    finally:
        await anonymous.close()


class Interleaved(ZkClient):
    """A real session whose getACL of a chosen znode is followed, before its reply is used, by
    another session's change of that znode (its ACL re-set, or the znode deleted): the race a
    walk meets on a live cluster, made to happen every time."""

    def __init__(self, settings: ZkSettings, meddler: ZkClient, changes: dict[str, str]) -> None:
        super().__init__(settings)
        self.meddler = meddler
        self.changes = changes  # path -> "acl" or "delete", each done once
        self.reads: list[str] = []

    async def get_acl(self, path: str) -> tuple[list[Acl], Stat]:
        result = await super().get_acl(path)
        self.reads.append(path)
        change = self.changes.pop(path, None)
        if change == "acl":
            _, stat = await self.meddler.get_acl(path)
            await self.meddler.set_acl(
                path, [Acl(31, "world", "anyone"), Acl(1, "ip", "10.0.0.1")], stat.aversion
            )
        elif change == "delete":
            await self.meddler.delete(path)
        return result


async def test_a_znode_changed_or_deleted_during_the_walk(chroot: str, kafka_zk: ZkClient) -> None:
    for path in ("/brokers/topics/a", "/brokers/topics/b", "/brokers/topics/c"):
        await kafka_zk.create(path, b"{}", make_parents=True)
    settings = ZkSettings(chroot, 6.0, 10.0, sasl=SaslCredentials(SASL_USER, SASL_PASSWORD))
    zk = Interleaved(settings, kafka_zk, {"/brokers/topics/a": "acl", "/brokers/topics/b": "delete"})
    await zk.start()
    out = io.StringIO()
    try:
        tally = await ZkAclWalk(
            zk, AclMode.SECURE, (("sasl", SASL_USER),), out, dry_run=False, window=4
        ).run()
    finally:
        await zk.close()
    assert zk.reads.count("/brokers/topics/a") == 2  # BADVERSION: read again, then set
    assert (tally.checked, tally.changed, tally.unchanged, tally.failed, tally.vanished) == (5, 5, 0, 0, 1)
    assert out.getvalue() == ""
    for path in ("/", "/brokers", "/brokers/topics", "/brokers/topics/a", "/brokers/topics/c"):
        assert (await kafka_zk.get_acl(path))[0] == kafka_acls(path), path
    assert await kafka_zk.exists("/brokers/topics/b") is None


async def test_a_big_tree_is_walked_with_bounded_memory(chroot: str, kafka_zk: ZkClient) -> None:
    """20 topics of 40 partitions (1,650 znodes): the znodes waiting to be visited stay within
    the window times the longest children list, far from the tree."""
    topics, partitions, window = 20, 40, 8
    ops: list[Create] = [Create("/brokers"), Create("/brokers/topics")]
    for t in range(topics):
        ops += [Create(f"/brokers/topics/t{t}", b"{}"), Create(f"/brokers/topics/t{t}/partitions")]
        for p in range(partitions):
            ops += [
                Create(f"/brokers/topics/t{t}/partitions/{p}"),
                Create(f"/brokers/topics/t{t}/partitions/{p}/state"),
            ]
    for i in range(0, len(ops), 500):
        await kafka_zk.multi(ops[i : i + 500])
    walk = ZkAclWalk(
        kafka_zk, AclMode.SECURE, (("sasl", SASL_USER),), io.StringIO(), dry_run=False, window=window
    )
    tally = await walk.run()
    assert (tally.changed, tally.failed) == (len(ops) + 1, 0)  # and the chroot's znode
    assert walk.peak_waiting <= window * partitions + topics, walk.peak_waiting
    again = await ZkAclWalk(
        kafka_zk, AclMode.SECURE, (("sasl", SASL_USER),), io.StringIO(), dry_run=False, window=window
    ).run()
    assert (again.changed, again.unchanged) == (0, len(ops) + 1)


async def test_secure_without_credentials_is_refused_with_one_line(chroot: str, tmp_path: Path) -> None:
    code, lines, err = await zk_acls(chroot, tmp_path, "--secure", sasl=False)
    assert (code, lines) == (2, [])
    assert err.strip().splitlines() == [
        "reassignd admin zk-acls: error: --secure needs SASL credentials (--zk-sasl-user with a "
        "password, or --zk-jaas-config): the znodes become the authenticated principal's, and an "
        "anonymous session has none"
    ]

"""``reassignd admin zk-acls``'s pure parts: which ACL each znode should have in each mode (Kafka's
``ZkData.defaultAcls``, the ``auth:`` entry as the server stores it), when a znode is left alone,
the paths walked, the lines printed, and the command line."""

from __future__ import annotations

import pytest

from reassignd.admin import zk_acls
from reassignd.admin.zk_acls import AclMode, Tally, Visit, acl_text, needs_change, to_set, wanted
from reassignd.admin.zk_acls_command import AdminZkAclsCommand, ZkAclsSettings
from reassignd.config import ConfigError, load_command
from reassignd.zk.acls import ALL, OPEN_ACL_UNSAFE, READ, Acl

KAFKA = (("sasl", "kafka"),)
OWNED = (Acl(ALL, "sasl", "kafka"), Acl(READ, "world", "anyone"))
OPEN = (Acl(ALL, "world", "anyone"),)


@pytest.mark.parametrize(
    ("path", "secure"),
    [
        ("/", OWNED),
        ("/brokers/topics/t/partitions/0/state", OWNED),
        ("/controller", OWNED),
        ("/config/topics/t", OWNED),
        ("/reassignd/origins/t", OWNED),
        ("/config/users/alice", (Acl(ALL, "sasl", "kafka"),)),
        ("/config/brokers/<default>", (Acl(ALL, "sasl", "kafka"),)),
        ("/config/brokers", (Acl(ALL, "sasl", "kafka"),)),
        ("/delegation_token/tokens/t1", (Acl(ALL, "sasl", "kafka"),)),
        ("/delegation_token", OWNED),  # Kafka's sensitive root is /delegation_token/tokens
    ],
)
def test_what_each_znode_should_read_back_as(path: str, secure: tuple[Acl, ...]) -> None:
    assert wanted(AclMode.SECURE, path, KAFKA) == secure
    assert wanted(AclMode.UNSECURE, path, KAFKA) == OPEN
    assert wanted(AclMode.UNSECURE, path, ()) == OPEN


def test_what_is_sent_is_what_a_create_sends_auth_unresolved() -> None:
    assert to_set(AclMode.SECURE, "/brokers") == (Acl(ALL, "auth", ""), Acl(READ, "world", "anyone"))
    assert to_set(AclMode.SECURE, "/config/users/a") == (Acl(ALL, "auth", ""),)
    assert to_set(AclMode.UNSECURE, "/config/users/a") == OPEN_ACL_UNSAFE


def test_the_auth_entry_is_one_entry_per_authenticated_id() -> None:
    ids = (("sasl", "kafka"), ("x509", "CN=kafka"))
    assert wanted(AclMode.SECURE, "/brokers", ids) == (
        Acl(ALL, "sasl", "kafka"),
        Acl(ALL, "x509", "CN=kafka"),
        Acl(READ, "world", "anyone"),
    )


def test_a_znode_already_right_in_any_order_is_left_alone() -> None:
    assert not needs_change(list(OWNED), OWNED)
    assert not needs_change(list(reversed(OWNED)), OWNED)
    assert needs_change(list(OPEN), OWNED)
    assert needs_change([Acl(ALL, "sasl", "kafka")], OWNED)  # creator only where anyone may read
    assert needs_change([*OWNED, Acl(READ, "ip", "10.0.0.1")], OWNED)  # an extra entry
    assert needs_change([Acl(ALL, "sasl", "other"), Acl(READ, "world", "anyone")], OWNED)
    assert needs_change([Acl(READ, "world", "anyone")], OPEN)
    assert not needs_change(list(OPEN), OPEN)


def test_the_walk_is_the_root_alone_then_kafkas_secure_roots_and_ours() -> None:
    assert zk_acls.VISITS[0] == Visit("/", False)
    roots = [v.path for v in zk_acls.VISITS[1:]]
    assert all(v.recurse for v in zk_acls.VISITS[1:])
    for root in (
        "/admin",
        "/brokers",
        "/cluster",
        "/config",
        "/controller",
        "/controller_epoch",
        "/isr_change_notification",
        "/latest_producer_id_block",
        "/log_dir_event_notification",
        "/delegation_token",
        "/feature",
        "/kafka-acl",
        "/kafka-acl-changes",
        "/kafka-acl-extended",
        "/kafka-acl-extended-changes",
        "/reassignd",
    ):
        assert root in roots
    assert "/consumers" not in roots  # left open, as Kafka does
    assert "/zookeeper" not in roots  # the server's own
    assert len(set(roots)) == len(roots)


def test_the_lines_printed() -> None:
    assert acl_text(OWNED) == "sasl:kafka:cdrwa,world:anyone:r"
    assert acl_text(()) == "(none)"
    assert zk_acls.change_line("/brokers", OPEN, OWNED) == (
        "Would change /brokers: world:anyone:cdrwa -> sasl:kafka:cdrwa,world:anyone:r"
    )
    owned_by_other = [Acl(ALL, "sasl", "other")]
    assert zk_acls.noauth_line("/x", "sasl:kafka", owned_by_other, "set the ACL of") == (
        "Failed /x: NOAUTH: sasl:kafka may not set the ACL of it; its ACL is sasl:other:cdrwa"
    )
    assert zk_acls.noauth_line("/x", "sasl:kafka", None, "read the ACL of") == (
        "Failed /x: NOAUTH: sasl:kafka may not read the ACL of it"
    )
    tally = Tally(changed=7, unchanged=2, failed=1)
    assert zk_acls.summary_line(AclMode.SECURE, tally, dry_run=False) == (
        "--secure: 10 znode(s) checked, 7 changed, 2 unchanged, 1 failed."
    )
    assert zk_acls.summary_line(
        AclMode.UNSECURE, Tally(changed=1, unchanged=2, failed=0, vanished=4), dry_run=True
    ) == (
        "--unsecure (dry run): 3 znode(s) checked, 1 would change, 2 unchanged, 0 failed, "
        "4 vanished during the walk."
    )
    assert zk_acls.exit_code(tally) == 1
    assert zk_acls.exit_code(Tally(unchanged=3)) == 0


def command(*args: str, env: dict[str, str] | None = None) -> ZkAclsSettings:
    parsed = load_command(["admin", "zk-acls", *args], env or {})
    assert isinstance(parsed, AdminZkAclsCommand)
    return parsed.settings


def test_the_command_line() -> None:
    settings = command("--unsecure", "--zk", "127.0.0.1:2181/kafka")
    assert (settings.mode, settings.dry_run, settings.zk_connect) == (
        AclMode.UNSECURE,
        False,
        "127.0.0.1:2181/kafka",
    )
    secure = command(
        "--secure",
        "--dry-run",
        "--zk",
        "h:1",
        "--zk-sasl-user",
        "kafka",
        env={"REASSIGND_ZK_SASL_PASSWORD": "p"},
    )
    assert (secure.mode, secure.dry_run, secure.zk_security.zk_sasl_user) == (AclMode.SECURE, True, "kafka")


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["--secure", "--zk", "h:1"], "--secure needs SASL credentials"),
        (["--unsecure"], "zk-acls needs --zk"),
        (["--secure", "--unsecure", "--zk", "h:1"], "not allowed with argument"),
        (["--zk", "h:1"], "one of the arguments --secure --unsecure is required"),
    ],
)
def test_bad_arguments_are_one_line(args: list[str], reason: str) -> None:
    with pytest.raises(ConfigError, match=reason):
        command(*args)

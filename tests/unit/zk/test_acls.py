"""Kafka's ZkData.defaultAcls, and the ACL lists on the wire (a create's, a getACL reply's)."""

from __future__ import annotations

import struct

import pytest

from reassignd.zk import _wire
from reassignd.zk._replies import stat
from reassignd.zk.acls import (
    ALL,
    CREATOR_ALL_ACL,
    OPEN_ACL_UNSAFE,
    READ,
    READ_ACL_UNSAFE,
    Acl,
    default_acls,
    sensitive_path,
)


@pytest.mark.parametrize(
    "path",
    ["/brokers/topics/t", "/admin/reassign_partitions", "/controller", "/config/topics/t", "/config", "/"],
)
def test_secure_znodes_are_the_creators_and_readable_by_anyone(path: str) -> None:
    assert default_acls(True, path) == (Acl(ALL, "auth", ""), Acl(READ, "world", "anyone"))
    assert default_acls(True, path) == CREATOR_ALL_ACL + READ_ACL_UNSAFE


@pytest.mark.parametrize(
    "path",
    [
        "/config/users",
        "/config/users/alice",
        "/config/users/alice/clients/c",
        "/config/brokers",
        "/config/brokers/1",
        "/config/brokers/<default>",
        "/delegation_token/tokens",
        "/delegation_token/tokens/t1",
    ],
)
def test_under_the_sensitive_roots_only_the_creator_reads(path: str) -> None:
    assert sensitive_path(path)
    assert default_acls(True, path) == CREATOR_ALL_ACL


def test_kafka_matches_the_sensitive_roots_by_prefix_only() -> None:
    assert sensitive_path("/config/usersX")  # Kafka's path.startsWith, kept exactly
    assert not sensitive_path("/config/topics")
    assert not sensitive_path("/delegation_token")  # its root is readable, its tokens are not
    assert not sensitive_path("/config/clients/c")


def test_the_old_consumers_path_stays_open_and_open_mode_is_open_everywhere() -> None:
    assert default_acls(True, "/consumers") == OPEN_ACL_UNSAFE
    assert default_acls(True, "/consumers/g") == CREATOR_ALL_ACL + READ_ACL_UNSAFE
    for path in ("/brokers/ids/1", "/config/users/u", "/consumers"):
        assert default_acls(False, path) == (Acl(ALL, "world", "anyone"),)


def test_a_create_carries_the_acl_list_it_was_given() -> None:
    acls = CREATOR_ALL_ACL + READ_ACL_UNSAFE
    body = _wire.create("/a", b"d", _wire.encode_acls(acls), ephemeral=True).body
    expected_acls = (
        struct.pack("!i", 2)
        + struct.pack("!ii", ALL, 4)
        + b"auth"
        + struct.pack("!i", 0)
        + struct.pack("!ii", READ, 5)
        + b"world"
        + struct.pack("!i", 6)
        + b"anyone"
    )
    assert body == struct.pack("!i", 2) + b"/a" + struct.pack("!i", 1) + b"d" + expected_acls + struct.pack(
        "!i", 1
    )
    assert _wire.encode_acls(OPEN_ACL_UNSAFE) == _wire.OPEN_ACL


def test_a_get_acl_reply_decodes_to_acls_and_stat() -> None:
    stat = struct.pack("!qqqqiiiqiiq", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
    reply = _wire.encode_acls([Acl(ALL, "sasl", "kafka"), Acl(READ, "world", "anyone")]) + stat
    acls, stat_tuple = _wire.decode_reply(_wire.GET_ACL, reply)
    assert acls == [Acl(ALL, "sasl", "kafka"), Acl(READ, "world", "anyone")]
    assert stat_tuple[2] == 3
    assert str(acls[0]) == "sasl:kafka:cdrwa"


def test_a_set_acl_carries_the_acl_list_and_the_acl_version_and_its_reply_is_the_stat() -> None:
    request = _wire.set_acl("/a", OPEN_ACL_UNSAFE, 7)
    assert request.opcode == 7  # ZooDefs.OpCode.setACL
    assert request.body == struct.pack("!i", 2) + b"/a" + _wire.OPEN_ACL + struct.pack("!i", 7)
    stat_tuple = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
    decoded = _wire.decode_reply(_wire.SET_ACL, struct.pack("!qqqqiiiqiiq", *stat_tuple))
    assert decoded == stat_tuple
    assert (
        stat(decoded).aversion == 7
    )  # ZooKeeper's stat: czxid, mzxid, ctime, mtime, version, cversion, aversion
    assert (stat(decoded).version, stat(decoded).cversion) == (5, 6)


def test_a_who_am_i_reply_is_the_sessions_ids() -> None:
    assert _wire.who_am_i().serialize(3) == struct.pack("!ii", 3, 107)  # no body
    reply = struct.pack("!i", 2)
    for text in ("ip", "127.0.0.1", "sasl", "kafka"):
        reply += struct.pack("!i", len(text)) + text.encode()
    assert _wire.decode_reply(_wire.WHO_AM_I, reply) == [("ip", "127.0.0.1"), ("sasl", "kafka")]


def test_a_sasl_reply_is_the_servers_token_or_none() -> None:
    assert _wire.decode_reply(_wire.SASL, struct.pack("!i", 3) + b"abc") == b"abc"
    assert _wire.decode_reply(_wire.SASL, struct.pack("!i", -1)) is None
    assert _wire.sasl(b"tok").serialize(7) == struct.pack("!iii", 7, 102, 3) + b"tok"

"""Which failures resign and which refuse (controller/effects/failures.py)."""

from __future__ import annotations

from reassignd.controller.effects.failures import Failure, classify, describe
from reassignd.errors import NotController
from reassignd.executor.journal import JournalTooLarge
from reassignd.zk.codec import CodecError
from reassignd.zk.errors import (
    BadArgumentsError,
    BadVersionError,
    ConnectionLostError,
    InvalidAclError,
    MultiFailedError,
    NoAuthError,
    NodeExistsError,
    NoNodeError,
    ZkError,
    ZkTimeoutError,
    ZnodeTooLargeError,
)


def test_an_unknown_outcome_resigns() -> None:
    for error in (
        ConnectionLostError("dropped", "/brokers/topics/t"),
        ZkTimeoutError("no reply within 10 s"),
        TimeoutError(),
        ZkError("ZooKeeper answered OPERATIONTIMEOUT", None, -7),
        ZkError("ZooKeeper answered SYSTEMERROR", None, -1),
        MultiFailedError(0, ConnectionLostError("dropped", "/x")),
    ):
        assert classify(error) is Failure.UNKNOWN, error


def test_a_failed_fence_follows_the_winner() -> None:
    assert classify(NotController("fence failed")) is Failure.FENCED


def test_what_the_next_controller_would_meet_again_is_deterministic() -> None:
    for error in (
        ZnodeTooLargeError("data of 2000000 bytes for /brokers/topics/t", "/brokers/topics/t"),
        NoNodeError("ZooKeeper answered NONODE for /admin/delete_topics", "/admin/delete_topics", -101),
        MultiFailedError(1, NodeExistsError("NODEEXISTS", "/a", -110)),
        MultiFailedError(0, BadVersionError("BADVERSION", "/a", -103)),
        BadArgumentsError("ZooKeeper answered BADARGUMENTS for /config/users/.", "/config/users/.", -8),
        CodecError("not JSON"),
        JournalTooLarge("journal head of 2 MiB"),
        KeyError("orders"),
        AssertionError(),
    ):
        assert classify(error) is Failure.DETERMINISTIC, error


def test_a_refusal_names_the_znode_and_why() -> None:
    refusal = describe(MultiFailedError(0, ZnodeTooLargeError("data of 2000000 bytes", "/brokers/topics/t")))
    assert refusal.path == "/brokers/topics/t"
    assert "2000000 bytes" in refusal.reason
    assert not refusal.bug
    bug = describe(KeyError("orders"))
    assert bug.bug and bug.path is None and "KeyError" in bug.reason


def test_an_acl_refusal_is_deterministic_and_says_whose() -> None:
    noauth = NoAuthError(
        "ZooKeeper answered NOAUTH for /brokers/topics/t/partitions", "/brokers/topics/t/partitions", -102
    )
    for error in (noauth, MultiFailedError(0, noauth), InvalidAclError("INVALIDACL", "/a", -114)):
        assert classify(error) is Failure.DETERMINISTIC, error
    refusal = describe(MultiFailedError(0, noauth))
    assert refusal.path == "/brokers/topics/t/partitions" and "another ZooKeeper principal" in refusal.reason

"""SASL DIGEST-MD5's client side against RFC 2831's worked example (section 4) and its refusals."""

from __future__ import annotations

import pytest

from reassignd.zk.digest_md5 import DigestMd5Client, SaslError, parse_challenge, parse_directives

# RFC 2831, section 4: user "chris", password "secret", IMAP at elwood.innosoft.com
RFC_CHALLENGE = (
    b'realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8'
)
RFC_CNONCE = "OA6MHXh6VqTrRk"
RFC_RESPONSE = "d388dad90d4bbd760a152321f2143af7"
RFC_RSPAUTH = b"rspauth=ea40f60335c427b5527b84dbabcdfffd"


def rfc_client(password: str = "secret") -> DigestMd5Client:
    return DigestMd5Client(
        "chris", password, service="imap", server_name="elwood.innosoft.com", cnonce=RFC_CNONCE
    )


def test_the_response_is_rfc_2831s() -> None:
    client = rfc_client()
    response = parse_directives(client.respond(RFC_CHALLENGE))
    assert response["response"] == RFC_RESPONSE
    assert response["username"] == "chris"
    assert response["realm"] == "elwood.innosoft.com"
    assert response["nonce"] == "OA6MG9tEQGm2hh"
    assert response["cnonce"] == RFC_CNONCE
    assert response["nc"] == "00000001"
    assert response["digest-uri"] == "imap/elwood.innosoft.com"
    assert response["qop"] == "auth"
    assert response["charset"] == "utf-8"


def test_the_servers_rspauth_is_verified() -> None:
    client = rfc_client()
    client.respond(RFC_CHALLENGE)
    assert not client.complete
    client.verify(RFC_RSPAUTH)
    assert client.complete


def test_a_wrong_password_gives_another_response_and_refuses_the_servers_rspauth() -> None:
    client = rfc_client("Secret")
    assert parse_directives(client.respond(RFC_CHALLENGE))["response"] != RFC_RESPONSE
    with pytest.raises(SaslError, match="rspauth does not match"):
        client.verify(RFC_RSPAUTH)
    assert not client.complete


def test_zookeepers_digest_uri_and_realm_are_the_defaults() -> None:
    client = DigestMd5Client("kafka", "pw", cnonce="c")
    response = parse_directives(client.respond(b'nonce="n",algorithm=md5-sess,charset=utf-8'))
    assert response["digest-uri"] == "zookeeper/zk-sasl-md5"
    assert response["realm"] == "zk-sasl-md5"  # no realm offered: the server name


def test_quoted_values_keep_escapes_and_commas() -> None:
    assert parse_directives(b'a="x\\"y,z",b=2, c = "" ') == {"a": 'x"y,z', "b": "2", "c": ""}


@pytest.mark.parametrize(
    ("challenge", "reason"),
    [
        (b'realm="r",algorithm=md5-sess', "no nonce"),
        (b'nonce="n",algorithm=md5', "not md5-sess"),
        (b'nonce="n",algorithm=md5-sess,qop="auth-conf"', "only auth"),
        (b'nonce="n,algorithm=md5-sess', "unterminated"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_an_unusable_challenge_is_refused_with_the_reason(challenge: bytes, reason: str) -> None:
    with pytest.raises(SaslError, match=reason):
        DigestMd5Client("u", "p").respond(challenge)


def test_several_offered_qops_are_accepted_when_auth_is_one() -> None:
    assert parse_challenge(b'nonce="n",qop="auth,auth-int",algorithm=md5-sess').qops == ("auth", "auth-int")


def test_the_password_is_never_in_the_repr() -> None:
    assert "hunter2" not in repr(DigestMd5Client("u", "hunter2"))


def test_verify_before_respond_is_refused() -> None:
    with pytest.raises(SaslError, match="before its challenge"):
        DigestMd5Client("u", "p").verify(RFC_RSPAUTH)

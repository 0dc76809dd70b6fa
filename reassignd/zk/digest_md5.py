"""The client side of SASL DIGEST-MD5 (RFC 2831), as ZooKeeper's ``DigestLoginModule`` expects it.

ZooKeeper's server runs Java's DIGEST-MD5 server with protocol ``zookeeper`` and server name
``zk-sasl-md5``: it offers the realm ``zk-sasl-md5`` and checks the digest-uri
``zookeeper/zk-sasl-md5``. Only the ``auth`` quality of protection is spoken (no integrity or
confidentiality layer: ZooKeeper's default, and what Kafka's brokers use). Pure: bytes in, bytes
out; the nonce of the client is given (a test gives RFC 2831's) or drawn from ``secrets``.

The exchange, as ZooKeeper's Java client runs it: the client sends an empty token, the server
answers with its challenge, the client answers with :meth:`DigestMd5Client.respond`, the server
answers ``rspauth=...`` which :meth:`DigestMd5Client.verify` checks (the server proves it knows the
password too). A refusal raises :class:`SaslError` with the reason.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

ZOOKEEPER_SERVICE = "zookeeper"
ZOOKEEPER_SERVER_NAME = "zk-sasl-md5"
_QOP = "auth"
_NONCE_COUNT = "00000001"


class SaslError(Exception):
    """The server's challenge or final answer cannot be accepted (the reason says why)."""


@dataclass(frozen=True, slots=True)
class Challenge:
    realm: str | None
    nonce: str
    qops: tuple[str, ...]
    utf8: bool  # charset=utf-8: names and password hashed as ISO 8859-1 when they fit, else UTF-8


def parse_directives(token: bytes) -> dict[str, str]:
    """``key=value,key="quoted, \\"escaped\\""`` → a dict (keys lower-cased). A repeated key keeps
    its first value but ``realm``'s, where several may be offered (the first is used). Raises
    SaslError on malformed input."""
    try:
        text = token.decode("utf-8")
    except UnicodeDecodeError:
        raise SaslError("the server's SASL token is not UTF-8") from None
    out: dict[str, str] = {}
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " \t,":
            i += 1
        if i >= n:
            break
        eq = text.find("=", i)
        if eq < 0:
            raise SaslError(f"malformed SASL directive at {text[i : i + 20]!r}")
        key = text[i:eq].strip().lower()
        i = eq + 1
        while i < n and text[i] in " \t":
            i += 1
        if i < n and text[i] == '"':
            i += 1
            chars: list[str] = []
            while True:
                if i >= n:
                    raise SaslError(f"unterminated quoted value of {key!r}")
                char = text[i]
                if char == "\\" and i + 1 < n:
                    chars.append(text[i + 1])
                    i += 2
                    continue
                if char == '"':
                    i += 1
                    break
                chars.append(char)
                i += 1
            value = "".join(chars)
        else:
            end = text.find(",", i)
            end = n if end < 0 else end
            value = text[i:end].strip()
            i = end
        out.setdefault(key, value)
    return out


def parse_challenge(token: bytes) -> Challenge:
    directives = parse_directives(token)
    nonce = directives.get("nonce")
    if not nonce:
        raise SaslError("the server's DIGEST-MD5 challenge has no nonce")
    algorithm = directives.get("algorithm")
    if algorithm != "md5-sess":
        raise SaslError(f"the server's DIGEST-MD5 challenge asks algorithm {algorithm!r}, not md5-sess")
    qops = tuple(q.strip() for q in directives.get("qop", _QOP).split(",") if q.strip())
    if _QOP not in qops:
        raise SaslError(f"the server offers qop {','.join(qops)}; only auth is supported")
    charset = directives.get("charset")
    return Challenge(directives.get("realm"), nonce, qops, charset is not None and charset.lower() == "utf-8")


def _encode(value: str, utf8: bool) -> bytes:
    """RFC 2831 2.1.2.1: with charset=utf-8, a string that fits ISO 8859-1 is hashed as such."""
    if utf8:
        try:
            return value.encode("iso-8859-1")
        except UnicodeEncodeError:
            return value.encode("utf-8")
    return value.encode("iso-8859-1")


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _md5(data: bytes) -> bytes:
    return hashlib.md5(data, usedforsecurity=False).digest()


def _hex(data: bytes) -> str:
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


@dataclass(frozen=True, slots=True)
class _Answered:
    a1: bytes  # H(user:realm:password):nonce:cnonce
    digest_uri: str
    nonce: str
    cnonce: str


class DigestMd5Client:
    """One authentication: :meth:`respond` to the challenge, then :meth:`verify` the server's
    answer. ``complete`` once verified."""

    def __init__(
        self,
        user: str,
        password: str,
        *,
        service: str = ZOOKEEPER_SERVICE,
        server_name: str = ZOOKEEPER_SERVER_NAME,
        cnonce: str | None = None,
    ) -> None:
        self.user = user
        self._password = password
        self.digest_uri = f"{service}/{server_name}"
        self._default_realm = server_name
        self._cnonce = cnonce or secrets.token_urlsafe(24)
        self._answered: _Answered | None = None
        self.complete = False

    def __repr__(self) -> str:  # never the password
        return f"DigestMd5Client(user={self.user!r}, digest_uri={self.digest_uri!r})"

    def respond(self, challenge_token: bytes) -> bytes:
        """The response to the server's challenge (RFC 2831 2.1.2)."""
        if self._answered is not None:
            raise SaslError("a second DIGEST-MD5 challenge in one authentication")
        challenge = parse_challenge(challenge_token)
        realm = challenge.realm if challenge.realm is not None else self._default_realm
        utf8 = challenge.utf8
        secret = _md5(
            _encode(self.user, utf8) + b":" + _encode(realm, utf8) + b":" + _encode(self._password, utf8)
        )
        a1 = secret + f":{challenge.nonce}:{self._cnonce}".encode()
        a2 = f"AUTHENTICATE:{self.digest_uri}".encode()
        response = _kd(a1, challenge.nonce, self._cnonce, _hex(a2))
        self._answered = _Answered(a1, self.digest_uri, challenge.nonce, self._cnonce)
        parts = []
        if utf8:
            parts.append("charset=utf-8")
        parts += [
            f"username={_quote(self.user)}",
            f"realm={_quote(realm)}",
            f"nonce={_quote(challenge.nonce)}",
            f"nc={_NONCE_COUNT}",
            f"cnonce={_quote(self._cnonce)}",
            f"digest-uri={_quote(self.digest_uri)}",
            "maxbuf=65536",
            f"response={response}",
            f"qop={_QOP}",
        ]
        return ",".join(parts).encode("utf-8")

    def verify(self, final_token: bytes) -> None:
        """Check the server's ``rspauth`` (RFC 2831 2.1.3): it proves the server knows the password."""
        answered = self._answered
        if answered is None:
            raise SaslError("the server's final DIGEST-MD5 answer came before its challenge")
        rspauth = parse_directives(final_token).get("rspauth")
        if rspauth is None:
            raise SaslError("the server's final DIGEST-MD5 answer has no rspauth")
        expected = _kd(answered.a1, answered.nonce, answered.cnonce, _hex(f":{answered.digest_uri}".encode()))
        if not secrets.compare_digest(rspauth.lower(), expected):
            raise SaslError("the server's rspauth does not match: it does not know this password")
        self.complete = True


def _kd(a1: bytes, nonce: str, cnonce: str, hex_a2: str) -> str:
    """HEX(KD(HEX(H(A1)), nonce:nc:cnonce:qop:HEX(H(A2))))."""
    return _hex(f"{_hex(a1)}:{nonce}:{_NONCE_COUNT}:{cnonce}:{_QOP}:{hex_a2}".encode())

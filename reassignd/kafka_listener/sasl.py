"""SASL/PLAIN over the Kafka listener (RFC 4616), against the tokens file: username = the user,
password = the token. Pure.

A connection of a listener with a tokens file must authenticate before anything but ApiVersions
and the SASL requests (Kafka closes it otherwise); without a tokens file every connection is the
anonymous admin and SASL is not offered.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass

from reassignd.tokens import Principal

MECHANISM = "PLAIN"


@dataclass(frozen=True, slots=True)
class AuthFailure:
    message: str


def parse_plain(auth_bytes: bytes) -> tuple[str, str, str] | None:
    """``authzid NUL authcid NUL passwd`` → (authzid, user, password); None when malformed."""
    parts = auth_bytes.split(b"\x00")
    if len(parts) != 3:
        return None
    try:
        authzid, user, password = (p.decode("utf-8") for p in parts)
    except UnicodeDecodeError:
        return None
    if not user or not password:
        return None
    return authzid, user, password


def authenticate_plain(tokens: Mapping[str, Principal], auth_bytes: bytes) -> Principal | AuthFailure:
    """The principal of a PLAIN exchange, or why it failed (one message for every failure that
    involves a credential, so a probe learns nothing about which users exist)."""
    parsed = parse_plain(auth_bytes)
    if parsed is None:
        return AuthFailure("Invalid SASL/PLAIN request: expected authzid NUL user NUL password")
    authzid, user, password = parsed
    if authzid and authzid != user:
        return AuthFailure("Authentication failed: authorization id must be empty or equal the user name")
    found: Principal | None = None
    for token, principal in tokens.items():  # every token compared, in constant time each
        if hmac.compare_digest(token.encode(), password.encode()) and principal.user == user:
            found = principal
    if found is None:
        return AuthFailure("Authentication failed: Invalid username or password")
    return found

"""Bearer-token authentication of the HTTP API over the tokens file and roles of
:mod:`reassignd.tokens` (pure).

The tokens file is TOML, one table per token::

    [tokens."s3cr3t"]
    user = "alice"
    role = "admin"      # or "viewer"

``viewer`` may DESCRIBE the cluster (every GET); ``admin`` may ALTER it (everything). Without a
tokens file every caller is ``ANONYMOUS`` with the ``admin`` role — allowed only while the server
is bound to loopback (see :func:`check_bind`).
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from reassignd.errors import ClusterAuthorizationFailed
from reassignd.tokens import (
    ANONYMOUS,
    Principal,
    Role,
    TokensFileError,
    check_bind,
    is_loopback,
    load_tokens,
    parse_tokens,
)

__all__ = [
    "ANONYMOUS",
    "AuthenticationFailed",
    "Principal",
    "Role",
    "TokensFileError",
    "authenticate",
    "authorize",
    "bearer_token",
    "check_bind",
    "is_loopback",
    "load_tokens",
    "parse_tokens",
    "required_role",
]

# health, metrics, and the status page's files (they hold no data: the page reads the API with a token)
PUBLIC_PATHS = frozenset({"/healthz", "/readyz", "/metrics", "/", "/ui/app.js", "/ui/style.css"})
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class AuthenticationFailed(ClusterAuthorizationFailed):
    """Missing or unknown bearer token: HTTP 401 (a known token without the right is 403)."""


def required_role(method: str, path: str) -> Role | None:
    """The role a request needs; None for the public health and metrics endpoints."""
    if path in PUBLIC_PATHS:
        return None
    return Role.VIEWER if method in READ_METHODS else Role.ADMIN


def bearer_token(authorization: str | None) -> str | None:
    if authorization is None:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def authenticate(tokens: Mapping[str, Principal] | None, authorization: str | None) -> Principal:
    """The caller's principal; raises :class:`AuthenticationFailed` for a missing/unknown token."""
    if tokens is None:
        return ANONYMOUS
    token = bearer_token(authorization)
    if token is None:
        raise AuthenticationFailed("missing bearer token (Authorization: Bearer <token>)")
    found: Principal | None = None
    for known, principal in tokens.items():  # compare with every token, in constant time each
        if hmac.compare_digest(known.encode(), token.encode()):
            found = principal
    if found is None:
        raise AuthenticationFailed("unknown bearer token")
    return found


def authorize(principal: Principal, needed: Role) -> None:
    if not principal.may(needed):
        operation = "ALTER" if needed is Role.ADMIN else "DESCRIBE"
        raise ClusterAuthorizationFailed(
            f"user {principal.user} ({principal.role.value}) is not authorized to {operation} the cluster"
        )

"""Bearer-token authentication and the two roles of the HTTP API (viewer, admin) (pure, plus one file loader).

The tokens file is TOML, one table per token::

    [tokens."s3cr3t"]
    user = "alice"
    role = "admin"      # or "viewer"

``viewer`` may DESCRIBE the cluster (every GET); ``admin`` may ALTER it (everything). Without a
tokens file every caller is ``ANONYMOUS`` with the ``admin`` role — allowed only while the server
is bound to loopback (see :func:`check_bind`).
"""

from __future__ import annotations

import enum
import hmac
import ipaddress
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from reassignd.errors import ClusterAuthorizationFailed

# health, metrics, and the status page's files (they hold no data: the page reads the API with a token)
PUBLIC_PATHS = frozenset({"/healthz", "/readyz", "/metrics", "/", "/ui/app.js", "/ui/style.css"})
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class Role(enum.Enum):
    VIEWER = "viewer"  # DESCRIBE on the cluster
    ADMIN = "admin"  # ALTER on the cluster (implies DESCRIBE)


@dataclass(frozen=True, slots=True)
class Principal:
    user: str
    role: Role

    def may(self, needed: Role) -> bool:
        return self.role is Role.ADMIN or needed is Role.VIEWER


ANONYMOUS = Principal("ANONYMOUS", Role.ADMIN)


class TokensFileError(ValueError):
    """The tokens file is missing, unreadable or malformed; the message says which, in one line."""


class AuthenticationFailed(ClusterAuthorizationFailed):
    """Missing or unknown bearer token: HTTP 401 (a known token without the right is 403)."""


def parse_tokens(text: str, source: str = "tokens file") -> dict[str, Principal]:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise TokensFileError(f"{source}: invalid TOML: {e}") from None
    tables = doc.get("tokens")
    if not isinstance(tables, dict) or not tables:
        raise TokensFileError(f'{source}: expected at least one [tokens."<token>"] table')
    tokens: dict[str, Principal] = {}
    for token, entry in tables.items():
        where = f'{source}: [tokens."{token[:4]}..."]'
        if not token:
            raise TokensFileError(f"{source}: empty token")
        if not isinstance(entry, dict):
            raise TokensFileError(f"{where} must be a table")
        user = entry.get("user")
        role = entry.get("role")
        if not isinstance(user, str) or not user:
            raise TokensFileError(f"{where}: 'user' must be a non-empty string")
        if role not in ("viewer", "admin"):
            raise TokensFileError(f'{where}: \'role\' must be "viewer" or "admin"')
        unknown = sorted(set(entry) - {"user", "role"})
        if unknown:
            raise TokensFileError(f"{where}: unknown key {unknown[0]!r}")
        tokens[token] = Principal(user, Role(role))
    return tokens


def load_tokens(path: str | Path) -> dict[str, Principal]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise TokensFileError(f"cannot read tokens file {path}: {e.strerror or e}") from None
    return parse_tokens(text, str(path))


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, has_tokens: bool) -> str | None:
    """Why binding ``host`` is refused (a one-line reason), or None when it is allowed."""
    if has_tokens or is_loopback(host):
        return None
    return (
        f"refusing to bind {host} without --auth-tokens: without a tokens file every caller is "
        "an anonymous admin, which is allowed only on loopback (127.0.0.1, ::1, localhost)"
    )


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

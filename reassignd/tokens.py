"""The tokens file and the two roles (viewer, admin) every listener authenticates against. Pure,
plus one file loader; shared by the HTTP API (bearer tokens) and the Kafka listener (SASL/PLAIN:
username = user, password = token).

The tokens file is TOML, one table per token::

    [tokens."s3cr3t"]
    user = "alice"
    role = "admin"      # or "viewer"

``viewer`` may DESCRIBE the cluster; ``admin`` may ALTER it (everything). Without a tokens file
every caller is ``ANONYMOUS`` with the ``admin`` role — allowed only while a listener is bound to
loopback (see :func:`check_bind`).
"""

from __future__ import annotations

import enum
import ipaddress
import tomllib
from dataclasses import dataclass
from pathlib import Path


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


WILDCARDS = frozenset({"0.0.0.0", "::", "[::]", ""})


def is_wildcard(host: str) -> bool:
    """A bind on every interface: its address means nothing to a client, which must be told
    another one (``--http-advertised``, ``--kafka-advertised``)."""
    return host in WILDCARDS


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

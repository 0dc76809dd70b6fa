"""How a process authenticates to ZooKeeper and which ACLs its znodes get: the ``--zk-sasl-*``,
``--zk-jaas-config`` and ``--zk-set-acl`` options every role that talks to ZooKeeper shares
(controller, broker agents, ``cluster``, ``admin``), declared once here.

The credentials come from ``--zk-sasl-user`` with the password in ``--zk-sasl-password-file``
(its first line), the variable ``REASSIGND_ZK_SASL_PASSWORD`` or the config file's
``zk-sasl-password``; or from ``--zk-jaas-config``: the ``Client`` section of the JAAS file a Kafka
cluster already has (``DigestLoginModule`` with ``username`` and ``password``). Reading the files
(:meth:`ZkSecurity.credentials`) raises ValueError with a one-line reason, never the password.
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from reassignd.options import boolean, build, option, options_of, text
from reassignd.tls import ClientTls
from reassignd.zk.values import SaslCredentials, ZkSettings

JAAS_CLIENT_SECTION = "Client"  # Kafka's zookeeper.sasl.clientconfig default
_DIGEST_MODULE = "org.apache.zookeeper.server.auth.DigestLoginModule"


@dataclass(frozen=True, slots=True)
class ZkSecurity:
    zk_sasl_user: str | None = option(
        None,
        parse=text,
        help="authenticate to ZooKeeper with SASL DIGEST-MD5 as this user (the JAAS Client "
        "section's username)",
        metavar="USER",
    )
    zk_sasl_password_file: str | None = option(
        None, parse=text, help="file whose first line is --zk-sasl-user's password", metavar="FILE"
    )
    zk_sasl_password: str | None = option(
        None,
        parse=text,
        help="--zk-sasl-user's password: give it as REASSIGND_ZK_SASL_PASSWORD or in the config "
        "file (a flag shows in the process list)",
        metavar="PASSWORD",
        secret=True,
    )
    zk_jaas_config: str | None = option(
        None,
        parse=text,
        help="JAAS file whose Client section (DigestLoginModule username and password) "
        "authenticates to ZooKeeper, as Kafka's brokers do",
        metavar="FILE",
    )
    zk_set_acl: bool = option(
        False,
        parse=boolean,
        switch=True,
        help="the znodes this process creates get Kafka's ACLs (zookeeper.set.acl): all for the "
        "authenticated user, read for anyone, none for anyone under /config/users, "
        "/config/brokers and /delegation_token/tokens; needs SASL credentials",
    )

    zk_tls_ca: str | None = option(
        None,
        parse=text,
        help="connect to ZooKeeper over TLS (its secureClientPort), verifying the server's "
        "certificate and host name against this PEM CA file",
        metavar="FILE",
    )
    zk_tls_cert: str | None = option(
        None,
        parse=text,
        help="PEM client certificate presented to ZooKeeper over TLS (ZooKeeper's x509 scheme); "
        "without --zk-tls-ca the system's CAs verify the server",
        metavar="FILE",
    )
    zk_tls_key: str | None = option(None, parse=text, help="PEM private key of --zk-tls-cert", metavar="FILE")

    def __post_init__(self) -> None:
        if (self.zk_tls_cert is None) != (self.zk_tls_key is None):
            raise ValueError("give both --zk-tls-cert and --zk-tls-key, or neither")
        password_given = self.zk_sasl_password is not None or self.zk_sasl_password_file is not None
        if self.zk_jaas_config is not None and (self.zk_sasl_user is not None or password_given):
            raise ValueError("give --zk-jaas-config or --zk-sasl-user with a password, not both")
        if self.zk_sasl_password is not None and self.zk_sasl_password_file is not None:
            raise ValueError("give --zk-sasl-password-file or REASSIGND_ZK_SASL_PASSWORD, not both")
        if self.zk_sasl_user is not None and not password_given:
            raise ValueError(
                "--zk-sasl-user needs a password: --zk-sasl-password-file or REASSIGND_ZK_SASL_PASSWORD"
            )
        if self.zk_sasl_user is None and password_given:
            raise ValueError("a ZooKeeper SASL password without --zk-sasl-user")
        if self.zk_set_acl and self.zk_sasl_user is None and self.zk_jaas_config is None:
            raise ValueError(
                "--zk-set-acl needs SASL credentials (--zk-sasl-user or --zk-jaas-config): "
                "ZooKeeper gives a creator's ACL only to an authenticated session"
            )

    def credentials(self) -> SaslCredentials | None:
        """The SASL identity, files read now; None when the sessions are anonymous. Raises
        ValueError (one line) for a file that cannot be read or says no user and password."""
        if self.zk_jaas_config is not None:
            return jaas_client_credentials(
                _read(self.zk_jaas_config, "--zk-jaas-config"), self.zk_jaas_config
            )
        if self.zk_sasl_user is None:
            return None
        if self.zk_sasl_password_file is not None:
            lines = _read(self.zk_sasl_password_file, "--zk-sasl-password-file").splitlines()
            password = lines[0] if lines else ""
            if not password:
                raise ValueError(
                    f"--zk-sasl-password-file {self.zk_sasl_password_file}: the first line is empty"
                )
        else:
            assert self.zk_sasl_password is not None
            password = self.zk_sasl_password
        return SaslCredentials(self.zk_sasl_user, password)

    def tls(self) -> ClientTls | None:
        """TLS to ZooKeeper (None: in clear). The files are loaded when a client starts."""
        if self.zk_tls_ca is None and self.zk_tls_cert is None:
            return None
        return ClientTls(self.zk_tls_ca, self.zk_tls_cert, self.zk_tls_key)

    def tls_problem(self) -> str | None:
        """Why the TLS files cannot be used (one line), or None."""
        tls = self.tls()
        if tls is None:
            return None
        try:
            tls.context()
        except (OSError, ssl.SSLError) as e:
            named = [
                ("--zk-tls-ca", self.zk_tls_ca),
                ("--zk-tls-cert", self.zk_tls_cert),
                ("--zk-tls-key", self.zk_tls_key),
            ]
            files = ", ".join(f"{flag} {path}" for flag, path in named if path is not None)
            return f"cannot load the ZooKeeper TLS files ({files}): {e}"
        return None

    def zk_settings(
        self, connect: str, session_timeout_s: float, request_timeout_s: float, *, role: str
    ) -> ZkSettings:
        """A ZooKeeper client's settings for ``connect`` with these credentials and ACL mode."""
        return ZkSettings(
            connect,
            session_timeout_s,
            request_timeout_s,
            role=role,
            sasl=self.credentials(),
            set_acl=self.zk_set_acl,
            tls=self.tls(),
        )


NO_SECURITY = ZkSecurity()
OPTIONS = options_of(ZkSecurity)


def zk_security(values: Mapping[str, object]) -> ZkSecurity:
    """The options' merged values (keyed by flag) → ZkSecurity (ValueError for a bad combination)."""
    return build(ZkSecurity, OPTIONS, values)


def _read(path: str, flag: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise ValueError(f"{flag} {path}: cannot read it: {reason}") from None


def jaas_client_credentials(
    document: str, source: str = "JAAS file", section: str = JAAS_CLIENT_SECTION
) -> SaslCredentials:
    """The ``username`` and ``password`` of the ``DigestLoginModule`` in ``section`` of a JAAS
    configuration. Raises ValueError naming what is missing (Kerberos is not supported yet)."""
    sections = _jaas_sections(document, source)
    entries = sections.get(section)
    if entries is None:
        raise ValueError(f"{source}: no {section} section")
    for module, found in entries:
        if module == _DIGEST_MODULE:
            user, password = found.get("username"), found.get("password")
            if not user or password is None:
                raise ValueError(
                    f"{source}: the {section} section's DigestLoginModule needs username and password"
                )
            return SaslCredentials(user, password)
        if "Krb5LoginModule" in module:
            raise ValueError(
                f"{source}: the {section} section is Kerberos; only DigestLoginModule is supported"
            )
    raise ValueError(f"{source}: the {section} section has no {_DIGEST_MODULE}")


_TOKEN = re.compile(r'\s+|/\*.*?\*/|//[^\n]*|#[^\n]*|"((?:[^"\\]|\\.)*)"|([{};=])|([^\s{};="]+)', re.S)
_Entry = tuple[str, dict[str, str]]  # login module class, its options


def _jaas_sections(document: str, source: str) -> dict[str, list[_Entry]]:
    """``Name { module flag key=value ...; ... };`` → {name: [(module, options), ...]}."""
    tokens: list[tuple[str, str]] = []  # (kind, text): "q" quoted, "p" punctuation, "w" word
    for match in _TOKEN.finditer(document):
        quoted, punct, word = match.groups()
        if quoted is not None:
            tokens.append(("q", re.sub(r"\\(.)", r"\1", quoted)))
        elif punct is not None:
            tokens.append(("p", punct))
        elif word is not None:
            tokens.append(("w", word))
    sections: dict[str, list[_Entry]] = {}
    i = 0

    def expect(kind: str, text: str | None = None) -> str:
        nonlocal i
        if i >= len(tokens) or tokens[i][0] != kind or (text is not None and tokens[i][1] != text):
            got = tokens[i][1] if i < len(tokens) else "the end"
            raise ValueError(f"{source}: not a JAAS configuration (unexpected {got!r})")
        i += 1
        return tokens[i - 1][1]

    while i < len(tokens):
        name = expect("w")
        expect("p", "{")
        entries: list[_Entry] = []
        while tokens[i : i + 1] != [("p", "}")]:
            module = expect("w")
            expect("w")  # required, requisite, sufficient, optional
            options: dict[str, str] = {}
            while tokens[i : i + 1] != [("p", ";")]:
                key = expect("w")
                expect("p", "=")
                if i < len(tokens) and tokens[i][0] in ("q", "w"):
                    options[key] = tokens[i][1]
                    i += 1
                else:
                    expect("q")
            expect("p", ";")
            entries.append((module, options))
        expect("p", "}")
        expect("p", ";")
        sections[name] = entries
    return sections

"""The HTTP API's listener settings checked at the edge (exit 2 with a one-line reason), its TLS
context and the URL it advertises. The settings are fields of ``ControllerSettings``
(``--http``, ``--http-advertised``, ``--tls-*``)."""

from __future__ import annotations

import ssl

from reassignd.controller.settings import ControllerSettings
from reassignd.tls import server_context
from reassignd.tokens import check_bind, is_wildcard


def http_listener_problem(settings: ControllerSettings) -> str | None:
    """Why the HTTP listener's settings are refused, or None."""
    refusal = check_bind(settings.http_host, has_tokens=settings.auth_tokens_path is not None)
    if refusal is not None:
        return refusal
    if is_wildcard(settings.http_host) and settings.http_advertised is None:
        return (
            f"--http {settings.http_host or '*'}:{settings.http_port} binds every interface: give "
            "--http-advertised URL, the address other instances and clients reach this one at "
            "(it goes into /controller and every 41 NOT_CONTROLLER answer)"
        )
    if (settings.tls_cert is None) != (settings.tls_key is None):
        return "give both --tls-cert and --tls-key, or neither"
    if settings.tls_client_ca is not None and settings.tls_cert is None:
        return "--tls-client-ca (mutual TLS) needs --tls-cert and --tls-key"
    advertised = settings.http_advertised
    if advertised is not None:
        scheme = "https" if settings.tls_cert is not None else "http"
        if not advertised.startswith(f"{scheme}://"):
            served = "HTTPS (--tls-cert)" if scheme == "https" else "plain HTTP (no --tls-cert)"
            return f"--http-advertised {advertised}: this instance serves {served}, so give a {scheme}:// URL"
    return None


def http_tls_context(settings: ControllerSettings) -> ssl.SSLContext | None:
    """The HTTP API's server-side TLS context, or None without TLS; raises OSError/ssl.SSLError."""
    if settings.tls_cert is None or settings.tls_key is None:
        return None
    return server_context(settings.tls_cert, settings.tls_key, settings.tls_client_ca)


def http_tls_problem(settings: ControllerSettings) -> str | None:
    """Why the TLS files cannot be used, checked at start rather than at the first connection."""
    try:
        http_tls_context(settings)
    except (OSError, ssl.SSLError) as e:
        files = ", ".join(
            path for path in (settings.tls_cert, settings.tls_key, settings.tls_client_ca) if path
        )
        return f"--tls-cert/--tls-key/--tls-client-ca: cannot load {files}: {e}"
    return None

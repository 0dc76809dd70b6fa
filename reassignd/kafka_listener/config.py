"""The Kafka listener's settings checked at the edge (exit 2 with a one-line reason) and its TLS
context. The settings themselves are fields of ``ControllerSettings`` (``--kafka-*``)."""

from __future__ import annotations

import ssl

from reassignd.controller.settings import ControllerSettings
from reassignd.tls import server_context
from reassignd.tokens import check_bind, is_wildcard


def kafka_listener_problem(settings: ControllerSettings) -> str | None:
    """Why the Kafka listener's settings are refused, or None."""
    host = settings.kafka_listener_host
    if host is None:
        if settings.kafka_advertised_host is not None:
            return "--kafka-advertised needs --kafka-listener"
        if settings.kafka_tls_cert is not None or settings.kafka_tls_key is not None:
            return "--kafka-tls-cert/--kafka-tls-key need --kafka-listener"
        if settings.kafka_broker_ports is not None:
            return "--kafka-broker-ports needs --kafka-listener"
        return None
    overlap = broker_ports_problem(settings)
    if overlap is not None:
        return overlap
    refusal = check_bind(host, has_tokens=settings.auth_tokens_path is not None)
    if refusal is not None:
        return refusal.replace("refusing to bind", "refusing to bind the Kafka listener on", 1)
    if is_wildcard(host) and settings.kafka_advertised_host is None:
        return f"--kafka-listener {host} is a wildcard: give --kafka-advertised HOST:PORT for clients"
    if settings.kafka_advertised_host is not None and settings.kafka_advertised_port == 0:
        return "--kafka-advertised needs a port other than 0"
    if (settings.kafka_tls_cert is None) != (settings.kafka_tls_key is None):
        return "give both --kafka-tls-cert and --kafka-tls-key, or neither"
    return None


def broker_ports_problem(settings: ControllerSettings) -> str | None:
    """Why ``--kafka-broker-ports`` is refused: a range holding the bootstrap port."""
    ports = settings.kafka_broker_ports
    if ports is None or ports == (0, 0):
        return None
    first, last = ports
    named = [("--kafka-listener", settings.kafka_listener_port)]
    if settings.kafka_advertised_host is not None:
        named.append(("--kafka-advertised", settings.kafka_advertised_port))
    for flag, port in named:
        if first <= port <= last:
            return f"--kafka-broker-ports {first}-{last} holds the {flag} port {port}: give a range apart from it"
    return None


def tls_context(settings: ControllerSettings) -> ssl.SSLContext | None:
    """The server-side TLS context, or None without TLS; raises OSError/ssl.SSLError."""
    if settings.kafka_tls_cert is None or settings.kafka_tls_key is None:
        return None
    return server_context(settings.kafka_tls_cert, settings.kafka_tls_key)


def tls_problem(settings: ControllerSettings) -> str | None:
    """Why the TLS files cannot be used, checked at start rather than at the first connection."""
    try:
        tls_context(settings)
    except (OSError, ssl.SSLError) as e:
        return f"--kafka-tls-cert/--kafka-tls-key: cannot load {settings.kafka_tls_cert}: {e}"
    return None

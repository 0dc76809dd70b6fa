"""``reassignd events tail``: print the records of the controller's event topic, one JSON line
each, until Ctrl-C.

    reassignd events tail --bootstrap-servers HOST:PORT --topic reassignd.events [--from-beginning]

``--max-records N`` and ``--timeout-s S`` stop it after N records or S seconds without one (for
scripts). ``--security-protocol`` and the SASL flags are the controller's ``--events-*`` ones;
TLS (``SSL``, ``SASL_SSL``, implied by ``--ca-file``) always verifies the brokers' certificates,
against ``--ca-file`` or the system's CAs. Every option is also a ``REASSIGND_<FLAG>`` variable and
a key of the ``--config`` file (top level or an ``[events]`` table), as for every subcommand. Exit
0 on a clean stop, 1 when Kafka cannot be reached, 2 for bad arguments.

aiokafka is imported when the tail runs, not when the command line is read.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from reassignd import options as opt
from reassignd.log_setup import LogSettings
from reassignd.options import SWITCH, Option
from reassignd.tls import ClientTls

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
DESCRIPTION = "print the controller's event records"
DEFAULT_TOPIC = "reassignd.events"

TAIL_OPTIONS: tuple[Option, ...] = (
    Option(
        "bootstrap-servers",
        opt.bootstrap,
        "Kafka's bootstrap servers",
        metavar="HOST:PORT[,...]",
        required=True,
    ),
    Option("topic", opt.text, "the event topic", DEFAULT_TOPIC, metavar="TOPIC"),
    Option("from-beginning", opt.boolean, "from the topic's first record, not only new ones", kind=SWITCH),
    Option("max-records", opt.integer(0), "stop after N records", metavar="N"),
    Option("timeout-s", opt.number(0, inclusive=False), "stop after S seconds without a record", metavar="S"),
    Option(
        "security-protocol",
        opt.choice(*(p.lower() for p in PROTOCOLS), upper=True),
        "security protocol to Kafka (default PLAINTEXT, or SSL with --ca-file)",
        metavar="{" + ",".join(PROTOCOLS) + "}",
    ),
    Option(
        "ca-file",
        opt.text,
        "PEM CA file to verify the brokers' TLS certificates (implies SSL)",
        metavar="FILE",
    ),
    Option("sasl-mechanism", opt.text, "SASL mechanism (PLAIN, SCRAM-SHA-256, ...)", metavar="M"),
    Option("sasl-username", opt.text, "SASL user", metavar="USER"),
    Option("sasl-password", opt.text, "SASL password", metavar="PASSWORD"),
)


@dataclass(frozen=True, slots=True)
class TailSettings:
    bootstrap_servers: str
    topic: str = DEFAULT_TOPIC
    from_beginning: bool = False
    max_records: int | None = None
    timeout_s: float | None = None
    security: Mapping[str, Any] = field(default_factory=dict)  # aiokafka's security settings


@dataclass(frozen=True, slots=True)
class EventsTailCommand:
    settings: TailSettings
    log: LogSettings = field(default_factory=lambda: LogSettings(level="warning"))


def security(values: Mapping[str, object]) -> dict[str, Any]:
    """aiokafka's security settings from the merged values; ValueError (one line) for unusable ones."""
    ca_file = values.get("ca-file")
    protocol = values.get("security-protocol") or ("SSL" if ca_file else "PLAINTEXT")
    assert isinstance(protocol, str)
    config: dict[str, Any] = {"security_protocol": protocol}
    if protocol.endswith("SSL"):
        tls = ClientTls(None if ca_file is None else str(ca_file))
        try:
            config["ssl_context"] = tls.context()
        except (OSError, ssl.SSLError) as e:
            raise ValueError(f"--ca-file {ca_file}: cannot load: {e}") from None
    elif ca_file:
        raise ValueError(f"--ca-file needs a TLS protocol (SSL or SASL_SSL), not {protocol}")
    if protocol.startswith("SASL"):
        mechanism, user, password = (
            values.get(f) for f in ("sasl-mechanism", "sasl-username", "sasl-password")
        )
        if not (mechanism and user and password):
            raise ValueError(f"{protocol} needs --sasl-mechanism, --sasl-username and --sasl-password")
        config |= {
            "sasl_mechanism": str(mechanism).upper(),
            "sasl_plain_username": user,
            "sasl_plain_password": password,
        }
    return config


def tail_settings(values: Mapping[str, object]) -> TailSettings:
    """The settings from the merged option values (keyed by flag); ValueError for unusable ones."""
    bootstrap, topic = values["bootstrap-servers"], values.get("topic") or DEFAULT_TOPIC
    max_records, timeout_s = values.get("max-records"), values.get("timeout-s")
    assert isinstance(bootstrap, str) and isinstance(topic, str)
    assert max_records is None or isinstance(max_records, int)
    assert timeout_s is None or isinstance(timeout_s, float)
    return TailSettings(
        bootstrap_servers=bootstrap,
        topic=topic,
        from_beginning=bool(values.get("from-beginning")),
        max_records=max_records,
        timeout_s=timeout_s,
        security=security(values),
    )


async def tail(settings: TailSettings, out: TextIO) -> int:
    from aiokafka import AIOKafkaConsumer  # noqa: PLC0415 (only when tailing)

    consumer = AIOKafkaConsumer(
        settings.topic,
        bootstrap_servers=settings.bootstrap_servers,
        auto_offset_reset="earliest" if settings.from_beginning else "latest",
        enable_auto_commit=False,
        group_id=None,
        request_timeout_ms=10_000,
        **settings.security,
    )
    seen = 0
    try:
        await consumer.start()
        while settings.max_records is None or seen < settings.max_records:
            batches = await consumer.getmany(timeout_ms=int((settings.timeout_s or 3600) * 1000))
            if not batches:
                if settings.timeout_s is not None:
                    break
                continue
            for records in batches.values():
                for record in records:
                    value = record.value.decode() if record.value is not None else "null"
                    print(value, file=out, flush=True)
                    seen += 1
    finally:
        await consumer.stop()
    return 0


def run_tail(settings: TailSettings, out: TextIO, err: TextIO) -> int:
    from aiokafka.errors import KafkaError  # noqa: PLC0415 (only when tailing)

    if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
        # aiokafka logs each failed connection itself; the one line below says it (debug: both)
        logging.getLogger("aiokafka").setLevel(logging.CRITICAL)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            return asyncio.run(tail(settings, out))
    except (KafkaError, OSError) as e:
        print(
            f"reassignd events tail: error: cannot read {settings.topic} from {settings.bootstrap_servers}: {e}",
            file=err,
        )
        return 1
    return 0

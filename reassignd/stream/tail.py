"""``reassignd events tail``: print the records of the controller's event topic, one JSON line
each (with the Kafka partition and offset on stderr at start), until Ctrl-C.

    reassignd events tail --bootstrap-servers HOST:PORT --topic reassignd.events [--from-beginning]

``--max-records N`` and ``--timeout-s S`` stop it after N records or S seconds without one (for
scripts). ``--security-protocol`` and the SASL flags are the controller's ``--events-*`` ones;
TLS (``SSL``, ``SASL_SSL``, implied by ``--ca-file``) always verifies the brokers' certificates,
against ``--ca-file`` or the system's CAs. Exit 0 on a clean stop, 1 when Kafka cannot be reached,
2 for bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ssl
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from aiokafka import AIOKafkaConsumer
from aiokafka.errors import KafkaError

from reassignd.tls import ClientTls

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="reassignd events tail", description="print the controller's event records"
    )
    p.add_argument("--bootstrap-servers", required=True, metavar="HOST:PORT[,...]")
    p.add_argument("--topic", default="reassignd.events")
    p.add_argument(
        "--from-beginning", action="store_true", help="from the topic's first record, not only new ones"
    )
    p.add_argument("--max-records", type=int, default=None, metavar="N", help="stop after N records")
    p.add_argument(
        "--timeout-s", type=float, default=None, metavar="S", help="stop after S seconds without a record"
    )
    p.add_argument(
        "--security-protocol",
        type=str.upper,
        choices=PROTOCOLS,
        default=None,
        help="security protocol to Kafka (default PLAINTEXT, or SSL with --ca-file)",
    )
    p.add_argument(
        "--ca-file", metavar="FILE", help="PEM CA file to verify the brokers' TLS certificates (implies SSL)"
    )
    p.add_argument("--sasl-mechanism", metavar="M", help="SASL mechanism (PLAIN, SCRAM-SHA-256, ...)")
    p.add_argument("--sasl-username", metavar="USER")
    p.add_argument("--sasl-password", metavar="PASSWORD")
    return p


def security(args: argparse.Namespace) -> dict[str, Any]:
    """aiokafka's security settings from the flags; ValueError (one line) for unusable ones."""
    protocol = args.security_protocol or ("SSL" if args.ca_file else "PLAINTEXT")
    config: dict[str, Any] = {"security_protocol": protocol}
    if protocol.endswith("SSL"):
        tls = ClientTls(args.ca_file)
        try:
            config["ssl_context"] = tls.context()
        except (OSError, ssl.SSLError) as e:
            raise ValueError(f"--ca-file {args.ca_file}: cannot load: {e}") from None
    elif args.ca_file:
        raise ValueError(f"--ca-file needs a TLS protocol (SSL or SASL_SSL), not {protocol}")
    if protocol.startswith("SASL"):
        if not (args.sasl_mechanism and args.sasl_username and args.sasl_password):
            raise ValueError(f"{protocol} needs --sasl-mechanism, --sasl-username and --sasl-password")
        config |= {
            "sasl_mechanism": args.sasl_mechanism.upper(),
            "sasl_plain_username": args.sasl_username,
            "sasl_plain_password": args.sasl_password,
        }
    return config


async def tail(args: argparse.Namespace, out: TextIO, config: dict[str, Any] | None = None) -> int:
    consumer = AIOKafkaConsumer(
        args.topic,
        bootstrap_servers=args.bootstrap_servers,
        auto_offset_reset="earliest" if args.from_beginning else "latest",
        enable_auto_commit=False,
        group_id=None,
        request_timeout_ms=10_000,
        **(config or {}),
    )
    seen = 0
    try:
        await consumer.start()
        while args.max_records is None or seen < args.max_records:
            batches = await consumer.getmany(timeout_ms=int((args.timeout_s or 3600) * 1000))
            if not batches:
                if args.timeout_s is not None:
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


def run_events(argv: Sequence[str], out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    if list(argv[:1]) != ["tail"]:
        print("reassignd events: error: expected 'tail'", file=err)
        return 2
    try:
        args = parser().parse_args(list(argv[1:]))
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    try:
        config = security(args)
    except ValueError as e:
        print(f"reassignd events tail: error: {e}", file=err)
        return 2
    try:
        with contextlib.suppress(KeyboardInterrupt):
            return asyncio.run(tail(args, out, config))
    except (KafkaError, OSError) as e:
        print(
            f"reassignd events tail: error: cannot read {args.topic} from {args.bootstrap_servers}: {e}",
            file=err,
        )
        return 1
    return 0

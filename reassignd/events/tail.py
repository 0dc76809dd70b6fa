"""``reassignd events tail``: print the records of the controller's event topic, one JSON line
each (with the Kafka partition and offset on stderr at start), until Ctrl-C.

    reassignd events tail --bootstrap-servers HOST:PORT --topic reassignd.events [--from-beginning]

``--max-records N`` and ``--timeout-s S`` stop it after N records or S seconds without one (for
scripts). Exit 0 on a clean stop, 1 when Kafka cannot be reached, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import Sequence
from typing import TextIO

from aiokafka import AIOKafkaConsumer
from aiokafka.errors import KafkaError


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
    return p


async def tail(args: argparse.Namespace, out: TextIO) -> int:
    consumer = AIOKafkaConsumer(
        args.topic,
        bootstrap_servers=args.bootstrap_servers,
        auto_offset_reset="earliest" if args.from_beginning else "latest",
        enable_auto_commit=False,
        group_id=None,
        request_timeout_ms=10_000,
    )
    await consumer.start()
    seen = 0
    try:
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
        with contextlib.suppress(KeyboardInterrupt):
            return asyncio.run(tail(args, out))
    except (KafkaError, OSError) as e:
        print(
            f"reassignd events tail: error: cannot read {args.topic} from {args.bootstrap_servers}: {e}",
            file=err,
        )
        return 1
    return 0

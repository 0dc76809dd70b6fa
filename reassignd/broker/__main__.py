"""``python -m reassignd.broker``: one broker agent (or N with ``--brokers``) until SIGTERM/SIGINT.

Flags as ``reassignd broker`` / ``reassignd cluster``; exit 0 on a clean stop, 2 on bad
arguments, 1 on anything else.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Sequence

from reassignd.broker.agent import run_agents
from reassignd.broker.settings import DEFAULT_REPLICATION_BYTES_PER_S, BrokerSettings, cluster_settings


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m reassignd.broker", description="Run reassignd broker agents.")
    p.add_argument("--zk", required=True, help="HOST:PORT[,HOST:PORT...][/chroot]")
    p.add_argument("--id", type=int, required=True, help="broker id (the first one with --brokers)")
    p.add_argument("--rack", default=None)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--control-port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--replication-bytes-per-s", type=float, default=DEFAULT_REPLICATION_BYTES_PER_S)
    p.add_argument("--replica-lag-time-max-ms", type=int, default=30000)
    p.add_argument("--isr-linger-ms", type=int, default=100)
    p.add_argument("--session-timeout-s", type=float, default=6.0)
    p.add_argument("--fetch-interval-ms", type=int, default=100)
    p.add_argument(
        "--produce-bytes-per-s", type=float, default=0.0, help="for topics without a produce-rate config"
    )
    p.add_argument("--brokers", type=int, default=1, help="run this many agents, ids --id, --id+1, ...")
    p.add_argument("--racks", type=int, default=None, help="with --brokers: rack r<(i - first id) mod K>")
    p.add_argument("--log-level", default="info")
    return p


def settings_from_args(args: argparse.Namespace) -> list[BrokerSettings]:
    """Raises ValueError on inconsistent values."""
    base = BrokerSettings(
        zk_connect=args.zk,
        broker_id=args.id,
        rack=args.rack,
        host=args.host,
        control_port=args.control_port,
        replication_bytes_per_s=args.replication_bytes_per_s,
        replica_lag_time_max_ms=args.replica_lag_time_max_ms,
        isr_linger_ms=args.isr_linger_ms,
        session_timeout_s=args.session_timeout_s,
        fetch_interval_ms=args.fetch_interval_ms,
        produce_bytes_per_s=args.produce_bytes_per_s,
    )
    if args.brokers == 1 and args.racks is None:
        return [base]
    return cluster_settings(base, args.brokers, args.id, args.racks)


async def serve(settings: Sequence[BrokerSettings]) -> None:
    """Run the agents until SIGTERM or SIGINT."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await run_agents(settings, stop)
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = settings_from_args(args)
    except ValueError as e:
        print(f"reassignd broker: {e}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
        stream=sys.stderr,
    )
    try:
        asyncio.run(serve(settings))
    except Exception as e:  # an agent could not start or failed: one line, exit 1
        causes = e.exceptions if isinstance(e, BaseExceptionGroup) else (e,)
        print(f"reassignd broker: {'; '.join(str(c) or type(c).__name__ for c in causes)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

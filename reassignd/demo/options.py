"""The demo's options and how its command line is read: as the ``reassignd`` command line reads
its own (never abbreviated, an unknown flag named with the closest known one, one line and exit 2
for any mistake). Nothing beyond the standard library, so ``scripts/demo.sh`` checks its flags
with any Python 3.11 before it installs anything (``python -m reassignd.demo.options ARGS``)."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from reassignd.options import unknown_flag

DESCRIPTION = "A whole reassignd cluster on this machine, moving partitions live."


@dataclass(frozen=True, slots=True)
class DemoOptions:
    brokers: int = 6
    racks: int = 3
    topic: str = "demo"
    partitions: int = 6
    replication_factor: int = 3
    partition_mib: int = 400  # reassignd.sim.initial.bytes of the demo topic
    replication_mib_s: int = 50  # reassignd.sim.replication.bytes.per.s of every broker
    drain: int = 1  # the broker the demo empties
    interval_s: float = 1.0
    duration_s: float | None = None
    keep_running: bool = False
    ready_timeout_s: float = 60.0
    move_timeout_s: float = 300.0
    secure: bool = False  # ZooKeeper requires SASL; every process authenticates, Kafka's ACLs


class _DemoParser(argparse.ArgumentParser):
    """Flags as the ``reassignd`` command line reads them: never abbreviated, an unknown one named
    with the closest known one, every mistake one line on stderr (exit 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        given = list(sys.argv[1:] if args is None else args)
        known = [flag for flag in self._option_string_actions if flag.startswith("--")]
        problem = unknown_flag(given, known)
        if problem is not None:
            self.error(problem)
        return super().parse_args(given, namespace)


def parse_options(argv: Sequence[str]) -> DemoOptions:
    d = DemoOptions()
    parser = _DemoParser(
        prog="scripts/demo.sh",
        description=DESCRIPTION,
        allow_abbrev=False,
    )

    def add(flag: str, kind: type, default: object, text: str, metavar: str = "N") -> None:
        parser.add_argument(
            flag, type=kind, default=default, metavar=metavar, help=f"{text} (default {default})"
        )

    add("--brokers", int, d.brokers, "broker agents")
    add("--racks", int, d.racks, "racks they spread over")
    add("--topic", str, d.topic, "name of the demo topic", "NAME")
    add("--partitions", int, d.partitions, "its partitions")
    add("--replication-factor", int, d.replication_factor, "its replication factor")
    add("--partition-mib", int, d.partition_mib, "simulated size of each partition, MiB")
    add("--replication-mib-s", int, d.replication_mib_s, "replication bandwidth of each broker, MiB/s")
    add("--interval-s", float, d.interval_s, "seconds between progress prints", "S")
    parser.add_argument(
        "--duration-s", type=float, metavar="S", help="stop after this many seconds (default: at the end)"
    )
    parser.add_argument(
        "--keep-running", action="store_true", help="after the story, keep the cluster up until Ctrl-C"
    )
    parser.add_argument(
        "--secure",
        action="store_true",
        help="ZooKeeper with SASL, as a production Kafka cluster's: every process authenticates "
        "(user kafka, a password made for the run) and creates its znodes with Kafka's ACLs",
    )
    args = parser.parse_args(argv)
    counts = (args.brokers, args.racks, args.partitions, args.replication_factor, args.replication_mib_s)
    if min(counts) < 1 or args.partition_mib < 0 or args.interval_s <= 0:
        parser.error("counts and --replication-mib-s must be >= 1, --partition-mib >= 0, --interval-s > 0")
    if args.replication_factor >= args.brokers:
        parser.error("--replication-factor must be below --brokers: the demo empties one broker")
    if not re.fullmatch(r"[a-zA-Z0-9._-]{1,249}", args.topic) or args.topic in (".", ".."):
        parser.error(f"--topic {args.topic!r} is not a valid topic name")
    if args.duration_s is not None and args.duration_s <= 0:
        parser.error("--duration-s must be > 0")
    return DemoOptions(
        brokers=args.brokers,
        racks=args.racks,
        topic=args.topic,
        partitions=args.partitions,
        replication_factor=args.replication_factor,
        partition_mib=args.partition_mib,
        replication_mib_s=args.replication_mib_s,
        interval_s=args.interval_s,
        duration_s=args.duration_s,
        keep_running=args.keep_running,
        secure=args.secure,
    )


if __name__ == "__main__":
    parse_options(sys.argv[1:])  # exit 2 with one line for a bad flag, 0 after --help

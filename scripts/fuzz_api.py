"""Fuzz the HTTP API with its own OpenAPI document, longer than the test suite does.

An in-process controller (with a tokens file; requests carry the admin token) and three broker
agents on a ZooKeeper of its own, a topic created first; then schemathesis' three phases
(``tests/integration/api_fuzz.py``): every operation's coverage cases, ``--examples`` Hypothesis
examples per operation and mode (positive, negative) within ``--fuzz-budget-s``, and
``--scenarios`` stateful scenarios of up to ``--steps`` calls following the document's links.

Printed: the calls made per phase, the links followed, the failures found (each check's first
per operation and phase; the stateful phase stops at its first), and the controller's log lines
at ERROR or with a traceback. Exit 1 when anything failed.

    python scripts/fuzz_api.py                      # 150 examples, 150 scenarios of 20 steps (~11 min)
    python scripts/fuzz_api.py --examples 25 --scenarios 10 --steps 6
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import sys
import tempfile
import time
from pathlib import Path

from reassignd.zk.server import LocalZooKeeper
from tests.integration.api_fuzz import TOKENS, Tally, auth, run_all, run_stateful
from tests.integration.harness import Kit, eventually, http_get, http_request


class Errors(logging.Handler):
    """Every record at ERROR or with a traceback, whichever task or thread logged it."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR or record.exc_info:
            self.lines.append(f"{record.levelname} {record.name}: {record.getMessage()[:300]}")


async def fuzz(zk_connect: str, work: Path, args: argparse.Namespace) -> int:
    errors = Errors()
    logging.getLogger().addHandler(errors)
    tokens = work / "tokens.toml"
    tokens.write_text(TOKENS)
    kit = Kit(zk_connect, work)
    try:
        controller = kit.controller(9000, 2.0, "--auth-tokens", str(tokens))
        kit.cluster(3)
        token = auth()["Authorization"].removeprefix("Bearer ")

        async def ready() -> bool:
            code, status = await http_get(f"{controller.url}/v1/status", token=token)
            return code == 200 and status["active"] and status["brokers"]["live"] == [1, 2, 3]

        await eventually(ready, what="an active controller with brokers 1, 2, 3")
        code, created = await http_request(
            "POST",
            f"{controller.url}/v1/topics",
            {"topics": [{"name": "orders", "num_partitions": 3, "replication_factor": 2}]},
            token=token,
        )
        assert code == 200, created
        tally = Tally()
        started = time.monotonic()
        failures = (
            []
            if args.stateful_only
            else await asyncio.to_thread(
                functools.partial(
                    run_all,
                    controller.url,
                    max_examples=args.examples,
                    fuzz_budget_s=args.fuzz_budget_s,
                    tally=tally,
                )
            )
        )
        fuzzed_s = time.monotonic() - started
        failures += await asyncio.to_thread(
            functools.partial(
                run_stateful, controller.url, max_examples=args.scenarios, steps=args.steps, tally=tally
            )
        )
        stateful_s = time.monotonic() - started - fuzzed_s
        log = controller.proc.log()
    finally:
        await kit.close()

    bad_lines = [line for line in log.splitlines() if " ERROR " in line or line.startswith("Traceback")]
    bad_lines += errors.lines
    print(f"coverage and fuzzing: {fuzzed_s:.0f} s; stateful: {stateful_s:.0f} s")
    for phase, calls in sorted(tally.calls.items()):
        print(f"  {phase}: {calls} calls")
    print(f"  slowest operations (s waiting for answers): {tally.slowest()}")
    print(f"failures: {len(failures)}")
    for failure in failures:
        print(f"\n{failure}")
    print(f"controller log: {len(bad_lines)} records at ERROR or with a traceback")
    for line in bad_lines[:20]:
        print(f"  {line}")
    return 1 if failures or bad_lines else 0


def main() -> None:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--examples", type=int, default=150, help="per operation and generation mode")
    parser.add_argument("--fuzz-budget-s", type=float, default=420.0, help="for the fuzzing phase")
    parser.add_argument("--scenarios", type=int, default=150, help="stateful scenarios")
    parser.add_argument("--steps", type=int, default=20, help="calls per stateful scenario, at most")
    parser.add_argument("--stateful-only", action="store_true", help="skip the coverage and fuzzing phases")
    args = parser.parse_args()
    with LocalZooKeeper() as server, tempfile.TemporaryDirectory(prefix="fuzz-api-") as work:
        sys.exit(asyncio.run(fuzz(f"{server.connect}/fuzz", Path(work), args)))


if __name__ == "__main__":
    main()

"""Fault benchmark: the fault suite's scenarios (tests/faults/scenarios.py) with many seeds.

Starts a ZooKeeper server of its own and runs each scenario kind with seeds
``--first-seed`` .. ``--first-seed + --seeds - 1``, each run on a fresh chroot with its own
processes, then prints per kind: runs, runs with any violation, lost or half-done
reassignments (distinct partitions not at their target, left with AR/RR, or still listed),
stray replicas (and missing ones), partitions left offline, offline episodes longer than the
grace period, offline samples (every sample, however short), scenario expectations that failed,
and runs that raised.

    python bench/faults.py                                   # 50 seeds of the default kinds
    python bench/faults.py --seeds 5 --kinds controller_kills,proxy_cut_phase_a
    python bench/faults.py --kinds all --json results.json
    python bench/faults.py --kinds poison --seeds 20          # each poison case, seed % cases
    python bench/faults.py --kinds adversarial --seeds 21     # each adversarial case, seed % cases
    python bench/faults.py --kinds controller_kills --partitions 1000

Default kinds: controller kills, ZooKeeper freezes and restarts, agent kills, every proxy cut and
the proxy outage (slow, then gone past the session timeout), and the batch executor's writes cut
(journal at submission and later, a throttle set and one restored, the exact origins) or its
session expired mid-batch (tests/faults/batch_scenarios.py), and the writes of preferred-replica
elections cut (the legacy znode's state write and its delete, an auto leader rebalance's state
write: tests/faults/election_scenarios.py).
``all`` adds the KIP-236 cancel, topic re-creation and unclean-election scenarios, and ``poison``:
inputs that fail the same way every time (tests/faults/poison.py; the seed picks one of its
cases), after which the controller epoch may move at most once (``storms`` counts runs where
it moved more), and ``adversarial``: what a viewer, an admin, an unauthenticated client and
another ZooKeeper principal can send, each sent repeatedly through the real doors (HTTP with
tokens, the Kafka listener with SASL, raw sockets, ZooKeeper; tests/faults/adversarial.py, the
seed picks one of its cases), with the same checks and the client's answer. Logs of runs
with violations are kept (their directory is printed); ``--keep-logs`` keeps every run's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import shutil
import sys
import tempfile
import time
import traceback
import uuid
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `tests.faults` from a checkout

from reassignd.zk.client import ZkClient
from reassignd.zk.errors import ZkError
from reassignd.zk.server import LocalZooKeeper
from reassignd.zk.values import ZkSettings
from tests.faults import invariants
from tests.faults.adaptive_scenarios import proxy_cut_caps
from tests.faults.adversarial import adversarial
from tests.faults.batch_scenarios import BATCH_SCENARIOS, JOURNAL_SPLIT_SCENARIOS, api_cancel_cut
from tests.faults.demotion_scenarios import DEMOTION_SCENARIOS
from tests.faults.election_scenarios import ELECTION_SCENARIOS
from tests.faults.healing_scenarios import HEAL_SCENARIOS
from tests.faults.poison import poison
from tests.faults.scenarios import GRACE_S, Env, Outcome, controller_kills
from tests.faults.scenarios import SCENARIOS as CLUSTER_SCENARIOS
from tests.integration.harness import Procs

DEFAULT_KINDS = (
    "controller_kills",
    "zookeeper_freeze",
    "zookeeper_restart",
    "agent_kills",
    "proxy_cut_election",
    "proxy_cut_phase_u",
    "proxy_cut_phase_a",
    "proxy_cut_broker_failure",
    "proxy_cut_failover_load",
    "proxy_cut_group_commit",
    "proxy_outage",
    *BATCH_SCENARIOS,
    *ELECTION_SCENARIOS,
    "proxy_cut_caps",
    *DEMOTION_SCENARIOS,
    *HEAL_SCENARIOS,
)
SCENARIOS = {
    **CLUSTER_SCENARIOS,
    **BATCH_SCENARIOS,
    **ELECTION_SCENARIOS,
    "proxy_cut_caps": proxy_cut_caps,
    **DEMOTION_SCENARIOS,
    **HEAL_SCENARIOS,
    **JOURNAL_SPLIT_SCENARIOS,
    "api_cancel_cut": api_cancel_cut,
    "poison": poison,
    "adversarial": adversarial,
}


@dataclass
class Tally:
    runs: int = 0
    failed: int = 0
    lost: int = 0  # partitions not at their target / half-done
    stray: int = 0
    missing: int = 0
    offline_left: int = 0
    offline_long: int = 0  # episodes longer than GRACE_S
    offline_samples: int = 0
    scenario: int = 0
    storms: int = 0  # runs whose epoch moved more than once after a poison or adversarial input
    errors: int = 0
    seconds: float = 0.0
    failed_seeds: list[int] = field(default_factory=list)

    def add(self, outcome: Outcome | None, seconds: float) -> None:
        self.runs += 1
        self.seconds += seconds
        if outcome is None:
            self.errors += 1
            self.failed += 1
            self.failed_seeds.append(-1)
            return
        v = outcome.violations
        self.lost += len(invariants.partitions_of(v, "assignment"))
        self.stray += invariants.replicas_of(v, "stray")
        self.missing += invariants.replicas_of(v, "missing")
        self.offline_left += len(invariants.partitions_of(v, "offline"))
        self.offline_long += len(outcome.offline)
        self.offline_samples += outcome.offline_samples
        self.scenario += sum(1 for x in v if isinstance(x, invariants.Violation) and x.kind == "scenario")
        self.storms += sum(1 for x in v if isinstance(x, invariants.Violation) and x.kind == "storm")
        if v or outcome.offline:
            self.failed += 1
            self.failed_seeds.append(outcome.seed)


COLUMNS = (
    ("runs", "runs"),
    ("failed", "failed"),
    ("lost/half-done", "lost"),
    ("stray", "stray"),
    ("missing", "missing"),
    ("offline left", "offline_left"),
    (f"offline >{GRACE_S:g}s", "offline_long"),
    ("offline samples", "offline_samples"),
    ("scenario", "scenario"),
    ("storms", "storms"),
    ("errors", "errors"),
)


def table(tallies: dict[str, Tally]) -> str:
    name_w = max(len("kind"), *(len(k) for k in tallies))
    header = f"{'kind':<{name_w}}  " + "  ".join(f"{title:>{max(len(title), 5)}}" for title, _ in COLUMNS)
    lines = [header + "  mean s", "-" * (len(header) + 8)]
    total = Tally()
    for kind, t in tallies.items():
        cells = "  ".join(f"{getattr(t, attr):>{max(len(title), 5)}}" for title, attr in COLUMNS)
        mean = t.seconds / t.runs if t.runs else 0.0
        lines.append(f"{kind:<{name_w}}  {cells}  {mean:6.1f}")
        for _, attr in COLUMNS:
            setattr(total, attr, getattr(total, attr) + getattr(t, attr))
        total.seconds += t.seconds
    cells = "  ".join(f"{getattr(total, attr):>{max(len(title), 5)}}" for title, attr in COLUMNS)
    mean = total.seconds / total.runs if total.runs else 0.0
    lines.append("-" * (len(header) + 8))
    lines.append(f"{'total':<{name_w}}  {cells}  {mean:6.1f}")
    return "\n".join(lines)


async def run_one(
    server: LocalZooKeeper, kind: str, seed: int, log_root: Path, timeout_s: float, partitions: int
) -> tuple[Outcome | None, str]:
    if server.process is None or server.process.poll() is not None:
        server.start()
    server.thaw()
    chroot = f"/bench-{uuid.uuid4().hex[:12]}"
    connect = server.connect + chroot
    log_dir = log_root / f"{kind}-{seed}"
    log_dir.mkdir(parents=True, exist_ok=True)
    procs = Procs(connect, log_dir)
    zk = ZkClient(ZkSettings(connect, session_timeout_s=5.0))
    detail = ""
    outcome: Outcome | None = None
    try:
        await zk.start()
        env = Env(procs, zk, connect, server)
        async with asyncio.timeout(timeout_s):
            if kind == "controller_kills":
                outcome = await controller_kills(env, seed, partitions)
            else:
                outcome = await SCENARIOS[kind](env, seed)
        detail = "; ".join([*outcome.violations[:5], *outcome.offline[:3]])
    except Exception:  # a run that raised is counted as an error, the bench goes on
        detail = traceback.format_exc(limit=3).strip().splitlines()[-1]
    finally:
        procs.close()
        server.thaw()
        await zk.close()
        await _drop_chroot(server, chroot)
    return outcome, detail


async def _drop_chroot(server: LocalZooKeeper, chroot: str) -> None:
    root = ZkClient(ZkSettings(server.connect, session_timeout_s=5.0))
    try:
        await root.start()
        await root.delete_recursive(chroot)
    except (ZkError, TimeoutError, OSError):
        pass  # best effort: the data dir goes away with the server
    finally:
        await root.close()


async def main_async(args: argparse.Namespace) -> int:
    kinds = (
        list(SCENARIOS) if args.kinds == "all" else [k.strip() for k in args.kinds.split(",") if k.strip()]
    )
    unknown = [k for k in kinds if k not in SCENARIOS]
    if unknown:
        print(f"unknown kinds {unknown}; known: {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    log_root = Path(args.log_dir or tempfile.mkdtemp(prefix="reassignd-faults-"))
    print(f"logs under {log_root}", file=sys.stderr)
    tallies = {k: Tally() for k in kinds}
    results: list[dict[str, object]] = []
    server = LocalZooKeeper(tick_time_ms=250).start()
    try:
        for kind in kinds:
            for seed in seeds:
                started = time.monotonic()
                outcome, detail = await run_one(
                    server, kind, seed, log_root, args.run_timeout_s, args.partitions
                )
                took = time.monotonic() - started
                tallies[kind].add(outcome, took)
                clean = outcome is not None and not outcome.violations and not outcome.offline
                run_dir = log_root / f"{kind}-{seed}"
                if clean and not args.keep_logs:
                    shutil.rmtree(run_dir, ignore_errors=True)
                status = "ok" if clean else ("ERROR" if outcome is None else "VIOLATIONS")
                print(
                    f"{kind} seed {seed}: {status} in {took:.1f}s"
                    + ("" if clean else f" ({detail}) logs: {run_dir}"),
                    file=sys.stderr,
                    flush=True,
                )
                results.append(
                    {
                        "kind": kind,
                        "seed": seed,
                        "seconds": round(took, 2),
                        "error": outcome is None,
                        "violations": [] if outcome is None else list(outcome.violations),
                        "offline": [] if outcome is None else outcome.offline,
                        "offline_samples": 0 if outcome is None else outcome.offline_samples,
                        "notes": [] if outcome is None else outcome.notes,
                        "detail": detail,
                    }
                )
    finally:
        server.stop()
    print(table(tallies))
    for kind, t in tallies.items():
        if t.failed_seeds:
            print(f"{kind}: seeds with violations or errors (-1: raised): {t.failed_seeds}")
    if args.json:
        await asyncio.to_thread(Path(args.json).write_text, json.dumps(results, indent=1))
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=int, default=50, help="seeds per kind (default 50)")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument(
        "--kinds",
        default=",".join(DEFAULT_KINDS),
        help=f"comma-separated scenario kinds, or 'all' (known: {', '.join(SCENARIOS)})",
    )
    parser.add_argument(
        "--partitions", type=int, default=500, help="partitions moved by controller_kills (default 500)"
    )
    parser.add_argument("--run-timeout-s", type=float, default=300.0, help="bound of one run")
    parser.add_argument("--log-dir", help="where process logs go (default: a new temporary directory)")
    parser.add_argument("--keep-logs", action="store_true", help="keep the logs of clean runs too")
    parser.add_argument("--json", help="also write every run's outcome to this file")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)  # the bench's own sessions do expire in some scenarios
    sys.exit(asyncio.run(main_async(args)))


if __name__ == "__main__":
    main()

"""``reassignd feed ...``: the feeder's command line (``plan`` here; more verbs plug in alike).

``reassignd feed`` is dispatched by :mod:`reassignd.cli` before the daemon commands' parser, so
this module owns its parser. Every flag also reads ``REASSIGND_<FLAG>`` and the ``--config`` file
(top-level keys or a ``[feed]`` table; keys of other commands are ignored); flag > environment >
file. Exit codes: 0 done, 2 bad arguments or input (one line on stderr), 1 anything else.

Nothing here imports pyspark: the Spark job is imported when a plan runs, and its absence is a
one-line error.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NoReturn

from reassignd.admin.settings import BOOTSTRAP_HELP, REQUEST_TIMEOUT_S, client_tls
from reassignd.feeder.goals import GOAL_HELP, GoalError
from reassignd.tls import CA_FILE_HELP, CERT_FILE_HELP, KEY_FILE_HELP, ClientTls

ENV_PREFIX = "REASSIGND_"
DESCRIPTION = "Plan reassignments with Spark and feed them to the controller as batches."
PLAN_DESCRIPTION = (
    "Compute a plan for the goals (a PySpark job, local[*] unless --master says otherwise); write "
    "DIR/plan.json, DIR/rollback.json, DIR/batches.json and DIR/summary.txt; print the summary."
)


class UsageError(Exception):
    """Bad arguments or input; ``str(error)`` is a one-line reason (exit 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: error: {message} (see --help)")


@dataclass(frozen=True, slots=True)
class Verb:
    """One ``reassignd feed`` verb: how to declare its flags and how to run it."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[dict[str, Any], IO[str], IO[str]], int]  # merged values -> exit code
    required: tuple[str, ...] = ()
    defaults: Mapping[str, Any] = field(default_factory=dict)


def add_tls_arguments(p: argparse.ArgumentParser) -> None:
    """``--ca-file``, ``--cert-file``, ``--key-file``: how an https:// controller is verified."""
    p.add_argument("--ca-file", metavar="FILE", help=CA_FILE_HELP)
    p.add_argument("--cert-file", metavar="FILE", help=CERT_FILE_HELP)
    p.add_argument("--key-file", metavar="FILE", help=KEY_FILE_HELP)


def tls_of(values: Mapping[str, Any]) -> ClientTls:
    """The merged TLS flags, their files loaded now (UsageError, one line)."""
    try:
        return client_tls(values.get("ca_file"), values.get("cert_file"), values.get("key_file"))
    except ValueError as e:
        raise UsageError(str(e)) from None


def _plan_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bootstrap-controller", metavar="URL", help=BOOTSTRAP_HELP)
    p.add_argument("--auth-token", metavar="TOKEN", help="bearer token for the controller's HTTP API")
    add_tls_arguments(p)
    p.add_argument(
        "--request-timeout-s", metavar="S", help=f"HTTP timeout, seconds (default {REQUEST_TIMEOUT_S:g})"
    )
    p.add_argument(
        "--goal",
        action="append",
        metavar="GOAL",
        help=f"repeatable, applied in order: {GOAL_HELP} (REASSIGND_GOAL: several, ';' between)",
    )
    p.add_argument("--out", metavar="DIR", help="directory for the plan files (required unless --dry-run)")
    p.add_argument(
        "--topics", metavar="REGEX", help="only partitions of topics matching REGEX (whole name) move"
    )
    p.add_argument("--exclude-brokers", metavar="B,...", help="brokers that never receive a replica")
    p.add_argument("--max-move-bytes", metavar="N", help="copy at most N bytes in total")
    p.add_argument(
        "--sizes", metavar="FILE", help="partition sizes: the JSON kafka-log-dirs --describe prints"
    )
    p.add_argument(
        "--cluster-file",
        metavar="FILE",
        help="topics and brokers: kafka-topics --describe output or a snapshot JSON (instead of the controller)",
    )
    p.add_argument("--batch-size", metavar="N", help="moves per batch (default 100)")
    p.add_argument("--seed", metavar="N", help="breaks ties between equal brokers (default 0)")
    p.add_argument("--tasks", metavar="N", help="Spark tasks (groups of partitions); default: one per 50,000")
    p.add_argument("--master", metavar="URL", help="Spark master (default local[*])")
    p.add_argument(
        "--dry-run", action="store_const", const=True, help="print the summary only, write nothing"
    )


def _run_plan(values: dict[str, Any], stdout: IO[str], stderr: IO[str]) -> int:
    from reassignd.feeder.plan_command import plan_settings, run_plan_command  # noqa: PLC0415

    return run_plan_command(plan_settings(values), stdout, stderr)


def _run_run(values: dict[str, Any], stdout: IO[str], stderr: IO[str]) -> int:
    from reassignd.feeder.run import run_feed_run  # noqa: PLC0415 (aiohttp client only when feeding)

    return run_feed_run(values, stdout, stderr)


def _run_arguments(p: argparse.ArgumentParser) -> None:
    from reassignd.feeder.run import add_arguments  # noqa: PLC0415

    add_arguments(p)


RUN_DESCRIPTION = (
    "Submit a plan's batches (DIR/batches.json) to POST /v1/batches, at most --max-pending unfinished "
    "at once, and follow them to the end; a restarted run resumes without submitting a batch twice."
)

VERBS: dict[str, Verb] = {
    "plan": Verb("plan", PLAN_DESCRIPTION, _plan_arguments, _run_plan, required=("goal",)),
    "run": Verb("run", RUN_DESCRIPTION, _run_arguments, _run_run, required=("plan", "bootstrap_controller")),
}


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="reassignd feed", description=DESCRIPTION, allow_abbrev=False)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB")
    for verb in VERBS.values():
        sub = verbs.add_parser(
            verb.name,
            help=verb.help,
            description=verb.help,
            allow_abbrev=False,
            argument_default=argparse.SUPPRESS,
        )
        sub.add_argument(
            "--config", metavar="FILE", help="TOML file with the flags as keys ([feed] table or top level)"
        )
        verb.add_arguments(sub)
    return parser


def _file_values(path: str) -> dict[str, Any]:
    try:
        with Path(path).open("rb") as f:
            doc = tomllib.load(f)
    except OSError as e:
        raise UsageError(f"cannot read config file {path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"config file {path}: invalid TOML: {e}") from None
    values = {k.replace("-", "_"): v for k, v in doc.items() if not isinstance(v, dict)}
    table = doc.get("feed", {})
    if not isinstance(table, dict):
        raise UsageError(f"config file {path}: [feed] must be a table")
    values.update({k.replace("-", "_"): v for k, v in table.items()})
    return values


def merge_values(verb: Verb, args: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    """flag > ``REASSIGND_<FLAG>`` > config file, for the flags ``verb`` declares."""
    probe = _Parser(prog="probe", add_help=False, argument_default=argparse.SUPPRESS)
    verb.add_arguments(probe)
    dests = [a.dest for a in probe._actions]
    config = args.pop("config", None) or env.get(ENV_PREFIX + "CONFIG")
    file = _file_values(config) if config else {}
    values: dict[str, Any] = dict(verb.defaults)
    for dest in dests:
        if dest in args:
            values[dest] = args[dest]
        elif ENV_PREFIX + dest.upper() in env:
            raw = env[ENV_PREFIX + dest.upper()]
            # several goals in one variable: separated by spaces or semicolons (goals hold commas)
            values[dest] = [g for g in re.split(r"[;\s]+", raw) if g] if dest == "goal" else raw
        elif dest in file:
            values[dest] = file[dest]
    for dest in verb.required:
        if values.get(dest) in (None, [], ""):
            raise UsageError(f"reassignd feed {verb.name}: error: missing --{dest.replace('_', '-')}")
    return values


def run_feed(argv: Sequence[str], env: Mapping[str, str], stdout: IO[str], stderr: IO[str]) -> int:
    """``reassignd feed VERB ...``: parse, merge, run. 2 with one line for bad arguments."""
    parser = build_parser()
    name = None
    try:
        args = vars(parser.parse_args(list(argv)))
        name = args.pop("verb", None)
        if name is None:
            raise UsageError(f"reassignd feed: error: choose a verb: {', '.join(VERBS)} (see --help)")
        verb = VERBS[name]
        values = merge_values(verb, args, env)
        return verb.run(values, stdout, stderr)
    except (UsageError, GoalError) as e:
        text = str(e)
        prefix = f"reassignd feed{' ' + name if name else ''}: error: "
        print(text if text.startswith("reassignd feed") else prefix + text, file=stderr)
        return 2
    except SystemExit as e:  # --help
        return int(e.code or 0) if isinstance(e.code, int) else 0
    except Exception as e:  # a bug or an environment problem: still one line, not a trace
        print(
            f"reassignd feed: error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
            file=stderr,
        )
        return 1


def main() -> None:
    sys.exit(run_feed(sys.argv[1:], os.environ, sys.stdout, sys.stderr))

"""``reassignd feed plan`` and ``reassignd feed run``: their options, declared once for the
command-line engine (:mod:`reassignd.config`), and the commands they resolve to.

Every option is a flag, a ``REASSIGND_<FLAG>`` variable and a key of the ``--config`` file (top
level or a ``[feed]`` table), flag > environment > file, unknown file keys refused, as for every
subcommand. Exit codes: 0 done, 2 bad arguments or input (one line on stderr), 1 anything else.

Nothing here imports pyspark (nor aiohttp): the Spark job is imported when a plan runs, and its
absence is a one-line error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from reassignd import options as opt
from reassignd.admin.connection import AUTH_TOKEN, BOOTSTRAP_CONTROLLER, REQUEST_TIMEOUT, TLS_OPTIONS
from reassignd.feeder.goals import (
    GOAL_HELP,
    Goal,
    GoalError,
    check_topics_regex,
    parse_broker_ids,
    parse_goal,
)
from reassignd.log_setup import LogSettings
from reassignd.options import REPEAT, SWITCH, Option

DESCRIPTION = "Plan reassignments with Spark and feed them to the controller as batches."
PLAN_DESCRIPTION = (
    "Compute a plan for the goals (a PySpark job, local[*] unless --master says otherwise); write "
    "DIR/plan.json, DIR/rollback.json, DIR/batches.json, DIR/summary.txt and DIR/plan.svg; print the "
    "summary."
)
RUN_DESCRIPTION = (
    "Submit a plan's batches (DIR/batches.json) to POST /v1/batches, at most --max-pending unfinished "
    "at once, and follow them to the end; a restarted run resumes without submitting a batch twice."
)
INTERRUPT_CHOICES = ("leave", "stop", "rollback")


class UsageError(Exception):
    """Bad arguments or input; ``str(error)`` is a one-line reason (exit 2)."""


def _goal(value: object) -> Goal:
    return parse_goal(opt.text(value))


def _topics(value: object) -> str:
    try:
        return check_topics_regex(opt.text(value))
    except GoalError as e:
        raise ValueError(str(e).removeprefix("--topics ")) from None


def _broker_ids(value: object) -> frozenset[int]:
    return parse_broker_ids(opt.text(value), "expected")


CONNECTION = (BOOTSTRAP_CONTROLLER, AUTH_TOKEN, *TLS_OPTIONS)

PLAN_OPTIONS: tuple[Option, ...] = (
    *CONNECTION,
    REQUEST_TIMEOUT,
    Option(
        "goal",
        _goal,
        f"repeatable, applied in order: {GOAL_HELP}; REASSIGND_GOAL or a file list holds several, ';' between",
        metavar="GOAL",
        required=True,
        kind=REPEAT,
    ),
    Option("out", opt.text, "directory for the plan files (required unless --dry-run)", metavar="DIR"),
    Option("topics", _topics, "only partitions of topics matching REGEX (whole name) move", metavar="REGEX"),
    Option("exclude-brokers", _broker_ids, "brokers that never receive a replica", metavar="B,..."),
    Option("max-move-bytes", opt.integer(0), "copy at most N bytes in total", metavar="N"),
    Option("sizes", opt.text, "partition sizes: the JSON kafka-log-dirs --describe prints", metavar="FILE"),
    Option(
        "cluster-file",
        opt.text,
        "topics and brokers: kafka-topics --describe output or a snapshot JSON (instead of the controller)",
        metavar="FILE",
    ),
    Option("batch-size", opt.integer(1), "moves per batch", 100, metavar="N"),
    Option("seed", opt.integer(0), "breaks ties between equal brokers", 0, metavar="N"),
    Option(
        "tasks", opt.integer(1), "Spark tasks (groups of partitions); default: one per 50,000", metavar="N"
    ),
    Option("master", opt.text, "Spark master (default local[*])", metavar="URL"),
    Option("dry-run", opt.boolean, "print the summary only, write nothing", kind=SWITCH),
)

RUN_OPTIONS: tuple[Option, ...] = (
    Option(
        "plan",
        opt.text,
        "the plan's directory (feed plan --out) or its batches.json",
        metavar="PLAN",
        required=True,
        positional=True,
    ),
    *CONNECTION,
    Option("max-pending", opt.integer(1), "unfinished batches at most at once", 2, metavar="N"),
    Option("poll-s", opt.number(0, inclusive=False), "seconds between status polls", 1.0, metavar="S"),
    Option(
        "on-interrupt",
        opt.choice(*INTERRUPT_CHOICES),
        "on Ctrl-C/SIGTERM without a terminal to ask: leave, stop or rollback the unfinished batches",
        "leave",
        metavar="{leave,stop,rollback}",
    ),
)


@dataclass(frozen=True, slots=True)
class FeedPlanCommand:
    """``reassignd feed plan``: the merged option values (keyed by flag), checked."""

    values: Mapping[str, object]
    log: LogSettings = field(default_factory=lambda: LogSettings(level="warning"))


@dataclass(frozen=True, slots=True)
class FeedRunCommand:
    """``reassignd feed run``: the merged option values (keyed by flag)."""

    values: Mapping[str, object]
    log: LogSettings = field(default_factory=lambda: LogSettings(level="warning"))


def resolve_plan(values: Mapping[str, object], log: LogSettings) -> FeedPlanCommand:
    """The plan's needs that no single option says: the cluster to plan for, where to write."""
    if values.get("bootstrap-controller") is None and values.get("cluster-file") is None:
        raise UsageError(
            "feed plan needs --bootstrap-controller URL or --cluster-file FILE (the cluster to plan for)"
        )
    if not values.get("dry-run") and not values.get("out"):
        raise UsageError("feed plan needs --out DIR (or --dry-run)")
    return FeedPlanCommand(dict(values), log)


def resolve_run(values: Mapping[str, object], log: LogSettings) -> FeedRunCommand:
    if values.get("bootstrap-controller") is None:
        raise UsageError("missing --bootstrap-controller (or REASSIGND_BOOTSTRAP_CONTROLLER)")
    return FeedRunCommand(dict(values), log)

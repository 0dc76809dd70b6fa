"""``reassignd admin reassign``'s command line: its argparse parser and its settings.

:mod:`reassignd.config` runs the one command-line engine (flags, ``REASSIGND_*`` variables, the
TOML file) over the connection options (:mod:`reassignd.admin.connection`) and hands this module
the merged values. The verb and the plan file are per run,
so they come from the command line only. Problems are ``ValueError`` with a one-line reason (the
CLI exits 2 with it).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from reassignd.admin.connection import optional_str, tls_of
from reassignd.admin.settings import LOG_DIR_TIMEOUT_MS, VERBS, ReassignSettings, Verb, check_arguments
from reassignd.http.door import integral_numbers
from reassignd.log_setup import LogSettings
from reassignd.plan_format import Plan, PlanError, parse_plan
from reassignd.zk.security import zk_security

DESCRIPTION = "Move partitions, like kafka-reassign-partitions (exactly one verb per run)."
EPILOG = (
    "The verbs and --reassignment-json-file are command-line only; the other flags also read "
    "REASSIGND_<FLAG> and the --config file (top level or an [admin] table)."
)
PLAN_HELP = 'the plan: {"version":1,"partitions":[{"topic","partition","replicas"[,"log_dirs"]}]}'


@dataclass(frozen=True, slots=True)
class AdminReassignCommand:
    """``reassignd admin reassign``: a one-shot client, not a service."""

    settings: ReassignSettings
    log: LogSettings = field(default_factory=lambda: LogSettings(level="warning"))


def add_reassign_arguments(reassign: argparse.ArgumentParser) -> None:
    """``reassign``'s command-line-only arguments: exactly one verb, and the plan file."""
    verbs = reassign.add_mutually_exclusive_group(required=True)
    for spec in VERBS:
        verbs.add_argument(spec.verb.flag, dest="verb", action="store_const", const=spec.verb, help=spec.help)
    reassign.add_argument("--reassignment-json-file", metavar="FILE", help=PLAN_HELP)
    reassign.add_argument(
        "--timeout",
        metavar="MS",
        type=timeout_ms,
        default=LOG_DIR_TIMEOUT_MS,
        dest="log_dir_timeout_ms",
        help="--execute: the longest to wait, in ms, for the replicas a plan names log_dirs for to "
        f"reach their brokers so their directory moves can start (Kafka's --timeout; default {LOG_DIR_TIMEOUT_MS})",
    )


def timeout_ms(text: str) -> int:
    """``--timeout``: a whole number of milliseconds, 0 or more."""
    if not (text.isascii() and text.isdigit()) or len(text) > 12:
        raise argparse.ArgumentTypeError(f"expected a number of milliseconds, got {text!r}")
    return int(text)


def read_plan_file(path: str) -> Plan:
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ValueError(f"cannot read --reassignment-json-file {path}: {e.strerror or e}") from None
    try:
        return parse_plan(integral_numbers(data) or data)  # 2.0 is 2, as at the HTTP door
    except PlanError as e:
        raise ValueError(f"{path}: {e}") from None


def reassign_settings(
    verb: Verb,
    plan_path: str | None,
    values: Mapping[str, object],
    read_plan: Callable[[str], Plan] | None = None,
    log_dir_timeout_ms: int = LOG_DIR_TIMEOUT_MS,
) -> ReassignSettings:
    """The verb's needs checked against the merged ``values`` (keyed by flag name), then the
    plan read (by ``read_plan``, :func:`read_plan_file` unless given) and validated: a plan that
    cannot be used is a bad argument, like a bad flag."""
    bootstrap, zk = optional_str(values, "bootstrap-controller"), optional_str(values, "zk")
    check_arguments(verb, plan_path, bootstrap_controller=bootstrap, zk_connect=zk)
    timeout = values["request-timeout-s"]
    assert isinstance(timeout, int | float)
    return ReassignSettings(
        verb=verb,
        plan=None if plan_path is None else (read_plan or read_plan_file)(plan_path),
        plan_path=plan_path,
        bootstrap_controller=bootstrap,
        zk_connect=zk,
        zk_security=zk_security(values),
        auth_token=optional_str(values, "auth-token"),
        request_timeout_s=float(timeout),
        tls=tls_of(values),
        log_dir_timeout_ms=log_dir_timeout_ms,
    )

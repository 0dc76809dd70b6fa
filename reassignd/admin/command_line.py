"""``reassignd admin reassign``'s command line: its argparse parser and its settings.

:mod:`reassignd.config` owns the shared machinery (flags, ``REASSIGND_*`` variables, the TOML
file); it hands this module the merged connection values. The verb and the plan file are per run,
so they come from the command line only. Problems are ``ValueError`` with a one-line reason (the
CLI exits 2 with it).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reassignd.admin.settings import VERBS, ReassignSettings, Verb, check_arguments, client_tls
from reassignd.log_setup import LogSettings
from reassignd.plan_format import Plan, PlanError, parse_plan

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


def add_reassign_parser(
    clients: argparse._SubParsersAction[Any],
    add_options: Callable[[argparse.ArgumentParser], None],
) -> None:
    """``reassign`` under ``reassignd admin``: exactly one verb, the plan file, then the
    connection flags ``add_options`` adds."""
    reassign = clients.add_parser(
        "reassign",
        help=DESCRIPTION,
        description=DESCRIPTION,
        epilog=EPILOG,
        allow_abbrev=False,
        argument_default=argparse.SUPPRESS,
    )
    verbs = reassign.add_mutually_exclusive_group(required=True)
    for spec in VERBS:
        verbs.add_argument(spec.verb.flag, dest="verb", action="store_const", const=spec.verb, help=spec.help)
    reassign.add_argument("--reassignment-json-file", metavar="FILE", help=PLAN_HELP)
    add_options(reassign)


def read_plan_file(path: str) -> Plan:
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ValueError(f"cannot read --reassignment-json-file {path}: {e.strerror or e}") from None
    try:
        return parse_plan(data)
    except PlanError as e:
        raise ValueError(f"{path}: {e}") from None


def _optional_str(values: Mapping[str, object], flag: str) -> str | None:
    value = values.get(flag)
    assert value is None or isinstance(value, str), flag
    return value


def reassign_settings(
    verb: Verb,
    plan_path: str | None,
    values: Mapping[str, object],
    read_plan: Callable[[str], Plan] | None = None,
) -> ReassignSettings:
    """The verb's needs checked against the merged ``values`` (keyed by flag name), then the
    plan read (by ``read_plan``, :func:`read_plan_file` unless given) and validated: a plan that
    cannot be used is a bad argument, like a bad flag."""
    bootstrap, zk = _optional_str(values, "bootstrap-controller"), _optional_str(values, "zk")
    check_arguments(verb, plan_path, bootstrap_controller=bootstrap, zk_connect=zk)
    timeout = values["request-timeout-s"]
    assert isinstance(timeout, int | float)
    return ReassignSettings(
        verb=verb,
        plan=None if plan_path is None else (read_plan or read_plan_file)(plan_path),
        plan_path=plan_path,
        bootstrap_controller=bootstrap,
        zk_connect=zk,
        auth_token=_optional_str(values, "auth-token"),
        request_timeout_s=float(timeout),
        tls=client_tls(*(_optional_str(values, f) for f in ("ca-file", "cert-file", "key-file"))),
    )

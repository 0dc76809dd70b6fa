"""``reassignd admin demote|promote --broker N``'s command line: ``POST /v1/brokers/{N}/demote``
(or ``/promote``) from the command line (the run: :mod:`reassignd.admin.demote`).

Demote moves every leadership off broker N before maintenance, without moving data: each partition
hosting it gets the same replicas with N last and the partitions it led a preferred election.
Promote restores the orders the demotion recorded. The broker is per run (command line only); the
connection flags are every admin client's (``REASSIGND_*``, the ``[admin]`` table). The outcome is
printed one line per refused partition, then a summary. Exit codes: 0 nothing refused, 1 a
partition refused or the run failed (one line on stderr), 2 bad arguments.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field

from reassignd.admin.connection import optional_str
from reassignd.admin.settings import REQUEST_TIMEOUT_S
from reassignd.int_limits import INT32_MAX
from reassignd.log_setup import LogSettings

VERBS = ("demote", "promote")
DESCRIPTION = {
    "demote": "Move every leadership off a broker (same replica sets, the broker last), before maintenance.",
    "promote": "Restore the replica orders a broker's demotion recorded, and its leaderships.",
}
EPILOG = (
    "--broker is command-line only; the other flags also read REASSIGND_<FLAG> and the --config file "
    "(top level or an [admin] table). Exit codes: 0 nothing refused, 1 a partition refused or the "
    "request failed, 2 bad arguments."
)


@dataclass(frozen=True, slots=True)
class DemoteSettings:
    verb: str  # "demote" or "promote"
    broker_id: int
    bootstrap_controller: str
    auth_token: str | None = None
    request_timeout_s: float = REQUEST_TIMEOUT_S

    @property
    def path(self) -> str:
        return f"/v1/brokers/{self.broker_id}/{self.verb}"


@dataclass(frozen=True, slots=True)
class AdminDemoteCommand:
    """``reassignd admin demote|promote``: a one-shot client, not a service."""

    settings: DemoteSettings
    log: LogSettings = field(default_factory=lambda: LogSettings(level="warning"))


def add_demote_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--broker", metavar="N", required=True, help="the broker's id")


def demote_settings(
    verb: str, arguments: Mapping[str, object], values: Mapping[str, object]
) -> DemoteSettings:
    """ValueError with a one-line reason for anything unusable."""
    text = str(arguments.get("broker", ""))
    if not (text.isascii() and text.isdigit()) or len(text) > 10 or int(text) > INT32_MAX:
        raise ValueError(f"--broker: expected a broker id (0 to {INT32_MAX}), got {text!r}")
    bootstrap = optional_str(values, "bootstrap-controller")
    if bootstrap is None:
        raise ValueError(
            f"{verb} needs --bootstrap-controller URL (or REASSIGND_BOOTSTRAP_CONTROLLER), the controller's HTTP API"
        )
    timeout = values["request-timeout-s"]
    assert isinstance(timeout, int | float)
    return DemoteSettings(verb, int(text), bootstrap, optional_str(values, "auth-token"), float(timeout))

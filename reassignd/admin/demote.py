"""``reassignd admin demote|promote``: the request and the lines it prints.

The imperative shell asks the HTTP API (:mod:`reassignd.api_client.client`, which finds the active
controller from any instance); :func:`report` (pure) words the answer: one line per refused
partition, then a summary. Exit codes: 0 nothing refused; 1 a partition refused, or a failure of
the run (one line on stderr). Bad arguments never get here (exit 2).
"""

from __future__ import annotations

import asyncio
from typing import TextIO

import uvloop

from reassignd.admin.demote_command import DemoteSettings
from reassignd.api_client.client import ApiClient
from reassignd.api_client.errors import ClientError
from reassignd.contracts.reassignments import DemotionResponse
from reassignd.errors import error_name


def report(verb: str, outcome: DemotionResponse) -> tuple[list[str], bool]:
    """One line per refused partition, then the summary; and whether any was refused."""
    refused = [p for p in outcome.partitions if p.error_code != 0]
    done = len(outcome.partitions) - len(refused)
    lines = [
        f"Refused {p.topic}-{p.partition}: {error_name(p.error_code)} ({p.error_code})"
        + (f": {p.error_message}" if p.error_message else "")
        for p in refused
    ]
    past = "demoted" if verb == "demote" else "promoted"
    if not outcome.partitions:
        lines.append(f"Broker {outcome.broker_id}: nothing to {verb}.")
    else:
        lines.append(
            f"Broker {outcome.broker_id} {past}: {done} partition(s) done, {outcome.leaders_moved} "
            f"leadership(s) moved, {len(refused)} refused."
        )
    return lines, bool(refused)


async def run_demote(settings: DemoteSettings, out: TextIO) -> int:
    async with ApiClient.open(
        settings.bootstrap_controller, settings.auth_token, settings.request_timeout_s
    ) as api:
        answer = await api.typed("POST", settings.path, DemotionResponse)
    lines, refused = report(settings.verb, answer)
    for line in lines:
        print(line, file=out)
    out.flush()
    return 1 if refused else 0


def run_admin_demote(settings: DemoteSettings, out: TextIO, err: TextIO) -> int:
    """Run it to its end; a failure of the run is one line on ``err`` and exit 1."""
    try:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(run_demote(settings, out))
    except ClientError as e:
        reason = str(e)
    except KeyboardInterrupt:
        reason = "interrupted"
    out.flush()
    print(f"reassignd admin {settings.verb}: error: {reason}", file=err)
    return 1

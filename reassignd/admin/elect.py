"""``reassignd admin elect``: ``POST /v1/elections`` from the command line, printed as Kafka's
``kafka-leader-election.sh`` prints its outcome.

The imperative shell asks the HTTP API (:mod:`reassignd.api_client.client`, which finds the active
controller from any instance); :func:`report` (pure) words the answer. Exit codes: 0 every
partition elected or led by a valid replica already; 1 a partition that could not be elected, or a
failure of the run (one line on stderr). Bad arguments never get here (exit 2).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TextIO

import uvloop

from reassignd.admin.elect_command import ElectSettings
from reassignd.api_client.client import ApiClient
from reassignd.api_client.errors import ClientError
from reassignd.contracts.reassignments import ElectLeadersResponse
from reassignd.errors import error_name
from reassignd.topic_partition import TopicPartition

ELECTIONS = "/v1/elections"
ELECTION_NOT_NEEDED = 84


@dataclass(frozen=True, slots=True)
class ElectionOutcome:
    tp: TopicPartition
    error_code: int
    error_message: str | None


def election_outcomes(answer: ElectLeadersResponse) -> list[ElectionOutcome]:
    """The ``POST /v1/elections`` answer's per-partition results, in order."""
    return [
        ElectionOutcome((t.topic, p.partition), p.error_code, p.error_message)
        for t in answer.replica_election_results
        for p in t.partitions
    ]


def _names(tps: list[TopicPartition]) -> str:
    return ", ".join(f"{t}-{p}" for t, p in tps)


def report(election_type: str, outcomes: list[ElectionOutcome]) -> tuple[list[str], bool]:
    """Kafka's lines (elected, valid leaders already, one per failure, then the count of failures)
    and whether a partition could not be elected."""
    kind = election_type.upper()
    elected = [o.tp for o in outcomes if o.error_code == 0]
    valid = [o.tp for o in outcomes if o.error_code == ELECTION_NOT_NEEDED]
    failed = [o for o in outcomes if o.error_code not in (0, ELECTION_NOT_NEEDED)]
    lines: list[str] = []
    if elected:
        lines.append(f"Successfully completed leader election ({kind}) for partitions {_names(elected)}")
    if valid:
        lines.append(f"Valid replica already elected for partitions {_names(valid)}")
    for o in failed:
        reason = f"{error_name(o.error_code)} ({o.error_code})" + (
            f": {o.error_message}" if o.error_message else ""
        )
        lines.append(
            f"Error completing leader election ({kind}) for partition: {o.tp[0]}-{o.tp[1]}: {reason}"
        )
    if failed:
        lines.append(f"{len(failed)} replica(s) could not be elected")
    if not outcomes:
        lines.append(f"No partition needed a leader election ({kind})")
    return lines, bool(failed)


async def run_elect(settings: ElectSettings, out: TextIO) -> int:
    async with ApiClient.open(
        settings.bootstrap_controller, settings.auth_token, settings.request_timeout_s
    ) as api:
        answer = await api.typed("POST", ELECTIONS, ElectLeadersResponse, body=settings.body)
    lines, failed = report(settings.election_type, election_outcomes(answer))
    for line in lines:
        print(line, file=out)
    out.flush()
    return 1 if failed else 0


def run_admin_elect(settings: ElectSettings, out: TextIO, err: TextIO) -> int:
    """Run the election to its end; a failure of the run is one line on ``err`` and exit 1."""
    try:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(run_elect(settings, out))
    except ClientError as e:
        reason = str(e)
    except KeyboardInterrupt:
        reason = "interrupted"
    out.flush()
    print(f"reassignd admin elect: error: {reason}", file=err)
    return 1

"""``reassignd admin batch``: the controller's batch endpoints from the command line.

The imperative shell: each verb asks the HTTP API (:mod:`reassignd.api_client.client`, which finds the
active controller from any instance), then prints what :mod:`reassignd.admin.batch_report` makes
of the answers. Exit codes: 0 done; 1 a refused partition, a batch the controller would not take
(its id in use with another body) or a failure of the run (one line on stderr). A batch file that
cannot be used never gets here: the command line refuses it (exit 2).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TextIO

import uvloop

from reassignd.admin import batch_report as report
from reassignd.admin.batch_command import BatchSettings, BatchVerb
from reassignd.admin.batch_file import BatchBody
from reassignd.api_client.client import ApiClient
from reassignd.api_client.errors import ApiError, ClientError

# Answers about one batch of a file; the others are still submitted. Any other failure ends the run.
_PER_BATCH_STATUS = (400, 409)


def _say(out: TextIO, lines: str | Iterable[str]) -> None:
    for line in [lines] if isinstance(lines, str) else lines:
        print(line, file=out)
    out.flush()


async def submit(api: ApiClient, bodies: Iterable[BatchBody], out: TextIO) -> int:
    """Each batch in order; one the controller refuses whole is reported and the next goes on."""
    failed = False
    for b in bodies:
        try:
            submitted = await api.submit_batch(b.body)
        except ApiError as e:
            if e.status not in _PER_BATCH_STATUS:
                raise
            name = b.batch_id if b.batch_id is not None else b.where or "the batch"
            _say(out, f"Batch {name} not submitted: {e}")
            failed = True
            continue
        _say(out, report.submitted_lines(submitted))
        failed = failed or bool(report.refused(submitted))
    return 1 if failed else 0


async def list_batches(api: ApiClient, out: TextIO) -> int:
    _say(out, report.list_lines((await api.batches()).batches))
    return 0


async def describe(api: ApiClient, batch_id: str, out: TextIO) -> int:
    _say(out, report.describe_lines(await api.batch(batch_id)))
    return 0


async def control(api: ApiClient, batch_id: str, action: str, out: TextIO) -> int:
    status = await api.control_batch(batch_id, action)
    _say(out, report.control_line(action, status))
    return 0


async def run_verb(settings: BatchSettings, out: TextIO) -> int:
    async with ApiClient.open(
        settings.bootstrap_controller, settings.auth_token, settings.request_timeout_s, tls=settings.tls
    ) as api:
        verb = settings.verb
        if verb is BatchVerb.SUBMIT:
            return await submit(api, settings.bodies, out)
        if verb is BatchVerb.LIST:
            return await list_batches(api, out)
        assert settings.batch_id is not None, f"{verb.value} names a batch"
        if verb is BatchVerb.DESCRIBE:
            return await describe(api, settings.batch_id, out)
        return await control(api, settings.batch_id, verb.value, out)


def run_batch(settings: BatchSettings, out: TextIO, err: TextIO) -> int:
    """Run one verb to its end; a failure of the run is one line on ``err`` and exit 1."""
    try:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(run_verb(settings, out))
    except ClientError as e:
        reason = str(e)
    except KeyboardInterrupt:
        reason = "interrupted"
    out.flush()
    print(f"reassignd admin batch: error: {reason}", file=err)
    return 1

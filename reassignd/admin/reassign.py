"""``reassignd admin reassign``: Kafka's ``kafka-reassign-partitions`` against reassignd.

The imperative shell: each verb asks the controller's HTTP API (or, for KIP-236's verbs,
ZooKeeper: :mod:`reassignd.admin.znodes`), then prints what :mod:`reassignd.admin.report` makes of
the answers. Exit codes: 0 done, 1 a partition or the run failed (the reason on stderr). A plan
that cannot be used never gets here: the command line refuses it (exit 2).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping
from typing import Protocol, TextIO

import uvloop

from reassignd.admin import log_dir_report, report
from reassignd.admin.log_dir_report import Replica
from reassignd.admin.plan import plan_request
from reassignd.admin.settings import LOG_DIR_TIMEOUT_MS, SPECS, ReassignSettings, Verb
from reassignd.api_client.client import ApiClient
from reassignd.api_client.errors import ApiError, ClientError
from reassignd.api_client.shapes import (
    NO_REASSIGNMENT_IN_PROGRESS,
    partition_results,
    reassignments_by_partition,
)
from reassignd.contracts.cluster import MoveLogDirsResponse, Partition
from reassignd.contracts.reassignments import AlterReassignmentsResponse
from reassignd.contracts.requests import MoveLogDirsRequest
from reassignd.plan_format import Plan
from reassignd.topic_partition import Replicas, TopicPartition

UNKNOWN_TOPIC_OR_PARTITION = 3


def _say(out: TextIO, lines: str | Iterable[str]) -> None:
    for line in [lines] if isinstance(lines, str) else lines:
        print(line, file=out)
    out.flush()


# --- reads -----------------------------------------------------------------------------------------


async def _topic(api: ApiClient, topic: str) -> dict[int, Partition] | None:
    """A topic's partitions; None when the controller knows no such topic."""
    try:
        return await api.topic(topic)
    except ApiError as e:
        if e.error_code == UNKNOWN_TOPIC_OR_PARTITION:
            return None
        raise


async def _partitions(api: ApiClient, wanted: Iterable[TopicPartition]) -> dict[TopicPartition, Partition]:
    """The wanted partitions that exist, one topic read per topic (concurrently; every read is
    over before the first failure is raised)."""
    chosen = set(wanted)
    topics = sorted({t for t, _ in chosen})
    found = await asyncio.gather(*(_topic(api, t) for t in topics), return_exceptions=True)
    if failure := next((f for f in found if isinstance(f, BaseException)), None):
        raise failure
    return {
        (t, p): info
        for t, partitions in zip(topics, found, strict=True)
        if not isinstance(partitions, BaseException)
        for p, info in (partitions or {}).items()
        if (t, p) in chosen
    }


# --- the verbs -------------------------------------------------------------------------------------


class LogDirMover(Protocol):
    """What moving a plan's log dirs needs of the API client."""

    async def move_log_dirs(self, body: MoveLogDirsRequest) -> MoveLogDirsResponse: ...


async def move_log_dirs(api: LogDirMover, moves: Mapping[Replica, str], timeout_ms: int, out: TextIO) -> int:
    """Kafka's executeMoves: ask each broker to move its replicas between its dirs; those it does
    not host yet (REPLICA_NOT_AVAILABLE: the inter-broker move has not brought them) are asked
    again every 100 ms until ``timeout_ms``. Each ask is idempotent at the agent (a replica
    already in its dir, or already being copied there, answers 0 and is left as it is), so a
    second ``--execute`` of the same plan moves nothing twice. Any other answer stops the run."""
    deadline = time.monotonic() + timeout_ms / 1000
    pending = dict(moves)
    while True:
        answers = {}
        for request in log_dir_report.move_requests(pending):
            answers[request.broker] = (await api.move_log_dirs(request)).results
        moved = log_dir_report.move_round(answers)
        if moved.started:
            _say(out, log_dir_report.started_lines(moved.started, moves))
        if moved.refused:
            _say(out, log_dir_report.refused_lines(moved.refused))
            return 1
        pending = {r: moves[r] for r in moved.pending}
        if not pending:
            return 0
        if time.monotonic() >= deadline:
            _say(out, log_dir_report.timed_out_line(moved.pending))
            return 1
        await asyncio.sleep(log_dir_report.RETRY_INTERVAL_S)


async def execute(api: ApiClient, plan: Plan, out: TextIO, timeout_ms: int = LOG_DIR_TIMEOUT_MS) -> int:
    """Print the current assignment as a rollback plan, start the plan, then (as Kafka's tool)
    move the replicas the plan names a log dir for into it."""
    current = await _partitions(api, plan.partitions)
    # The replicas before any move in flight (RS − AR): where a rollback should go back to.
    _say(out, report.rollback_text({tp: info.original for tp, info in current.items()}))
    results = partition_results(await api.alter(plan_request(plan)))
    started = [tp for tp, r in results if r.ok]
    failed: list[report.RefusedPartition] = [(tp, r) for tp, r in results if not r.ok]
    if started:
        _say(out, report.started_line(started))
    if failed:
        _say(out, report.execute_errors(failed))
        return 1
    moves = log_dir_report.dir_moves(plan)
    if moves:
        return await move_log_dirs(api, moves, timeout_ms, out)
    return 0


async def verify(api: ApiClient, plan: Plan, out: TextIO) -> int:
    """Kafka's --verify: in progress, complete, or done elsewhere. Exit 0 either way, as Kafka."""
    moving = reassignments_by_partition(await api.reassignments(plan.topics))
    settled = [tp for tp in plan.partitions if tp not in moving]
    current: dict[TopicPartition, Replicas] = {
        tp: info.replicas for tp, info in (await _partitions(api, settled)).items()
    }
    _say(out, report.verify_lines(report.verify_states(plan.targets, moving, current)))
    moves = log_dir_report.dir_moves(plan)
    if moves:
        doc = await api.log_dirs({broker for _, _, broker in moves})
        _say(out, log_dir_report.verify_dir_lines(moves, doc))
    return 0


async def list_moving(api: ApiClient, out: TextIO) -> int:
    _say(out, report.list_lines(reassignments_by_partition(await api.reassignments())))
    return 0


def _cancel_report(answer: AlterReassignmentsResponse, out: TextIO, *, none_line: str) -> int:
    results = partition_results(answer)
    cancelled = [tp for tp, r in results if r.ok]
    not_moving = [tp for tp, r in results if r.error_code == NO_REASSIGNMENT_IN_PROGRESS]
    failed: list[report.RefusedPartition] = [
        (tp, r) for tp, r in results if not r.ok and r.error_code != NO_REASSIGNMENT_IN_PROGRESS
    ]
    if cancelled:
        _say(out, report.cancelled_line(cancelled))
    if not cancelled and not failed:
        _say(out, none_line)
    elif not_moving:
        _say(out, report.not_moving_line(not_moving))
    if failed:
        _say(out, report.cancel_errors(failed))
        return 1
    return 0


async def cancel(api: ApiClient, plan: Plan, out: TextIO) -> int:
    """Kafka's --cancel: ``replicas: null`` for each partition of the plan (its replicas unused)."""
    results = await api.cancel(plan.partitions)
    return _cancel_report(results, out, none_line=report.NONE_ACTIVE)


async def cancel_all(api: ApiClient, out: TextIO) -> int:
    results = await api.cancel_all()
    return _cancel_report(results, out, none_line=report.NONE_FOUND)


# --- the run ---------------------------------------------------------------------------------------


def _plan(settings: ReassignSettings) -> Plan:
    assert settings.plan is not None, f"{settings.verb.flag} runs with a plan"
    return settings.plan


async def reassign(settings: ReassignSettings, out: TextIO) -> int:
    if SPECS[settings.verb].via_zk:
        from reassignd.admin.znodes import run_znode_verb  # noqa: PLC0415 (only these verbs need ZooKeeper)

        return await run_znode_verb(settings, out)
    assert settings.bootstrap_controller is not None
    async with ApiClient.open(
        settings.bootstrap_controller, settings.auth_token, settings.request_timeout_s, tls=settings.tls
    ) as api:
        match settings.verb:
            case Verb.EXECUTE:
                return await execute(api, _plan(settings), out, settings.log_dir_timeout_ms)
            case Verb.VERIFY:
                return await verify(api, _plan(settings), out)
            case Verb.LIST:
                return await list_moving(api, out)
            case Verb.CANCEL:
                return await cancel(api, _plan(settings), out)
            case Verb.CANCEL_ALL:
                return await cancel_all(api, out)
    raise AssertionError(f"{settings.verb.flag} is not an HTTP verb")


def run_reassign(settings: ReassignSettings, out: TextIO, err: TextIO) -> int:
    """Run one verb to its end; a failure of the run is one line on ``err`` and exit 1."""
    try:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(reassign(settings, out))
    except ClientError as e:
        reason = str(e)
    except KeyboardInterrupt:
        reason = "interrupted"
    out.flush()
    print(f"reassignd admin reassign: error: {reason}", file=err)
    return 1

"""``reassignd feed run DIR|DIR/batches.json``: submit a plan's batches to ``POST /v1/batches``
and follow them to the end.

- **Back-pressure**: at most ``--max-pending`` of the plan's batches unfinished (pending, running
  or paused) at once; the next is submitted when one ends.
- **Resume without duplicates**: the batch ids come from the plan (``<plan_id>-NNNN``). At start
  each id is looked up (``GET /v1/batches/{id}``); a batch the controller has is followed, never
  submitted again. A submission whose answer was lost is harmless too: the same id with the same
  body answers the same batch.
- **Refusals**: partitions refused as STALE_PLAN (10002: moved by someone else since the plan) or
  BATCH_CONFLICT (10003: in another unfinished batch) are reported, and the rest of the batch runs.
- **Interrupt** (Ctrl-C, SIGTERM): on a terminal the feeder asks; otherwise ``--on-interrupt``
  says: ``leave`` the batches running (default), ``stop`` them (running moves reverted, pending
  dropped) or ``rollback`` (stop, then move what completed back).
- Exit 0 when every batch completed, 1 when one ended otherwise (or the run failed).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from reassignd.admin.connection import tls_of
from reassignd.api_client.client import ApiClient
from reassignd.api_client.errors import ApiError, ClientError
from reassignd.contracts.batches import BatchStatus
from reassignd.feeder.command_line import INTERRUPT_CHOICES
from reassignd.feeder.progress_view import FINAL, batch_line, overall_line
from reassignd.tls import ClientTls

REFUSALS = {10002: "STALE_PLAN", 10003: "BATCH_CONFLICT"}
UNKNOWN_BATCH = 404


class FeedError(Exception):
    """Bad input: the batches file (exit 2)."""


@dataclass
class RunOptions:
    max_pending: int = 2
    poll_s: float = 1.0
    on_interrupt: str = "leave"
    timeout_s: float = 30.0


@dataclass
class FeedState:
    order: list[str]
    bodies: dict[str, dict[str, Any]]
    statuses: dict[str, BatchStatus] = field(default_factory=dict)
    refused: dict[str, list[str]] = field(default_factory=dict)

    def unfinished(self) -> list[str]:
        return [b for b in self.order if b in self.statuses and self.statuses[b].state not in FINAL]

    def next_to_submit(self, max_pending: int) -> list[str]:
        """The plan's next batches the back-pressure allows (in plan order)."""
        room = max_pending - len(self.unfinished())
        waiting = [b for b in self.order if b not in self.statuses]
        return waiting[: max(0, room)]

    def done(self) -> bool:
        return all(b in self.statuses and self.statuses[b].state in FINAL for b in self.order)


def load_batches(path: str) -> FeedState:
    p = Path(path)
    if p.is_dir():
        p = p / "batches.json"
    try:
        doc = json.loads(p.read_text())
    except OSError as e:
        raise FeedError(f"cannot read {p}: {e.strerror or e}") from None
    except ValueError as e:
        raise FeedError(f"{p}: not JSON: {e}") from None
    batches = doc.get("batches") if isinstance(doc, dict) else None
    if not isinstance(batches, list) or not batches:
        raise FeedError(f'{p}: expected {{"batches": [POST /v1/batches bodies...]}} with at least one batch')
    bodies: dict[str, dict[str, Any]] = {}
    for i, body in enumerate(batches):
        batch_id = body.get("batch_id") if isinstance(body, dict) else None
        if not isinstance(batch_id, str) or not batch_id:
            raise FeedError(
                f"{p}: batches[{i}] has no batch_id (ids come from the plan, so a run can resume)"
            )
        if batch_id in bodies:
            raise FeedError(f"{p}: batches[{i}]: batch id {batch_id!r} appears twice")
        bodies[batch_id] = body
    return FeedState(list(bodies), bodies)


async def _status(api: ApiClient, batch_id: str) -> BatchStatus | None:
    try:
        return await api.batch(batch_id)
    except ApiError as e:
        if e.status == UNKNOWN_BATCH:
            return None
        raise


async def _submit(api: ApiClient, state: FeedState, batch_id: str, out: IO[str]) -> None:
    answer = await api.submit_batch(state.bodies[batch_id])
    state.statuses[batch_id] = answer.batch
    refused = [
        f"{p.topic}-{p.partition} {REFUSALS.get(p.error_code, p.error_name)}"
        + (f": {p.error_message}" if p.error_message else "")
        for p in answer.partitions
        if p.error_code
    ]
    verb = "submitted" if answer.created else "already known"
    print(
        f"batch {batch_id} {verb}: {len(answer.partitions) - len(refused)} moves",
        file=out,
        flush=True,
    )
    if refused:
        state.refused[batch_id] = refused
        for line in refused:
            print(f"  refused {line}", file=out, flush=True)


class Printer:
    """Progress lines: redrawn in place on a terminal, appended otherwise (one block per poll)."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.tty = out.isatty()
        self.drawn = 0
        self.last_plain = 0.0

    def show(self, state: FeedState, force: bool = False) -> None:
        lines = [time.strftime("%H:%M:%S ") + overall_line(state.order, state.statuses)]
        lines += [batch_line(b, state.statuses.get(b)) for b in state.order if b in state.statuses]
        if self.tty:
            if self.drawn:
                self.out.write(f"\x1b[{self.drawn}F\x1b[J")
            self.drawn = len(lines)
        elif not force and time.monotonic() - self.last_plain < 5.0:
            return  # plain output: a block every 5 s at most
        self.last_plain = time.monotonic()
        self.out.write("\n".join(lines) + "\n")
        self.out.flush()


async def feed(api: ApiClient, state: FeedState, options: RunOptions, out: IO[str]) -> int:
    for batch_id in state.order:  # resume: what the controller already has is followed, not resent
        status = await _status(api, batch_id)
        if status is not None:
            state.statuses[batch_id] = status
            print(f"batch {batch_id} found on the controller: {status.state}", file=out, flush=True)
    printer = Printer(out)
    while not state.done():
        for batch_id in state.next_to_submit(options.max_pending):
            await _submit(api, state, batch_id, out)
        printer.show(state)
        await asyncio.sleep(options.poll_s)
        for batch_id in state.unfinished():
            status = await _status(api, batch_id)
            if status is not None:
                state.statuses[batch_id] = status
    printer.show(state, force=True)
    ended = {b: state.statuses[b].state for b in state.order}
    not_completed = {b: s for b, s in ended.items() if s != "completed"}
    print(
        f"all {len(ended)} batches ended: "
        + ("completed" if not not_completed else ", ".join(f"{b} {s}" for b, s in not_completed.items())),
        file=out,
        flush=True,
    )
    if state.refused:
        print(
            f"{sum(map(len, state.refused.values()))} partitions were refused (see above)",
            file=out,
            flush=True,
        )
    return 0 if not not_completed else 1


async def on_interrupt(api: ApiClient, state: FeedState, choice: str, out: IO[str]) -> None:
    unfinished = state.unfinished()
    if choice == "leave" or not unfinished:
        print(f"leaving {len(unfinished)} batches running on the controller", file=out, flush=True)
        return
    action = "stop" if choice == "stop" else "rollback"
    for batch_id in unfinished:
        with contextlib.suppress(ApiError):
            status = await api.control_batch(batch_id, action)
            print(f"batch {batch_id}: {status.state}", file=out, flush=True)


def ask(choice: str) -> str:
    if not sys.stdin.isatty():
        return choice
    answer = input(
        "\ninterrupted: leave the batches running, stop them, or roll back? [leave/stop/rollback] "
    )
    return answer.strip().lower() if answer.strip().lower() in INTERRUPT_CHOICES else choice


async def run_async(
    path: str,
    bootstrap: str,
    token: str | None,
    options: RunOptions,
    out: IO[str],
    err: IO[str],
    tls: ClientTls | None = None,
) -> int:
    state = load_batches(path)
    async with ApiClient.open(bootstrap, token, options.timeout_s, tls=tls) as api:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        interrupted = False

        def interrupt() -> None:
            nonlocal interrupted
            interrupted = True
            task.cancel()

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, interrupt)
        try:
            return await feed(api, state, options, out)
        except asyncio.CancelledError:
            if not interrupted:
                raise
            task.uncancel()
            await on_interrupt(api, state, ask(options.on_interrupt), out)
            return 130
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)


def run_feed_run(values: Mapping[str, Any], out: IO[str], err: IO[str]) -> int:
    """``reassignd feed run`` with the merged option values (keyed by flag, parsed)."""
    options = RunOptions(
        max_pending=int(values.get("max-pending") or 2),
        poll_s=float(values.get("poll-s") or 1.0),
        on_interrupt=str(values.get("on-interrupt") or "leave"),
    )
    try:
        tls = tls_of(values)
    except ValueError as e:
        print(f"reassignd feed run: error: {e}", file=err)
        return 2
    try:
        return asyncio.run(
            run_async(
                values["plan"],
                values["bootstrap-controller"],
                values.get("auth-token"),
                options,
                out,
                err,
                tls,
            )
        )
    except FeedError as e:
        print(f"reassignd feed run: error: {e}", file=err)
        return 2
    except ClientError as e:
        print(f"reassignd feed run: {e}", file=err)
        return 1

"""The scenario the poison and adversarial kinds share: an input injected while moves are in flight
with two controllers running, then the same checks for every input.

Two controllers, five short-id and six ten-digit-id agents; topic ``t`` moving slowly from
brokers 1-2 to 3-4; the case's input injected; then within ``OBSERVE_S``: the input reported (the
case's fragments in ``GET /v1/status`` problems and a controller log line), a new move of topic
``u`` accepted and completed, the epoch moved at most once, the controllers' resident memory grown
by less than ``RSS_BOUND_BYTES``; then every accepted move completed, nothing stray or offline.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from reassignd.testing.polling import eventually
from reassignd.zk import codec, paths
from tests.faults.invariants import OfflineSampler, Violation
from tests.faults.scenarios import (
    FAST,
    SLOW,
    Controllers,
    Env,
    Outcome,
    finish,
    make_topic,
    retry_zk,
    set_rate,
    tps_of,
    wait_brokers,
    wait_online,
)

OBSERVE_S = 5.0  # the epoch must move at most once this long after the input: a storm moves it
# twice within ~3 s (the other instance elected at once, this one again after its backoff, at
# most REELECT_BACKOFF_MAX_S = 2 s)
RSS_BOUND_BYTES = 200 * 1024 * 1024  # a controller's resident memory may grow this much, no more
SHORT = (1, 2, 3, 4, 5)  # brokers with short ids (agents)
LONG = tuple(2_000_000_001 + i for i in range(6))  # agents with ten-digit ids
# ten-digit ids of brokers that never register: the big topic's long replica lists
ABSENT = tuple(2_100_000_001 + i for i in range(19))
BIG_PARTITIONS = 4_000  # each on [1, *ABSENT]: a topic znode of about 880 KB


@dataclass
class Run:
    """What a case's injection sees: the environment, the controllers, and what it expects."""

    env: Env
    controllers: Controllers
    expected: dict[tuple[str, int], tuple[int, ...]]  # final replicas of the topics it checks
    extra: dict[str, Any] = field(default_factory=dict)  # whatever a kind keeps for its cases

    async def post(self, path: str, body: Any) -> tuple[int, Any]:
        c = await self.controllers.wait_active()
        assert c is not None, "no active controller"
        return await c.post(path, body)


Inject = Callable[[Run], Awaitable[str | None]]  # returns a violation message, or None


@dataclass(frozen=True)
class Case:
    name: str
    inject: Inject
    reported: tuple[str, ...]  # each must appear in some problem's path or reason
    big_topic: bool = False  # the case needs the big topic
    cleanup: Inject | None = None  # after the observation, before the invariants are checked
    setup: Inject | None = None  # before the moves start and the epoch is read
    flags: tuple[str, ...] = ()  # extra command-line flags of both controllers


async def epoch(env: Env) -> int:
    znode = await env.zk.get(paths.CONTROLLER_EPOCH)
    return codec.decode_controller_epoch(znode.data)


async def problems(run: Run) -> list[dict[str, Any]]:
    c = await run.controllers.active()
    if c is None:
        return []
    status = await c.status()
    return list(status["problems"]) if status else []


def rss_bytes(pid: int) -> int | None:
    """VmRSS of a live process (None once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def controllers_rss(controllers: Controllers) -> dict[int, int]:
    """Controller id -> resident bytes, of the instances alive now."""
    sizes = {i: rss_bytes(c.proc.popen.pid) for i, c in controllers.by_id.items() if c.proc.alive}
    return {i: s for i, s in sizes.items() if s is not None}


async def input_scenario(
    env: Env,
    kind: str,
    seed: int,
    chosen: Case,
    controllers: Controllers,
) -> Outcome:
    """Run ``chosen`` (see the module's docstring); ``controllers`` is not started yet: its two
    instances start here, each with ``chosen.flags``."""
    out = Outcome(f"{kind}:{chosen.name}", seed)
    for controller_id in (9000, 9001):
        controllers.start(controller_id, None, *chosen.flags)
    await set_rate(env.zk, None, FAST)
    for b in (3, 4):
        await set_rate(env.zk, b, SLOW)
    env.procs.cluster(len(SHORT), SHORT[0], 2)
    env.procs.cluster(len(LONG), LONG[0], 2)
    if await controllers.wait_active() is None or not await wait_brokers(env.zk, {*SHORT, *LONG}):
        out.violations.append(Violation("scenario", "no active controller and brokers before the input"))
        return out
    moving = {("t", p): (1 + p % 2, 2 - p % 2) for p in range(8)}
    target = {("t", p): (3 + p % 2, 4 - p % 2) for p in range(8)}
    other = {("u", p): (1, 2) for p in range(2)}
    await make_topic(env.zk, "t", {p: r for (_, p), r in moving.items()}, initial_bytes=2_000_000)
    await make_topic(env.zk, "u", {p: r for (_, p), r in other.items()}, initial_bytes=100_000)
    if chosen.big_topic:
        await make_topic(env.zk, "big", {p: (1, *ABSENT) for p in range(BIG_PARTITIONS)})
    online = tps_of({**moving, **other}) + [
        ("big", p) for p in range(BIG_PARTITIONS if chosen.big_topic else 0)
    ]
    if not await wait_online(env.zk, online, timeout_s=60.0):
        out.violations.append(Violation("scenario", "the topics did not come online before the input"))
        return out
    run = Run(env, controllers, {**target, **{tp: (1, 5) for tp in other}})
    if chosen.setup is not None and (problem := await chosen.setup(run)) is not None:
        out.violations.append(Violation("scenario", f"setup: {problem}"))
        return out
    if not await controllers.alter(target):
        out.violations.append(Violation("scenario", "the slow moves were never accepted"))

    sampler = await OfflineSampler(env.zk_connect, ["t", "u"], interval_s=0.5).start()
    epoch_before = await retry_zk(lambda: epoch(env))
    rss_before = controllers_rss(controllers)
    injected = time.monotonic()
    problem = await chosen.inject(run)
    if problem is not None:
        out.violations.append(Violation("scenario", problem))

    async def reported() -> bool:
        text = " ".join(f"{p['path']} {p['reason']}" for p in await problems(run))
        return all(fragment in text for fragment in chosen.reported)

    if chosen.reported and not await eventually(reported, OBSERVE_S, 0.2, or_none=True):
        out.violations.append(
            Violation("scenario", f"the input was not reported ({chosen.reported}): {await problems(run)}")
        )
    logs = "\n".join(controllers.logs().values())
    for fragment in chosen.reported:  # and a log line names it with the reason
        if fragment not in logs:
            out.violations.append(Violation("scenario", f"no controller log line names {fragment!r}"))
    # writes answered normally: a new move accepted at once and completed
    if not await controllers.alter({tp: (1, 5) for tp in other}, timeout_s=10.0, retry=False):
        out.violations.append(Violation("scenario", "a move sent after the input was not accepted"))
    await asyncio.sleep(max(0.0, OBSERVE_S - (time.monotonic() - injected)))
    epoch_after = await retry_zk(lambda: epoch(env))
    out.notes.append(f"controller epoch {epoch_before} -> {epoch_after} in {OBSERVE_S:.0f}s after the input")
    if epoch_after - epoch_before > 1:
        out.violations.append(
            Violation("storm", f"failover storm: the epoch moved {epoch_after - epoch_before} times")
        )
    _check_rss(out, rss_before, controllers_rss(controllers))
    if chosen.cleanup is not None and (problem := await chosen.cleanup(run)) is not None:
        out.violations.append(Violation("scenario", problem))
    for b in (3, 4):
        await set_rate(env.zk, b, FAST)
    if chosen.big_topic:  # its accepted moves complete; the topic is not part of the invariants
        await _moves_done(env, out, "big")
    return await finish(env, out, run.expected, controllers, sampler, expected_live={*SHORT, *LONG})


def _check_rss(out: Outcome, before: dict[int, int], after: dict[int, int]) -> None:
    mib = 1024 * 1024
    out.notes.append(
        "controller RSS "
        + ", ".join(f"{i}: {before[i] // mib} -> {after[i] // mib} MiB" for i in sorted(before) if i in after)
    )
    for i in sorted(before):
        if i in after and after[i] - before[i] > RSS_BOUND_BYTES:
            out.violations.append(
                Violation(
                    "scenario",
                    f"controller {i}'s RSS grew {(after[i] - before[i]) // mib} MiB "
                    f"(bound {RSS_BOUND_BYTES // mib} MiB)",
                )
            )


async def _moves_done(env: Env, out: Outcome, topic: str) -> None:
    async def done() -> bool:
        z = codec.decode_topic((await env.zk.get(paths.topic(topic))).data)
        return not z.adding and not z.removing

    if not await eventually(done, 60.0, 0.2, or_none=True):
        out.violations.append(Violation("assignment", f"moves of {topic} never completed"))

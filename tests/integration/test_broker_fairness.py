"""Fair replication bandwidth in the agents, end to end: real ZooKeeper, controller and agents.

A broker's replication bandwidth is shared max-min fairly among the partitions it copies, whoever
leads them, and among those it serves, whoever fetches them (issue 9, item 6). Each test moves
partitions whose leaders (or followers) are unevenly loaded, so that splitting the bandwidth per
fetch session rather than per partition would give one move several times another's rate, and
compares the moves' ``bytes_done`` at one sampled moment. The bound is wide (the slowest move has
at least a third of the fastest one's bytes): it separates a fair share from a per-session one
(1:6 here), not one machine's speed from another's.
"""

from __future__ import annotations

import functools

import pytest

from reassignd.zk.client import ZkClient
from tests.integration.harness import ControllerProc, Kit, eventually
from tests.integration.reassignment_helpers import (
    FAST,
    alter,
    completed,
    listed,
    make_topic,
    set_broker_rate,
    start,
)

pytestmark = pytest.mark.timeout(150)

SIZE = 4_000_000  # bytes per partition
RATE = "2000000"  # the bottleneck broker's replication bytes/s, each direction
MIN_RATIO = 1 / 3  # slowest ÷ fastest bytes done, at a sampled moment


async def done_when_a_third_copied(
    c: ControllerProc, moves: set[tuple[str, int]]
) -> dict[tuple[str, int], int]:
    """Every move's bytes done, sampled once (one report per agent) when about a third of all
    bytes are copied and each running move has reported; a move no longer listed is complete."""

    async def probe() -> dict[tuple[str, int], int] | None:
        entries = await listed(c)
        progress = {tp: entries[tp]["progress"] for tp in moves if tp in entries}
        if any(p is None for p in progress.values()):
            return None
        done = {tp: SIZE if tp not in progress else progress[tp]["bytes_done"] for tp in moves}
        return done if sum(done.values()) >= len(moves) * SIZE / 3 else None

    return await eventually(probe, timeout_s=90, interval_s=0.2, what="a third of the bytes copied")


def assert_similar(done: dict[tuple[str, int], int]) -> None:
    assert min(done.values()) >= MIN_RATIO * max(done.values()), f"unfair progress: {sorted(done.items())}"


async def test_moves_into_one_broker_from_unevenly_loaded_leaders_progress_alike(
    kit: Kit, zk: ZkClient
) -> None:
    """Broker 4 copies 1 partition led by broker 1, 2 led by broker 2 and 6 led by broker 3:
    shared per leader, broker 1's partition would go 6 times as fast as each of broker 3's."""
    c = await start(kit, zk, 4, rate=FAST)
    await set_broker_rate(zk, 4, RATE)
    counts = {1: 1, 2: 2, 3: 6}
    for leader, n in counts.items():
        await make_topic(zk, f"from{leader}", {p: (leader,) for p in range(n)}, initial_bytes=SIZE)
    moves = {(f"from{leader}", p) for leader, n in counts.items() for p in range(n)}
    result = await alter(c, {tp: [4] for tp in sorted(moves)})
    assert {r["error_code"] for r in result.values()} == {0}

    assert_similar(await done_when_a_third_copied(c, moves))
    for t, p in sorted(moves):
        await eventually(functools.partial(completed, zk, t, p, (4,)), timeout_s=90, what=f"{t}-{p} moved")


async def test_moves_out_of_one_leader_to_unevenly_loaded_followers_progress_alike(
    kit: Kit, zk: ZkClient
) -> None:
    """Broker 1 leads every partition and serves 1 move to broker 2, 2 to broker 3 and 6 to
    broker 4: shared per follower, broker 2's partition would go 6 times as fast as each of
    broker 4's."""
    c = await start(kit, zk, 4, rate=FAST)
    await set_broker_rate(zk, 1, RATE)
    counts = {2: 1, 3: 2, 4: 6}
    for follower, n in counts.items():
        await make_topic(zk, f"to{follower}", {p: (1,) for p in range(n)}, initial_bytes=SIZE)
    targets = {(f"to{follower}", p): [1, follower] for follower, n in counts.items() for p in range(n)}
    result = await alter(c, targets)
    assert {r["error_code"] for r in result.values()} == {0}

    assert_similar(await done_when_a_third_copied(c, set(targets)))
    for (t, p), replicas in sorted(targets.items()):
        await eventually(
            functools.partial(completed, zk, t, p, tuple(replicas)), timeout_s=90, what=f"{t}-{p} moved"
        )

"""Leader elections on demand and the auto leader rebalance, end to end: a real ZooKeeper, a
controller and broker agents as separate processes (each killed and restarted on its own), real
HTTP.

- ``POST /v1/elections``: preferred and unclean elections with Kafka's per-partition codes (0, 84
  ELECTION_NOT_NEEDED, 80 PREFERRED_LEADER_NOT_AVAILABLE, 83 ELIGIBLE_LEADERS_NOT_AVAILABLE, 3).
- Kafka's legacy ``/admin/preferred_replica_election`` znode: elected and deleted by the running
  controller and by a new one's failover load; a malformed one reported and deleted, the
  controller staying active.
- The auto leader rebalance: a completed move whose leader is not its first target replica hands
  leadership to it within one check interval.
- ``reassignd admin elect`` as an operator runs it (Kafka's kafka-leader-election flags and lines).
"""

from __future__ import annotations

import functools
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from reassignd.zk import admin_codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.admin_cli import reassignd_cli
from tests.integration.election_helpers import BIG, INITIAL, create_topic, led_by
from tests.integration.harness import (
    ControllerProc,
    Procs,
    active_one,
    eventually,
    http_get,
    state_of,
    wait_brokers,
)
from tests.integration.reassignment_helpers import FAST, SLOW, alter, completed, replica_on, set_broker_rate

pytestmark = pytest.mark.timeout(180)

NO_REBALANCE = ("--auto-leader-rebalance-enable", "false")


def election(election_type: str, *tps: tuple[str, int]) -> dict[str, Any]:
    return {
        "election_type": election_type,
        "partitions": [{"topic": t, "partition": p} for t, p in tps] if tps else None,
    }


async def elect(c: ControllerProc, body: dict[str, Any]) -> dict[tuple[str, int], int]:
    code, reply = await c.post("/v1/elections", body)
    assert code == 200, reply
    assert reply["error_code"] == 0
    return {
        (t["topic"], p["partition"]): p["error_code"]
        for t in reply["replica_election_results"]
        for p in t["partitions"]
    }


async def leader(zk: ZkClient, topic: str, p: int) -> int | None:
    s = await state_of(zk, topic, p)
    return None if s is None else s.leader


async def in_isr(zk: ZkClient, broker: int, *tps: tuple[str, int]) -> bool:
    for t, p in tps:
        s = await state_of(zk, t, p)
        if s is None or broker not in s.isr:
            return False
    return True


async def elections_counted(c: ControllerProc, trigger: str) -> float:
    code, text = await http_get(c.url + "/metrics")
    assert code == 200
    found = re.search(
        rf'^reassignd_preferred_leader_elections_total{{trigger="{trigger}"}} (\S+)$', text, re.MULTILINE
    )
    return 0.0 if found is None else float(found.group(1))


async def _counted(c: ControllerProc, trigger: str) -> bool:
    return await elections_counted(c, trigger) > 0


async def test_preferred_and_unclean_elections_through_http(procs: Procs, zk: ZkClient) -> None:
    c = procs.controller(9000, 2.0, *NO_REBALANCE)
    await active_one(c)
    await set_broker_rate(zk, None, FAST)
    await set_broker_rate(zk, 3, SLOW)
    brokers = {b: procs.broker(b) for b in (1, 2)}
    await wait_brokers(c, {1, 2})
    await create_topic(zk, "e", (1, 2), {})
    await create_topic(zk, "f", (2, 1), {})
    # u-0 created while broker 3 is away (ISR [1, 2]); 3 then copies it far too slowly to catch up
    await create_topic(zk, "u", (1, 2, 3), {INITIAL: BIG})
    brokers[3] = procs.broker(3)
    await wait_brokers(c, {1, 2, 3})
    await eventually(functools.partial(replica_on, c, 3, "u", 0), what="u-0 copying to broker 3")
    await create_topic(zk, "g", (3,), {})

    # broker 1 goes away and comes back: e-0 is led by 2, its preferred replica 1 back in the ISR
    brokers[1].kill()
    await eventually(lambda: led_by(zk, "e", 2), what="e-0 led by broker 2")
    brokers[1] = procs.restart(brokers[1])
    await eventually(
        lambda: in_isr(zk, 1, ("e", 0), ("u", 0)), what="broker 1 back in the ISRs", timeout_s=60
    )
    assert await leader(zk, "e", 0) == 2

    codes = await elect(c, election("preferred", ("e", 0), ("f", 0), ("nope", 0)))
    assert codes == {("e", 0): 0, ("f", 0): 84, ("nope", 0): 3}
    assert await leader(zk, "e", 0) == 1
    # every partition: those that needed no election are left out of the answer, as Kafka does
    assert await elect(c, election("preferred")) == {("u", 0): 0}
    assert await leader(zk, "u", 0) == 1
    assert await elect(c, election("preferred")) == {}
    assert await elections_counted(c, "request") == 2

    # the whole ISR of u-0 dies; 3 is live but out of sync: only an unclean election helps
    brokers[2].kill()
    await eventually(lambda: led_by(zk, "u", 1, (1,)), what="u-0's ISR shrinks to [1]")
    brokers[1].kill()
    await eventually(lambda: led_by(zk, "u", -1), what="u-0 offline (the topic does not allow unclean)")
    codes = await elect(c, election("preferred", ("u", 0), ("e", 0)))
    assert codes == {("u", 0): 80, ("e", 0): 80}  # the preferred replica 1 is not live
    codes = await elect(c, election("unclean", ("u", 0), ("e", 0), ("g", 0)))
    # u-0: broker 3 leads although out of sync; e-0: no replica is live; g-0 has a live leader
    assert codes == {("u", 0): 0, ("e", 0): 83, ("g", 0): 84}
    assert await led_by(zk, "u", 3, (3,))
    assert await elections_counted(c, "request") == 2  # unclean elections are not preferred ones
    assert "unclean leader election for u-0: broker 3 leads" in c.proc.log()


async def znode_gone(zk: ZkClient) -> bool:
    return await zk.exists(paths.PREFERRED_REPLICA_ELECTION) is None


async def write_election_znode(zk: ZkClient, data: bytes) -> None:
    await zk.create(paths.PREFERRED_REPLICA_ELECTION, data, make_parents=True)


async def test_the_legacy_znode_elects_preferred_replicas_and_is_deleted(procs: Procs, zk: ZkClient) -> None:
    c = procs.controller(9000, 2.0, *NO_REBALANCE)
    status = (await active_one(c))[1]
    await set_broker_rate(zk, None, FAST)
    brokers = {b: procs.broker(b) for b in (1, 2)}
    await wait_brokers(c, {1, 2})
    await create_topic(zk, "z", (1, 2), {})

    async def led_by_two_with_one_in_sync() -> None:
        brokers[1].kill()
        await eventually(lambda: led_by(zk, "z", 2), what="z-0 led by broker 2")
        brokers[1] = procs.restart(brokers[1])
        await eventually(lambda: in_isr(zk, 1, ("z", 0)), what="broker 1 back in z-0's ISR", timeout_s=60)

    await led_by_two_with_one_in_sync()
    before = await state_of(zk, "z", 0)
    assert before is not None
    # as kafka-preferred-replica-election.sh writes it; a partition that does not exist is skipped
    await write_election_znode(zk, admin_codec.encode_preferred_replica_election((("z", 0), ("nope", 1))))
    await eventually(lambda: znode_gone(zk), what="the znode deleted")
    after = await state_of(zk, "z", 0)
    assert after is not None and after.leader == 1 and after.leader_epoch == before.leader_epoch + 1
    assert "names partitions that do not exist (or are being deleted): nope-1" in c.proc.log()

    # a malformed znode is reported and deleted; the controller stays active in the same epoch
    await write_election_znode(zk, b'{"version":1,"partitions":[{"topic":"z"}]}')
    await eventually(lambda: znode_gone(zk), what="the malformed znode deleted")
    code, now = await c.get("/v1/status")
    assert code == 200 and now["active"] and now["controller_epoch"] == status["controller_epoch"]
    assert any(
        p["path"] == paths.PREFERRED_REPLICA_ELECTION
        and "missing field 'partitions[0].partition'" in p["reason"]
        for p in now["problems"]
    ), now["problems"]
    assert await leader(zk, "z", 0) == 1

    # written while no controller runs: the next one's failover load elects, then deletes it
    await led_by_two_with_one_in_sync()
    c.proc.kill()
    await write_election_znode(zk, admin_codec.encode_preferred_replica_election((("z", 0),)))
    c = procs.restart_controller(c)
    await active_one(c)
    await eventually(lambda: znode_gone(zk), what="the znode deleted by the failover load")
    assert await leader(zk, "z", 0) == 1
    # and its watch is armed: a later znode is handled too (z-0 needs nothing: 84, logged)
    await write_election_znode(
        zk, json.dumps({"version": 1, "partitions": [{"topic": "z", "partition": 0}]}).encode()
    )
    await eventually(lambda: znode_gone(zk), what="a later znode deleted")
    # counted once the event that wrote it ends: wait for the count, then check it is exactly one
    await eventually(lambda: _counted(c, "znode"), what="the election counted")
    assert await elections_counted(c, "znode") == 1


async def test_a_completed_move_hands_leadership_to_the_first_target_replica(
    procs: Procs, zk: ZkClient
) -> None:
    interval_s = 2.0
    c = procs.controller(9000, 2.0, "--leader-imbalance-check-interval-s", str(interval_s))
    await active_one(c)
    await set_broker_rate(zk, None, FAST)
    procs.cluster(3)
    await wait_brokers(c, {1, 2, 3})
    await create_topic(zk, "m", (1, 2), {})
    assert await leader(zk, "m", 0) == 1
    # [1, 2] -> [3, 1]: the leader 1 is a target, so the move's end keeps it (as Kafka's does)
    results = await alter(c, {("m", 0): [3, 1]})
    assert results[("m", 0)]["error_code"] == 0
    await eventually(lambda: completed(zk, "m", 0, (3, 1)), what="the move completed")
    done_at = time.monotonic()
    state = await state_of(zk, "m", 0)
    assert state is not None and 3 in state.isr
    # broker 3 prefers m-0 and leads none of its partitions: 100 % > 10 %
    await eventually(lambda: led_by(zk, "m", 3), what="m-0 led by broker 3", interval_s=0.05)
    took_s = time.monotonic() - done_at
    assert took_s <= interval_s + 1.0, f"leadership moved {took_s:.1f}s after the move completed"
    # counted once the event that wrote the new leader ends: wait for the count, then check it is
    # exactly one
    await eventually(lambda: _counted(c, "auto"), what="the auto election counted")
    assert await elections_counted(c, "auto") == 1
    assert "auto leader rebalance: leader imbalance above 10%: broker 3 100% (1/1)" in c.proc.log()


async def admin_elect(*args: str) -> tuple[int, list[str], str]:
    """``python -m reassignd admin elect ARGS`` → (exit code, stdout lines, stderr)."""
    code, out, err = await reassignd_cli("admin", "elect", *args)
    return code, out.splitlines(), err


async def test_admin_elect_as_an_operator_runs_it(procs: Procs, zk: ZkClient, tmp_path: Path) -> None:
    c = procs.controller(9000, 2.0, *NO_REBALANCE)
    await active_one(c)
    await set_broker_rate(zk, None, FAST)
    brokers = {b: procs.broker(b) for b in (1, 2)}
    await wait_brokers(c, {1, 2})
    await create_topic(zk, "a", (1, 2), {})
    brokers[1].kill()
    await eventually(lambda: led_by(zk, "a", 2), what="a-0 led by broker 2")
    brokers[1] = procs.restart(brokers[1])
    await eventually(lambda: in_isr(zk, 1, ("a", 0)), what="broker 1 back in a-0's ISR", timeout_s=60)
    http = ("--bootstrap-controller", c.url)

    code, out, err = await admin_elect(
        "--election-type", "preferred", "--topic", "a", "--partition", "0", *http
    )
    assert (code, out, err) == (
        0,
        ["Successfully completed leader election (PREFERRED) for partitions a-0"],
        "",
    )
    assert await leader(zk, "a", 0) == 1
    code, out, _ = await admin_elect("--election-type", "preferred", "--all-topic-partitions", *http)
    assert (code, out) == (0, ["No partition needed a leader election (PREFERRED)"])
    plan = tmp_path / "elect.json"
    plan.write_text(
        json.dumps({"partitions": [{"topic": "a", "partition": 0}, {"topic": "nope", "partition": 0}]})
    )
    code, out, _ = await admin_elect("--election-type", "preferred", "--path-to-json-file", str(plan), *http)
    assert code == 1
    assert out == [
        "Valid replica already elected for partitions a-0",
        "Error completing leader election (PREFERRED) for partition: nope-0: UNKNOWN_TOPIC_OR_PARTITION (3): "
        "The partition does not exist.",
        "1 replica(s) could not be elected",
    ]

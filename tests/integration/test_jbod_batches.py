"""A batch that moves replicas between the log dirs of their brokers (JBOD ``log_dirs``), against
real processes: two controllers, two agents with two dirs each, the intra-broker throttle slow
enough to catch a copy part way. The active controller is killed mid-copy: the next one reads
the journal (the moves asked), checks the agents' reports, lets the copies finish without asking
again, and completes the batch; the replicas end in the named dirs. A rollback then moves them
back to the dirs they came from."""

from __future__ import annotations

from typing import Any

import pytest

from reassignd.zk import admin_codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.batch_helpers import state_is, status, submit
from tests.integration.harness import ControllerProc, Procs, active_one, eventually, wait_brokers
from tests.integration.reassignment_helpers import make_topic

pytestmark = pytest.mark.timeout(300)

SIZE = 1_000_000
DIR_RATE = 200_000  # bytes/s per broker: a replica of 1 MB takes about 5 s
DIRS = ("/d1", "/d2")


async def where(c: ControllerProc) -> dict[tuple[int, int], tuple[str, bool]]:
    """(broker, partition of ``j``) -> (its dir, whether a future replica of it exists)."""
    code, body = await c.get("/v1/log-dirs")
    assert code == 200, body
    current: dict[tuple[int, int], str] = {}
    futures: set[tuple[int, int]] = set()
    for b in body["brokers"]:
        for d in b["logDirs"]:
            for p in d["partitions"]:
                topic, _, number = p["partition"].rpartition("-")
                if topic != "j":
                    continue
                key = (b["broker"], int(number))
                if p["isFuture"]:
                    futures.add(key)
                else:
                    current[key] = d["logDir"]
    return {k: (d, k in futures) for k, d in current.items()}


async def test_a_controller_killed_mid_copy_leaves_the_dir_moves_to_the_next_one(
    procs: Procs, zk: ZkClient
) -> None:
    a = procs.controller(9000, 2.0, "--dir-move-interval-s", "0.3")
    first, _ = await active_one(a)
    b = procs.controller(9001, 2.0, "--dir-move-interval-s", "0.3")
    await zk.create(
        paths.config_broker(None),
        admin_codec.encode_entity_config({"replica.alter.log.dirs.io.max.bytes.per.second": str(DIR_RATE)}),
        make_parents=True,
    )
    agents = procs.cluster(2, 1, None, "--log-dirs", ",".join(DIRS))
    await wait_brokers(first, {1, 2})
    await make_topic(zk, "j", {0: (1, 2), 1: (2, 1)}, initial_bytes=SIZE)

    async def placed() -> dict[tuple[int, int], tuple[str, bool]] | None:
        w = await where(first)
        return w if len(w) == 4 else None

    before = await eventually(placed, timeout_s=60, what="every replica in a dir")
    other = {k: DIRS[1 - DIRS.index(d)] for k, (d, _) in before.items()}
    # broker 1's replica of j-0 and broker 2's replica of j-1 change dir; the others stay
    body: dict[str, Any] = {
        "batch_id": "disks",
        "partitions": [
            {"topic": "j", "partition": 0, "replicas": [1, 2], "expected_replicas": [1, 2],
             "log_dirs": [other[(1, 0)], "any"]},
            {"topic": "j", "partition": 1, "replicas": [2, 1], "expected_replicas": [2, 1],
             "log_dirs": [other[(2, 1)], "any"]},
        ],
        "limits": {"moves_per_broker": 1},
    }  # fmt: skip
    reply = await submit(first, body)
    assert [p["error_code"] for p in reply["partitions"]] == [0, 0], reply

    async def copying() -> dict[str, Any] | None:
        s = await status(first, "disks")
        part_way = [m for m in s["running"] if 0 < m["bytes_done"] < m["bytes_total"]]
        return s if part_way else None

    await eventually(copying, timeout_s=30, what="a dir move part way, in the batch's status")
    first.proc.kill()
    second, _ = await active_one(b)
    assert second is b
    done = await eventually(
        lambda: state_is(b, "disks", "completed", "failed"), timeout_s=60, what="the batch ended"
    )
    assert done["state"] == "completed" and done["counts"]["completed"] == 2, done
    assert done["bytes_done"] == done["bytes_total"] == 2 * SIZE
    after = await where(b)
    assert after[(1, 0)] == (other[(1, 0)], False) and after[(2, 1)] == (other[(2, 1)], False)
    assert after[(2, 0)] == before[(2, 0)] and after[(1, 1)] == before[(1, 1)]
    # each replica asked once: the next controller found the copies on their way in the reports
    log = agents.log()
    assert log.count(f"move of j-0 to log dir {other[(1, 0)]}") == 1, log
    assert log.count(f"move of j-1 to log dir {other[(2, 1)]}") == 1, log

    code, rolled = await b.post("/v1/batches/disks/rollback", {})
    assert code == 200, rolled
    reverse = "disks.rollback"
    back = await eventually(
        lambda: state_is(b, reverse, "completed", "failed"), timeout_s=60, what="the rollback ended"
    )
    assert back["state"] == "completed" and back["counts"]["completed"] == 2, back
    assert await where(b) == before


async def start(procs: Procs, zk: ZkClient, agents: int) -> ControllerProc:
    c = procs.controller(9000, 2.0, "--dir-move-interval-s", "0.3")
    await active_one(c)
    await zk.create(
        paths.config_broker(None),
        admin_codec.encode_entity_config({"replica.alter.log.dirs.io.max.bytes.per.second": str(DIR_RATE)}),
        make_parents=True,
    )
    procs.cluster(agents, 1, None, "--log-dirs", ",".join(DIRS))
    await wait_brokers(c, set(range(1, agents + 1)))
    return c


async def test_a_stop_mid_copy_leaves_the_replica_in_its_dir(procs: Procs, zk: ZkClient) -> None:
    c = await start(procs, zk, 2)
    await make_topic(zk, "j", {0: (1, 2)}, initial_bytes=SIZE)

    async def placed() -> dict[tuple[int, int], tuple[str, bool]] | None:
        w = await where(c)
        return w if len(w) == 2 else None

    before = await eventually(placed, timeout_s=60, what="every replica in a dir")
    other = DIRS[1 - DIRS.index(before[(1, 0)][0])]
    body = {
        "batch_id": "stopped",
        "partitions": [{"topic": "j", "partition": 0, "replicas": [1, 2], "log_dirs": [other, "any"]}],
    }
    await submit(c, body)

    async def copying() -> bool:
        return (await where(c))[(1, 0)][1]  # a future replica exists

    await eventually(copying, timeout_s=30, what="the future replica")
    code, stopped = await c.post("/v1/batches/stopped/stop", {})
    assert code == 200 and stopped["state"] == "stopped", stopped

    async def back() -> bool:
        return await where(c) == before  # the copy abandoned: no future replica, same dir

    await eventually(back, timeout_s=30, what="the copy abandoned")
    s = await status(c, "stopped")
    assert s["counts"]["cancelled"] == 1, s


async def test_a_move_to_another_broker_then_into_a_named_dir(procs: Procs, zk: ZkClient) -> None:
    c = await start(procs, zk, 3)
    await make_topic(zk, "j", {0: (1, 2), 1: (1, 2)}, initial_bytes=SIZE)

    async def placed() -> dict[tuple[int, int], tuple[str, bool]] | None:
        w = await where(c)
        return w if len(w) == 4 else None

    await eventually(placed, timeout_s=60, what="every replica in a dir")
    # broker 3 is empty: Kafka's placement puts j-0's new replica in /d1 (the first of equals),
    # and the move then takes it to /d2, as kafka-reassign-partitions does
    body = {
        "batch_id": "mixed",
        "partitions": [{"topic": "j", "partition": 0, "replicas": [3, 2], "log_dirs": ["/d2", "any"]}],
    }
    await submit(c, body)
    done = await eventually(
        lambda: state_is(c, "mixed", "completed", "failed"), timeout_s=60, what="the batch ended"
    )
    assert done["state"] == "completed", done
    assert done["bytes_done"] == done["bytes_total"] == 2 * SIZE  # to broker 3, then between its dirs
    after = await where(c)
    assert after[(3, 0)] == ("/d2", False) and (1, 0) not in after
    log = procs.started[-1].log()
    assert "move of j-0 to log dir /d2: error 0" in log, log  # the dir phase asked broker 3

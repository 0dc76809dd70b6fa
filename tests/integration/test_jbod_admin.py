"""A plan's ``log_dirs`` honoured by ``reassignd admin reassign`` against real processes: agents
with two log dirs each, the controller as a process, the CLI as a process.

As Kafka's tool: ``--execute`` starts the inter-broker reassignment, then asks each broker to move
the replicas the plan names a dir for (``POST /v1/log-dirs/moves``, forwarded to the agent);
``--verify`` tells each replica's move in Kafka's words, with its progress while it copies under
the intra-broker throttle. A controller SIGKILLed while both moves are in flight leaves nothing
half-done: the directory move lives in the agent and goes on, another controller finishes the
inter-broker one, and ``--execute`` run again moves nothing twice.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from reassignd.zk import admin_codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.admin_cli import admin
from tests.integration.harness import ControllerProc, Procs, eventually, wait_brokers
from tests.integration.reassignment_helpers import FAST, make_topic

pytestmark = pytest.mark.timeout(300)

SIZE = 16_000_000
THROTTLE = 1_000_000  # bytes/s: a move between two dirs takes about 16 s (a CLI run takes 1-3 s)
UNTHROTTLED = str(1_000 * SIZE)  # bytes/s: the rest of a move once it has been seen copying
CAPACITY = 100_000_000
DIRS = ("/d1", "/d2")


async def set_default_broker_config(zk: ZkClient, config: dict[str, str]) -> None:
    path = paths.config_broker(None)
    data = admin_codec.encode_entity_config(config)
    znode = await zk.get_or_none(path)
    if znode is None:
        await zk.create(path, data, make_parents=True)
    else:
        await zk.set(path, data, znode.stat.version)


async def dirs_of(c: ControllerProc, broker: int, tp: str) -> list[tuple[str, bool, int, int]]:
    """(dir, is future, size, lag) of each copy of ``tp`` on ``broker``, from GET /v1/log-dirs."""
    code, doc = await c.get(f"/v1/log-dirs?broker={broker}")
    assert code == 200, doc
    return sorted(
        (d["logDir"], p["isFuture"], p["size"], p["offsetLag"])
        for b in doc["brokers"]
        for d in b["logDirs"]
        for p in d["partitions"]
        if p["partition"] == tp
    )


def plan_file(path: Path, replicas: list[int], log_dirs: list[str]) -> str:
    plan = {
        "version": 1,
        "partitions": [{"topic": "j", "partition": 0, "replicas": replicas, "log_dirs": log_dirs}],
    }
    path.write_text(json.dumps(plan))
    return str(path)


async def start(procs: Procs, zk: ZkClient, brokers: int) -> ControllerProc:
    c = procs.controller(9000)
    procs.cluster(brokers, 1, None, "--log-dirs", f"{DIRS[0]},{DIRS[1]}:{CAPACITY}")
    await wait_brokers(c, set(range(1, brokers + 1)))
    await set_default_broker_config(
        zk,
        {
            "reassignd.sim.replication.bytes.per.s": FAST,
            "replica.alter.log.dirs.io.max.bytes.per.second": str(THROTTLE),
        },
    )
    await make_topic(zk, "j", {0: (1, 2)}, initial_bytes=SIZE)
    return c


async def placed(c: ControllerProc, broker: int) -> str:
    async def probe() -> str | None:
        found = await dirs_of(c, broker, "j-0")
        return found[0][0] if len(found) == 1 and found[0][2] == SIZE else None

    return await eventually(probe, what=f"j-0 on broker {broker} with its {SIZE} bytes")


def other(log_dir: str) -> str:
    return DIRS[1] if log_dir == DIRS[0] else DIRS[0]


LAG = re.compile(r"^  j-0-1: copying from (\S+) to (\S+): .* \((\d+)%\), lag (\d+) bytes\.$", re.MULTILINE)


async def test_a_plans_log_dirs_are_honoured_with_progress_while_it_copies(
    procs: Procs, zk: ZkClient, tmp_path: Path
) -> None:
    c = await start(procs, zk, 3)
    source = await placed(c, 1)
    target = other(source)
    http = ("--bootstrap-controller", c.url)

    # refused at the door: nothing forwarded (j-0 stays where it is, no future replica)
    good = {"topic": "j", "partition": 0, "dir": target}
    bad = {"broker": 1, "moves": [good, {"topic": "j/", "partition": 0, "dir": target}]}
    code, answer = await c.post("/v1/log-dirs/moves", bad)
    assert code == 400 and answer["error_message"].startswith("moves[1].topic: "), answer
    code, answer = await c.post("/v1/log-dirs/moves", {"broker": 7, "moves": [good]})
    assert code == 404 and answer["error_message"] == "broker 7 is not registered: nothing was forwarded"
    assert await dirs_of(c, 1, "j-0") == [(source, False, SIZE, 0)]

    # a dir the broker does not have: Kafka's "Failed to alter dir", exit 1
    nowhere = plan_file(tmp_path / "nowhere.json", [1, 2], ["/nowhere", "any"])
    code, out, err = await admin("--execute", "--reassignment-json-file", nowhere, *http)
    assert code == 1, (out, err)
    assert "Failed to alter dir for j-0-1: LOG_DIR_NOT_FOUND: broker 1 has no log dir /nowhere" in out
    assert await dirs_of(c, 1, "j-0") == [(source, False, SIZE, 0)]

    # j-0 to brokers 1 and 3: broker 1's replica into its other dir, broker 3's new one into /d2
    plan = plan_file(tmp_path / "plan.json", [1, 3], [target, "/d2"])
    code, out, err = await admin("--execute", "--reassignment-json-file", plan, *http)
    assert code == 0, (out, err)
    assert "Warning" not in out
    assert "Successfully started partition reassignment for j-0" in out
    assert f"Successfully started moving log directory to {target} for replica j-0 with broker 1" in out
    assert "Successfully started moving log directory to /d2 for replica j-0 with broker 3" in out

    # while it copies: --verify says so, with the future replica's progress, and so does the API
    async def copying() -> tuple[str, re.Match[str]] | None:
        code, out, err = await admin("--verify", "--reassignment-json-file", plan, *http)
        assert code == 0, (out, err)
        found = LAG.search(out)
        # caught with a quarter of the copy still to go: the API is asked next, well before it ends
        return (out, found) if found and int(found.group(4)) > SIZE // 4 else None

    out, progress = await eventually(copying, what="--verify showing j-0-1 copying")
    assert "Reassignment of replica j-0-1 is still in progress." in out
    assert (progress.group(1), progress.group(2)) == (source, target)
    [(log_dir, _, size, lag)] = [d for d in await dirs_of(c, 1, "j-0") if d[1]]
    assert log_dir == target and size + lag == SIZE and lag > 0
    # seen copying: the rest of the copy unthrottled (the agent applies a throttle as it changes)
    await set_default_broker_config(
        zk,
        {
            "reassignd.sim.replication.bytes.per.s": FAST,
            "replica.alter.log.dirs.io.max.bytes.per.second": UNTHROTTLED,
        },
    )

    async def done() -> str | None:
        code, out, _ = await admin("--verify", "--reassignment-json-file", plan, *http)
        return out if code == 0 and out.count("completed successfully.") == 2 else None

    out = await eventually(done, what="both replicas in their dirs", timeout_s=120)
    assert "Reassignment of partition j-0 is complete." in out
    assert "Reassignment of replica j-0-1 completed successfully." in out
    assert "Reassignment of replica j-0-3 completed successfully." in out
    assert await dirs_of(c, 1, "j-0") == [(target, False, SIZE, 0)]
    assert await dirs_of(c, 3, "j-0") == [("/d2", False, SIZE, 0)]

    # run again: nothing moves (no future replica), it says the same
    code, out, err = await admin("--execute", "--reassignment-json-file", plan, *http)
    assert code == 0, (out, err)
    assert f"Successfully started moving log directory to {target} for replica j-0 with broker 1" in out
    assert await dirs_of(c, 1, "j-0") == [(target, False, SIZE, 0)]
    assert await dirs_of(c, 3, "j-0") == [("/d2", False, SIZE, 0)]


async def test_a_controller_killed_mid_move_leaves_nothing_half_done(
    procs: Procs, zk: ZkClient, tmp_path: Path
) -> None:
    c = await start(procs, zk, 3)
    standby = procs.controller(9001)
    source = await placed(c, 1)
    target = other(source)
    # broker 3 copies j-0 slowly: the inter-broker move is in flight when the controller dies
    await zk.create(
        paths.config_broker(3),
        admin_codec.encode_entity_config({"reassignd.sim.replication.bytes.per.s": "1000000"}),
        make_parents=True,
    )
    plan = plan_file(tmp_path / "plan.json", [1, 3], [target, "/d2"])
    code, out, err = await admin(
        "--execute", "--reassignment-json-file", plan, "--bootstrap-controller", c.url
    )
    assert code == 0, (out, err)

    # broker 1 copying between its dirs, broker 3 still catching up: SIGKILL the controller
    async def both_in_flight() -> bool:
        code, moving = await c.get("/v1/reassignments")
        future = [d for d in await dirs_of(c, 1, "j-0") if d[1]]
        return code == 200 and bool(moving["topics"]) and bool(future) and future[0][3] > 0

    await eventually(both_in_flight, what="both moves in flight")
    sizes: list[int] = [d[2] for d in await dirs_of(c, 1, "j-0") if d[1]]
    c.proc.kill()

    async def took_over() -> bool:
        status = await standby.status()
        return bool(status and status["active"])

    await eventually(took_over, what="the standby active", timeout_s=60)

    # the directory move went on in the agent meanwhile; run the plan again through the new one
    code, out, err = await admin(
        "--execute", "--reassignment-json-file", plan, "--bootstrap-controller", standby.url
    )
    assert code == 0, (out, err)
    # the agent has answered the second --execute: the copy it found is no smaller than before
    # the kill (not started again), and the rest of both moves runs unthrottled
    sizes.extend(d[2] for d in await dirs_of(standby, 1, "j-0") if d[1])
    assert sizes == sorted(sizes), sizes
    await set_default_broker_config(
        zk,
        {
            "reassignd.sim.replication.bytes.per.s": FAST,
            "replica.alter.log.dirs.io.max.bytes.per.second": UNTHROTTLED,
        },
    )
    znode = await zk.get(paths.config_broker(3))
    await zk.set(
        paths.config_broker(3),
        admin_codec.encode_entity_config({"reassignd.sim.replication.bytes.per.s": FAST}),
        znode.stat.version,
    )

    async def finished() -> bool:
        here = await dirs_of(standby, 1, "j-0")
        sizes.extend(d[2] for d in here if d[1])
        code, moving = await standby.get("/v1/reassignments")
        return code == 200 and not moving["topics"] and here == [(target, False, SIZE, 0)]

    await eventually(finished, what="both moves done", timeout_s=120)
    # one copy, never started again: the future replica only grew
    assert sizes == sorted(sizes), sizes
    assert await dirs_of(standby, 3, "j-0") == [("/d2", False, SIZE, 0)]
    assert await dirs_of(standby, 2, "j-0") == []

    code, out, err = await admin(
        "--verify", "--reassignment-json-file", plan, "--bootstrap-controller", standby.url
    )
    assert code == 0, (out, err)
    assert "Reassignment of partition j-0 is complete." in out
    assert out.count("completed successfully.") == 2, out
    # and once more: idempotent, nothing moves
    code, out, err = await admin(
        "--execute", "--reassignment-json-file", plan, "--bootstrap-controller", standby.url
    )
    assert code == 0, (out, err)
    assert await dirs_of(standby, 1, "j-0") == [(target, False, SIZE, 0)]
    assert await dirs_of(standby, 3, "j-0") == [("/d2", False, SIZE, 0)]


async def test_a_move_into_a_dir_without_room_is_a_storage_error(
    procs: Procs, zk: ZkClient, tmp_path: Path
) -> None:
    c = procs.controller(9000)
    cluster = procs.cluster(2, 1, None, "--log-dirs", "/d1,/d2:1000000")
    await wait_brokers(c, {1, 2})
    await make_topic(zk, "j", {0: (1, 2)}, initial_bytes=SIZE)
    assert await placed(c, 1) == "/d1"
    plan = plan_file(tmp_path / "plan.json", [1, 2], ["/d2", "any"])
    code, out, err = await admin(
        "--execute", "--reassignment-json-file", plan, "--bootstrap-controller", c.url
    )
    assert code == 1, (out, err)
    reason = f"j-0: {SIZE} bytes do not fit in log dir /d2: 1000000 of its 1000000 bytes are free"
    assert f"Failed to alter dir for j-0-1: KAFKA_STORAGE_ERROR: broker 1: {reason}" in out
    assert await dirs_of(c, 1, "j-0") == [("/d1", False, SIZE, 0)]  # nothing started
    assert f"move of j-0 to log dir /d2 refused (error 56): {reason}" in cluster.log()

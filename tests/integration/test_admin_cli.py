"""``reassignd admin reassign`` as an operator runs it: a subprocess against a real controller and
``reassignd cluster`` (the HTTP verbs), or against ZooKeeper alone (KIP-236's znode verbs).

Broker 4, 5 and 6 replicate at 2000 B/s (``reassignd.sim.replication.bytes.per.s``), so a move to
them is still in flight while the test lists, verifies and cancels it.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.admin_cli import admin
from tests.integration.harness import ControllerProc, Kit, eventually, http_get
from tests.integration.reassignment_helpers import SLOW, completed, make_topic, set_broker_rate, start

Entry = admin_codec.LegacyReassignmentEntry
# each step runs the admin CLI as a process (a Python start-up of its own): a bound for a hang on a
# loaded machine, not a speed assertion
pytestmark = pytest.mark.timeout(300)

ROLLBACK_FOOTER = "Save this to use as the --reassignment-json-file option during rollback"


def plan_file(path: Path, targets: dict[tuple[str, int], list[int]]) -> str:
    partitions = [{"topic": t, "partition": p, "replicas": r} for (t, p), r in targets.items()]
    path.write_text(json.dumps({"version": 1, "partitions": partitions}))
    return str(path)


def kafka_plan(targets: dict[tuple[str, int], list[int]]) -> str:
    """The rollback JSON exactly as kafka-reassign-partitions prints it."""
    return json.dumps(
        {
            "version": 1,
            "partitions": [
                {"topic": t, "partition": p, "replicas": r, "log_dirs": ["any"] * len(r)}
                for (t, p), r in sorted(targets.items())
            ],
        },
        separators=(",", ":"),
    )


async def test_execute_list_verify_cancel_and_the_rollback_plan(
    kit: Kit, zk: ZkClient, tmp_path: Path
) -> None:
    c = await start(kit, zk, 6, rate=SLOW)
    await make_topic(zk, "adm", {0: (1, 2, 3), 1: (1, 2, 3), 2: (1, 2, 3)}, initial_bytes=5_000_000)
    http = ["--bootstrap-controller", c.url]
    plan = plan_file(
        tmp_path / "plan.json", {("adm", 0): [4, 5, 6], ("adm", 1): [4, 5, 6], ("adm", 2): [3, 2, 1]}
    )

    # --execute: first the rollback plan, then the result
    code, out, err = await admin("--execute", "--reassignment-json-file", plan, *http)
    assert (code, err) == (0, "")
    before = {("adm", p): [1, 2, 3] for p in range(3)}
    assert out.split("\n") == [
        "Current partition replica assignment",
        "",
        kafka_plan(before),
        "",
        ROLLBACK_FOOTER,
        "Successfully started partition reassignments for adm-0,adm-1,adm-2",
        "",
    ]
    rollback = tmp_path / "rollback.json"
    rollback.write_text(out.split("\n")[2])

    # --list: Kafka's lines, then the progress the agents report
    async def listed_with_progress() -> list[str] | None:
        code, out, _ = await admin("--list", *http)
        assert code == 0
        lines = out.splitlines()
        return lines if all("progress: " in line for line in lines[1:]) else None

    lines = await eventually(listed_with_progress, what="progress listed")
    assert lines[0] == "Current partition reassignments:"
    assert [line.split(" progress: ")[0] for line in lines[1:]] == [
        f"adm-{p}: replicas: 4,5,6,1,2,3. adding: 4,5,6. removing: 1,2,3." for p in (0, 1)
    ]

    # --verify: in progress, or complete (the reorder of adm-2 completed at once); exit 0 either way
    code, out, _ = await admin("--verify", "--reassignment-json-file", plan, *http)
    assert code == 0
    assert out.splitlines() == [
        "Status of partition reassignment:",
        "Reassignment of partition adm-0 is still in progress.",
        "Reassignment of partition adm-1 is still in progress.",
        "Reassignment of partition adm-2 is complete.",
    ]

    # --cancel of some partitions, then --cancel-all of the rest
    some = plan_file(tmp_path / "some.json", {("adm", 0): [4, 5, 6], ("adm", 2): [3, 2, 1]})
    code, out, _ = await admin("--cancel", "--reassignment-json-file", some, *http)
    assert (code, out.splitlines()) == (
        0,
        [
            "Successfully cancelled partition reassignment for: adm-0",
            "No partition reassignment was in progress for: adm-2",
        ],
    )
    code, out, _ = await admin("--cancel-all", *http)
    assert (code, out) == (0, "Successfully cancelled partition reassignment for: adm-1\n")
    for p in (0, 1):
        await eventually(functools.partial(completed, zk, "adm", p, (1, 2, 3)), what=f"adm-{p} back on 1,2,3")
    assert (await admin("--list", *http))[:2] == (0, "No partition reassignments found.\n")
    assert (await admin("--cancel-all", *http))[:2] == (0, "No partition reassignments found.\n")
    code, out, _ = await admin("--cancel", "--reassignment-json-file", some, *http)
    assert (code, out) == (0, "None of the specified partition reassignments are active.\n")

    # the printed rollback JSON is a plan: verify against it, then execute it
    code, out, _ = await admin("--verify", "--reassignment-json-file", str(rollback), *http)
    assert out.splitlines()[1:] == [
        "Reassignment of partition adm-0 is complete.",
        "Reassignment of partition adm-1 is complete.",
        "There is no active reassignment of partition adm-2, but replica set is 3,2,1 rather than 1,2,3.",
    ]
    code, out, err = await admin("--execute", "--reassignment-json-file", str(rollback), *http)
    assert (code, err) == (0, "")
    assert kafka_plan({**before, ("adm", 2): [3, 2, 1]}) in out
    assert out.endswith("Successfully started partition reassignments for adm-0,adm-1,adm-2\n")
    await eventually(lambda: completed(zk, "adm", 2, (1, 2, 3)), what="adm-2 rolled back")
    code, out, _ = await admin("--verify", "--reassignment-json-file", str(rollback), *http)
    assert out.count("is complete.") == 3

    # per-partition errors carry Kafka's code names; the others still start; exit 1
    bad = plan_file(tmp_path / "bad.json", {("adm", 0): [1, 99], ("adm", 7): [1, 2], ("adm", 1): [2, 1, 3]})
    code, out, err = await admin("--execute", "--reassignment-json-file", bad, *http)
    assert (code, err) == (1, "")
    assert out.split("\n")[2] == kafka_plan({("adm", 0): [1, 2, 3], ("adm", 1): [1, 2, 3]})
    assert out.split("\n")[5:] == [
        "Successfully started partition reassignment for adm-1",
        "Error reassigning partition(s):",
        "adm-0: INVALID_REPLICA_ASSIGNMENT: Replica assignment has brokers that are not alive. "
        "Replica list: [99], live broker list: [1, 2, 3, 4, 5, 6]",
        "adm-7: UNKNOWN_TOPIC_OR_PARTITION: The partition does not exist.",
        "",
    ]


TOKENS = """
[tokens."admin-token"]
user = "alice"
role = "admin"

[tokens."viewer-token"]
user = "grafana"
role = "viewer"
"""


async def _ready(c: ControllerProc) -> bool:
    code, _ = await http_get(c.url + "/readyz")
    return code == 200


async def test_tokens_and_a_standby_as_bootstrap(kit: Kit, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(TOKENS)
    active = kit.controller(9000, 2.0, "--auth-tokens", str(tokens))
    await eventually(lambda: _ready(active), what="active controller ready")
    standby = kit.controller(9001, 2.0, "--auth-tokens", str(tokens))
    await eventually(lambda: _ready(standby), what="standby follows")
    via_standby = ["--bootstrap-controller", standby.url]

    code, _, err = await admin("--list", *via_standby)
    assert code == 1
    assert err.startswith("reassignd admin reassign: error: GET /v1/status: HTTP 401")
    assert err.rstrip().endswith("(give a token with --auth-token or REASSIGND_AUTH_TOKEN)")

    viewer = {"REASSIGND_AUTH_TOKEN": "viewer-token"}
    assert await admin("--list", *via_standby, env=viewer) == (0, "No partition reassignments found.\n", "")
    code, _, err = await admin("--cancel-all", *via_standby, env=viewer)
    assert code == 1
    assert "HTTP 403 CLUSTER_AUTHORIZATION_FAILED (31)" in err

    # a write through the standby's URL reaches the active controller
    code, out, err = await admin("--cancel-all", *via_standby, "--auth-token", "admin-token")
    assert (code, out, err) == (0, "No partition reassignments found.\n", "")


async def _legacy(zk: ZkClient, path: str) -> tuple[Entry, ...] | None:
    znode = await zk.get_or_none(path)
    return None if znode is None else admin_codec.decode_legacy_reassignment(znode.data)


async def test_kip236_verbs_write_the_znodes(zk: ZkClient, zk_connect: str, tmp_path: Path) -> None:
    """No controller runs: what the CLI writes stays for the test to read."""
    await zk.create(
        paths.topic("z"), codec.encode_topic(codec.TopicZnode({0: (1, 2), 1: (1, 2)})), make_parents=True
    )
    for broker in (1, 2, 3):
        await zk.create(paths.broker(broker), ephemeral=True, make_parents=True)
    via_zk = ["--zk", zk_connect]
    first = plan_file(tmp_path / "first.json", {("z", 0): [2, 3]})
    extra = plan_file(tmp_path / "extra.json", {("z", 1): [3, 1]})

    # what Kafka's tool refused on this path, before writing anything
    for targets, reason in (
        ({("z", 5): [1, 2]}, "The proposed assignment contains non-existent partitions: z-5"),
        ({("z", 0): [1, 9]}, "The proposed assignment contains non-existent brokerIDs: 9"),
    ):
        code, out, err = await admin(
            "--additional", "--reassignment-json-file", plan_file(tmp_path / "x.json", targets), *via_zk
        )
        assert (code, out, err) == (1, "", f"reassignd admin reassign: error: {reason}\n")
    assert await zk.exists(paths.REASSIGN_PARTITIONS) is None

    code, out, err = await admin("--additional", "--reassignment-json-file", first, *via_zk)
    assert (code, err) == (0, "")
    assert out.split("\n")[2] == kafka_plan({("z", 0): [1, 2]})
    assert out.split("\n")[5:] == [
        "Successfully submitted partition reassignment for z-0 in /admin/reassign_partitions",
        "",
    ]
    assert await _legacy(zk, paths.REASSIGN_PARTITIONS) == (Entry("z", 0, (2, 3), (1, 2)),)

    # the legacy znode exists: the next batch goes to /admin/reassign_partitions_extra, one at a time
    code, out, _ = await admin("--additional", "--reassignment-json-file", extra, *via_zk)
    assert code == 0
    assert out.endswith("for z-1 in /admin/reassign_partitions_extra\n")
    assert await _legacy(zk, paths.REASSIGN_PARTITIONS_EXTRA) == (Entry("z", 1, (3, 1), (1, 2)),)
    code, out, err = await admin("--additional", "--reassignment-json-file", extra, *via_zk)
    assert (code, out) == (1, "")
    assert "a previous extra batch is not merged yet" in err
    assert await _legacy(zk, paths.REASSIGN_PARTITIONS) == (Entry("z", 0, (2, 3), (1, 2)),)

    # --rollback creates /admin/reassign_cancel after showing what is pending
    code, out, err = await admin("--rollback", *via_zk)
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "Rolling back the current pending reassignments in /admin/reassign_partitions:",
        "z-0: replicas: 2,3. original_replicas: 1,2.",
        "Successfully submitted cancellation of reassignments.",
        "While /admin/reassign_cancel exists the controller starts no new reassignment "
        "(error 10001 REASSIGNMENT_CANCEL_IN_PLACE); remove it with --remove-cancel.",
        "Note: /admin/reassign_partitions_extra holds 1 reassignment(s) not merged yet; they are not "
        "rolled back and start after --remove-cancel.",
    ]
    assert await zk.exists(paths.REASSIGN_CANCEL) is not None
    code, out, err = await admin("--rollback", *via_zk)
    assert (code, out) == (1, "")
    assert err.startswith("reassignd admin reassign: error: a rollback is already in place")
    code, _, err = await admin("--additional", "--reassignment-json-file", first, *via_zk)
    assert code == 1 and "a rollback is in place" in err

    # --remove-cancel deletes it; a second time there is nothing to remove
    assert await admin("--remove-cancel", *via_zk) == (
        0,
        "Successfully removed the znode /admin/reassign_cancel.\n",
        "",
    )
    assert await zk.exists(paths.REASSIGN_CANCEL) is None
    code, out, _ = await admin("--remove-cancel", *via_zk)
    assert (code, out) == (0, "There is no rollback in place: /admin/reassign_cancel does not exist.\n")


async def test_kip236_verbs_against_the_controller(
    kit: Kit, zk: ZkClient, zk_connect: str, tmp_path: Path
) -> None:
    """--additional twice (the legacy znode, then an extra batch merged into it), --rollback back to
    the original replicas, --remove-cancel."""
    c = await start(kit, zk, 4)
    for broker in (3, 4):
        await set_broker_rate(zk, broker, SLOW)
    await make_topic(zk, "k", {0: (1, 2), 1: (1, 2)}, initial_bytes=5_000_000)
    via_zk, http = ["--zk", zk_connect], ["--bootstrap-controller", c.url]

    first = plan_file(tmp_path / "first.json", {("k", 0): [3, 4]})
    assert (await admin("--additional", "--reassignment-json-file", first, *via_zk))[0] == 0
    k0 = "k-0: replicas: 3,4,1,2. adding: 3,4. removing: 1,2."
    await eventually(lambda: _listed(http, [k0]), what="k-0 moving")
    extra = plan_file(tmp_path / "extra.json", {("k", 1): [3, 4]})
    code, out, _ = await admin("--additional", "--reassignment-json-file", extra, *via_zk)
    assert (code, out.splitlines()[-1]) == (
        0,
        "Successfully submitted partition reassignment for k-1 in /admin/reassign_partitions_extra",
    )
    k1 = "k-1: replicas: 3,4,1,2. adding: 3,4. removing: 1,2."
    await eventually(lambda: _listed(http, [k0, k1]), what="the extra batch merged and started")
    await eventually(
        lambda: _absent(zk, paths.REASSIGN_PARTITIONS_EXTRA), what="extra znode deleted once merged"
    )

    code, out, _ = await admin("--rollback", *via_zk)
    assert code == 0
    assert out.splitlines()[:3] == [
        "Rolling back the current pending reassignments in /admin/reassign_partitions:",
        "k-0: replicas: 3,4. original_replicas: 1,2.",
        "k-1: replicas: 3,4. original_replicas: 1,2.",
    ]
    for p in (0, 1):
        await eventually(functools.partial(completed, zk, "k", p, (1, 2)), what=f"k-{p} rolled back")
    assert (await admin("--list", *http))[1] == "No partition reassignments found.\n"
    # while the cancel znode exists the controller refuses new reassignments, with a code name
    code, out, _ = await admin("--execute", "--reassignment-json-file", first, *http)
    assert code == 1
    assert out.splitlines()[-1].startswith("k-0: REASSIGNMENT_CANCEL_IN_PLACE")
    assert (await admin("--remove-cancel", *via_zk))[0] == 0
    assert (await admin("--execute", "--reassignment-json-file", first, *http))[0] == 0


async def _listed(http: list[str], lines: list[str]) -> bool:
    code, out, _ = await admin("--list", *http)
    return code == 0 and [line.split(" progress: ")[0] for line in out.splitlines()[1:]] == lines


async def _absent(zk: ZkClient, path: str) -> bool:
    return await zk.exists(path) is None


async def test_one_plan_through_the_three_doors(kit: Kit, zk: ZkClient, tmp_path: Path) -> None:
    """The same plan files given to the HTTP API, the legacy znode and the tool, against real
    processes: a plan with one bad line is refused whole by each door with the same reason (nothing
    moves, the znode is reported and left for its owner); the same plan fixed moves through each."""
    c = await start(kit, zk, 3)
    await make_topic(zk, "door", {0: (1, 2), 1: (1, 2), 2: (1, 2)})
    lines = [
        {"topic": "door", "partition": 0, "replicas": [2, 3]},
        {"topic": "door", "partition": 1, "replicas": []},
    ]
    bad = {"version": 1, "partitions": lines}
    reason = "partitions[1].replicas: Partition replica list cannot be empty (partition door-1)"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))

    code, body = await c.post("/v1/reassignments", bad)
    assert (code, body["error_message"]) == (400, reason)
    code, out, err = await admin(
        "--execute", "--reassignment-json-file", str(path), "--bootstrap-controller", c.url
    )
    assert code == 2 and reason in err, (code, out, err)
    await zk.create(paths.REASSIGN_PARTITIONS, path.read_bytes())

    async def reported() -> list[str] | None:
        s = await c.status()
        found = [p["reason"] for p in s["problems"] if p["path"] == paths.REASSIGN_PARTITIONS] if s else []
        return found or None

    assert reason in (await eventually(reported, what="the refused znode reported"))[0]
    assert await zk.exists(paths.REASSIGN_PARTITIONS) is not None  # left for its owner to fix
    assert (await completed(zk, "door", 0, (1, 2))) is not None  # nothing moved through any door

    # fixed: each door moves its partition
    await zk.delete(paths.REASSIGN_PARTITIONS)
    good = {"partitions": [{"topic": "door", "partition": 0, "replicas": [2, 3], "log_dirs": ["any", "any"]}]}
    assert (await c.post("/v1/reassignments", good))[0] == 200
    await eventually(lambda: completed(zk, "door", 0, (2, 3)), what="door-0 moved through the API")
    path.write_text(json.dumps({"partitions": [{"topic": "door", "partition": 1, "replicas": [3, 1]}]}))
    code, out, err = await admin(
        "--execute", "--reassignment-json-file", str(path), "--bootstrap-controller", c.url
    )
    assert (code, err) == (0, ""), out
    await eventually(lambda: completed(zk, "door", 1, (3, 1)), what="door-1 moved through the tool")
    path.write_text(json.dumps({"partitions": [{"topic": "door", "partition": 2, "replicas": [3, 2]}]}))
    await zk.create(paths.REASSIGN_PARTITIONS, path.read_bytes())
    await eventually(lambda: completed(zk, "door", 2, (3, 2)), what="door-2 moved through the znode")

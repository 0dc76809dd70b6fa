"""Poison inputs: inputs that fail the same way every time (a deterministic failure), injected
while moves are in flight with two controllers running. A controller that resigned on such an
input would hand it to the next one, which fails on it again: a failover storm. After each input:
the checks of tests/faults/inputs.py: one active controller, the controller epoch moved at most
once in ``OBSERVE_S``, writes answered normally (a new move accepted and completed), the input
refused or skipped with its reason in ``GET /v1/status`` problems, every accepted move completed,
nothing stray or offline, the controllers' memory bounded.

``poison(env, seed, case)`` runs one case (``CASES``); ``bench/faults.py --kinds poison`` runs a
case per seed (``seed % len(CASES)``).
"""

from __future__ import annotations

from reassignd.testing.polling import eventually
from reassignd.zk import admin_codec, codec, paths
from tests.faults.inputs import ABSENT, Case, Run, input_scenario
from tests.faults.scenarios import (
    Controllers,
    Env,
    Outcome,
    make_topic,
    wait_online,
)
from tests.zk_acl import disown, own

BIG_MOVES = 600  # moving these at once to [1, 2, 3] would make its write about 1.15 MB


# --- the cases -----------------------------------------------------------------------------------


async def _delete_parents(run: Run) -> str | None:
    """Empty persistent parents an operator deleted: the controller reads each in a handler and
    in its failover load."""
    zk = run.env.zk
    for path in (
        paths.DELETE_TOPICS,
        paths.ISR_CHANGE_NOTIFICATION,
        paths.REASSIGNMENT_REQUESTS,
        paths.REASSIGNMENTS,
        paths.CONFIG_CHANGES,
    ):
        await zk.delete_recursive(path)
    # something that reads them: a topic deletion, a config change, a sequenced request
    await zk.create(paths.delete_topic("gone"), make_parents=True)
    return None


def _big_moves() -> dict[tuple[str, int], tuple[int, ...]]:
    return {("big", p): (1, 2, 3) for p in range(BIG_MOVES)}


async def _oversized_api(run: Run) -> str | None:
    moves = _big_moves()
    body = {
        "topics": [
            {
                "name": "big",
                "partitions": [{"partition": p, "replicas": list(r)} for (_, p), r in moves.items()],
            }
        ]
    }
    code, resp = await run.post("/v1/reassignments", body)
    if code != 200:
        return f"POST /v1/reassignments answered {code}: {resp}"
    codes = [p["error_code"] for t in resp["responses"] for p in t["partitions"]]
    refused = [p for t in resp["responses"] for p in t["partitions"] if p["error_code"] != 0]
    if not refused or not any(c == 0 for c in codes):
        return f"expected some moves accepted and the rest refused, got codes {sorted(set(codes))}"
    if any(p["error_code"] != 39 or "ZooKeeper" not in p["error_message"] for p in refused):
        return f"a refusal without its reason: {refused[0]}"
    return None


async def _oversized_legacy(run: Run) -> str | None:
    entries = tuple(admin_codec.LegacyReassignmentEntry(t, p, r) for (t, p), r in _big_moves().items())
    await run.env.zk.create(paths.REASSIGN_PARTITIONS, admin_codec.encode_legacy_reassignment(entries))
    return None


async def _oversized_extra(run: Run) -> str | None:
    entries = tuple(admin_codec.LegacyReassignmentEntry(t, p, r) for (t, p), r in _big_moves().items())
    await run.env.zk.create(paths.REASSIGN_PARTITIONS_EXTRA, admin_codec.encode_legacy_reassignment(entries))
    return None


async def _oversized_request(run: Run) -> str | None:
    request = admin_codec.ReassignmentRequest(dict(_big_moves()))
    await run.env.zk.create(
        paths.reassignment_request("request_"),
        admin_codec.encode_reassignment_request(request),
        sequential=True,
    )
    return None


async def _legacy_grows(run: Run) -> str | None:
    """A legacy znode under 1 MiB that passes it once the controller records every entry's
    original replicas (long lists) into it: four topics of 1,000 partitions on [1, *ABSENT]."""
    zk = run.env.zk
    for i in range(4):
        await make_topic(zk, f"wide{i}", {p: (1, *ABSENT) for p in range(1_000)})
    await wait_online(zk, [(f"wide{i}", p) for i in range(4) for p in range(1_000)], timeout_s=60.0)
    entries = tuple(
        admin_codec.LegacyReassignmentEntry(f"wide{i}", p, (1, 2, 3)) for i in range(4) for p in range(1_000)
    )
    data = admin_codec.encode_legacy_reassignment(entries)
    recorded = admin_codec.encode_legacy_reassignment(
        tuple(
            admin_codec.LegacyReassignmentEntry(e.topic, e.partition, e.replicas, (1, *ABSENT))
            for e in entries
        )
    )
    if not len(data) < 1024 * 1024 < len(recorded):
        return f"the case is wrong: {len(data)} bytes grow to {len(recorded)}"
    await zk.create(paths.REASSIGN_PARTITIONS, data)
    run.expected.update({(f"wide{i}", p): (1, 2, 3) for i in range(4) for p in range(1_000)})
    return None


async def _oversized_creation(run: Run) -> str | None:
    """A topic whose size estimate (short broker ids) passes, and whose real znode, with the
    ten-digit ids of half the brokers, would not fit."""
    # 11 replicas a partition, on every broker: 5 one-digit ids and 6 ten-digit ones; about 910 KB
    # as estimated (5 bytes an id), 1.2 MB as written
    body = {"topics": [{"name": "huge", "num_partitions": 14_000, "replication_factor": 11}]}
    code, resp = await run.post("/v1/topics", body)
    if code != 200:
        return f"POST /v1/topics answered {code}: {resp}"
    [result] = resp["topics"]
    if result["error_code"] != 37 or "bytes" not in (result["error_message"] or ""):
        return f"expected 37 INVALID_PARTITIONS with the size, got {result}"
    return None


async def _quota_names(run: Run) -> str | None:
    """Quota entity names ZooKeeper refuses as znode names: through the API, and in a config
    change notification another tool wrote."""
    body = {
        "entries": [
            {"entity": {"user": "."}, "ops": [{"key": "controller_mutation_rate", "value": 5}]},
            {
                "entity": {"user": "ok", "client_id": ".."},
                "ops": [{"key": "controller_mutation_rate", "value": 5}],
            },
        ]
    }
    code, resp = await run.post("/v1/quotas", body)
    if code != 200:
        return f"POST /v1/quotas answered {code}: {resp}"
    errors = [e["error_code"] for e in resp["entries"]]
    if errors != [42, 42] or any("znode name" not in (e["error_message"] or "") for e in resp["entries"]):
        return f"expected both entries refused (42) with the reason, got {resp['entries']}"
    await run.env.zk.create(
        paths.CONFIG_CHANGE_PREFIX,
        admin_codec.encode_config_change("users/.."),
        sequential=True,
        make_parents=True,
    )
    return None


async def _foreign_status_node(run: Run) -> str | None:
    """A KIP-236 status node another tool created for a partition that is not moving, then a
    sequenced request for that partition: the controller's create of the status node meets
    NODEEXISTS, which no check foresees. The event is refused, the controller reloads under the
    same epoch (taking the node as its own now that the partition moves), and the request runs."""
    zk = run.env.zk
    await make_topic(zk, "v", {0: (1, 2)})
    await wait_online(zk, [("v", 0)])
    status = admin_codec.ReassignmentStatus((1, 5), (1, 2), 2)
    await zk.create(
        paths.reassignment_status("v", 0), admin_codec.encode_reassignment_status(status), make_parents=True
    )
    request = admin_codec.ReassignmentRequest({("v", 0): (1, 5)})
    await zk.create(
        paths.reassignment_request("request_"),
        admin_codec.encode_reassignment_request(request),
        sequential=True,
    )
    run.expected[("v", 0)] = (1, 5)
    return None


async def _foreign_principal(run: Run) -> str | None:
    """Another ZooKeeper principal owns topic x's partitions znode (as in a Kafka cluster run with
    ``zookeeper.set.acl``): the controller may read it, never create the state znodes under it.
    The topic is given up (reported) by whoever is the controller, its failover load included."""
    zk = run.env.zk
    await make_topic(run.env.zk, "x", {0: (6,)})  # offline until broker 6 registers
    await own(run.env.zk_connect, paths.topic_partitions("x"), create=True)
    run.env.procs.cluster(1, 6)
    # ZooKeeper's errors (a fault may be under way) count as "not yet", as retry_zk would retry
    if await eventually(lambda: zk.exists(paths.broker(6)), 60.0, or_none=True) is None:
        return "broker 6 never registered"
    return None


async def _foreign_principal_gone(run: Run) -> str | None:
    """The other principal deletes topic x (the invariants expect no topic without states)."""
    await disown(run.env.zk_connect, paths.topic_partitions("x"))
    await run.env.zk.delete_recursive(paths.topic("x"))
    return None


THROTTLED = "follower.replication.throttled.replicas"


async def _batch(run: Run, batch_id: str, moves: dict[tuple[str, int], tuple[int, ...]]) -> str | None:
    body = {
        "batch_id": batch_id,
        "partitions": [{"topic": t, "partition": p, "replicas": list(r)} for (t, p), r in moves.items()],
        "throttle_bytes_per_s": 5_000_000,
        "limits": {"moves_per_broker": 100},  # t's slow moves hold brokers 1 and 2's default slots
    }
    code, resp = await run.post("/v1/batches", body)
    if code != 200 or any(p["error_code"] != 0 for p in resp["partitions"]):
        return f"POST /v1/batches answered {code}: {resp}"
    run.expected.update(moves)
    return None


async def _config(run: Run, topic: str) -> dict[str, str]:
    znode = await run.env.zk.get_or_none(paths.config_topic(topic))
    if znode is None:
        return {}
    try:
        return dict(admin_codec.decode_entity_config(znode.data))
    except codec.CodecError:
        return {}


async def _undecodable_throttle_config(run: Run) -> str | None:
    """A batch throttles topic w; mid-batch another tool rewrites w's config with a number where
    Kafka keeps strings: the restore meets it, reports it, and the batch completes."""
    zk = run.env.zk
    await make_topic(zk, "w", {0: (1, 2), 1: (2, 1)}, initial_bytes=3_000_000)
    await wait_online(zk, [("w", 0), ("w", 1)])
    if (problem := await _batch(run, "pw", {("w", 0): (5, 2), ("w", 1): (5, 1)})) is not None:
        return problem

    async def throttled() -> bool:
        return bool((await _config(run, "w")).get(THROTTLED))

    if not await eventually(throttled, 30.0, 0.2, or_none=True):
        return "the batch never throttled topic w"
    znode = await zk.get(paths.config_topic("w"))
    await zk.set(paths.config_topic("w"), b'{"version":1,"config":{"x":5}}', znode.stat.version)
    return None


async def _large_leftover_throttle_list(run: Run) -> str | None:
    """Topic z's config already lists 60,000 throttled replicas (about 700 KB, written by an
    operator); a batch throttles z too: the journal keeps the old value out of its head, the
    config comes back exactly as it was."""
    zk = run.env.zk
    leftover = ",".join(f"{p}:{b}" for p in range(30_000) for b in (1_000_001, 1_000_002))
    await make_topic(zk, "z", {0: (1, 2)}, initial_bytes=1_000_000, config={THROTTLED: leftover})
    await wait_online(zk, [("z", 0)])
    if (problem := await _batch(run, "pz", {("z", 0): (5, 2)})) is not None:
        return problem

    async def restored() -> bool:
        c = await run.controllers.active()
        if c is None:
            return False
        code, status = await c.get("/v1/batches/pz")
        if code != 200 or status["state"] != "completed":
            return False
        return (await _config(run, "z")).get(THROTTLED) == leftover

    if not await eventually(restored, 60.0, 0.2, or_none=True):
        return "the batch did not complete with topic z's throttle list restored exactly"
    return None


CASES: dict[str, Case] = {
    c.name: c
    for c in (
        Case(
            "deleted_parents",
            _delete_parents,
            # not /admin/delete_topics: the scenario creates it again itself (the deletion it
            # puts there), so the controller may never find it missing
            (paths.ISR_CHANGE_NOTIFICATION, paths.REASSIGNMENT_REQUESTS),
        ),
        Case("oversized_move_api", _oversized_api, ("/brokers/topics/big",), big_topic=True),
        Case("oversized_move_legacy", _oversized_legacy, ("/brokers/topics/big",), big_topic=True),
        Case("oversized_move_extra", _oversized_extra, ("/brokers/topics/big",), big_topic=True),
        Case("oversized_move_request", _oversized_request, ("/brokers/topics/big",), big_topic=True),
        Case("legacy_grows_past_1mib", _legacy_grows, ()),
        Case(
            "oversized_topic_creation",
            _oversized_creation,
            ("/brokers/topics/huge", "bytes with these replicas"),
        ),
        Case("invalid_quota_names", _quota_names, ("'users/..', not a quota entity",)),
        Case("foreign_status_node", _foreign_status_node, ("ReassignmentRequests refused", "NODEEXISTS")),
        Case(
            "undecodable_throttle_config",
            _undecodable_throttle_config,
            ("/config/topics/w", "must be a string"),
        ),
        Case("large_leftover_throttle_list", _large_leftover_throttle_list, ()),
        Case(
            "foreign_principal",
            _foreign_principal,
            ("/brokers/topics/x/partitions", "NOAUTH"),
            cleanup=_foreign_principal_gone,
        ),
    )
}


# --- the scenario --------------------------------------------------------------------------------


async def poison(env: Env, seed: int, case: str | None = None) -> Outcome:
    """The shared input scenario (tests/faults/inputs.py) with one case: ``case``, or the seed's."""
    chosen = CASES[case] if case is not None else list(CASES.values())[seed % len(CASES)]
    return await input_scenario(env, "poison", seed, chosen, Controllers(env))

"""Topic mutations and KIP-599 quotas end to end: real ZooKeeper, controller, agents, HTTP."""

from __future__ import annotations

import asyncio
import io
import json
import time
from pathlib import Path
from typing import Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from reassignd.zk import admin_codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.harness import ControllerProc, Kit, eventually

TOKENS = """
[tokens."alice-token"]
user = "alice"
role = "admin"

[tokens."bob-token"]
user = "bob"
role = "admin"

[tokens."carol-token"]
user = "carol"
role = "admin"

[tokens."viewer-token"]
user = "victor"
role = "viewer"
"""


async def call(
    c: ControllerProc,
    method: str,
    path: str,
    body: Any = None,
    token: str | None = None,
    client_id: str | None = None,
) -> tuple[int, Any, Any]:
    headers = {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if client_id is not None:
        headers["X-Client-Id"] = client_id
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as session,
        session.request(method, c.url + path, json=body, headers=headers) as resp,
    ):
        payload = await resp.json(content_type=None)
        return resp.status, payload, resp.headers


async def start(
    kit: Kit, tmp_path: Path, brokers: int = 3, racks: int | None = None, window_size_s: float = 1.0
) -> ControllerProc:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(TOKENS)
    c = kit.controller(
        9000,
        2.0,
        "--auth-tokens",
        str(tokens),
        "--quota-window-num",
        "10",
        "--quota-window-size-s",
        str(window_size_s),
    )
    await eventually(lambda: _active(c), what="controller active")
    kit.cluster(brokers, 1, racks)
    await eventually(lambda: _brokers(c, brokers), what="brokers registered")
    return c


async def _active(c: ControllerProc) -> bool:
    try:
        code, body, _ = await call(c, "GET", "/v1/status", token="viewer-token")
    except aiohttp.ClientError:
        return False
    return code == 200 and body["active"]


async def _brokers(c: ControllerProc, n: int) -> bool:
    code, body, _ = await call(c, "GET", "/v1/brokers", token="viewer-token")
    return code == 200 and len(body["brokers"]) == n


def by_name(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in results}


async def test_create_topic_rack_aware_and_online_before_the_answer(kit: Kit, tmp_path: Path) -> None:
    c = await start(kit, tmp_path, brokers=6, racks=3)
    body = {"topics": [{"name": "orders", "num_partitions": 12, "replication_factor": 3}]}
    code, resp, _ = await call(c, "POST", "/v1/topics", body, token="alice-token")
    assert code == 200
    [result] = resp["topics"]
    assert (result["error_code"], result["num_partitions"], result["replication_factor"]) == (0, 12, 3)
    code, topic, _ = await call(c, "GET", "/v1/topics/orders", token="viewer-token")
    assert code == 200 and len(topic["partitions"]) == 12
    _, brokers, _ = await call(c, "GET", "/v1/brokers", token="viewer-token")
    rack = {b["id"]: b["rack"] for b in brokers["brokers"]}
    leaders = []
    for p in topic["partitions"]:
        assert p["leader"] >= 0, "every partition has a leader when the answer comes"
        assert len({rack[r] for r in p["replicas"]}) == 3
        leaders.append(p["leader"])
    counts = [leaders.count(b) for b in rack]
    assert max(counts) - min(counts) <= 1, f"leaders not spread: {counts}"


async def test_topic_errors_are_kafkas_and_free(kit: Kit, tmp_path: Path, zk: ZkClient) -> None:
    c = await start(kit, tmp_path)
    await zk.create(
        paths.config_entity("alice", None),
        admin_codec.encode_entity_config({"controller_mutation_rate": "0.1"}),
        make_parents=True,
    )
    await zk.create(
        paths.CONFIG_CHANGE_PREFIX, admin_codec.encode_config_change("users/alice"), sequential=True
    )
    topic_t = {"name": "t", "assignments": {"0": [1]}, "configs": {"reassignd.sim.initial.bytes": "1000000"}}
    code, resp, _ = await call(c, "POST", "/v1/topics", {"topics": [topic_t]}, token="alice-token")
    assert by_name(resp["topics"])["t"]["error_code"] == 0
    cases: dict[str, tuple[dict[str, Any], int]] = {
        "t": ({"num_partitions": 1}, 36),
        "": ({"num_partitions": 1}, 17),
        ".": ({"num_partitions": 1}, 17),
        "..": ({"num_partitions": 1}, 17),
        "x" * 250: ({"num_partitions": 1}, 17),
        "a/b": ({"num_partitions": 1}, 17),
        "too-many": ({"num_partitions": 1, "replication_factor": 4}, 38),
        "zero": ({"num_partitions": 0}, 37),
        "bad-assignment": ({"assignments": {"0": [1, 1]}}, 39),
    }
    for name, (fields, expected) in cases.items():
        code, resp, headers = await call(
            c, "POST", "/v1/topics", {"topics": [{"name": name, **fields}]}, token="alice-token"
        )
        assert code == 200, resp
        assert resp["topics"][0]["error_code"] == expected, (name, resp)
        assert "Retry-After" not in headers
    code, resp, _ = await call(c, "POST", "/v1/topics/delete", {"topics": ["unknown"]}, token="alice-token")
    assert resp["responses"][0]["error_code"] == 3
    # CreatePartitions while the topic reassigns: 60 (broker 3 is too slow to ever catch up)
    await zk.create(
        paths.config_broker(3),
        admin_codec.encode_entity_config({"reassignd.sim.replication.bytes.per.s": "1"}),
        make_parents=True,
    )
    code, resp, _ = await call(
        c, "POST", "/v1/reassignments", {"topics": [{"name": "t", "partitions": [{"partition": 0, "replicas": [3]}]}]},
        token="alice-token",
    )  # fmt: skip
    assert code == 200 and resp["responses"][0]["partitions"][0]["error_code"] == 0
    code, resp, _ = await call(
        c, "POST", "/v1/topics/partitions", {"topics": [{"name": "t", "count": 2}]}, token="alice-token"
    )
    assert resp["results"][0]["error_code"] == 60, resp
    # none of the failures charged alice's tiny quota: one more 1-partition topic still fits
    code, resp, _ = await call(
        c, "POST", "/v1/topics", {"topics": [{"name": "u", "num_partitions": 1}]}, token="alice-token"
    )
    assert resp["topics"][0]["error_code"] == 0


async def test_quota_throttles_create_delete_and_add_partitions(kit: Kit, tmp_path: Path) -> None:
    # R = 8/s over 10 windows of 0.25 s: B = 20 as with 2/s over 10 × 1 s, refilled 4 times as fast
    c = await start(kit, tmp_path, window_size_s=0.25)
    ops = [{"key": "controller_mutation_rate", "value": 8.0}]
    code, resp, _ = await call(
        c, "POST", "/v1/quotas", {"entries": [{"entity": {"user": "alice"}, "ops": ops}]}, token="alice-token"
    )
    assert code == 200 and resp["entries"][0]["error_code"] == 0
    code, resp, _ = await call(c, "GET", "/v1/quotas?user=alice", token="viewer-token")
    assert resp["entries"] == [{"entity": {"user": "alice"}, "values": {"controller_mutation_rate": 8.0}}]

    # validate_only costs nothing
    big = [{"name": "a", "num_partitions": 30}, {"name": "b", "num_partitions": 30}]
    code, resp, headers = await call(
        c, "POST", "/v1/topics", {"validate_only": True, "topics": big}, token="alice-token"
    )
    assert [t["error_code"] for t in resp["topics"]] == [0, 0]
    assert resp["throttle_time_ms"] == 0

    # B = 8.0 × 10 × 0.25 = 20: the first 30 is admitted (K = 20 ≥ 0), the second rejected
    code, resp, headers = await call(c, "POST", "/v1/topics", {"topics": big}, token="alice-token")
    results = by_name(resp["topics"])
    assert results["a"]["error_code"] == 0
    assert results["b"]["error_code"] == 89 and results["b"]["error_name"] == "THROTTLING_QUOTA_EXCEEDED"
    throttle = resp["throttle_time_ms"]
    assert 0 < throttle <= 1250  # K = −10 at R = 8: 1250 ms
    assert int(headers["Retry-After"]) == -(-throttle // 1000)
    # the throttling is a record on the event stream (its history, read to the end of max_s)
    async with (
        aiohttp.ClientSession() as session,
        session.get(
            f"{c.url}/v1/events?type=quota_throttled&last_event_id=0-0&max_s=0.5",
            headers={"Authorization": "Bearer viewer-token"},
        ) as stream,
    ):
        text = await stream.text()
    [data] = [line.removeprefix("data: ") for line in text.splitlines() if line.startswith("data: {")]
    record = json.loads(data)
    assert (record["type"], record["user"], record["refused"]) == ("quota_throttled", "alice", 1)
    # the record has the throttle when it was decided; the answer what was left when it went out
    assert throttle <= record["throttle_time_ms"] < throttle + 1000
    code, topics, _ = await call(c, "GET", "/v1/topics", token="viewer-token")
    assert {t["name"] for t in topics["topics"]} == {"a"}
    # another user has no quota: never throttled
    code, resp, _ = await call(
        c, "POST", "/v1/topics", {"topics": [{"name": "bobs", "num_partitions": 100}]}, token="bob-token"
    )
    assert resp["topics"][0]["error_code"] == 0 and resp["throttle_time_ms"] == 0
    # retrying after the throttle succeeds (the wait is the behaviour: the throttle told is enough)
    await asyncio.sleep(throttle / 1000 + 0.2)
    code, resp, _ = await call(c, "POST", "/v1/topics", {"topics": [big[1]]}, token="alice-token")
    assert resp["topics"][0]["error_code"] == 0

    # CreatePartitions (count 31 on 1-partition topics: 30 each) and DeleteTopics are charged
    # the same way; K is about −29 now and refills at 8/s. While K < 0 every topic is rejected
    # and nothing is charged, so the request is retried until its first topic is admitted: then
    # K ≥ 0 (and ≤ B = 20 < 30), so the first topic drives K below 0 and the second is rejected.
    for name in ("p1", "p2"):
        _, resp, _ = await call(
            c, "POST", "/v1/topics", {"topics": [{"name": name, "num_partitions": 1}]}, token="bob-token"
        )
        assert resp["topics"][0]["error_code"] == 0
    body = {"topics": [{"name": "p1", "count": 31}, {"name": "p2", "count": 31}]}
    code, resp, headers = await first_admitted(c, "/v1/topics/partitions", body, "results")
    assert [r["error_code"] for r in resp["results"]] == [0, 89]
    assert resp["throttle_time_ms"] > 0 and "Retry-After" in headers
    code, resp, _ = await first_admitted(c, "/v1/topics/delete", {"topics": ["a", "b"]}, "responses")
    assert [r["error_code"] for r in resp["responses"]] == [0, 89]
    code, topics, _ = await call(c, "GET", "/v1/topics", token="viewer-token")
    names = {t["name"] for t in topics["topics"]}
    assert "a" not in names and "b" in names
    assert {t["name"]: t["partitions"] for t in topics["topics"]}["p1"] == 31

    # per-entity tokens in /metrics, for a caller with a token; without one, counts without names
    code, public, _ = await call_text(c, "/metrics")
    assert code == 200
    shown = {s.name: s for fam in text_string_to_metric_families(public) for s in fam.samples}
    assert not any(s.labels.get("user") or s.labels.get("client_id") for s in shown.values())
    assert "reassignd_quota_tokens" not in shown and "reassignd_quota_rejected_topics" not in shown
    assert shown["reassignd_quota_entities"].value >= 1
    assert shown["reassignd_quota_rejected_topics_overall"].value >= 1
    assert "reassignd_controller_event_queue_size" in shown
    code, _, _ = await call_text(c, "/metrics", token="not-a-token")
    assert code == 401
    code, metrics, _ = await call_text(c, "/metrics", token="viewer-token")
    assert code == 200
    tokens = {
        s.labels.get("user"): s.value
        for fam in text_string_to_metric_families(metrics)
        for s in fam.samples
        if s.name == "reassignd_quota_tokens"
    }
    assert "alice" in tokens and tokens["alice"] < 0
    names = {s.name for fam in text_string_to_metric_families(metrics) for s in fam.samples}
    for wanted in (
        "reassignd_controller_event_queue_size",
        "reassignd_controller_event_queue_time_ms_count",
        "reassignd_controller_event_time_ms_count",
        "reassignd_controller_reassigning_partitions",
        "reassignd_quota_mutation_rate",
        "reassignd_quota_throttle_time_ms",
    ):
        assert wanted in names, wanted


async def first_admitted(c: ControllerProc, path: str, body: Any, results: str) -> tuple[int, Any, Any]:
    """POST ``body`` as alice until its first topic is admitted (error code 0); while her tokens
    are below zero every topic is refused 89 THROTTLING_QUOTA_EXCEEDED, which charges nothing."""

    async def probe() -> tuple[int, Any, Any] | None:
        answer = await call(c, "POST", path, body, token="alice-token")
        codes = [r["error_code"] for r in answer[1][results]]
        assert codes[0] in (0, 89), answer
        return answer if codes[0] == 0 else None

    return await eventually(probe, timeout_s=60, interval_s=0.2, what=f"{path} admitted")


async def call_text(c: ControllerProc, path: str, token: str | None = None) -> tuple[int, str, Any]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with aiohttp.ClientSession() as session, session.get(c.url + path, headers=headers) as resp:
        return resp.status, await resp.text(), resp.headers


async def test_quota_written_to_zookeeper_applies_live_in_kafkas_order(
    kit: Kit, tmp_path: Path, zk: ZkClient
) -> None:
    c = await start(kit, tmp_path)
    # a user default and a client-id quota; bob's own quota beats both
    for user, client, rate in ((None, "app", "1000.0"), ("<default>", None, "0.05")):
        await zk.create(
            paths.config_entity(user, client),
            admin_codec.encode_entity_config({"controller_mutation_rate": rate}),
            make_parents=True,
        )
    await zk.create(
        paths.config_entity("bob", None),
        admin_codec.encode_entity_config({"controller_mutation_rate": "0.1"}),
        make_parents=True,
    )
    for entity in ("clients/app", "users/<default>", "users/bob"):
        await zk.create(paths.CONFIG_CHANGE_PREFIX, admin_codec.encode_config_change(entity), sequential=True)
    await asyncio.sleep(1.0)
    # bob: B = 0.1 × 10 = 1: one 5-partition topic is admitted, the next rejected
    for name, expected in (("b1", 0), ("b2", 89)):
        _, resp, _ = await call(
            c,
            "POST",
            "/v1/topics",
            {"topics": [{"name": name, "num_partitions": 5}]},
            token="bob-token",
            client_id="app",
        )
        assert resp["topics"][0]["error_code"] == expected, (name, resp)
    # carol falls to users/<default> (level 6) before clients/app (level 7): B = 0.5
    for name, expected in (("c1", 0), ("c2", 89)):
        _code, resp, _ = await call(
            c,
            "POST",
            "/v1/topics",
            {"topics": [{"name": name, "num_partitions": 5}]},
            token="carol-token",
            client_id="app",
        )
        assert resp["topics"][0]["error_code"] == expected, (name, resp)


async def test_auth(kit: Kit, tmp_path: Path) -> None:
    c = await start(kit, tmp_path)
    body = {"topics": [{"name": "x", "num_partitions": 1}]}
    code, resp, _ = await call(c, "POST", "/v1/topics", body)
    assert code == 401
    code, resp, _ = await call(c, "POST", "/v1/topics", body, token="nope")
    assert code == 401
    code, resp, _ = await call(c, "POST", "/v1/topics", body, token="viewer-token")
    assert code == 403 and resp["error_code"] == 31 and resp["error_name"] == "CLUSTER_AUTHORIZATION_FAILED"
    code, resp, _ = await call(c, "POST", "/v1/topics", body, token="alice-token")
    assert code == 200 and resp["topics"][0]["error_code"] == 0
    code, _, _ = await call(c, "GET", "/v1/topics", token="viewer-token")
    assert code == 200


async def test_delete_topic_removes_znodes_and_replicas(kit: Kit, tmp_path: Path, zk: ZkClient) -> None:
    c = await start(kit, tmp_path)
    await call(
        c,
        "POST",
        "/v1/topics",
        {"topics": [{"name": "gone", "num_partitions": 3, "replication_factor": 2}]},
        token="alice-token",
    )
    started = time.monotonic()
    code, resp, _ = await call(c, "DELETE", "/v1/topics/gone", token="alice-token")
    assert code == 200 and resp["responses"][0]["error_code"] == 0
    assert await zk.exists(paths.topic("gone")) is None
    assert await zk.exists(paths.delete_topic("gone")) is None
    assert time.monotonic() - started < 60


async def test_bad_bodies_change_nothing_in_zookeeper(kit: Kit, tmp_path: Path, zk: ZkClient) -> None:
    c = await start(kit, tmp_path)
    before = sorted(await zk.children(paths.BROKER_TOPICS))
    bad = [
        ("POST", "/v1/topics", b"{not json", "invalid JSON"),
        ("POST", "/v1/topics", b'{"topics":[{"name":"x","num_partitions":"3"}]}', "num_partitions"),
        ("POST", "/v1/topics", b'{"topics":[{"name":"x","surprise":1}]}', "surprise"),
        ("POST", "/v1/topics/partitions", b'{"topics":[{"name":"x","count":true}]}', "count"),
        (
            "POST",
            "/v1/reassignments",
            b'{"topics":[{"name":"x","partitions":[{"partition":-1}]}]}',
            "partition",
        ),
    ]
    headers = {"Authorization": "Bearer alice-token", "Content-Type": "application/json"}
    async with aiohttp.ClientSession() as session:
        for method, path, raw, field in bad:
            async with session.request(method, c.url + path, data=raw, headers=headers) as resp:
                body = await resp.json(content_type=None)
                assert resp.status == 400, (path, body)
                assert body["error_code"] == 42 and field in body["error_message"], (path, body)
        async with session.post(
            c.url + "/v1/topics", data=io.BytesIO(b" " * (20 * 1024 * 1024)), headers=headers
        ) as resp:
            assert resp.status == 413
            assert (await resp.json(content_type=None))["error_code"] == 42
    assert sorted(await zk.children(paths.BROKER_TOPICS)) == before
    assert await zk.exists(paths.topic("x")) is None

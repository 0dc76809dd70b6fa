"""The audit trail against real processes: every mutating request — through HTTP or the Kafka
listener, accepted, refused for its token or role, answered 41 by a standby — is one JSON line on
the ``reassignd.audit`` logger of the instance that served it and one ``audit`` record on that
instance's event stream, with user, client id, source address, action, what it named and the
result. Reads are not audited."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from kafka.admin import NewTopic
from kafka.errors import TopicAuthorizationFailedError

from tests.integration.harness import ControllerProc, Procs, eventually
from tests.integration.kafka_clients import (
    TOKENS,
    admin_client,
    off_loop,
    start_controller,
)

pytestmark = pytest.mark.timeout(180)


def sasl(user: str, token: str) -> dict[str, str]:
    return {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": user,
        "sasl_plain_password": token,
        "client_id": f"{user}-kafka-cli",
    }


async def call(
    c: ControllerProc, method: str, path: str, body: Any = None, token: str | None = None
) -> tuple[int, Any]:
    headers = {"X-Client-Id": "ops-cli"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    async with (
        aiohttp.ClientSession() as session,
        session.request(method, c.url + path, json=body, headers=headers) as resp,
    ):
        return resp.status, await resp.json()


async def audit_records(c: ControllerProc, token: str) -> list[dict[str, Any]]:
    async with (
        aiohttp.ClientSession() as session,
        session.get(
            f"{c.url}/v1/events?type=audit&last_event_id=0-0&max_s=0.5",
            headers={"Authorization": f"Bearer {token}"},
        ) as resp,
    ):
        stream = await resp.text()
    return [json.loads(line[5:]) for line in stream.splitlines() if line.startswith("data:")]


def audit_lines(c: ControllerProc) -> list[dict[str, Any]]:
    entries = []
    for line in c.proc.log().splitlines():
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if isinstance(doc, dict) and doc.get("logger") == "reassignd.audit":
            entries.append(doc["audit"])
    return entries


def without_stream_fields(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in ("type", "time", "controller_epoch", "sequence")}


async def test_http_and_kafka_mutations_are_audited(procs: Procs, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(TOKENS)
    k = start_controller(procs, 9000, "--log-format", "json", tokens=tokens)
    c = k.c

    async def brokers() -> bool:
        code, s = await call(c, "GET", "/v1/status", token="victor-secret")
        return code == 200 and s["active"] and len(s["brokers"]["live"]) == 3

    procs.cluster(3, 1)
    await eventually(brokers, what="active with 3 brokers")
    standby = procs.controller(9001, 2.0, "--auth-tokens", str(tokens), "--log-format", "json")

    # HTTP: accepted, refused for the role, refused for the token, a per-item error
    code, _ = await call(
        c,
        "POST",
        "/v1/topics",
        {"topics": [{"name": "orders", "num_partitions": 2, "replication_factor": 2}]},
        "alice-secret",
    )
    assert code == 200
    code, _ = await call(
        c, "POST", "/v1/topics", {"topics": [{"name": "nope", "num_partitions": 1}]}, "victor-secret"
    )
    assert code == 403
    code, _ = await call(c, "DELETE", "/v1/reassignments/orders/1")
    assert code == 401
    code, moved = await call(c, "POST", "/v1/reassignments", {"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [3, 1]}, {"topic": "gone", "partition": 0, "replicas": [1]}]}, "alice-secret")  # fmt: skip
    assert code == 200
    code, _ = await call(c, "GET", "/v1/topics", token="victor-secret")  # a read: not audited
    assert code == 200

    # a standby refuses (41) and audits it itself
    async def follows() -> bool:
        code, s = await call(standby, "GET", "/v1/status", token="victor-secret")
        return code == 200 and s["active_controller"] is not None

    await eventually(follows, what="the standby following")
    code, _ = await call(standby, "DELETE", "/v1/reassignments", token="alice-secret")
    assert code == 503

    # Kafka: alice creates, victor (viewer) is refused
    alice = await admin_client(k.address, **sasl("alice", "alice-secret"))
    victor = await admin_client(k.address, **sasl("victor", "victor-secret"))
    try:
        await off_loop(alice.create_topics, [NewTopic("via-kafka", 1, 1)])
        with pytest.raises(TopicAuthorizationFailedError):
            await off_loop(victor.create_topics, [NewTopic("denied", 1, 1)])
    finally:
        await off_loop(alice.close)
        await off_loop(victor.close)

    records = [without_stream_fields(r) for r in await audit_records(c, "victor-secret")]
    actions = [
        (r["via"], r["action"], r["user"], r["result"].get("status"), r["result"]["error_code"])
        for r in records
    ]
    assert actions == [
        ("http", "POST /v1/topics", "alice", 200, 0),
        ("http", "POST /v1/topics", "victor", 403, 31),
        ("http", "DELETE /v1/reassignments/{topic}/{partition}", None, 401, 31),
        ("http", "POST /v1/reassignments", "alice", 200, 0),
        ("kafka", "CreateTopics", "alice", None, 0),
        ("kafka", "CreateTopics", "victor", None, 0),
    ]
    created, denied, anonymous, reassigned, via_kafka, refused = records
    assert created["topics"] == ["orders"] and created["client_id"] == "ops-cli"
    assert created["source"] == "127.0.0.1" and created["controller_id"] == 9000
    # a request refused for its token or role is not read: it names what its path names
    assert "topics" not in denied and "not authorized" in denied["result"]["error_message"]
    assert (anonymous["topic"], anonymous["partition"]) == ("orders", 1)
    assert reassigned["partitions"] == ["orders-0", "gone-0"]
    assert reassigned["targets"] == {"orders-0": [3, 1], "gone-0": [1]}
    assert reassigned["result"]["errors"] == {"gone-0": 3}  # UNKNOWN_TOPIC_OR_PARTITION
    assert [r["error_code"] for t in moved["responses"] for r in t["partitions"]] == [0, 3]
    assert (via_kafka["topics"], via_kafka["client_id"], via_kafka["source"]) == (
        ["via-kafka"],
        "alice-kafka-cli",
        "127.0.0.1",
    )
    assert refused["topics"] == ["denied"] and refused["result"]["errors"] == {"denied": 29}
    assert refused["result"]["error_names"] == {"29": "TOPIC_AUTHORIZATION_FAILED"}

    # the log lines say the same, one per request
    assert audit_lines(c) == records
    [on_standby] = audit_lines(standby)
    assert (on_standby["action"], on_standby["controller_id"], on_standby["result"]["error_code"]) == (
        "DELETE /v1/reassignments",
        9001,
        41,
    )
    assert [without_stream_fields(r) for r in await audit_records(standby, "victor-secret")] == [on_standby]

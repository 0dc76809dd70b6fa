"""Helpers of the HTTP reassignment tests: a simulated agent and its reports, requests and malformed bodies."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, replace
from typing import Any

from aiohttp import web

from reassignd.control.replicas_report import ReplicaInfo


def info(
    topic: str, partition: int, log_end_offset: int, lag_bytes: int = 0, rate: float = 0.0
) -> ReplicaInfo:
    return ReplicaInfo(topic, partition, False, log_end_offset, lag_bytes, rate, False)


@dataclass
class Agent:
    """A broker agent's ``GET /replicas``, and nothing else."""

    report: Any
    status: int = 200
    delay_s: float = 0.0
    hits: int = 0

    async def replicas(self, request: web.Request) -> web.Response:
        self.hits += 1
        await asyncio.sleep(self.delay_s)
        if isinstance(self.report, bytes):
            return web.Response(body=self.report, status=self.status, content_type="application/json")
        return web.json_response(self.report, status=self.status)


def report(broker_id: int, *replicas: ReplicaInfo, leader: bool = False) -> Any:
    return {"broker_id": broker_id, "replicas": [replace(r, leader=leader).to_json() for r in replicas]}


def body(obj: Any) -> bytes:
    return json.dumps(obj).encode()


KAFKA_REQUEST = {
    "timeout_ms": 60000,
    "topics": [
        {
            "name": "orders",
            "partitions": [{"partition": 0, "replicas": [4, 5, 6]}, {"partition": 1, "replicas": [6, 4, 5]}],
        },
        {"name": "audit", "partitions": [{"partition": 0, "replicas": [2, 4]}]},
    ],
}


PLAN = {
    "version": 1,
    "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [4, 5, 6], "log_dirs": ["any", "any", "any"]},
        {"topic": "orders", "partition": 1, "replicas": [6, 4, 5]},
        {"topic": "audit", "partition": 0, "replicas": [2, 4], "log_dirs": ["/data/a", "any"]},
    ],
}


def kafka_partition(entry: Any) -> bytes:
    return body({"topics": [{"name": "t", "partitions": [{"partition": 0, "replicas": [1]}, entry]}]})


MALFORMED: list[tuple[bytes, str]] = [
    # not JSON, or not an object
    (b"", "request body: invalid JSON: Expecting value"),
    (b'{"topics": [', "request body: invalid JSON"),
    (b'{"topics": [{"name": "\xff", "partitions": []}]}', "request body: invalid JSON"),
    (b"[" * 100_000, "request body: invalid JSON: nested too deeply"),
    (b"[]", "request body: expected a JSON object, got an array"),
    (b"{}", "request body: expected AlterPartitionReassignments"),
    (b'{"topics": [], "topics": []}', "topics: duplicate field"),
    # Kafka's shape
    (b'{"topics": {}}', "topics: expected an array, got an object"),
    (b'{"topics": [], "extra": 1}', "extra: unknown field"),
    (b'{"topics": [], "version": 1}', "request body: missing required field 'partitions'"),  # a plan
    (b'{"topics": [], "timeout_ms": "60000"}', "timeout_ms: expected an integer, got a string"),
    (b'{"topics": [], "timeout_ms": true}', "timeout_ms: expected an integer, got a boolean"),
    (b'{"topics": [], "timeout_ms": 2147483648}', "timeout_ms: 2147483648 is out of range"),
    (b'{"topics": [], "mode": "revert"}', 'mode: expected "cancel" or "stop", got "revert"'),
    (b'{"topics": [], "mode": null}', 'mode: expected "cancel" or "stop", got null'),
    (b'{"topics": [1]}', "topics[0]: expected an object, got an integer"),
    (b'{"topics": [{"partitions": []}]}', "topics[0].name: missing required field"),
    (b'{"topics": [{"name": 7, "partitions": []}]}', "topics[0].name: expected a string, got an integer"),
    (b'{"topics": [{"name": "t"}]}', "topics[0].partitions: missing required field"),
    (b'{"topics": [{"name": "t", "partitions": null}]}', "topics[0].partitions: expected an array, got null"),
    (b'{"topics": [{"name": "t", "partitions": [], "x": 0}]}', "topics[0].x: unknown field"),
    (kafka_partition({"partition": 1}), "topics[0].partitions[1].replicas: missing required field"),
    (kafka_partition({"replicas": [1]}), "topics[0].partitions[1].partition: missing required field"),
    (
        kafka_partition({"partition": 1, "replicas": [1], "log_dirs": ["any"]}),
        "topics[0].partitions[1].log_dirs: unknown field",
    ),
    (
        kafka_partition({"partition": True, "replicas": [1]}),
        "topics[0].partitions[1].partition: expected a non-negative integer, got a boolean",
    ),
    (
        kafka_partition({"partition": -1, "replicas": [1]}),
        "topics[0].partitions[1].partition: expected a non-negative integer, got -1",
    ),
    (
        kafka_partition({"partition": 1.5, "replicas": [1]}),
        "topics[0].partitions[1].partition: expected a non-negative integer, got a number",
    ),
    (
        kafka_partition({"partition": "1", "replicas": [1]}),
        "topics[0].partitions[1].partition: expected a non-negative integer, got a string",
    ),
    (
        kafka_partition({"partition": 2**31, "replicas": [1]}),
        "topics[0].partitions[1].partition: 2147483648 is out of range",
    ),
    (
        kafka_partition({"partition": 1, "replicas": "1,2"}),
        "topics[0].partitions[1].replicas: expected a list of integers or null, got a string",
    ),
    (
        kafka_partition({"partition": 1, "replicas": 4}),
        "topics[0].partitions[1].replicas: expected a list of integers or null, got an integer",
    ),
    (
        kafka_partition({"partition": 1, "replicas": [1, True]}),
        "topics[0].partitions[1].replicas: expected a list of integers or null; item 1 is a boolean",
    ),
    (
        kafka_partition({"partition": 1, "replicas": [1, 2.5]}),
        "topics[0].partitions[1].replicas: expected a list of integers or null; item 1 is a number",
    ),
    (
        kafka_partition({"partition": 1, "replicas": [None]}),
        "topics[0].partitions[1].replicas: expected a list of integers or null; item 0 is null",
    ),
    (
        kafka_partition({"partition": 1, "replicas": [2**31]}),
        "topics[0].partitions[1].replicas: expected a list of integers or null; item 0 (2147483648) is out of range",
    ),
    (
        b'{"topics": [{"name": "t", "partitions": [{"partition": NaN, "replicas": [1]}]}]}',
        "request body: invalid JSON: NaN is not a JSON value",
    ),
    # the kafka-reassign-partitions plan, read by the one plan reader (reassignd.plan_format)
    (b'{"version": 1}', "request body: missing required field 'partitions'"),
    (b'{"version": "1", "partitions": []}', "version: expected an integer, got a string"),
    (b'{"version": true, "partitions": []}', "version: expected an integer, got a boolean"),
    (b'{"version": 2, "partitions": []}', "version: Not supported version field value 2 (only 1 exists)"),
    (
        b'{"version": 1, "partitions": [], "mode": "stop"}',
        "partitions: Partition reassignment list cannot be empty",
    ),
    (
        b'{"version": 1, "partitions": [{"topic": "t", "partition": 0}]}',
        "partitions[0]: missing required field 'replicas'",
    ),
    (
        b'{"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": null}]}',
        "partitions[0].replicas: expected a list of broker ids, got null",
    ),
    (
        b'{"version": 1, "partitions": [{"name": "t", "partition": 0, "replicas": [1]}]}',
        "partitions[0]: missing required field 'topic'",
    ),
    (
        b'{"version": 1, "partitions": [{"topic": "t", "partition": -2, "replicas": [1]}]}',
        "partitions[0].partition: expected a non-negative integer up to 2147483647, got -2",
    ),
    (
        b'{"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1], "log_dirs": "any"}]}',
        "partitions[0].log_dirs: expected a list of strings, got a string",
    ),
    (
        b'{"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1], "log_dirs": [1]}]}',
        "partitions[0].log_dirs[0]: expected a string, got an integer",
    ),
    (
        b'{"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 1]}]}',
        "partitions[0].replicas: Partition replica lists may not contain duplicate entries",
    ),
    (
        b'{"partitions": [{"topic": "t", "partition": 0, "replicas": [1]}], "partitions": []}',
        "request body: invalid JSON: duplicate key",
    ),
]

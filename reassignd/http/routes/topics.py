"""Topic mutations: CreateTopics, DeleteTopics and CreatePartitions.

- ``POST /v1/topics``: CreateTopics.
- ``POST /v1/topics/delete`` and ``DELETE /v1/topics/{topic}?timeout_ms=N``: DeleteTopics.
- ``POST /v1/topics/partitions``: CreatePartitions.

``/v1/topics/delete`` and ``/v1/topics/partitions`` are those POSTs' paths alone: any other method
there is 405 (``reassignd.http.app``), not ``/v1/topics/{topic}`` for a topic so named.

Bodies are decoded into their contract structs at the door (400/42 naming the field before anything reaches the controller, :mod:`reassignd.http.door`); the caller (user and
``X-Client-Id``) goes with the request for the KIP-599 quota. Per-topic errors come back with 200;
``Retry-After`` is set when a topic was throttled.

The route, its strict input parsing and its JSON shapes live here together (one module per
resource).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import msgspec
from aiohttp import web

from reassignd.contracts import admin as contracts
from reassignd.contracts import requests
from reassignd.contracts.queries import DeleteTopicQuery
from reassignd.controller.model.from_contracts import (
    DEFAULT_TIMEOUT_MS,
    create_partitions_of,
    create_topics_of,
    delete_topics_of,
)
from reassignd.controller.model.requests import (
    CreatePartitions,
    CreateTopics,
    DeleteTopics,
    Requester,
    TopicOutcome,
    TopicsResult,
)
from reassignd.errors import error_name
from reassignd.http.audit import note
from reassignd.http.callers import caller_of
from reassignd.http.door import decode_request
from reassignd.http.json_input import (
    decode_object,
    expect_bool,
    expect_broker_ids,
    expect_int,
    expect_int32,
    expect_list,
    expect_map,
    expect_object,
    expect_string,
    expect_timeout_ms,
    fail,
)
from reassignd.http.keys import VIEW
from reassignd.http.query_door import query_of
from reassignd.http.responses import item_message, json_response
from reassignd.int_limits import INT16_MAX, INT16_MIN, INT32_MAX
from reassignd.strict_json import json_type

# --- input parsing (pure) -------------------------------------------------------------------------

PARTITION_KEY = re.compile(r"0|[1-9][0-9]{0,9}")  # canonical decimal: "01" would alias "1"


def _validate_only(doc: dict[str, Any]) -> bool:
    return expect_bool(doc["validate_only"], "validate_only") if "validate_only" in doc else False


# --- POST /v1/topics (CreateTopics) ----------------------------------------------------------------


def parse_create_topics(body: bytes, caller: Requester) -> CreateTopics:
    """``{"timeout_ms", "validate_only", "topics": [{"name", "num_partitions", "replication_factor",
    "assignments", "configs"}]}``; an absent count or factor is -1 (the broker default). Decoded
    once, into its contract struct (:mod:`reassignd.http.door`); :func:`check_create_topics`
    words what msgspec refuses."""
    return decode_request(
        body,
        requests.CreateTopicsRequest,
        lambda request: create_topics_of(request, caller),
        check_create_topics,
    )


def check_create_topics(body: bytes) -> None:
    """The strict reader of CreateTopics (the door's second tier): our refusal's words."""
    doc = decode_object(body, ("topics",), ("timeout_ms", "validate_only"))
    expect_timeout_ms(doc, DEFAULT_TIMEOUT_MS)
    _validate_only(doc)
    for i, raw in enumerate(expect_list(doc["topics"], "topics")):
        path = f"topics[{i}]"
        topic = expect_object(
            raw, path, ("name",), ("num_partitions", "replication_factor", "assignments", "configs")
        )
        if "num_partitions" in topic:
            expect_int32(topic["num_partitions"], f"{path}.num_partitions")
        if "replication_factor" in topic:  # an INT16 in Kafka's CreateTopics
            expect_int(topic["replication_factor"], f"{path}.replication_factor", INT16_MIN, INT16_MAX)
        expect_string(topic["name"], f"{path}.name")
        _check_assignments(topic.get("assignments"), f"{path}.assignments")
        _check_configs(topic.get("configs", {}), f"{path}.configs")


def _check_assignments(value: Any, path: str) -> None:
    """``{"0": [1, 2], "1": [2, 3]}`` (partition id → replicas) or null/absent."""
    if value is None:
        return
    for key, replicas in expect_map(value, path).items():
        where = f"{path}[{json.dumps(key)}]"
        if PARTITION_KEY.fullmatch(key) is None or int(key) > INT32_MAX:
            fail(where, f"expected a partition id (0..{INT32_MAX}, decimal, no leading zeros) as key")
        expect_broker_ids(replicas, where, nullable=False)


def _check_configs(value: Any, path: str) -> None:
    """``{"cleanup.policy": "compact"}``; a null value is the controller's to refuse (per topic,
    as Kafka does)."""
    for key, config in expect_map(value, path).items():
        if config is not None and not isinstance(config, str):
            fail(f"{path}[{json.dumps(key)}]", f"expected a string or null, got {json_type(config)}")


# --- POST /v1/topics/delete and DELETE /v1/topics/{topic} (DeleteTopics) --------------------------


def parse_delete_topics(body: bytes, caller: Requester) -> DeleteTopics:
    """``{"timeout_ms", "topics": ["orders", ...]}``, decoded once (:mod:`reassignd.http.door`)."""
    return decode_request(
        body,
        requests.DeleteTopicsRequest,
        lambda request: delete_topics_of(request, caller),
        check_delete_topics,
    )


def check_delete_topics(body: bytes) -> None:
    """The strict reader of DeleteTopics (the door's second tier)."""
    doc = decode_object(body, ("topics",), ("timeout_ms",))
    expect_timeout_ms(doc, DEFAULT_TIMEOUT_MS)
    for i, name in enumerate(expect_list(doc["topics"], "topics")):
        expect_string(name, f"topics[{i}]")


def parse_delete_topic(topic: str, query: DeleteTopicQuery, caller: Requester) -> DeleteTopics:
    """``DELETE /v1/topics/{topic}?timeout_ms=N`` (the query decoded at the door)."""
    timeout_ms = DEFAULT_TIMEOUT_MS if query.timeout_ms is None else query.timeout_ms
    return DeleteTopics(names=(topic,), caller=caller, timeout_ms=timeout_ms)


# --- POST /v1/topics/partitions (CreatePartitions) ------------------------------------------------


def parse_create_partitions(body: bytes, caller: Requester) -> CreatePartitions:
    """``{"timeout_ms", "validate_only", "topics": [{"name", "count", "assignments"}]}``;
    ``assignments`` is one replica list per new partition, or null/absent (placed by reassignd).
    Decoded once (:mod:`reassignd.http.door`)."""
    return decode_request(
        body,
        requests.CreatePartitionsRequest,
        lambda request: create_partitions_of(request, caller),
        check_create_partitions,
    )


def check_create_partitions(body: bytes) -> None:
    """The strict reader of CreatePartitions (the door's second tier)."""
    doc = decode_object(body, ("topics",), ("timeout_ms", "validate_only"))
    expect_timeout_ms(doc, DEFAULT_TIMEOUT_MS)
    _validate_only(doc)
    for i, raw in enumerate(expect_list(doc["topics"], "topics")):
        path = f"topics[{i}]"
        topic = expect_object(raw, path, ("name", "count"), ("assignments",))
        expect_string(topic["name"], f"{path}.name")
        expect_int32(topic["count"], f"{path}.count")
        if topic.get("assignments") is not None:
            lists = expect_list(topic["assignments"], f"{path}.assignments")
            for j, replicas in enumerate(lists):
                expect_broker_ids(replicas, f"{path}.assignments[{j}]", nullable=False)


# --- answers and Retry-After (pure) ---------------------------------------------------------------


def topic_result_json(result: TopicOutcome) -> contracts.TopicResult:
    code = result.error_code
    return contracts.TopicResult(
        result.name, code, error_name(code), item_message(code, result.error_message)
    )


def created_topic_json(result: TopicOutcome) -> contracts.CreatedTopic:
    """CreateTopics' entry: the sizes appear when known (what was, or would be, created)."""
    code = result.error_code
    return contracts.CreatedTopic(
        result.name,
        code,
        error_name(code),
        item_message(code, result.error_message),
        result.num_partitions,
        result.replication_factor,
    )


def create_topics_json(result: TopicsResult) -> contracts.CreateTopicsResponse:
    return contracts.CreateTopicsResponse(
        result.throttle_time_ms, tuple(created_topic_json(r) for r in result.results)
    )


def delete_topics_json(result: TopicsResult) -> contracts.DeleteTopicsResponse:
    return contracts.DeleteTopicsResponse(
        result.throttle_time_ms, tuple(topic_result_json(r) for r in result.results)
    )


def create_partitions_json(result: TopicsResult) -> contracts.CreatePartitionsResponse:
    return contracts.CreatePartitionsResponse(
        result.throttle_time_ms, tuple(topic_result_json(r) for r in result.results)
    )


def retry_after_headers(throttle_time_ms: int) -> dict[str, str]:
    """``Retry-After`` in whole seconds, rounded up, when a topic was throttled; else none."""
    if throttle_time_ms <= 0:
        return {}
    return {"Retry-After": str(math.ceil(throttle_time_ms / 1000))}


# --- routes ----------------------------------------------------------------------------------------


def _answer(body: msgspec.Struct, result: TopicsResult) -> web.Response:
    return json_response(body, headers=retry_after_headers(result.throttle_time_ms))


async def create_topics(request: web.Request) -> web.Response:
    create = parse_create_topics(await request.read(), caller_of(request))  # over the limit: 413
    note(request, create)
    result = await request.app[VIEW].create_topics(create)
    return _answer(create_topics_json(result), result)


async def delete_topics(request: web.Request) -> web.Response:
    delete = parse_delete_topics(await request.read(), caller_of(request))
    note(request, delete)
    result = await request.app[VIEW].delete_topics(delete)
    return _answer(delete_topics_json(result), result)


async def delete_topic(request: web.Request) -> web.Response:
    delete = parse_delete_topic(
        request.match_info["topic"], query_of(request, DeleteTopicQuery), caller_of(request)
    )
    note(request, delete)
    result = await request.app[VIEW].delete_topics(delete)
    return _answer(delete_topics_json(result), result)


async def create_partitions(request: web.Request) -> web.Response:
    create = parse_create_partitions(await request.read(), caller_of(request))
    note(request, create)
    result = await request.app[VIEW].create_partitions(create)
    return _answer(create_partitions_json(result), result)

"""Topic mutations: CreateTopics, DeleteTopics and CreatePartitions.

- ``POST /v1/topics``: CreateTopics.
- ``POST /v1/topics/delete`` and ``DELETE /v1/topics/{topic}?timeout_ms=N``: DeleteTopics.
- ``POST /v1/topics/partitions``: CreatePartitions.

Bodies are parsed strictly (400/42 before anything reaches the controller); the caller (user and
``X-Client-Id``) goes with the request for the KIP-599 quota. Per-topic errors come back with 200;
``Retry-After`` is set when a topic was throttled.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from reassignd.controller.requests import TopicsResult
from reassignd.http.callers import caller_of
from reassignd.http.json_input import query_params
from reassignd.http.keys import VIEW
from reassignd.http.responses import json_response
from reassignd.http.topic_requests import (
    parse_create_partitions,
    parse_create_topics,
    parse_delete_topic,
    parse_delete_topics,
)
from reassignd.http.topic_shapes import (
    create_partitions_json,
    create_topics_json,
    delete_topics_json,
    retry_after_headers,
)

routes = web.RouteTableDef()


def _answer(body: dict[str, Any], result: TopicsResult) -> web.Response:
    return json_response(body, headers=retry_after_headers(result.throttle_time_ms))


@routes.post("/v1/topics")
async def create_topics(request: web.Request) -> web.Response:
    query_params(request.query.items(), ())
    create = parse_create_topics(await request.read(), caller_of(request))  # over the limit: 413
    result = await request.app[VIEW].create_topics(create)
    return _answer(create_topics_json(result), result)


@routes.post("/v1/topics/delete")
async def delete_topics(request: web.Request) -> web.Response:
    query_params(request.query.items(), ())
    delete = parse_delete_topics(await request.read(), caller_of(request))
    result = await request.app[VIEW].delete_topics(delete)
    return _answer(delete_topics_json(result), result)


@routes.delete("/v1/topics/{topic}")
async def delete_topic(request: web.Request) -> web.Response:
    delete = parse_delete_topic(request.match_info["topic"], request.query.items(), caller_of(request))
    result = await request.app[VIEW].delete_topics(delete)
    return _answer(delete_topics_json(result), result)


@routes.post("/v1/topics/partitions")
async def create_partitions(request: web.Request) -> web.Response:
    query_params(request.query.items(), ())
    create = parse_create_partitions(await request.read(), caller_of(request))
    result = await request.app[VIEW].create_partitions(create)
    return _answer(create_partitions_json(result), result)

"""The cluster view: status, brokers and topics, read from the last published snapshot.

Brokers and topics are the active controller's data: a standby answers them 503 NOT_CONTROLLER
with the active controller's id and URL (``reassignd.http.active``); its status answers always."""

from __future__ import annotations

import time

from aiohttp import web

from reassignd.errors import UnknownTopicOrPartition
from reassignd.http.active import active_snapshot
from reassignd.http.json_input import query_params
from reassignd.http.keys import RECORDS, VIEW
from reassignd.http.responses import json_response
from reassignd.http.shapes import (
    active_controller_json,
    brokers_json,
    status_json,
    topic_json,
    topics_json,
)

routes = web.RouteTableDef()


@routes.get("/v1/status")
async def status(request: web.Request) -> web.Response:
    view = request.app[VIEW]
    body = status_json(
        view.snapshot(),
        zk_connected=view.zk_connected,
        zk_session_id=view.zk_session_id,
        queue_size=view.queue_size(),
        queue_time_ms=view.queue_time_percentiles_ms(),
        uptime_s=time.monotonic() - view.started_at_s,
    )
    body["events"] = request.app[RECORDS].status()
    return json_response(body)


@routes.post("/v1/controller/resign")
async def resign(request: web.Request) -> web.Response:
    """A planned hand-over (admin): this active instance gives its role up; a standby answers 41."""
    query_params(request.query.items(), ())
    view = request.app[VIEW]
    active_snapshot(request)  # 503 NOT_CONTROLLER on a standby
    successor = await view.hand_over(leaving=False)
    return json_response({"active_controller": active_controller_json(successor)})


@routes.get("/v1/brokers")
async def brokers(request: web.Request) -> web.Response:
    return json_response(brokers_json(active_snapshot(request)))


@routes.get("/v1/topics")
async def topics(request: web.Request) -> web.Response:
    return json_response(topics_json(active_snapshot(request)))


@routes.get("/v1/topics/{topic}")
async def topic(request: web.Request) -> web.Response:
    name = request.match_info["topic"]
    found = active_snapshot(request).topics.get(name)
    if found is None:
        raise UnknownTopicOrPartition(f"Topic {name} does not exist.")
    return json_response(topic_json(found))

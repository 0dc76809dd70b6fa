"""Partition reassignments: AlterPartitionReassignments, ListPartitionReassignments, cancel.

- ``POST /v1/reassignments``: Kafka's request shape or a ``kafka-reassign-partitions`` plan,
  parsed strictly (400/42 before anything reaches the controller), then handed to the controller.
- ``GET /v1/reassignments?topic=T&partition=P``: the last published snapshot's reassignments,
  with byte-level progress asked from the broker agents (only when there is something to show);
  a standby answers 503 NOT_CONTROLLER (it knows no reassignment).
- ``DELETE /v1/reassignments[/{topic}[/{partition}]]?mode=cancel|stop``: cancel every, one
  topic's or one partition's reassignment; answered in AlterPartitionReassignments' shape.

Errors the controller raises (NOT_CONTROLLER on a standby, …) go through the error middleware.
"""

from __future__ import annotations

from aiohttp import web

from reassignd.control.protocol import ReplicasReport
from reassignd.http.active import active_snapshot
from reassignd.http.agent_reports import AGENT_SESSION, agent_urls, fetch_reports
from reassignd.http.json_input import query_params
from reassignd.http.keys import VIEW
from reassignd.http.progress import index_reports, involved_brokers, reassignment_progress
from reassignd.http.reassignment_requests import parse_alter_body, parse_cancel, parse_list_query
from reassignd.http.reassignment_shapes import alter_response_json, list_response_json
from reassignd.http.responses import json_response

routes = web.RouteTableDef()


@routes.post("/v1/reassignments")
async def alter_reassignments(request: web.Request) -> web.Response:
    query_params(request.query.items(), ())  # e.g. ?mode=stop: "mode" belongs in the body
    alter = parse_alter_body(await request.read())  # over the body limit: 413
    result = await request.app[VIEW].alter_reassignments(alter)
    return json_response(alter_response_json(result))


@routes.get("/v1/reassignments")
async def list_reassignments(request: web.Request) -> web.Response:
    wanted = parse_list_query(request.query.items())  # a bad query is 400 on every instance
    snapshot = active_snapshot(request)
    shown = wanted.select(snapshot.reassignments)
    reports: dict[int, ReplicasReport] = {}
    if shown:
        urls = agent_urls(snapshot.brokers, involved_brokers(shown))
        reports = await fetch_reports(request.app[AGENT_SESSION], urls)
    replicas = index_reports(reports)
    return json_response(list_response_json([(r, reassignment_progress(r, replicas)) for r in shown]))


@routes.delete("/v1/reassignments")
@routes.delete("/v1/reassignments/{topic}")
@routes.delete("/v1/reassignments/{topic}/{partition}")
async def cancel_reassignments(request: web.Request) -> web.Response:
    cancel = parse_cancel(
        request.match_info.get("topic"), request.match_info.get("partition"), request.query.items()
    )
    result = await request.app[VIEW].cancel_reassignments(cancel)
    return json_response(alter_response_json(result))

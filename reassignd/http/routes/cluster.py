"""The cluster view: status, brokers and topics, read from the last published snapshot.

Brokers and topics are the active controller's data: a standby answers them 503 NOT_CONTROLLER
with the active controller's id and URL (``reassignd.http.active``); its status answers always."""

from __future__ import annotations

import time
from typing import cast

import msgspec
from aiohttp import web

from reassignd.contracts.cluster import EventQueue, HandOver, LiveBrokers, SelfHealing, Status, StatusProblem
from reassignd.controller.model.snapshot import ClusterSnapshot
from reassignd.errors import UnknownTopicOrPartition
from reassignd.http.active import active_snapshot
from reassignd.http.answers import encoded_response
from reassignd.http.keys import ANSWERS, RECORDS, VIEW
from reassignd.http.responses import json_response
from reassignd.http.shapes import (
    active_controller_json,
    brokers_json,
    status_json,
    topic_json,
    topics_json,
    zookeeper_json,
)

_ENCODER = msgspec.json.Encoder()


async def status(request: web.Request) -> web.Response:
    """The snapshot's part of the answer is built once per snapshot (its lists kept encoded); the
    live figures (ZooKeeper session, queue, uptime, events) are set per request in their places."""
    view = request.app[VIEW]
    snapshot = view.snapshot()
    template = request.app[ANSWERS].value(("status",), (snapshot,), lambda: _status_template(snapshot))
    body = msgspec.structs.replace(
        template,
        zookeeper=zookeeper_json(view.zk_connected, view.zk_session_id, view.zk_access),
        event_queue=EventQueue(view.queue_size(), dict(view.queue_time_percentiles_ms())),
        uptime_s=max(0, int(time.monotonic() - view.started_at_s)),
        events=request.app[RECORDS].status(),
    )
    return json_response(body)


def _status_template(snapshot: ClusterSnapshot) -> Status:
    """``status_json`` of ``snapshot`` with its snapshot-sized values encoded once: msgspec writes
    a ``msgspec.Raw`` as it is, in the field the contract types (a cast, for the encoder only); the
    live fields hold placeholders, replaced per request."""
    body = status_json(
        snapshot, zk_connected=False, zk_session_id=None, queue_size=0, queue_time_ms={}, uptime_s=0
    )
    return msgspec.structs.replace(
        body,
        brokers=cast(LiveBrokers, _raw(body.brokers)),
        problems=cast(tuple[StatusProblem, ...], _raw(body.problems)),
        self_healing=None if body.self_healing is None else cast(SelfHealing, _raw(body.self_healing)),
    )


def _raw(value: object) -> msgspec.Raw:
    return msgspec.Raw(_ENCODER.encode(value))


async def resign(request: web.Request) -> web.Response:
    """A planned hand-over (admin): this active instance gives its role up; a standby answers 41."""
    view = request.app[VIEW]
    active_snapshot(request)  # 503 NOT_CONTROLLER on a standby
    successor = await view.hand_over(leaving=False)
    return json_response(HandOver(active_controller_json(successor)))


async def brokers(request: web.Request) -> web.Response:
    return json_response(brokers_json(active_snapshot(request)))


async def topics(request: web.Request) -> web.Response:
    """Kept encoded while the snapshots share their topics (until a topic changes)."""
    snapshot = active_snapshot(request)
    encoded = request.app[ANSWERS].get(("topics",), (snapshot.topics,), lambda: topics_json(snapshot))
    return encoded_response(request, encoded)


async def topic(request: web.Request) -> web.Response:
    """Kept encoded while the snapshots share the topic's view (until the topic changes)."""
    name = request.match_info["topic"]
    found = active_snapshot(request).topics.get(name)
    if found is None:
        raise UnknownTopicOrPartition(f"Topic {name} does not exist.")
    return encoded_response(
        request, request.app[ANSWERS].get(("topic", name), (found,), lambda: topic_json(found))
    )

"""Broker demotion: ``POST /v1/brokers/{broker_id}/demote`` and ``/promote`` (admin).

Demote moves every leadership off a broker before maintenance without moving data: each
partition hosting it gets a reassignment to its own replica set with the broker last, and the
partitions it led a preferred-replica election; it stays in every ISR. Promote restores the
orders the demotion recorded (in ZooKeeper, so a failover keeps them) and elects their first
replicas again. The answer lists every partition acted on or refused, with a reason: 83
ELIGIBLE_LEADERS_NOT_AVAILABLE (no other live in-sync replica could lead), 60
REASSIGNMENT_IN_PROGRESS (being moved; try again when it ends), 10002 STALE_PLAN (promote: the
replicas changed since the demotion). A broker nothing knows (not registered, in no replica
list, not demoted) is 404.
"""

from __future__ import annotations

from aiohttp import web

from reassignd.contracts.reassignments import DemotionResponse, TopicPartitionResult
from reassignd.controller.model.admin_requests import DemotionResult
from reassignd.errors import error_name
from reassignd.http.json_input import fail
from reassignd.http.keys import VIEW
from reassignd.http.responses import item_message, json_response
from reassignd.int_limits import INT32_MAX


def broker_id_param(text: str) -> int:
    """The ``{broker_id}`` path segment: 0 to 2^31-1 (anything else: 400)."""
    if not (text.isascii() and text.isdigit()) or len(text) > 10 or int(text) > INT32_MAX:
        fail("broker_id", f"expected a broker id (0 to {INT32_MAX}), got {text!r}")
    return int(text)


def demotion_json(result: DemotionResult) -> DemotionResponse:
    return DemotionResponse(
        result.broker_id,
        result.leaders_moved,
        result.refused,
        tuple(
            TopicPartitionResult(
                r.topic,
                r.partition,
                r.error_code,
                error_name(r.error_code),
                item_message(r.error_code, r.error_message),
            )
            for r in result.partitions
        ),
    )


async def _change(request: web.Request, *, promote: bool) -> web.Response:
    broker = broker_id_param(request.match_info["broker_id"])
    result = await request.app[VIEW].demote_broker(broker, promote=promote)
    return json_response(demotion_json(result))


async def demote(request: web.Request) -> web.Response:
    return await _change(request, promote=False)


async def promote(request: web.Request) -> web.Response:
    return await _change(request, promote=True)

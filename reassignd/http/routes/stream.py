"""``GET /v1/events`` (viewer): the controller's event records as server-sent events.

Records already in this instance's history after ``Last-Event-ID`` (header, or ``?last_event_id=``
for clients that cannot set it) come first, then every new record as it is emitted; ``?type=``,
``?topic=`` and ``?batch=`` (each repeatable) filter; a heartbeat comment every
``?heartbeat_s=`` seconds (default 15). ``?max_s=`` ends the stream after that many seconds
(for scripts and tests; default: never). A client that falls more than the subscription queue
behind is disconnected and resumes with its last id. At most ``--events-max-subscribers`` streams
are open at once; one more is answered 503 with ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import logging
import time

from aiohttp import web

from reassignd.contracts.queries import EventsQuery
from reassignd.http.json_input import fail
from reassignd.http.keys import RECORDS, SETTINGS
from reassignd.http.query_door import query_of
from reassignd.stream import sse
from reassignd.stream.record_log import RecordLog, Subscription
from reassignd.stream.records import Filters, parse_id

logger = logging.getLogger(__name__)

HEARTBEAT_S = 15.0
FULL_RETRY_AFTER_S = 5


async def events(request: web.Request) -> web.StreamResponse:
    query = query_of(request, EventsQuery)  # decoded at the door
    filters = Filters(frozenset(query.type or ()), frozenset(query.topic or ()), frozenset(query.batch or ()))
    heartbeat_s = HEARTBEAT_S if query.heartbeat_s is None else query.heartbeat_s
    last_text = request.headers.get("Last-Event-ID") or query.last_event_id
    last = parse_id(last_text) if last_text else None
    if last_text and last is None:
        fail("Last-Event-ID", "must be <controller_epoch>-<sequence>")
    log = request.app[RECORDS]
    limit = request.app[SETTINGS].events_max_subscribers
    if log.subscribers >= limit:  # checked and taken with no await in between: never over the cap
        raise web.HTTPServiceUnavailable(
            text=f"{log.subscribers} event streams are open, the most --events-max-subscribers allows; "
            "retry later",
            headers={"Retry-After": str(FULL_RETRY_AFTER_S)},
        )
    sub = log.subscribe()  # before reading the history: nothing falls in between
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )
    try:
        await _send(request, response, sub, log, filters, last, heartbeat_s, query.max_s)
    except ConnectionResetError:  # the client went away (aiohttp's ClientConnectionResetError too)
        logger.info("event stream to %s ended: the client went away", request.remote)
    finally:
        log.unsubscribe(sub)
    return response


async def _send(
    request: web.Request,
    response: web.StreamResponse,
    sub: Subscription,
    log: RecordLog,
    filters: Filters,
    last: tuple[int, int] | None,
    heartbeat_s: float,
    max_s: float | None,
) -> None:
    """The history after ``last``, then live records, until the subscription closes or ``max_s``."""
    await response.prepare(request)
    sent = last or (0, 0)
    if last is not None:
        backlog, complete = log.since(*last)
        if not complete:
            await response.write(sse.gap_frame(f"{last[0]}-{last[1]}", backlog[0].id if backlog else None))
        for record in backlog:
            if filters.accepts(record):
                await response.write(sse.frame(record))
            sent = (record.controller_epoch, record.sequence)
    deadline = None if max_s is None else time.monotonic() + max_s
    while not sub.closed:
        timeout = heartbeat_s if deadline is None else min(heartbeat_s, deadline - time.monotonic())
        if timeout <= 0:
            break
        try:
            item = await asyncio.wait_for(sub.queue.get(), timeout)
        except TimeoutError:
            if deadline is None or time.monotonic() < deadline:
                await response.write(sse.heartbeat())
            continue
        if item is None:
            break
        position = (item.controller_epoch, item.sequence)
        if position <= sent:
            continue  # already sent from the history
        sent = position
        if filters.accepts(item):
            await response.write(sse.frame(item))

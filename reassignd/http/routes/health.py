"""``/healthz``, ``/readyz`` and ``/metrics``: public, answered by every instance (``/metrics``
names users, client ids and batches only to a caller with a token: ``metrics_view``)."""

from __future__ import annotations

from aiohttp import web
from prometheus_client.exposition import choose_encoder

from reassignd.contracts.cluster import Health, Readiness
from reassignd.http.batch_metrics import collector_for
from reassignd.http.keys import BATCH_STATUSES, TOKENS, VIEW
from reassignd.http.metrics_view import exposed, shows_names
from reassignd.http.responses import json_response
from reassignd.http.shapes import readiness


async def healthz(request: web.Request) -> web.Response:
    return json_response(Health("ok"))


async def readyz(request: web.Request) -> web.Response:
    view = request.app[VIEW]
    reason = readiness(view.snapshot(), zk_connected=view.zk_connected)
    if reason is None:
        return json_response(Readiness("ready"))
    return json_response(Readiness("not ready", reason), status=503)


async def metrics(request: web.Request) -> web.Response:
    names = shows_names(request.app[TOKENS], request.headers.get("Authorization"))
    view = request.app[VIEW]
    snapshot = view.snapshot()
    unfinished = (
        [b.batch_id for b in snapshot.batches.values() if b.state.unfinished] if snapshot.active else []
    )
    # the statuses last computed with the agents' reports: a scrape never asks an agent
    collector_for(view.metrics_registry).statuses = request.app[BATCH_STATUSES].unfinished(
        snapshot.controller_epoch, unfinished
    )
    # Plain generate_latest (text format 0.0.4) unless the scraper asks for OpenMetrics.
    encode, content_type = choose_encoder(request.headers.get("Accept", ""))
    body = encode(exposed(view.metrics_registry, names))
    return web.Response(body=body, headers={"Content-Type": content_type})

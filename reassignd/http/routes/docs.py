"""``GET /v1/openapi.json``: the OpenAPI document of every route (``reassignd.http.openapi``,
built from the route table that registers this handler, and handed over by the app)."""

from __future__ import annotations

from aiohttp import web

from reassignd.http.keys import OPENAPI
from reassignd.http.responses import json_response


async def openapi(request: web.Request) -> web.Response:
    return json_response(request.app[OPENAPI])

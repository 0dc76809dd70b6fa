"""``GET /v1/openapi.json``: the OpenAPI document of every route (``reassignd.http.openapi``)."""

from __future__ import annotations

from aiohttp import web

from reassignd.http.openapi import openapi_document
from reassignd.http.responses import json_response

routes = web.RouteTableDef()


@routes.get("/v1/openapi.json")
async def openapi(request: web.Request) -> web.Response:
    return json_response(openapi_document())

"""The status page: ``GET /`` and its script and style under ``/ui/``, served from the package
(no build step, nothing from the network), and ``GET /v1/whoami`` (viewer), which tells the page
the caller's role so it shows the cancel and stop buttons to admins only.

The page's files are public: they hold no data. The page reads the API with the bearer token the
user enters once (kept in the tab's sessionStorage), or anonymously where the API allows it
(no tokens file: loopback only).
"""

from __future__ import annotations

from importlib import resources

from aiohttp import web

from reassignd.contracts.cluster import Caller
from reassignd.http.keys import PRINCIPAL
from reassignd.http.responses import json_response

# the only files served, with their types: a fixed table, so no path ever reaches the filesystem
FILES = {
    "index.html": "text/html",
    "app.js": "text/javascript",
    "style.css": "text/css",
}
UI_PREFIX = "/ui/"


def _file(name: str) -> web.Response:
    data = resources.files("reassignd.http").joinpath("static", name).read_bytes()
    return web.Response(
        body=data,
        content_type=FILES[name],
        charset="utf-8",
        headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
    )


async def page(request: web.Request) -> web.Response:
    return _file("index.html")


async def script(request: web.Request) -> web.Response:
    return _file("app.js")


async def style(request: web.Request) -> web.Response:
    return _file("style.css")


async def whoami(request: web.Request) -> web.Response:
    principal = request[PRINCIPAL]
    return json_response(Caller(principal.user, principal.role.value))

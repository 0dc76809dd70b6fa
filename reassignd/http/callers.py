"""Who is asking: the authenticated principal's user and the ``X-Client-Id`` header."""

from __future__ import annotations

from aiohttp import web

from reassignd.controller.model.requests import Requester
from reassignd.http.keys import PRINCIPAL

CLIENT_ID_HEADER = "X-Client-Id"


def client_id_of(request: web.Request) -> str:
    """The ``X-Client-Id`` header, empty when absent (as Kafka's client-id)."""
    return request.headers.get(CLIENT_ID_HEADER, "")


def caller_of(request: web.Request) -> Requester:
    """The quota entity a request is charged to; only for routes behind the auth middleware."""
    return Requester(user=request[PRINCIPAL].user, client_id=client_id_of(request))

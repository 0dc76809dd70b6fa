"""Asking broker agents for their replicas: the HTTP application's client session (one
:class:`aiohttp.ClientSession`, a ``cleanup_ctx`` hook) over :mod:`reassignd.controller.agent_reports`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
from aiohttp import web

from reassignd.controller.agent_reports import (
    AGENT_TIMEOUT_S,
    CONTROL_LISTENER,
    agent_url,
    agent_urls,
    fetch_report,
    fetch_reports,
)

__all__ = [
    "AGENT_SESSION",
    "AGENT_TIMEOUT_S",
    "CONTROL_LISTENER",
    "agent_session",
    "agent_url",
    "agent_urls",
    "fetch_report",
    "fetch_reports",
]

AGENT_SESSION = web.AppKey("agent_session", aiohttp.ClientSession)


async def agent_session(app: web.Application) -> AsyncIterator[None]:
    """``app.cleanup_ctx`` hook: the session lives exactly as long as the application runs."""
    timeout = aiohttp.ClientTimeout(total=AGENT_TIMEOUT_S)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        app[AGENT_SESSION] = session
        yield

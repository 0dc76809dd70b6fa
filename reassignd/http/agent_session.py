"""The HTTP application's client session for asking broker agents for their replicas (one
:class:`aiohttp.ClientSession`, a ``cleanup_ctx`` hook); the asking is
:mod:`reassignd.agent_reports.fetch`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
from aiohttp import web

from reassignd.agent_reports.fetch import AGENT_TIMEOUT_S

AGENT_SESSION = web.AppKey("agent_session", aiohttp.ClientSession)


async def agent_session(app: web.Application) -> AsyncIterator[None]:
    """``app.cleanup_ctx`` hook: the session lives exactly as long as the application runs."""
    timeout = aiohttp.ClientTimeout(total=AGENT_TIMEOUT_S)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        app[AGENT_SESSION] = session
        yield

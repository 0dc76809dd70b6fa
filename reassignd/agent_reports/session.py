"""The one client session the controller process asks broker agents through (their reports,
moves between their log dirs): built by the composition root (``reassignd/process.py``), handed
to the Kafka listener, the progress reporter, the agents' sampler and the dir mover, and closed
once on the way out. Each request is bounded by ``AGENT_TIMEOUT_S`` (per agent, connection
included), a whole request included."""

from __future__ import annotations

import aiohttp

from reassignd.agent_reports.fetch import AGENT_TIMEOUT_S


def agents_session() -> aiohttp.ClientSession:
    """A new session (call it in the running event loop; the caller closes it)."""
    return aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=AGENT_TIMEOUT_S))

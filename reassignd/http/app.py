"""The aiohttp application: route tables, middlewares, limits.

Later endpoints add a module under ``routes/`` with its own ``RouteTableDef`` and list it in
``ROUTE_TABLES``; everything else (errors, auth, limits) applies to them unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import web

from reassignd.controller.settings import ControllerSettings
from reassignd.controller.snapshot import ControllerView
from reassignd.events.history import EventLog
from reassignd.http import auth
from reassignd.http.agent_reports import agent_session
from reassignd.http.keys import SETTINGS, TOKENS, VIEW
from reassignd.http.middleware import auth_middleware, error_middleware
from reassignd.http.routes import (
    batches,
    cluster,
    docs,
    elections,
    events,
    health,
    log_dirs,
    page,
    quotas,
    reassignments,
    topics,
)

MAX_BODY_BYTES = 10 * 1024 * 1024  # larger bodies: 413

ROUTE_TABLES: tuple[web.RouteTableDef, ...] = (
    health.routes,
    cluster.routes,
    reassignments.routes,
    batches.routes,
    topics.routes,
    quotas.routes,
    elections.routes,
    docs.routes,
    events.routes,
    page.routes,
    log_dirs.routes,
)


def build_app(
    view: ControllerView,
    settings: ControllerSettings,
    *,
    tokens: Mapping[str, auth.Principal] | None = None,
    event_log: EventLog | None = None,
) -> web.Application:
    """The HTTP API of one controller instance.

    ``tokens`` defaults to the file named by ``settings.auth_tokens_path`` (read here, once);
    without either, every caller is ``ANONYMOUS`` admin — the CLI only allows that on loopback.
    Raises :class:`auth.TokensFileError` for a bad tokens file.
    """
    if tokens is None and settings.auth_tokens_path is not None:
        tokens = auth.load_tokens(settings.auth_tokens_path)
    app = web.Application(
        client_max_size=MAX_BODY_BYTES,
        middlewares=[error_middleware, auth_middleware],
    )
    app[VIEW] = view
    app[SETTINGS] = settings
    app[TOKENS] = tokens
    app[events.EVENTS] = event_log if event_log is not None else EventLog()
    app.cleanup_ctx.append(agent_session)  # the ClientSession that asks broker agents for progress
    for table in ROUTE_TABLES:
        app.add_routes(table)
    return app

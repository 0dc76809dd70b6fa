"""The aiohttp application: route tables, middlewares, limits.

Later endpoints add a module under ``routes/`` with its own ``RouteTableDef`` and list it in
``ROUTE_TABLES``; everything else (errors, auth, limits) applies to them unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import web

from reassignd.agent_reports.fetch import SharedReports
from reassignd.agent_reports.status_cache import BatchStatusCache
from reassignd.controller.api.port import ControllerView
from reassignd.controller.settings import ControllerSettings
from reassignd.http import auth
from reassignd.http.agent_session import agent_session
from reassignd.http.answers import AnswerCache, Parts
from reassignd.http.audit import AUDIT, audit_middleware
from reassignd.http.keys import (
    ANSWERS,
    BATCH_STATUSES,
    REASSIGNMENT_PARTS,
    RECORDS,
    REPORTS,
    SETTINGS,
    TOKENS,
    VIEW,
)
from reassignd.http.middleware import auth_middleware, error_middleware
from reassignd.http.routes import (
    batches,
    cluster,
    demotions,
    docs,
    elections,
    health,
    log_dirs,
    page,
    quotas,
    reassignments,
    stream,
    topics,
)
from reassignd.stream.audit import AuditTrail
from reassignd.stream.record_log import RecordLog

MAX_BODY_BYTES = 10 * 1024 * 1024  # larger bodies: 413

ROUTE_TABLES: tuple[web.RouteTableDef, ...] = (
    health.routes,
    cluster.routes,
    reassignments.routes,
    batches.routes,
    topics.routes,
    quotas.routes,
    elections.routes,
    demotions.routes,
    docs.routes,
    stream.routes,
    page.routes,
    log_dirs.routes,
)


def build_app(
    view: ControllerView,
    settings: ControllerSettings,
    *,
    tokens: Mapping[str, auth.Principal] | None = None,
    records: RecordLog | None = None,
    batch_statuses: BatchStatusCache | None = None,
) -> web.Application:
    """The HTTP API of one controller instance.

    ``tokens`` defaults to the file named by ``settings.auth_tokens_path`` (read here, once);
    without either, every caller is ``ANONYMOUS`` admin — the CLI only allows that on loopback.
    ``batch_statuses`` is shared with the progress reporter, which fills it (``/metrics`` reads it).
    Raises :class:`auth.TokensFileError` for a bad tokens file.
    """
    if tokens is None and settings.auth_tokens_path is not None:
        tokens = auth.load_tokens(settings.auth_tokens_path)
    app = web.Application(
        client_max_size=MAX_BODY_BYTES,
        middlewares=[audit_middleware, error_middleware, auth_middleware],
    )
    app[VIEW] = view
    app[SETTINGS] = settings
    app[TOKENS] = tokens
    app[BATCH_STATUSES] = batch_statuses if batch_statuses is not None else BatchStatusCache()
    app[RECORDS] = records if records is not None else RecordLog()
    app[ANSWERS] = AnswerCache()
    app[REPORTS] = SharedReports()
    app[REASSIGNMENT_PARTS] = Parts()
    app[AUDIT] = AuditTrail(
        app[RECORDS], settings.controller_id
    )  # every change: a log line and an audit record
    app.cleanup_ctx.append(agent_session)  # the ClientSession that asks broker agents for progress
    for table in ROUTE_TABLES:
        app.add_routes(table)
    return app

"""The aiohttp application: the routes of ``route_table``, middlewares, limits.

A new endpoint adds a handler under ``routes/`` and its ``Operation`` to ``route_table`` (which
also documents it in the OpenAPI document); everything else (errors, auth, limits) applies to it
unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import web
from aiohttp.typedefs import Handler

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
    OPENAPI,
    REASSIGNMENT_PARTS,
    RECORDS,
    REPORTS,
    SETTINGS,
    TOKENS,
    VIEW,
)
from reassignd.http.middleware import auth_middleware, error_middleware
from reassignd.http.openapi import openapi_document
from reassignd.http.operation import shadowed_paths
from reassignd.http.query_door import reading_query
from reassignd.http.route_table import OPERATIONS
from reassignd.stream.audit import AuditTrail
from reassignd.stream.record_log import RecordLog

MAX_BODY_BYTES = 10 * 1024 * 1024  # larger bodies: 413


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
    app[OPENAPI] = openapi_document()
    for op in OPERATIONS:
        handler = op.handler if op.query is None else reading_query(op.query, op.handler)
        if op.method == "GET":
            app.router.add_get(op.path, handler)  # and HEAD
        else:
            app.router.add_route(op.method, op.path, handler)
    for path, methods in shadowed_paths(OPERATIONS).items():
        app.router.add_route("*", path, _not_allowed(methods))  # after the path's own methods
    return app


def _not_allowed(methods: tuple[str, ...]) -> Handler:
    """The handler of every other method on a fixed path a path with parameters also matches:
    405 with the path's own methods in ``Allow``, not the other path's operation (``GET
    /v1/topics/delete`` does not describe a topic called ``delete``)."""

    async def not_allowed(request: web.Request) -> web.StreamResponse:
        raise web.HTTPMethodNotAllowed(request.method, methods)

    return not_allowed

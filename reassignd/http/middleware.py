"""Errors → the uniform error object, then authentication (the audit trail's middleware,
:mod:`reassignd.http.audit`, wraps them both)."""

from __future__ import annotations

import logging

from aiohttp import web
from aiohttp.typedefs import Handler

from reassignd.errors import NotController, ReassigndError
from reassignd.http import auth
from reassignd.http.callers import client_id_of
from reassignd.http.keys import PRINCIPAL, TOKENS, VIEW
from reassignd.http.responses import (
    INVALID_REQUEST,
    UNKNOWN_SERVER_ERROR,
    error_response,
    http_status,
    not_controller_response,
)
from reassignd.http.shapes import active_controller_json

log = logging.getLogger(__name__)

# Headers of aiohttp's own HTTP errors worth keeping on the JSON error (405 → Allow).
_KEPT_HEADERS = ("Allow", "Retry-After", "WWW-Authenticate")


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every failure becomes ``{error_code, error_name, error_message}``; nothing escapes."""
    try:
        return await handler(request)
    except ReassigndError as e:
        return _reassignd_error(request, e)
    except web.HTTPException as e:
        if e.status < 400:
            raise
        return _http_error(request, e)
    except Exception:
        log.exception(
            "unexpected error serving %s %s (client id %r)",
            request.method,
            request.rel_url.raw_path,  # still percent-encoded: no line breaks in the log
            client_id_of(request),
        )
        return error_response(
            UNKNOWN_SERVER_ERROR, "unexpected server error; see the controller's log", status=500
        )


def _reassignd_error(request: web.Request, error: ReassigndError) -> web.Response:
    if error.error_code == NotController.error_code:
        # Tell the client where the active controller is (null when unknown).
        active = active_controller_json(request.app[VIEW].snapshot().active_controller)
        return not_controller_response(error.error_code, error.message, active, status=http_status(error))
    headers: dict[str, str] = {}
    if isinstance(error, auth.AuthenticationFailed):
        headers["WWW-Authenticate"] = 'Bearer realm="reassignd"'
    return error_response(error.error_code, error.message, status=http_status(error), headers=headers)


def _http_error(request: web.Request, error: web.HTTPException) -> web.Response:
    if isinstance(error, web.HTTPNotFound):
        message = f"no route {request.method} {request.path}"
    elif isinstance(error, web.HTTPMethodNotAllowed):
        allowed = ", ".join(sorted(error.allowed_methods))
        message = f"method {request.method} not allowed on {request.path} (allowed: {allowed})"
    elif isinstance(error, web.HTTPRequestEntityTooLarge):
        message = f"request body too large (limit {request.client_max_size} bytes)"
    else:
        message = error.text or error.reason
    code = UNKNOWN_SERVER_ERROR if error.status >= 500 else INVALID_REQUEST
    headers = {h: error.headers[h] for h in _KEPT_HEADERS if h in error.headers}
    return error_response(code, message, status=error.status, headers=headers)


@web.middleware
async def auth_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Bearer tokens and roles (the README's "HTTP API"); health and metrics are public."""
    needed = auth.required_role(request.method, request.path)
    if needed is not None:
        principal = auth.authenticate(request.app[TOKENS], request.headers.get("Authorization"))
        request[PRINCIPAL] = principal  # before the role check: a refusal is audited with its user
        auth.authorize(principal, needed)
    return await handler(request)

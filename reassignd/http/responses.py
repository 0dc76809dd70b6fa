"""JSON responses (the contracts' structs, encoded) and the uniform error object
``{error_code, error_name, error_message}`` (:class:`reassignd.contracts.errors.Error`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
from aiohttp import web

from reassignd.contracts.errors import ActiveController, Error, NotControllerError
from reassignd.errors import DEFAULT_MESSAGES, ReassigndError, UnknownBroker, error_name
from reassignd.executor.errors import BatchStateError, UnknownBatch
from reassignd.http.auth import AuthenticationFailed

# HTTP status of a top-level error, by Kafka code; anything else a client did wrong is 400.
HTTP_STATUS_BY_ERROR_CODE: dict[int, int] = {
    -1: 500,  # UNKNOWN_SERVER_ERROR
    3: 404,  # UNKNOWN_TOPIC_OR_PARTITION
    7: 504,  # REQUEST_TIMED_OUT
    31: 403,  # CLUSTER_AUTHORIZATION_FAILED
    41: 503,  # NOT_CONTROLLER
    42: 400,  # INVALID_REQUEST
    89: 429,  # THROTTLING_QUOTA_EXCEEDED
    10004: 409,  # BATCH_ID_IN_USE: the batch id names a batch with another body
}

UNKNOWN_SERVER_ERROR = -1
INVALID_REQUEST = 42


def http_status(error: ReassigndError) -> int:
    if isinstance(error, AuthenticationFailed):
        return 401
    if isinstance(error, UnknownBatch | UnknownBroker):  # 42, but a resource that is not there: 404
        return 404
    if isinstance(error, BatchStateError):  # 42, a well-formed request the batch's state refuses
        return 409
    return HTTP_STATUS_BY_ERROR_CODE.get(error.error_code, 400)


def error_body(error_code: int, message: str | None) -> Error:
    return Error(error_code, error_name(error_code), message)


def item_message(error_code: int, message: str | None) -> str | None:
    """A per-item result's message: the code's default one when the controller gave none."""
    if message is None and error_code != 0:
        return DEFAULT_MESSAGES.get(error_code)
    return message


# Compact JSON encoded in C: a 100-partition topic in 34 µs where json.dumps took 282 µs (GET
# /v1/topics/{name} bodies were a tenth of the controller's CPU under bench/event_load.py).
_ENCODER = msgspec.json.Encoder()


def json_response(
    body: msgspec.Struct | Mapping[str, Any],
    *,
    status: int = 200,
    headers: Mapping[str, str] | None = None,
) -> web.Response:
    """``body`` (a contract's struct; a dict only for the OpenAPI document) encoded."""
    return web.Response(
        body=_ENCODER.encode(body),
        status=status,
        headers=headers,
        content_type="application/json",
    )


def error_response(
    error_code: int,
    message: str | None,
    *,
    status: int,
    headers: Mapping[str, str] | None = None,
) -> web.Response:
    return json_response(error_body(error_code, message), status=status, headers=headers)


def not_controller_response(
    error_code: int, message: str | None, active: ActiveController | None, *, status: int
) -> web.Response:
    """A standby's 503 NOT_CONTROLLER: the error object and where the active controller is."""
    body = NotControllerError(error_code, error_name(error_code), message, active)
    return json_response(body, status=status)

"""What a call of the controller's HTTP API can fail with: each one line for the user."""

from __future__ import annotations


class ClientError(Exception):
    """A request that got no usable answer (unreachable, no answer in time, not JSON), or a
    refusal: one line for the user (the tools exit 1)."""


class Unreachable(ClientError, ConnectionError):
    """No connection to the controller (refused, reset, name not resolved)."""


class NoAnswer(ClientError, TimeoutError):
    """No answer within the client's timeout."""


class ApiError(ClientError):
    """The controller answered with an error object."""

    def __init__(self, message: str, *, status: int, error_code: int | None) -> None:
        super().__init__(message)
        self.status = status
        self.error_code = error_code


class ResponseError(ClientError, ValueError):
    """The controller answered something that is not the documented shape."""

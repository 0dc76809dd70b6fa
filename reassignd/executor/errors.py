"""The executor's errors (the README's "Batches"): reassignd's own codes 10002-10004.

Each carries its code and its name. ``reassignd/errors.py`` does not know these codes yet; until
they join its ``ERROR_NAMES`` table, each class names itself (``error_name``), so a response built
from ``to_json()`` is right either way.
"""

from __future__ import annotations

from reassignd.errors import InvalidRequest, ReassigndError

EXECUTOR_ERROR_NAMES: dict[int, str] = {
    10002: "STALE_PLAN",
    10003: "BATCH_CONFLICT",
    10004: "BATCH_ID_IN_USE",
}


class _ExecutorError(ReassigndError):
    @property
    def error_name(self) -> str:
        return EXECUTOR_ERROR_NAMES[self.error_code]


class StalePlan(_ExecutorError):
    """A partition's replicas differ from the ``expected_replicas`` its plan assumed."""

    error_code = 10002


class BatchConflict(_ExecutorError):
    """The partition has a pending or running move in another unfinished batch."""

    error_code = 10003


class BatchIdInUse(_ExecutorError):
    """The batch id names a batch submitted with another body (HTTP 409)."""

    error_code = 10004


class BatchStateError(InvalidRequest):
    """A control request the batch's state does not allow (pause a completed batch): HTTP 409, as
    the request itself is well formed."""


class UnknownBatch(InvalidRequest):
    """No batch has this id (HTTP 404)."""

"""The HTTP API's uniform error object, and the per-item results that carry one. Pure.

Every error answer is ``{error_code, error_name, error_message}`` (Kafka's code and name); a
standby's 503 adds where the active controller is. A per-item result (a partition, a topic, a
quota entity) carries the same three fields after what names the item.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from reassignd.int_limits import INT32_MAX

ErrorCode = Annotated[int, msgspec.Meta(description="Kafka's numeric error code (ours ≥ 10000)")]
ErrorName = Annotated[str, msgspec.Meta(description="Kafka's name of the code")]
PartitionId = Annotated[int, msgspec.Meta(ge=0, le=INT32_MAX)]


class Error(msgspec.Struct, frozen=True):
    """The uniform error object (also the envelope of Kafka's whole-request results)."""

    error_code: ErrorCode
    error_name: ErrorName
    error_message: str | None


class ActiveController(msgspec.Struct, frozen=True):
    id: int
    http: str | None


class NotControllerError(msgspec.Struct, frozen=True):
    """503 NOT_CONTROLLER (41) from a standby: the error object and where the active one is."""

    error_code: ErrorCode
    error_name: ErrorName
    error_message: str | None
    active_controller: ActiveController | None

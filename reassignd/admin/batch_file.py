"""``reassignd admin batch submit --batch-file F``: the file's batches, checked before anything is
sent. Pure.

The file holds one ``POST /v1/batches`` body, a JSON array of them, or a ``batches.json`` as
``reassignd feed plan`` writes it (``{"plan_id", "created_at", "goals", "batches": [<bodies>],
"predicted"}``: only ``batches`` is read). Each body is read exactly as the HTTP API reads it
(:func:`reassignd.http.batch_requests.parse_submit_doc`, then
:func:`reassignd.executor.model.spec_error`; an integral ``2.0`` is ``2``, as at the door) and a batch id may appear once per file, so a file the
controller would refuse fails here, whole, with one line naming the body and the field
(``batches[1].partitions[0].replicas: ...``). The bodies are sent as written: what they leave out
the controller fills in with its own defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reassignd.errors import InvalidRequest
from reassignd.executor.model import Limits, spec_error
from reassignd.http.batch_requests import BatchDefaults, parse_submit_doc
from reassignd.http.door import integral_numbers
from reassignd.http.json_input import BODY
from reassignd.strict_json import json_type, loads_tracking

# Only to check the bodies: the controller applies its own defaults to what they leave out.
_ANY_LIMITS = BatchDefaults(Limits(1, 1, 1))


class BatchFileError(ValueError):
    """A batch file that cannot be used; ``str(error)`` is a one-line reason."""


@dataclass(frozen=True, slots=True)
class BatchBody:
    where: str  # "" for a file that is one body, else "batches[1]" or "[1]"
    body: dict[str, Any]  # as written
    batch_id: str | None  # None: the controller generates one
    partitions: int


def _relative(where: str, message: str) -> str:
    """An HTTP parser message (``partitions[0]: ...``, ``request body: ...``) under ``where``."""
    if not where:
        return message
    if message.startswith(f"{BODY}: "):
        return f"{where}: {message[len(BODY) + 2 :]}"
    return f"{where}.{message}"


def _body(doc: Any, where: str) -> BatchBody:
    try:
        spec = parse_submit_doc(doc, _ANY_LIMITS, lambda: "generated")
    except InvalidRequest as e:
        raise BatchFileError(_relative(where, e.message or "invalid")) from None
    if (reason := spec_error(spec)) is not None:
        raise BatchFileError(f"{where}: {reason}" if where else reason)
    assert isinstance(doc, dict)
    return BatchBody(where, doc, doc.get("batch_id"), len(spec.partitions))


def parse_batch_file(data: bytes) -> tuple[BatchBody, ...]:
    try:
        doc = loads_tracking(integral_numbers(data) or data)  # 2.0 is 2, as at the HTTP door
    except RecursionError:
        raise BatchFileError("invalid JSON: nested too deeply") from None
    except ValueError as e:
        raise BatchFileError(f"invalid JSON: {e}") from None
    if isinstance(doc, list):
        bodies = [_body(item, f"[{i}]") for i, item in enumerate(doc)]
    elif isinstance(doc, dict) and "batches" in doc and "partitions" not in doc:
        listed = doc["batches"]
        if not isinstance(listed, list):
            raise BatchFileError(f"batches: expected an array, got {json_type(listed)}")
        bodies = [_body(item, f"batches[{i}]") for i, item in enumerate(listed)]
    elif isinstance(doc, dict):
        bodies = [_body(doc, "")]
    else:
        raise BatchFileError(
            f"expected a POST /v1/batches body, an array of them or a batches.json, got {json_type(doc)}"
        )
    if not bodies:
        raise BatchFileError("no batch to submit")
    seen: dict[str, str] = {}
    for b in bodies:
        if b.batch_id is None:
            continue
        if b.batch_id in seen:
            raise BatchFileError(f"{b.where}.batch_id: {b.batch_id!r} is also {seen[b.batch_id]}'s batch id")
        seen[b.batch_id] = b.where
    return tuple(bodies)

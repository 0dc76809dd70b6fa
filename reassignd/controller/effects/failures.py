"""The two kinds of failure an event can meet, told apart in one place (docs/design.md, "Two
kinds of failure"). Pure: no I/O.

- **Outcome unknown**: the connection dropped, a request timed out, the session expired, or the
  fencing check failed. A write may or may not have been applied, or this instance is no longer
  the controller: it resigns and whoever wins reloads everything from ZooKeeper.
- **Deterministic**: the same input fails the same way every time — a znode over ZooKeeper's
  1 MiB, a missing node that must exist, BADARGUMENTS, NOAUTH and INVALIDACL (another ZooKeeper
  principal owns the znode: its ACL refuses us the same way whoever is the controller), a node
  that exists or does not where
  memory says otherwise, a decode or validation error, a bug. Resigning would only hand the
  input to the next controller, which fails on it again (a failover storm). The event refuses
  the input instead: it is reported, and the instance stays active.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from reassignd.errors import NotController
from reassignd.zk.errors import (
    ConnectionLostError,
    InvalidAclError,
    MultiFailedError,
    NoAuthError,
    ZkError,
    ZkTimeoutError,
)

# Server error codes whose outcome is unknown (the server may have applied the request):
# SYSTEMERROR, RUNTIMEINCONSISTENCY, DATAINCONSISTENCY, MARSHALLINGERROR, OPERATIONTIMEOUT,
# NEWCONFIGNOQUORUM, RECONFIGINPROGRESS, REQUESTTIMEOUT (connection loss, session expiry and
# session moves are ConnectionLostError already).
_UNKNOWN_CODES = frozenset({-1, -2, -3, -5, -7, -13, -14, -122})


class Failure(enum.Enum):
    FENCED = "fenced"  # another controller was elected: resign and follow it
    UNKNOWN = "unknown"  # the outcome is unknown: resign, the next controller reloads
    DETERMINISTIC = "deterministic"  # the next controller would meet it again: refuse, report, stay


def classify(error: BaseException) -> Failure:
    if isinstance(error, MultiFailedError):
        return classify(error.cause)
    if isinstance(error, NoAuthError | InvalidAclError):  # an ACL: whoever asks meets it again
        return Failure.DETERMINISTIC
    if isinstance(error, NotController):
        return Failure.FENCED
    if isinstance(error, ConnectionLostError | ZkTimeoutError | TimeoutError | ConnectionError):
        return Failure.UNKNOWN
    if isinstance(error, ZkError) and error.code in _UNKNOWN_CODES:
        return Failure.UNKNOWN
    return Failure.DETERMINISTIC


@dataclass(frozen=True, slots=True)
class Refusal:
    """What a deterministic failure refused: the znode it concerns (when known) and why."""

    path: str | None
    reason: str
    bug: bool  # not a ZooKeeper answer or an input error of ours: worth a traceback in the log


def deterministic(error: BaseException) -> bool:
    """The next controller would meet ``error`` again (a step may skip its input and go on)."""
    return classify(error) is Failure.DETERMINISTIC


def describe(error: BaseException) -> Refusal:
    cause = error.cause if isinstance(error, MultiFailedError) else error
    if isinstance(cause, NoAuthError):
        return Refusal(
            cause.path,
            f"{cause} (its ACL does not let the controller's session write it: another ZooKeeper "
            "principal owns it)",
            bug=False,
        )
    if isinstance(cause, ZkError):
        return Refusal(cause.path, str(cause), bug=False)
    reason = str(error) or type(error).__name__
    if isinstance(error, ValueError):  # codec and validation errors (CodecError is one)
        return Refusal(getattr(error, "path", None), reason, bug=False)
    return Refusal(None, f"{type(error).__name__}: {reason}", bug=True)
